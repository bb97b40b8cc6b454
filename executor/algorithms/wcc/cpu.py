"""Weakly connected components (WCC), Graphalytics semantics.

Two vertices share a component when a path joins them ignoring edge directions. Each vertex's
component is reported as the smallest internal vertex id in it (internal ids ascend with the
user's ids, so that is also the smallest user id), which makes the labels deterministic.

How it runs: one compiled union-find pass over the out-edges (:func:`components`),
which names each component by its smallest vertex as it goes. A directed graph needs no
in-edges (an edge joins its two ends whichever way it points); an undirected graph stores each
edge both ways, so half of them are skipped. On two cores: 12 ms on a 1000 x 1000 grid and
0.11 s on R-MAT 20, where scipy's component search took 53-60 ms and 0.6-0.9 s.
"""

from __future__ import annotations

import numpy as np

from graphdb.storage.compiled import KernelSet

from ...graph import Graph
from ...operators.adjacency import base_span, clean, delta_span, live
from ..common import kernel_adjacency
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["KERNELS", "wcc", "wcc_components"]

KERNELS = KernelSet(__name__)

_ONE = np.uint64(1)


@KERNELS.kernel(inline="always")
def _root(parent, x):
    """Root of ``x`` with path halving; keeps ``parent[x] <= x``."""
    while True:
        p = parent[x]
        if p == x:
            return x
        g = parent[np.uint64(p)]
        parent[x] = g
        x = np.uint64(g)


@KERNELS.kernel(inline="always")
def _union(parent, v, w, skip_upper):
    """Join the components of ``v`` and ``w`` (the larger root under the smaller)."""
    if skip_upper and w >= v:
        return
    a = _root(parent, v)
    b = _root(parent, w)
    if a < b:
        parent[b] = a
    elif b < a:
        parent[a] = b


@KERNELS.kernel()
def components(adj, skip_upper, parent):
    """Weakly connected components by union-find over the out-edges, in one pass.

    Each component is named by its smallest vertex: a union hangs the larger root under the
    smaller, so ``parent[x] <= x`` always holds, and a final ascending pass turns every
    ``parent`` into its root with one read. The edges are scanned in CSR order, which on a
    mesh keeps the union-find's reads near each other. ``adj``: the out-edges
    (:mod:`graphdb.executor.operators.adjacency`). ``skip_upper``: the CSR stores each
    undirected edge both ways, so only ``w < v`` needs a union. ``parent`` is int64 of |V|
    entries (overwritten); it receives the component of each vertex.
    """
    n = parent.size
    for v in range(n):
        parent[v] = v
    for v in range(n):
        vv = np.uint64(v)
        lo, hi = base_span(adj, vv)
        whole = clean(adj, lo, hi)
        for e in range(lo, hi):
            if whole or live(adj, e):
                _union(parent, vv, np.uint64(adj.targets[e]), skip_upper)
        lo, hi = delta_span(adj, vv)
        for k in range(lo, hi):
            _union(parent, vv, np.uint64(adj.dtargets[k]), skip_upper)
    for v in range(n):
        parent[v] = parent[np.uint64(parent[v])]
    return parent


def wcc_components(graph: Graph) -> np.ndarray:
    """Weakly connected components of ``graph``.

    Returns
    -------
    numpy.ndarray
        int64 per vertex: the smallest internal id in its component.
    """
    adj = kernel_adjacency(graph, "out")
    component = np.empty(graph.num_vertices, dtype=np.int64)
    kernels = KERNELS.for_work(graph.num_vertices + graph.num_edges)
    return kernels.components(adj, not graph.directed, component)


def wcc(graph: Graph, config: OperatorConfig) -> AlgorithmOutput:
    """Every vertex with the smallest internal id of its weakly connected component."""
    component = wcc_components(graph)
    roots = int(np.count_nonzero(component == np.arange(graph.num_vertices)))
    return AlgorithmOutput.vertices({"component": component}, {"components": roots})
