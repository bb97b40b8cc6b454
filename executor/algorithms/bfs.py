"""Breadth-first search: the depth (hop count) of every vertex reachable from a source.

Graphalytics semantics: depth of the source is 0, edges are followed in their direction
(both directions for an undirected graph), unreachable vertices are not reported.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..graph import CSR, Graph
from .registry import Algorithm, AlgorithmOutput, Column, Param, check_source, register

__all__ = ["bfs_depths", "expand_frontier"]

UNREACHED = -1


def expand_frontier(csr: CSR, frontier: np.ndarray) -> np.ndarray:
    """All out-neighbours of ``frontier`` (with repeats), gathered without a Python loop."""
    starts = csr.offsets[frontier]
    counts = csr.offsets[frontier + 1] - starts
    total = int(counts.sum())
    if total == 0:
        return csr.targets[:0]
    # Position of every gathered edge: its segment start plus its rank inside the segment.
    seg_first = np.cumsum(counts) - counts
    idx = np.arange(total, dtype=np.int64) - np.repeat(seg_first - starts, counts)
    return csr.targets[idx]


def bfs_depths(graph: Graph, source: int, max_depth: int | None = None) -> tuple[np.ndarray, int]:
    """Level-synchronous BFS. Returns (depth per vertex, -1 if unreached; number of levels)."""
    csr = graph.out_csr
    depth = np.full(graph.num_vertices, UNREACHED, dtype=np.int64)
    depth[source] = 0
    frontier = np.array([source], dtype=np.int64)
    level = 0
    while frontier.size and (max_depth is None or level < max_depth):
        nbrs = expand_frontier(csr, frontier)
        nbrs = nbrs[depth[nbrs] == UNREACHED]
        frontier = np.unique(nbrs).astype(np.int64, copy=False)
        level += 1
        depth[frontier] = level
    return depth, level


def _bfs_cpu(graph: Graph, source: int, max_depth: int | None = None) -> AlgorithmOutput:
    check_source(graph, source, "bfs")
    depth, levels = bfs_depths(graph, source, max_depth)
    reached = np.flatnonzero(depth != UNREACHED)
    return AlgorithmOutput(
        {"vertex": reached, "depth": depth[reached]},
        {"iterations": levels, "reached": int(reached.size)},
    )


BFS = register(
    Algorithm(
        name="bfs",
        params=(
            Param("source", "vertex", doc="vertex to start from"),
            Param("max_depth", "int", default=None, minimum=0, doc="stop after this many levels"),
        ),
        columns=(Column("vertex", pa.int64(), vertex=True), Column("depth", pa.int64())),
        cpu=_bfs_cpu,
        doc="Vertices reachable from source with their BFS depth (hops).",
    )
)
