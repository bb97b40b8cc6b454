"""Degrees read from the CSR offsets alone: of every vertex, or of the vertices given."""

from __future__ import annotations

import numpy as np

from ...graph import Graph
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["degree"]


def degree(graph: Graph, config: OperatorConfig, vertices: np.ndarray | None = None,
           direction: str = "out") -> AlgorithmOutput:
    """(vertex, degree): the edges leaving (``out``), entering (``in``) or touching (``both``)
    each vertex, parallel edges each; an undirected graph's incident edges (a self loop once,
    as stored). Only the offsets of the rows asked for are read."""
    def counts(which: str) -> np.ndarray:
        offsets = graph.csr(which).offsets
        if vertices is None:
            return np.diff(offsets)
        return offsets[vertices + 1] - offsets[vertices]

    if not graph.directed or direction == "out":
        values = counts("out")
    elif direction == "in":
        values = counts("in")
    else:
        values = counts("out") + counts("in")
    if vertices is None:
        return AlgorithmOutput.vertices({"degree": values.astype(np.int64)})
    return AlgorithmOutput({"vertex": np.asarray(vertices, dtype=np.int64),
                            "degree": values.astype(np.int64)}, {"vertices": int(len(vertices))})
