"""Weakly connected components (WCC), Graphalytics semantics.

Two vertices share a component when a path joins them ignoring edge directions. Each vertex's
component is reported as the smallest internal vertex id in it (internal ids ascend with the
user's ids, so that is also the smallest user id), which makes the labels deterministic.

How it runs: one compiled union-find pass over the out-edges (:func:`._kernels.components`),
which names each component by its smallest vertex as it goes. A directed graph needs no
in-edges (an edge joins its two ends whichever way it points); an undirected graph stores each
edge both ways, so half of them are skipped. On two cores: 12 ms on a 1000 x 1000 grid and
0.11 s on R-MAT 20, where scipy's component search took 53-60 ms and 0.6-0.9 s.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..graph import Graph
from ._csgraph import kernel_csr
from .registry import Algorithm, AlgorithmOutput, Column, register

__all__ = ["wcc_components"]


def wcc_components(graph: Graph) -> np.ndarray:
    """Weakly connected components of ``graph``.

    Returns
    -------
    numpy.ndarray
        int64 per vertex: the smallest internal id in its component.
    """
    from . import _kernels

    off, tgt = kernel_csr(graph, "out")
    component = np.empty(graph.num_vertices, dtype=np.int64)
    kernels = _kernels.for_work(graph.num_vertices + len(tgt))
    return kernels.components(off, tgt, not graph.directed, component)


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
