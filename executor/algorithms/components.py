"""Weakly connected components (WCC), Graphalytics semantics.

Two vertices share a component when a path joins them ignoring edge directions. Each vertex's
component is reported as the smallest internal vertex id in it (internal ids ascend with the
user's ids, so that is also the smallest user id), which makes the labels deterministic.

Directed graphs: scipy's compiled component search fed with the graph's out- and in-CSR, so
no transpose is built per call (see :mod:`._csgraph`). Undirected graphs with few components
(the usual case apart from isolated vertices): one compiled breadth-first walk per component,
started at the smallest unvisited vertex, which is then the component's name; isolated vertices
are named at once. A walk is cheaper than the depth-first component search, and the names come
out directly. Past :data:`MAX_WALKS` components the general search takes over.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..graph import Graph
from ._csgraph import SCIPY_NULL, index_pair, walk_from, weak_component_labels
from .registry import Algorithm, AlgorithmOutput, Column, register

__all__ = ["smallest_member", "wcc_components"]

#: Undirected graphs with more components than this (isolated vertices aside) use the general
#: component search: each walk costs a Python call.
MAX_WALKS = 64
#: Vertices scanned at once when looking for the next unvisited vertex.
SCAN_BLOCK = 1 << 16


def smallest_member(labels: np.ndarray) -> np.ndarray:
    """Replace arbitrary component numbers ``0..k-1`` by each component's smallest vertex id.

    scipy numbers components in the order it first meets them while scanning vertices upwards,
    so the smallest member of component ``c`` is where the running maximum of the labels first
    reaches ``c``: a couple of linear passes. If a scipy release numbered differently, the check
    fails and a scatter-minimum (slower, always right) does the job.

    Parameters
    ----------
    labels : numpy.ndarray
        Integer component number per vertex, values ``0..k-1``.

    Returns
    -------
    numpy.ndarray
        int64 per vertex: the smallest vertex id with the same label.
    """
    n = labels.size
    if n == 0:
        return labels.astype(np.int64)
    k = int(labels.max()) + 1
    if k == 1:  # connected: the common case needs no pass at all
        return np.zeros(n, dtype=np.int64)
    running = np.maximum.accumulate(labels)
    rises = np.flatnonzero(running[1:] != running[:-1]) + 1
    if running[0] == 0 and rises.size == k - 1:  # k - 1 rises from 0 to k - 1: all by one
        first = np.concatenate([[0], rises])  # first[c] = first vertex with label c
    else:
        first = np.full(k, n, dtype=np.int64)
        np.minimum.at(first, labels, np.arange(n, dtype=np.int64))
    return np.take(first, labels)


def _next_unvisited(parent: np.ndarray, start: int) -> int | None:
    """Smallest vertex ``>= start`` not yet visited (its parent still unset), or ``None``."""
    while start < parent.size:
        hits = np.flatnonzero(parent[start : start + SCAN_BLOCK] == SCIPY_NULL)
        if hits.size:
            return start + int(hits[0])
        start += SCAN_BLOCK
    return None


def components_by_walks(graph: Graph) -> np.ndarray | None:
    """Undirected graphs: each component's smallest id, by one BFS walk per component.

    Returns ``None`` when there are more than :data:`MAX_WALKS` components with edges, or when
    the compiled walk is unavailable; the caller then runs the general component search.
    """
    n = graph.num_vertices
    indptr, indices = index_pair(graph, "out")
    isolated = indptr[1:] == indptr[:-1]
    parent = np.full(n, SCIPY_NULL, dtype=indices.dtype)
    parent[isolated] = 0  # any mark: visited, and their own component
    order = np.empty(n, dtype=indices.dtype)
    heads: list[tuple[int, int, int]] = []  # (head, first, end) of each walk's slice of order
    filled, head = 0, _next_unvisited(parent, 0)
    while head is not None:
        if len(heads) == MAX_WALKS:
            return None
        count = walk_from(graph, head, order[filled:], parent)
        if count is None:
            return None
        parent[head] = head  # the walk leaves its own start unmarked
        heads.append((head, filled, filled + count))
        filled += count
        head = _next_unvisited(parent, head + 1)
    if len(heads) == 1:  # connected apart from isolated vertices: no scatter needed
        component = np.full(n, heads[0][0], dtype=np.int64)
    else:
        component = np.empty(n, dtype=np.int64)
        for head, first, end in heads:
            component[order[first:end]] = head
    component[isolated] = np.flatnonzero(isolated)
    return component


def wcc_components(graph: Graph) -> np.ndarray:
    """Weakly connected components of ``graph``.

    Returns
    -------
    numpy.ndarray
        int64 per vertex: the smallest internal id in its component.
    """
    if not graph.directed:
        component = components_by_walks(graph)
        if component is not None:
            return component
    return smallest_member(weak_component_labels(graph))


def _wcc_cpu(graph: Graph) -> AlgorithmOutput:
    component = wcc_components(graph)
    vertices = np.arange(graph.num_vertices, dtype=np.int64)
    return AlgorithmOutput(
        {"vertex": vertices, "component": component},
        {"components": int(np.count_nonzero(component == vertices))},
    )


WCC = register(
    Algorithm(
        name="wcc",
        params=(),
        columns=(
            Column("vertex", pa.int64(), vertex=True),
            Column("component", pa.int64(), vertex=True),
        ),
        cpu=_wcc_cpu,
        doc="Weakly connected component of every vertex, named by its smallest vertex.",
        all_active=True,
    )
)
