"""Breadth-first search and k-hop neighbourhoods: the depth (hop count) of reachable vertices.

Graphalytics semantics: depth of the source is 0, edges are followed in their direction
(both directions for an undirected graph), unreachable vertices are not reported.

How it runs. One compiled, level-synchronous search (:func:`bfs_kernel`) writes the visited
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

from graphdb.storage.compiled import KernelSet

from ...abi import DIRECTION_ALPHA, DIRECTION_BETA
from ...graph import Graph
from ...operators.adjacency import base_span, clean, degree, delta_span, live
from ..common import check_source, kernel_adjacency, per_source
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["KERNELS", "as_khop", "bfs", "bfs_depths", "bfs_levels", "bfs_many", "bfs_search",
           "khop", "khop_many"]

UNREACHED = -1

KERNELS = KernelSet(__name__)

_ONE = np.uint64(1)
_SIX = np.uint64(6)
_LOW6 = np.uint64(63)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)

#: :func:`bfs_kernel` return codes.
BFS_DONE = 0
BFS_NEEDS_IN_EDGES = 1

#: bfs ``state`` slots: the current level's slice of the queue, its depth, edge counts, and
#: how many levels ran bottom-up.
LO, HI, LEVEL, UNEXPLORED_EDGES, FRONTIER_EDGES, BOTTOM_UP_LEVELS = range(6)


@KERNELS.kernel(inline="always")
def _test_and_set(bits, v):
    """Set bit ``v``; return whether it was clear."""
    word = v >> _SIX
    mask = _ONE << (v & _LOW6)
    old = bits[word]
    if old & mask:
        return False
    bits[word] = old | mask
    return True


@KERNELS.kernel(inline="always")
def _is_set(bits, v):
    return (bits[v >> _SIX] >> (v & _LOW6)) & _ONE


@KERNELS.kernel(inline="always")
def _save_level(state, lo, hi, level, unexplored, frontier_edges):
    """Where a search stands, into ``state`` (see LO..FRONTIER_EDGES): to resume it later."""
    state[LO] = lo
    state[HI] = hi
    state[LEVEL] = level
    state[UNEXPLORED_EDGES] = unexplored
    state[FRONTIER_EDGES] = frontier_edges


@KERNELS.kernel(inline="always")
def _claim(w, visited, queue, depth, tail, child, out):
    """Visit ``w`` from the current level if it is new: (new tail, its edges or 0)."""
    if _test_and_set(visited, np.uint64(w)):
        queue[tail] = w
        depth[tail] = child
        return tail + 1, degree(out, np.uint64(w))
    return tail, np.int64(0)


@KERNELS.kernel(inline="always")
def _has_parent(inn, frontier, v):
    """Whether one of ``v``'s in-neighbours is in ``frontier`` (stops at the first)."""
    lo, hi = base_span(inn, v)
    whole = clean(inn, lo, hi)
    for e in range(lo, hi):
        if _is_set(frontier, np.uint64(inn.targets[e])) and (whole or live(inn, e)):
            return True
    lo, hi = delta_span(inn, v)
    for k in range(lo, hi):
        if _is_set(frontier, np.uint64(inn.dtargets[k])):
            return True
    return False


@KERNELS.kernel()
def bfs_kernel(out, inn, have_in, visited, queue, depth, state, max_depth, alpha, beta):
    """Level-synchronous, direction-optimizing BFS (Beamer et al., SC'12).

    Top-down levels walk the frontier's out-edges; bottom-up levels let every unvisited vertex
    look for a parent among its in-edges (stopping at the first), which is cheaper once the
    frontier's edges are a large share of the edges left. The visited set is a bitmap (|V|/8
    bytes, in cache where a |V|-entry depth array would not be); depths are written in queue
    order, so the output needs no pass over a dense array.

    Parameters
    ----------
    out : Adjacency
        The out-edges (:mod:`graphdb.executor.operators.adjacency`: a stored CSR, or a changed
        version's base and delta).
    inn : Adjacency
        The in-edges (the out-edges again for an undirected graph); unused while ``have_in``
        is false.
    have_in : bool
        Whether the in-edges were passed. Without them the search returns
        :data:`BFS_NEEDS_IN_EDGES` at the first level it would run bottom-up, with ``state``
        saved, so the caller can load the in-edges and call again to resume.
    visited : uint64 array
        Bitmap of ``ceil(|V| / 64)`` words; visited vertices set.
    queue, depth : int64 arrays of |V| entries
        Receive the visited vertices in level order and each one's depth;
        ``queue[lo:hi]`` is the current level.
    state : int64 array
        ``[lo, hi, level, unexplored_edges, frontier_edges, bottom_up_levels]`` (see the
        module constants); read at entry and written back at exit.
    max_depth : int
        Last level to fill.
    alpha, beta : int
        Go bottom-up when ``frontier_edges * alpha > unexplored_edges`` and the frontier holds
        more than ``|V| / beta`` vertices; come back top-down when it shrinks below that.
        ``alpha = 0`` never goes bottom-up.

    Returns
    -------
    int
        :data:`BFS_DONE`, or :data:`BFS_NEEDS_IN_EDGES` (see ``have_in``).
    """
    n = queue.size
    lo = state[LO]
    hi = state[HI]
    level = state[LEVEL]
    unexplored = state[UNEXPLORED_EDGES]
    frontier_edges = state[FRONTIER_EDGES]
    bottom_up = False
    frontier = np.zeros(0, dtype=np.uint64)
    while lo < hi and level < max_depth:
        size = hi - lo
        big = size * beta > n
        if not bottom_up:
            if alpha > 0 and big and frontier_edges * alpha > unexplored:
                if not have_in:
                    _save_level(state, lo, hi, level, unexplored, frontier_edges)
                    return BFS_NEEDS_IN_EDGES
                bottom_up = True
                if frontier.size == 0:
                    frontier = np.empty(visited.size, dtype=np.uint64)
        elif not big:
            bottom_up = False
        tail = hi
        found_edges = 0
        child = level + 1
        if bottom_up:
            state[BOTTOM_UP_LEVELS] += 1
            frontier[:] = 0
            for i in range(lo, hi):
                _test_and_set(frontier, np.uint64(queue[i]))
            for word in range(visited.size):
                if visited[word] == _ALL:
                    continue
                first = np.uint64(word) << _SIX
                last = min(first + np.uint64(64), np.uint64(n))
                for v in range(first, last):
                    if _is_set(visited, v):
                        continue
                    if _has_parent(inn, frontier, v):
                        _test_and_set(visited, v)
                        queue[tail] = v
                        depth[tail] = child
                        tail += 1
                        found_edges += degree(out, v)
        else:
            for i in range(lo, hi):
                u = np.uint64(queue[i])
                b0, b1 = base_span(out, u)
                whole = clean(out, b0, b1)
                for e in range(b0, b1):
                    if whole or live(out, e):
                        tail, edges = _claim(out.targets[e], visited, queue, depth, tail,
                                             child, out)
                        found_edges += edges
                d0, d1 = delta_span(out, u)
                for k in range(d0, d1):
                    tail, edges = _claim(out.dtargets[k], visited, queue, depth, tail, child,
                                         out)
                    found_edges += edges
        unexplored -= found_edges
        frontier_edges = found_edges
        lo = hi
        hi = tail
        level = child
    _save_level(state, lo, hi, level, unexplored, frontier_edges)
    return BFS_DONE


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
    n = graph.num_vertices
    out = kernel_adjacency(graph, "out")
    dtype = np.int32 if out.targets.dtype == np.uint32 else np.int64
    queue = np.empty(n, dtype=dtype)
    depth = np.empty(n, dtype=dtype)
    visited = np.zeros((n + 63) // 64, dtype=np.uint64)
    visited[source >> 6] = np.uint64(1) << np.uint64(source & 63)
    queue[0], depth[0] = source, 0
    first_edges = int(out.degree[source] if out.degree.size
                      else out.offsets[source + 1] - out.offsets[source])
    state = np.array([0, 1, 0, graph.num_edges - first_edges, first_edges, 0], dtype=np.int64)
    limit = n if max_depth is None else min(int(max_depth), n)
    have_in = not graph.directed or graph.in_csr_loaded
    inn = kernel_adjacency(graph, "in") if have_in else out
    kernels = KERNELS.for_work(n + graph.num_edges)
    status = kernels.bfs_kernel(out, inn, have_in, visited, queue, depth, state, limit,
                                DIRECTION_ALPHA, DIRECTION_BETA)
    if status == BFS_NEEDS_IN_EDGES:  # resume where it stopped, with the in-edges
        kernels.bfs_kernel(out, kernel_adjacency(graph, "in"), True, visited, queue, depth,
                           state, limit, DIRECTION_ALPHA, DIRECTION_BETA)
    reached = int(state[HI])
    return queue[:reached], depth[:reached], int(state[BOTTOM_UP_LEVELS])


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


def bfs(graph, config: OperatorConfig, source: int,
        max_depth: int | None = None) -> AlgorithmOutput:
    """Depths of the vertices reachable from ``source`` (Graphalytics BFS)."""
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


def as_khop(out: AlgorithmOutput) -> AlgorithmOutput:
    """A BFS stopped after level k as khop's output (``depth`` named ``hops``)."""
    if out.per_vertex is not None:
        out.per_vertex.values = {"hops": out.per_vertex.values["depth"]}
        out.per_vertex.reached = "hops"
    else:
        out.columns = {"vertex": out.columns["vertex"], "hops": out.columns["depth"]}
    return out


def khop(graph, config: OperatorConfig, source: int, k: int) -> AlgorithmOutput:
    """The vertices within ``k`` hops of ``source``: a BFS that stops after level ``k``."""
    return as_khop(bfs(graph, config, source, k))


def bfs_many(graph, config: OperatorConfig, source: np.ndarray,
             max_depth: int | None = None) -> AlgorithmOutput:
    """:func:`bfs` from each of many sources (``FROM t, LATERAL bfs(g, t.v)``)."""
    return per_source(lambda s: bfs(graph, config, s, max_depth), source, ("vertex", "depth"))


def khop_many(graph, config: OperatorConfig, source: np.ndarray, k: int) -> AlgorithmOutput:
    """:func:`khop` from each of many sources (``FROM t, LATERAL khop(g, t.v, 2)``)."""
    return per_source(lambda s: khop(graph, config, s, k), source, ("vertex", "hops"))
