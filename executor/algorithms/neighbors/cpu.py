"""Neighbours of one vertex: a row per incident edge (parallel edges give repeated rows).

``direction`` picks out-edges (their targets), in-edges (their sources) or both. An undirected
graph has one neighbour relation, so every direction gives its incident edges once each.
"""

from __future__ import annotations

import numpy as np

from ...graph import Graph
from ..common import check_source
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["neighbor_ids", "neighbors"]


def neighbor_ids(graph: Graph, vertex: int, direction: str = "out") -> np.ndarray:
    """Neighbours of one vertex, one entry per incident edge.

    Parameters
    ----------
    graph : Graph
        The graph.
    vertex : int
        Internal id.
    direction : {'out', 'in', 'both'}
        Edge direction to follow; ignored for an undirected graph.

    Returns
    -------
    numpy.ndarray
        int64 neighbour ids, repeated for parallel edges.
    """
    if not graph.directed or direction == "out":
        return graph.row("out", vertex).astype(np.int64)
    if direction == "in":
        return graph.row("in", vertex).astype(np.int64)
    return np.concatenate([graph.row("out", vertex), graph.row("in", vertex)]).astype(np.int64)


def neighbors(graph: Graph, config: OperatorConfig, vertex: int,
              direction: str = "out") -> AlgorithmOutput:
    """The neighbours of ``vertex``, a row per incident edge."""
    check_source(graph, vertex, "neighbors")
    found = neighbor_ids(graph, vertex, direction)
    return AlgorithmOutput({"neighbor": found}, {"edges": int(found.size)})
