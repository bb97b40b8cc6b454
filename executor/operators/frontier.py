"""Frontier advance on the CPU: the out-edges of a set of vertices, gathered without a loop.

Shared by the traversals that expand whole frontiers in numpy (bidirectional BFS for
``shortest_path``, GRAPH_TABLE's pattern expansion); the level-synchronous BFS itself runs
compiled (:mod:`graphdb.executor.algorithms.bfs.cpu`).
"""

from __future__ import annotations

import numpy as np

from ..graph import CSR

__all__ = ["expand_frontier", "frontier_edges"]


def frontier_edges(csr: CSR, frontier: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions (in CSR order) of all out-edges of ``frontier``, and each edge's source.

    Gathered without a Python loop: each edge's position is its segment's start plus its rank
    inside the segment.
    """
    frontier = np.asarray(frontier, dtype=np.int64)
    starts = csr.offsets[frontier]
    counts = csr.offsets[frontier + 1] - starts
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    seg_first = np.cumsum(counts) - counts
    edges = np.arange(total, dtype=np.int64) - np.repeat(seg_first - starts, counts)
    return edges, np.repeat(frontier, counts)


def expand_frontier(csr: CSR, frontier: np.ndarray) -> np.ndarray:
    """All out-neighbours of ``frontier`` (with repeats)."""
    return csr.targets[frontier_edges(csr, frontier)[0]]
