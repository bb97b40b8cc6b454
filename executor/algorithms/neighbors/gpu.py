"""Neighbours of one vertex on the GPU: the vertex's rows of the device CSR, read where a GPU
plan keeps the graph (no host copy of the topology is loaded for them)."""

from __future__ import annotations

import numpy as np

from ...gpu import runtime as rt
from ...graph import Graph
from ..common import check_source
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["neighbors"]


def _row(csr, vertex: int) -> np.ndarray:
    start, end = (int(x) for x in csr.offsets[vertex:vertex + 2].get())
    return csr.targets[start:end].get().astype(np.int64)


def neighbors(graph: Graph, config: OperatorConfig, vertex: int,
              direction: str = "out") -> AlgorithmOutput:
    """GPU twin of :func:`graphdb.executor.algorithms.neighbors.cpu.neighbors`."""
    check_source(graph, vertex, "neighbors")
    with rt.operator_stream():
        if not graph.directed or direction == "out":
            found = _row(rt.device_csr(graph, "out"), vertex)
        elif direction == "in":
            found = _row(rt.device_csr(graph, "in"), vertex)
        else:
            found = np.concatenate([_row(rt.device_csr(graph, "out"), vertex),
                                    _row(rt.device_csr(graph, "in"), vertex)])
    return AlgorithmOutput({"neighbor": found}, {"edges": int(found.size)})
