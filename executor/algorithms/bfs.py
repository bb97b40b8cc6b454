"""Breadth-first search and k-hop neighbourhoods: the depth (hop count) of reachable vertices.

Graphalytics semantics: depth of the source is 0, edges are followed in their direction
(both directions for an undirected graph), unreachable vertices are not reported.

How it runs. A full BFS is scipy's compiled breadth-first walk (one pass over the reached
edges, no per-level Python overhead, which matters on a grid with thousands of levels) followed
by a vectorized depth computation from the walk's order and parents (:func:`depths_from_order`).
A depth-limited search whose neighbourhood is small (k-hop) expands level by level in numpy
instead and stops early, so it never touches the rest of the graph.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..graph import CSR, Graph
from ._csgraph import breadth_first_order, vertex_range
from .registry import Algorithm, AlgorithmOutput, Column, Param, check_source, register

__all__ = ["bfs_depths", "bfs_levels", "depths_from_order", "expand_frontier", "frontier_edges"]

UNREACHED = -1

#: A depth-limited search stays in numpy while it has touched fewer edges than this share of
#: the graph's edges (plus a constant); past it one compiled walk over everything is cheaper.
FRONTIER_EDGE_SHARE = 1 / 16
FRONTIER_EDGE_FLOOR = 4096
#: Vertices per chunk when turning BFS parents into positions (see depths_from_order).
POSITION_CHUNK = 1 << 13


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


def depths_from_order(
    order: np.ndarray, parent: np.ndarray, ids: np.ndarray | None = None
) -> np.ndarray:
    """BFS depth of each vertex of ``order`` (a breadth-first order with its parent array).

    In a queue-based BFS the order is sorted by depth, and the children of earlier vertices come
    before the children of later ones, so the parents' positions never decrease along the order.
    Level ``k + 1`` therefore ends right after the last vertex whose parent lies in level ``k``:
    one binary search per level over the parents' positions finds every boundary.

    The parents' positions come from three passes over vertex-indexed arrays in BFS order,
    which on a mesh jump a row apart at every step (a cache and TLB miss each). They run in
    chunks of :data:`POSITION_CHUNK` so that the second and third pass find the lines the first
    one (or the previous chunk) just brought in: a third faster on a 1000 x 1000 grid.

    ``parent`` is used as scratch space (it is overwritten with positions). ``ids``, if given,
    is an ``arange`` of at least ``len(order)`` values in ``parent``'s dtype.
    """
    reached = len(order)
    if reached <= 1:
        return np.zeros(reached, dtype=np.int64)
    if ids is None:
        ids = np.arange(reached, dtype=parent.dtype)
    position = parent  # overwritten chunk by chunk once a vertex's parent has been read
    parent_position = np.empty(reached, dtype=parent.dtype)
    for start in range(0, reached, POSITION_CHUNK):
        end = min(start + POSITION_CHUNK, reached)
        vertices = order[start:end]
        chunk = parent_position[start:end]
        np.take(parent, vertices, out=chunk)
        position[vertices] = ids[start:end]
        if start == 0:
            chunk[0] = 0  # the source has no parent; any valid index will do
        np.take(position, chunk, out=chunk)  # parents come earlier: already positions
    parent_position = parent_position[1:]
    # A Python int would make searchsorted cast the whole array to int64 on every call.
    as_index = parent_position.dtype.type
    boundaries = [0, 1]
    while boundaries[-1] < reached:
        level_end = 1 + int(parent_position.searchsorted(as_index(boundaries[-1]), "left"))
        boundaries.append(level_end)
    sizes = np.diff(np.asarray(boundaries, dtype=np.int64))
    return np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)


def _frontier_levels(
    graph: Graph, source: int, max_depth: int, edge_budget: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """Level-synchronous BFS in numpy up to ``max_depth``; ``None`` once past ``edge_budget``."""
    csr = graph.out_csr
    seen = np.zeros(graph.num_vertices, dtype=bool)
    seen[source] = True
    levels = [np.array([source], dtype=np.int64)]
    touched = 0
    while len(levels) <= max_depth and levels[-1].size:
        frontier = levels[-1]
        touched += int((csr.offsets[frontier + 1] - csr.offsets[frontier]).sum())
        if touched > edge_budget:
            return None
        nbrs = expand_frontier(csr, frontier)
        nbrs = np.unique(nbrs[~seen[nbrs]]).astype(np.int64, copy=False)
        seen[nbrs] = True
        levels.append(nbrs)
    if not levels[-1].size:
        levels.pop()
    sizes = [lvl.size for lvl in levels]
    return np.concatenate(levels), np.repeat(np.arange(len(levels), dtype=np.int64), sizes)


def bfs_levels(
    graph: Graph, source: int, max_depth: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Vertices reachable from ``source`` and their BFS depths.

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
        int64 internal ids in BFS order (so sorted by depth); ``vertices[0] == source``.
    depths : numpy.ndarray
        int64 hop count of each vertex, non-decreasing.
    """
    if max_depth is not None:
        budget = int(graph.out_csr.num_edges * FRONTIER_EDGE_SHARE) + FRONTIER_EDGE_FLOOR
        small = _frontier_levels(graph, source, max_depth, budget)
        if small is not None:
            return small
    order, parent = breadth_first_order(graph, source)
    depth = depths_from_order(order, parent, vertex_range(graph, parent.dtype))
    vertices = order.astype(np.int64)
    if max_depth is not None and depth.size and depth[-1] > max_depth:
        keep = int(np.searchsorted(depth, max_depth, side="right"))
        vertices, depth = vertices[:keep], depth[:keep]
    return vertices, depth


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
    vertices, depth = bfs_levels(graph, source, max_depth)
    return AlgorithmOutput(
        {"vertex": vertices, "depth": depth},
        {"iterations": int(depth[-1]) if depth.size else 0, "reached": int(vertices.size)},
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
