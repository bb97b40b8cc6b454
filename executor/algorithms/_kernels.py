"""Compiled CPU kernels (numba): the traversal and PageRank loops that numpy cannot vectorize.

The kernels are written as plain Python over numpy arrays and registered here; :func:`compiled`
imports numba and compiles them on first use, cached on disk (``cache=True``): a cold cache
costs a few seconds once per install; a warm one still costs about a second per process
(numba's import and one-time initialisation), so a tiny graph, while numba is not loaded yet,
runs the very same source interpreted (:func:`for_work`). Nothing imports numba before a
kernel is needed on a graph that is not tiny: ``import graphdb`` and small queries never do.

Index arrays reach the kernels as *unsigned* views of the CSR (offsets ``uint64``, targets
``uint32``, or ``uint64`` when the stored targets are int64): the values are non-negative anyway,
and numba emits a negative-index wraparound branch for every signed index, which made the edge
loops 2.5 times slower. Mixing unsigned and signed integers in numba arithmetic gives float64,
so index arithmetic below adds the unsigned constant :data:`_ONE`, never a literal ``1``.

Threads: the parallel kernels run on numba's thread pool, sized by :func:`use_threads` from
Arrow's CPU count, which is what the connection setting ``threads`` sets (process-wide).
"""

from __future__ import annotations

import os
import threading
from types import SimpleNamespace
from typing import Any, Callable

import numpy as np

__all__ = [
    "BFS_DONE",
    "BFS_NEEDS_IN_EDGES",
    "TINY_WORK",
    "for_work",
    "bfs",
    "components",
    "dijkstra_buckets",
    "pagerank_init",
    "pagerank_step",
    "use_threads",
    "widest",
]

_ONE = np.uint64(1)
_SIX = np.uint64(6)
_LOW6 = np.uint64(63)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)

#: :func:`bfs` return codes.
BFS_DONE = 0
BFS_NEEDS_IN_EDGES = 1

#: bfs ``state`` slots: the current level's slice of the queue, its depth, edge counts, and
#: how many levels ran bottom-up.
LO, HI, LEVEL, UNEXPLORED_EDGES, FRONTIER_EDGES, BOTTOM_UP_LEVELS = range(6)


#: Graphs with at most this many vertices plus edges run the kernels' Python source as it is,
#: interpreted, while numba is not loaded yet in the process: on a warm cache the first compiled
#: call still costs about a second (numba's import and its one-time initialisation), which
#: would dominate the demo and other small queries. Same code either way, one implementation.
TINY_WORK = 2048

#: ``GRAPHDB_KERNELS=python`` runs the Python source at every size (debugging, tests).
_ALWAYS_PYTHON = os.environ.get("GRAPHDB_KERNELS", "").lower() == "python"

#: ``name -> (python function, njit options)`` of every kernel and helper, in definition order.
_SOURCES: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {}
_compiled: SimpleNamespace | None = None
_compile_lock = threading.Lock()
_python = SimpleNamespace()

#: numba.prange once compiled (the parallel loops need it); plain range when interpreted.
prange = range


def _kernel(**options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a kernel for :func:`compiled`; the function itself stays plain Python."""

    def register(func: Callable[..., Any]) -> Callable[..., Any]:
        _SOURCES[func.__name__] = (func, options)
        setattr(_python, func.__name__, func)
        return func

    return register


def compiled() -> SimpleNamespace:
    """The kernels compiled by numba (imported here, once; compiled lazily, cached on disk).

    The module's globals are rebound to the compiled dispatchers, so a kernel calling a helper
    calls the compiled helper, and ``prange`` becomes numba's parallel range.
    """
    global _compiled, prange
    with _compile_lock:
        if _compiled is None:
            import numba

            prange = numba.prange
            namespace = SimpleNamespace()
            for name, (func, options) in _SOURCES.items():
                dispatcher = numba.njit(cache=True, nogil=True, **options)(func)
                globals()[name] = dispatcher
                setattr(namespace, name, dispatcher)
            _compiled = namespace
    return _compiled


def for_work(work: int, *, parallel: bool = False) -> SimpleNamespace:
    """The kernels to run ``work`` (vertices plus edges) with.

    Compiled, unless the graph is tiny (:data:`TINY_WORK`) and numba is not loaded yet, in
    which case the Python source runs as it is. ``parallel``: size numba's thread pool first
    (:func:`use_threads`).
    """
    if _ALWAYS_PYTHON or (_compiled is None and work <= TINY_WORK):
        return _python
    kernels = compiled()
    if parallel:
        use_threads()
    return kernels


def use_threads() -> int:
    """Size numba's pool for the calling thread: the ``threads`` setting (Arrow's CPU count)."""
    import numba
    import pyarrow as pa

    limit = numba.config.NUMBA_NUM_THREADS
    wanted = max(1, min(int(pa.cpu_count()), limit))
    if numba.get_num_threads() != wanted:
        numba.set_num_threads(wanted)
    return wanted


# --- breadth-first search -------------------------------------------------------------------


@_kernel(inline="always")
def _test_and_set(bits, v):
    """Set bit ``v``; return whether it was clear."""
    word = v >> _SIX
    mask = _ONE << (v & _LOW6)
    old = bits[word]
    if old & mask:
        return False
    bits[word] = old | mask
    return True


@_kernel(inline="always")
def _is_set(bits, v):
    return (bits[v >> _SIX] >> (v & _LOW6)) & _ONE


@_kernel(inline="always")
def _save_level(state, lo, hi, level, unexplored, frontier_edges):
    """Where a search stands, into ``state`` (see LO..FRONTIER_EDGES): to resume it later."""
    state[LO] = lo
    state[HI] = hi
    state[LEVEL] = level
    state[UNEXPLORED_EDGES] = unexplored
    state[FRONTIER_EDGES] = frontier_edges


@_kernel()
def bfs(
    out_off, out_tgt, in_off, in_tgt, have_in, visited, queue, depth, state, max_depth, alpha, beta
):
    """Level-synchronous, direction-optimizing BFS (Beamer et al., SC'12).

    Top-down levels walk the frontier's out-edges; bottom-up levels let every unvisited vertex
    look for a parent among its in-edges (stopping at the first), which is cheaper once the
    frontier's edges are a large share of the edges left. The visited set is a bitmap (|V|/8
    bytes, in cache where a |V|-entry depth array would not be); depths are written in queue
    order, so the output needs no pass over a dense array.

    Parameters
    ----------
    out_off, out_tgt : uint64, uint32/uint64 arrays
        The out-CSR.
    in_off, in_tgt : same types
        The in-CSR (the out-CSR again for an undirected graph); unused while ``have_in`` is
        false.
    have_in : bool
        Whether the in-CSR was passed. Without it the search returns
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
                    for e in range(in_off[v], in_off[v + _ONE]):
                        if _is_set(frontier, np.uint64(in_tgt[e])):
                            _test_and_set(visited, v)
                            queue[tail] = v
                            depth[tail] = child
                            tail += 1
                            found_edges += np.int64(out_off[v + _ONE] - out_off[v])
                            break
        else:
            for i in range(lo, hi):
                u = np.uint64(queue[i])
                for e in range(out_off[u], out_off[u + _ONE]):
                    w = out_tgt[e]
                    if _test_and_set(visited, np.uint64(w)):
                        queue[tail] = w
                        depth[tail] = child
                        tail += 1
                        found_edges += np.int64(out_off[w + _ONE] - out_off[w])
        unexplored -= found_edges
        frontier_edges = found_edges
        lo = hi
        hi = tail
        level = child
    _save_level(state, lo, hi, level, unexplored, frontier_edges)
    return BFS_DONE


# --- PageRank -------------------------------------------------------------------------------


@_kernel(parallel=True)
def pagerank_init(rank, inverse_degree, contrib):
    """Contributions of the initial ranks (see :func:`pagerank_step`); the dangling total."""
    dangling = 0.0
    for v in prange(rank.size):
        r = rank[v]
        s = inverse_degree[v]
        if s == 0.0:
            contrib[v] = r
            dangling += r
        else:
            contrib[v] = r * s
    return dangling


@_kernel(parallel=True)
def pagerank_step(
    in_off, in_src, contrib, inverse_degree, rank, next_contrib, base, damping, write_rank, measure
):
    """One pull iteration, fused with the next one's contributions and the dangling total.

    ``r(v) = base + damping * sum(contrib[u] for in-edges u -> v)``, and
    ``next_contrib[v] = r(v) / outdeg(v)``. A dangling vertex's slot is never gathered (it
    has no out-edges), so it holds the vertex's rank instead, and the ranks themselves need
    not be written but in the last iteration (``write_rank``): two |V|-sized passes fewer per
    iteration. ``measure`` (with ``write_rank``, ``rank`` holding the previous ranks) also sums
    the L1 change. Returns ``(dangling total of r, L1 change or 0)``.
    """
    dangling = 0.0
    change = 0.0
    for v in prange(next_contrib.size):
        s = 0.0
        for e in range(in_off[v], in_off[v + 1]):
            s += contrib[in_src[e]]
        r = base + damping * s
        inv = inverse_degree[v]
        if inv == 0.0:
            next_contrib[v] = r
            dangling += r
        else:
            next_contrib[v] = r * inv
        if measure:
            change += abs(r - rank[v])
        if write_rank:
            rank[v] = r
    return dangling, change


# --- widest paths: an indexed binary heap --------------------------------------


@_kernel(inline="always")
def _place(heap_key, heap_vertex, position, i, key, vertex):
    """Put ``vertex`` with ``key`` at heap slot ``i`` and record where it is."""
    heap_key[i] = key
    heap_vertex[i] = vertex
    position[vertex] = i


@_kernel(inline="always")
def _sift_up(heap_key, heap_vertex, position, i):
    key = heap_key[i]
    vertex = heap_vertex[i]
    while i > 0:
        parent = (i - 1) >> 1
        if heap_key[parent] <= key:
            break
        _place(heap_key, heap_vertex, position, i, heap_key[parent], heap_vertex[parent])
        i = parent
    _place(heap_key, heap_vertex, position, i, key, vertex)


@_kernel(inline="always")
def _pop(heap_key, heap_vertex, position, size):
    """Remove the root; returns the new size (the caller has read the root already)."""
    position[heap_vertex[0]] = -2  # settled
    size -= 1
    if size == 0:
        return size
    key = heap_key[size]
    vertex = heap_vertex[size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        right = child + 1
        if right < size and heap_key[right] < heap_key[child]:
            child = right
        if heap_key[child] >= key:
            break
        _place(heap_key, heap_vertex, position, i, heap_key[child], heap_vertex[child])
        i = child
    _place(heap_key, heap_vertex, position, i, key, vertex)
    return size


@_kernel()
def widest(off, tgt, weight, source, width, heap_vertex):
    """Single-source widest paths: the largest bottleneck weight over paths from ``source``.

    A Dijkstra on ``-width`` with an indexed binary heap (decrease-key, so it never holds more
    than |V| entries): the bottleneck never grows along a path, so the widest unsettled vertex
    is final, whatever the weights' signs (buckets would need a weight range). ``width``
    (float64, all ``-inf``) receives the widths, ``+inf`` at the source; ``heap_vertex`` is
    scratch of |V| entries in the targets' unsigned type. Returns the number of settled
    vertices.
    """
    n = width.size
    heap_key = np.empty(n)
    position = np.full(n, -1, dtype=np.int32)
    heap_key[0] = -np.inf
    heap_vertex[0] = source
    position[source] = 0
    width[source] = np.inf
    size = 1
    settled = 0
    while size > 0:
        u = heap_vertex[0]
        wu = -heap_key[0]
        size = _pop(heap_key, heap_vertex, position, size)
        settled += 1
        for e in range(off[u], off[u + _ONE]):
            v = tgt[e]
            candidate = min(wu, weight[e])
            if candidate > width[v] and position[v] != -2:
                width[v] = candidate
                at = position[v]
                if at == -1:
                    at = size
                    size += 1
                heap_key[at] = -candidate
                heap_vertex[at] = v
                _sift_up(heap_key, heap_vertex, position, at)
    return settled


# --- Dijkstra by buckets (Dial / sequential delta-stepping) ---------------------------------


@_kernel(inline="always")
def _mark(occupied, slot, on):
    word = np.uint64(slot) >> _SIX
    bit = _ONE << (np.uint64(slot) & _LOW6)
    if on:
        occupied[word] |= bit
    else:
        occupied[word] &= ~bit


@_kernel()
def _next_occupied(occupied, slot, buckets):
    """Slots from ``slot`` (exclusive) to the next occupied one, circularly (one must be)."""
    steps = 1
    s = slot + 1
    while True:
        if s >= buckets:
            s = 0
        bits = occupied[np.uint64(s) >> _SIX] >> (np.uint64(s) & _LOW6)
        if bits != 0:
            lowest = bits & (~bits + _ONE)
            return steps + np.int64(np.log2(np.float64(lowest)))
        skip = min(64 - (s & 63), buckets - s)  # to the next word, or around to slot 0
        s += skip
        steps += skip


@_kernel()
def dijkstra_buckets(off, tgt, weight, source, target, dist, pred, delta, buckets, links):
    """Shortest paths with a circular array of distance buckets of width ``delta``.

    A vertex with tentative distance ``d`` sits in bucket ``floor(d / delta)`` (doubly linked
    lists threaded through ``links``, so a decrease moves it in O(1)). Buckets are emptied in
    order; an improved vertex is (re)inserted, also into the bucket being emptied, so the
    search is label-correcting and exact for any non-negative weights. With ``delta`` at most
    the smallest positive weight no vertex is processed twice (zero weights aside): Dial's
    algorithm, no heap. Every tentative distance lies within ``max weight`` of the bucket
    being emptied, so ``buckets > max_weight / delta + 1`` slots never collide. A bitmap of
    occupied slots skips runs of empty buckets 64 at a time.

    ``dist`` (float64, all ``inf``) receives the distances, ``pred`` (int64, all -1; or empty:
    not recorded) each reached vertex's predecessor on a shortest path; ``links`` is int64 scratch of shape ``(3, |V|)``. ``target >= 0``
    stops once the bucket holding the target has been emptied (its distance is then final).
    Returns the number of vertices processed.
    """
    head = np.full(buckets, -1, dtype=np.int64)
    occupied = np.zeros((buckets + 63) // 64, dtype=np.uint64)
    after = links[0]
    before = links[1]
    slot_of = links[2]
    slot_of[:] = -1
    track = pred.size > 0
    dist[source] = 0.0
    head[0] = source
    _mark(occupied, 0, True)
    after[source] = -1
    before[source] = -1
    slot_of[source] = 0
    pending = 1
    processed = 0
    current = 0
    found = False
    while pending > 0:
        slot = current % buckets
        if head[slot] < 0:
            current += _next_occupied(occupied, slot, buckets)
            continue
        while head[slot] >= 0:
            u = head[slot]
            nxt = after[u]
            head[slot] = nxt
            if nxt >= 0:
                before[nxt] = -1
            slot_of[u] = -1
            pending -= 1
            processed += 1
            if u == target:
                found = True
            du = dist[u]
            uu = np.uint64(u)
            for e in range(off[uu], off[uu + _ONE]):
                v = tgt[e]
                candidate = du + weight[e]
                if candidate < dist[v]:
                    dist[v] = candidate
                    if track:
                        pred[v] = u
                    old = slot_of[v]
                    if old >= 0:  # unlink from its old bucket
                        a = after[v]
                        b = before[v]
                        if b >= 0:
                            after[b] = a
                        else:
                            head[old] = a
                            if a < 0:
                                _mark(occupied, old, False)
                        if a >= 0:
                            before[a] = b
                    else:
                        pending += 1
                    k = np.int64(candidate / delta)
                    if k < current:
                        k = current
                    s = k % buckets
                    first = head[s]
                    after[v] = first
                    before[v] = -1
                    if first >= 0:
                        before[first] = v
                    else:
                        _mark(occupied, s, True)
                    head[s] = v
                    slot_of[v] = s
        _mark(occupied, slot, False)
        if found:
            break
        current += 1
    return processed


# --- weakly connected components: union-find ------------------------------------------------


@_kernel(inline="always")
def _root(parent, x):
    """Root of ``x`` with path halving; keeps ``parent[x] <= x``."""
    while True:
        p = parent[x]
        if p == x:
            return x
        g = parent[np.uint64(p)]
        parent[x] = g
        x = np.uint64(g)


@_kernel()
def components(off, tgt, skip_upper, parent):
    """Weakly connected components by union-find over the out-edges, in one pass.

    Each component is named by its smallest vertex: a union hangs the larger root under the
    smaller, so ``parent[x] <= x`` always holds, and a final ascending pass turns every
    ``parent`` into its root with one read. The edges are scanned in CSR order, which on a
    mesh keeps the union-find's reads near each other. ``skip_upper``: the CSR stores each
    undirected edge both ways, so only ``w < v`` needs a union. ``parent`` is int64 of |V|
    entries (overwritten); it receives the component of each vertex.
    """
    n = parent.size
    for v in range(n):
        parent[v] = v
    for v in range(n):
        vv = np.uint64(v)
        for e in range(off[vv], off[vv + _ONE]):
            w = np.uint64(tgt[e])
            if skip_upper and w >= vv:
                continue
            a = _root(parent, vv)
            b = _root(parent, w)
            if a < b:
                parent[b] = a
            elif b < a:
                parent[a] = b
    for v in range(n):
        parent[v] = parent[np.uint64(parent[v])]
    return parent
