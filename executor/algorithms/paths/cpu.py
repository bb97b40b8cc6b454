"""Single-pair shortest path, with the path itself.

Unweighted (or unit-weight) graphs: bidirectional BFS. The forward search follows out-edges
from the source, the backward search in-edges from the target; each round expands the whole
level of the smaller frontier, and the search stops at the first level that meets the other
side, taking the meeting vertex with the smallest total hop count. Both searches record a
parent per vertex, so the path is read off by walking parents from the meeting vertex.

Weighted graphs: the compiled bucket-queue Dijkstra of the SSSP family with an early exit: it
stops once the bucket holding the target is emptied, so it never settles a vertex farther than
that bucket, and the path is read off its predecessors.
"""

from __future__ import annotations

import numpy as np

from ...graph import CSR, Graph
from ...operators.frontier import frontier_edges
from ..common import check_non_negative, check_source, edge_weights
from ..spec import AlgorithmOutput, OperatorConfig
from ..sssp.cpu import dijkstra

__all__ = ["bidirectional_bfs_path", "dijkstra_path", "shortest_path"]

NO_PARENT = -1


class _Side:
    """One direction of the bidirectional search: its CSR, parents and current frontier."""

    def __init__(self, csr: CSR, start: int, n: int) -> None:
        self.csr = csr
        self.parent = np.full(n, NO_PARENT, dtype=np.int64)
        self.hops = np.full(n, -1, dtype=np.int64)
        self.hops[start] = 0
        self.parent[start] = start
        self.frontier = np.array([start], dtype=np.int64)
        self.level = 0

    def frontier_cost(self) -> int:
        offsets = self.csr.offsets
        return int((offsets[self.frontier + 1] - offsets[self.frontier]).sum())

    def expand(self) -> np.ndarray:
        """Visit the next level; return the newly visited vertices."""
        edges, sources = frontier_edges(self.csr, self.frontier)
        targets = self.csr.targets[edges].astype(np.int64)
        fresh = self.hops[targets] < 0
        targets, sources = targets[fresh], sources[fresh]
        new, first = np.unique(targets, return_index=True)  # one parent per new vertex
        self.level += 1
        self.hops[new] = self.level
        self.parent[new] = sources[first]
        self.frontier = new
        return new


def _walk(parent: np.ndarray, start: int) -> list[int]:
    """Vertices from ``start`` up the parent pointers to the root (parent of itself)."""
    path = [start]
    while parent[path[-1]] != path[-1]:
        path.append(int(parent[path[-1]]))
    return path


def bidirectional_bfs_path(graph: Graph, source: int, target: int) -> list[int] | None:
    """A path with the fewest hops from ``source`` to ``target``.

    Parameters
    ----------
    graph : Graph
        The graph; the forward search follows out-edges, the backward one in-edges.
    source, target : int
        Internal ids of the end points.

    Returns
    -------
    list of int or None
        The vertices of the path, source first; ``None`` when ``target`` is unreachable.
    """
    if source == target:
        return [source]
    n = graph.num_vertices
    forward = _Side(graph.out_csr, source, n)
    backward = _Side(graph.in_csr, target, n)
    while forward.frontier.size and backward.frontier.size:
        side, other = (
            (forward, backward)
            if forward.frontier_cost() <= backward.frontier_cost()
            else (backward, forward)
        )
        new = side.expand()
        met = new[other.hops[new] >= 0]
        if met.size:
            meet = int(met[np.argmin(side.hops[met] + other.hops[met])])
            head = _walk(forward.parent, meet)[::-1]  # source .. meet
            tail = _walk(backward.parent, meet)[1:]  # after meet .. target
            return head + tail
    return None


def dijkstra_path(
    graph: Graph, source: int, target: int, weights: np.ndarray
) -> tuple[list[int], np.ndarray] | None:
    """A shortest weighted path, by Dijkstra stopping once the target's distance is final.

    Parameters
    ----------
    graph : Graph
        The graph.
    source, target : int
        Internal ids of the end points.
    weights : numpy.ndarray
        Non-negative weights aligned with the out-CSR.

    Returns
    -------
    tuple (list of int, numpy.ndarray) or None
        The path's vertices (source first) and each one's distance from the source;
        ``None`` when ``target`` is unreachable.
    """
    dist, pred = dijkstra(graph, source, weights, target=target, predecessors=True)
    if not np.isfinite(dist[target]):
        return None
    path = [target]
    while path[-1] != source:
        path.append(int(pred[path[-1]]))
    path.reverse()
    return path, dist[path]


def shortest_path(graph: Graph, config: OperatorConfig, source: int, target: int,
                  weight: str | None = None) -> AlgorithmOutput:
    """One shortest path from ``source`` to ``target``, a row per vertex; none if unreachable."""
    check_source(graph, source, "shortest_path")
    check_source(graph, target, "shortest_path")
    weights = edge_weights(graph, weight)
    if weights is None:
        path = bidirectional_bfs_path(graph, source, target)
        dist = None if path is None else np.arange(len(path), dtype=np.float64)
        method = "bidirectional_bfs"
    else:
        check_non_negative(graph, weights, "shortest_path", weight)
        found = dijkstra_path(graph, source, target, weights)
        path, dist = (None, None) if found is None else found
        method = "dijkstra_bounded"
    if path is None:
        path, dist = [], np.zeros(0)
    return AlgorithmOutput(
        {
            "step": np.arange(len(path), dtype=np.int64),
            "vertex": np.asarray(path, dtype=np.int64),
            "distance": np.asarray(dist, dtype=np.float64),
        },
        {"method": method, "hops": max(len(path) - 1, 0)},
    )
