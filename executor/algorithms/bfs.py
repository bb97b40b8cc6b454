"""Breadth-first search and k-hop neighbourhoods: the depth (hop count) of reachable vertices.

Graphalytics semantics: depth of the source is 0, edges are followed in their direction
(both directions for an undirected graph), unreachable vertices are not reported.

How it runs. One compiled, level-synchronous search (:func:`._kernels.bfs`) writes the visited
vertices in level order and each one's depth, so there is no per-level Python overhead (a grid
has thousands of levels) and no pass afterwards. It is direction-optimizing: while the frontier
is small it walks the frontier's out-edges (top-down); once the frontier's edges are a large
share of the edges not yet explored (low-diameter graphs such as R-MAT after two or three
levels) every unvisited vertex looks for a parent among its in-edges instead (bottom-up) and
stops at the first one found. A depth-limited search (k-hop) stops after its last level, so a
small neighbourhood never touches the rest of the graph; the in-edges of a directed graph are
loaded only when a level would run bottom-up.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..graph import CSR, Graph
from ._csgraph import kernel_csr
from .registry import Algorithm, AlgorithmOutput, Column, Param, check_source, register

__all__ = ["bfs_depths", "bfs_levels", "bfs_search", "expand_frontier", "frontier_edges"]

UNREACHED = -1

#: Beamer's switch: go bottom-up when the frontier's out-edges times ``ALPHA`` exceed the edges
#: of the unvisited vertices and the frontier holds more than ``|V| / BETA`` vertices; go back
#: top-down when it holds fewer. ``ALPHA = 0`` never goes bottom-up. Measured on R-MAT 20
#: (two cores): top-down 66 ms, direction-optimizing 23 ms; on a 1000 x 1000 grid the frontier
#: never holds |V|/BETA vertices, so the search stays top-down.
ALPHA = 15
BETA = 24


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


def bfs_levels(
    graph: Graph, source: int, max_depth: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Vertices reachable from ``source`` and their BFS depths.

    :func:`bfs_search` without its count of bottom-up levels.
    """
    vertices, depth, _ = bfs_search(graph, source, max_depth)
    return vertices, depth


def bfs_search(
    graph: Graph, source: int, max_depth: int | None = None
) -> tuple[np.ndarray, np.ndarray, int]:
    """Vertices reachable from ``source``, their BFS depths, and the levels run bottom-up.

    Parameters
    ----------
    graph : Graph
        The graph; edges are followed out of each vertex.
    source : int
        Internal id of the start vertex (already validated).
    max_depth : int or None
        Keep only vertices at most this many hops away; ``None`` for no limit.

    Returns
    -------
    vertices : numpy.ndarray
        Internal ids in BFS order (so sorted by depth); ``vertices[0] == source``. Integers of
        the graph's index dtype (int32 while |V| < 2**31; the front end widens them).
    depths : numpy.ndarray
        Hop count of each vertex, non-decreasing, same dtype.
    bottom_up_levels : int
        How many levels ran bottom-up (over the in-edges).
    """
    from . import _kernels

    n = graph.num_vertices
    out_off, out_tgt = kernel_csr(graph, "out")
    dtype = np.int32 if out_tgt.dtype == np.uint32 else np.int64
    queue = np.empty(n, dtype=dtype)
    depth = np.empty(n, dtype=dtype)
    visited = np.zeros((n + 63) // 64, dtype=np.uint64)
    visited[source >> 6] = np.uint64(1) << np.uint64(source & 63)
    queue[0], depth[0] = source, 0
    degree = int(out_off[source + 1] - out_off[source])
    state = np.array([0, 1, 0, len(out_tgt) - degree, degree, 0], dtype=np.int64)
    limit = n if max_depth is None else min(int(max_depth), n)
    have_in = not graph.directed or graph.in_csr_loaded
    in_off, in_tgt = kernel_csr(graph, "in") if have_in else (out_off, out_tgt)
    kernels = _kernels.for_work(n + len(out_tgt))
    status = kernels.bfs(
        out_off, out_tgt, in_off, in_tgt, have_in, visited, queue, depth, state, limit, ALPHA, BETA
    )
    if status == _kernels.BFS_NEEDS_IN_EDGES:  # resume where it stopped, with the in-edges
        in_off, in_tgt = kernel_csr(graph, "in")
        kernels.bfs(
            out_off, out_tgt, in_off, in_tgt, True, visited, queue, depth, state, limit, ALPHA, BETA
        )
    reached = int(state[_kernels.HI])
    return queue[:reached], depth[:reached], int(state[_kernels.BOTTOM_UP_LEVELS])


def bfs_depths(graph: Graph, source: int, max_depth: int | None = None) -> tuple[np.ndarray, int]:
    """Depth of every vertex in a dense array: the reference form for the GPU kernels.

    Parameters
    ----------
    graph, source, max_depth
        As for :func:`bfs_levels`.

    Returns
    -------
    depth : numpy.ndarray
        int64 per vertex, -1 where unreached (or beyond ``max_depth``).
    levels : int
        The largest depth reached.
    """
    vertices, depth = bfs_levels(graph, source, max_depth)
    dense = np.full(graph.num_vertices, UNREACHED, dtype=np.int64)
    dense[vertices] = depth
    return dense, int(depth[-1]) if depth.size else 0


def _bfs_cpu(graph: Graph, source: int, max_depth: int | None = None) -> AlgorithmOutput:
    check_source(graph, source, "bfs")
    vertices, depth, bottom_up = bfs_search(graph, source, max_depth)
    return AlgorithmOutput(
        {"vertex": vertices, "depth": depth},
        {
            "iterations": int(depth[-1]) if depth.size else 0,
            "reached": int(vertices.size),
            "bottom_up_levels": bottom_up,
        },
    )


def _khop_cpu(graph: Graph, source: int, k: int) -> AlgorithmOutput:
    check_source(graph, source, "khop")
    vertices, hops = bfs_levels(graph, source, k)
    return AlgorithmOutput(
        {"vertex": vertices, "hops": hops},
        {"iterations": int(hops[-1]) if hops.size else 0, "reached": int(vertices.size)},
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

KHOP = register(
    Algorithm(
        name="khop",
        params=(
            Param("source", "vertex", doc="vertex to start from"),
            Param("k", "int", minimum=0, doc="largest number of hops"),
        ),
        columns=(Column("vertex", pa.int64(), vertex=True), Column("hops", pa.int64())),
        cpu=_khop_cpu,
        doc="Vertices within k hops of source (source included at 0 hops).",
    )
)
