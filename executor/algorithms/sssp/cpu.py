"""Single-source shortest paths (SSSP) and single-source widest paths (SSWP).

SSSP follows the Graphalytics definition: the smallest sum of edge weights over all directed
paths from the source (both directions for an undirected graph); unreachable vertices are not
reported. Weighted graphs run a compiled bucket-queue Dijkstra (:func:`dijkstra_buckets`:
Dial's algorithm with buckets as wide as the smallest positive weight, no heap) on the graph's
own CSR; with unit weights the distances are BFS depths, which is much cheaper. On a 1000 x 1000
grid with weights 1..100 it took 63 ms where an indexed binary heap took 170 ms and scipy's
Fibonacci-heap Dijkstra 195 ms (two cores).

SSWP gives, for every reachable vertex, the largest bottleneck (minimum edge weight) over all
paths from the source; the source itself has width +inf. The bottleneck never grows along a
path, so a heap search settles the widest unsettled vertex first (:func:`widest`),
for any weights.
"""

from __future__ import annotations

import numpy as np

from graphdb.storage.compiled import KernelSet

from ...errors import InvalidArgument
from ...graph import Graph
from ..bfs.cpu import bfs_levels
from ..common import check_non_negative, check_source, edge_weights, kernel_csr, per_source
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["KERNELS", "bucket_width", "dijkstra", "sssp", "sssp_distances", "sssp_many", "sswp",
           "sswp_widths"]

KERNELS = KernelSet(__name__)

_ONE = np.uint64(1)
_SIX = np.uint64(6)
_LOW6 = np.uint64(63)


# --- widest paths: an indexed binary heap ---------------------------------------------------


@KERNELS.kernel(inline="always")
def _place(heap_key, heap_vertex, position, i, key, vertex):
    """Put ``vertex`` with ``key`` at heap slot ``i`` and record where it is."""
    heap_key[i] = key
    heap_vertex[i] = vertex
    position[vertex] = i


@KERNELS.kernel(inline="always")
def heap_sift_up(heap_key, heap_vertex, position, i):
    key = heap_key[i]
    vertex = heap_vertex[i]
    while i > 0:
        parent = (i - 1) >> 1
        if heap_key[parent] <= key:
            break
        _place(heap_key, heap_vertex, position, i, heap_key[parent], heap_vertex[parent])
        i = parent
    _place(heap_key, heap_vertex, position, i, key, vertex)


@KERNELS.kernel(inline="always")
def heap_pop(heap_key, heap_vertex, position, size):
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


@KERNELS.kernel()
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
        size = heap_pop(heap_key, heap_vertex, position, size)
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
                heap_sift_up(heap_key, heap_vertex, position, at)
    return settled


# --- Dijkstra by buckets (Dial / sequential delta-stepping) ---------------------------------


@KERNELS.kernel(inline="always")
def _mark(occupied, slot, on):
    word = np.uint64(slot) >> _SIX
    bit = _ONE << (np.uint64(slot) & _LOW6)
    if on:
        occupied[word] |= bit
    else:
        occupied[word] &= ~bit


@KERNELS.kernel()
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


@KERNELS.kernel()
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


#: Most distance buckets of the SSSP bucket queue (a weight range wider than this many smallest
#: weights widens the buckets instead).
MAX_BUCKETS = 1 << 16


def bucket_width(graph: Graph, weights: np.ndarray) -> tuple[float, int]:
    """``(delta, buckets)`` for :func:`dijkstra_buckets`, kept per graph version.

    ``delta`` is the smallest positive weight (Dial's algorithm: no vertex is processed twice),
    widened when the weights span more than :data:`MAX_BUCKETS` of it (then a vertex may be
    processed again, as in delta-stepping, but the bucket array stays small); ``buckets`` is
    enough slots that the tentative distances, all within the largest weight of the bucket
    being emptied, never wrap onto it.
    """

    def build() -> tuple[float, int]:
        finite = weights[np.isfinite(weights)]
        positive = finite[finite > 0]
        if positive.size == 0:  # only zero (or infinite) weights: any width will do
            return 1.0, 2
        smallest, largest = float(positive.min()), float(positive.max())
        delta = max(smallest, largest / (MAX_BUCKETS - 2))
        return delta, int(np.ceil(largest / delta)) + 2

    return graph.derived("sssp:buckets", build)


def dijkstra(
    graph: Graph, source: int, weights: np.ndarray, *, target: int = -1, predecessors: bool = False
) -> tuple[np.ndarray, np.ndarray | None]:
    """Shortest paths along the out-CSR with ``weights`` (aligned with it, checked >= 0).

    Runs :func:`dijkstra_buckets`. Stops once ``target`` is final (``-1``: computes
    every reachable vertex). Returns the distances (float64, ``inf`` where unreached; with a
    target, vertices beyond it may hold upper bounds) and, when asked, each reached vertex's
    predecessor on a shortest path (int64, -1 for none).
    """
    n = graph.num_vertices
    off, tgt = kernel_csr(graph, "out")
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    delta, buckets = bucket_width(graph, weights)
    dist = np.full(n, np.inf)
    pred = np.full(n, -1, dtype=np.int64) if predecessors else np.zeros(0, dtype=np.int64)
    links = np.empty((3, n), dtype=np.int64)
    KERNELS.for_work(n + len(tgt)).dijkstra_buckets(
        off, tgt, weights, int(source), int(target), dist, pred, delta, buckets, links
    )
    return dist, (pred if predecessors else None)


def sssp_distances(graph: Graph, source: int, weight: str | None = None) -> np.ndarray:
    """Shortest-path distance of every vertex from ``source``.

    Parameters
    ----------
    graph : Graph
        The graph.
    source : int
        Internal id of the start vertex.
    weight : str or None
        The numeric edge column to add up; None: the graph's weights.

    Returns
    -------
    numpy.ndarray
        float64 per vertex, ``inf`` where unreachable.

    The graph's weights if it has them, else unit weights (the weight argument was checked
    against the graph when the query was bound).

    Raises
    ------
    InvalidArgument
        Negative or NaN weights.
    """
    weights = edge_weights(graph, weight)
    if weights is None:
        vertices, depth = bfs_levels(graph, source)
        dist = np.full(graph.num_vertices, np.inf)
        dist[vertices] = depth
        return dist
    check_non_negative(graph, weights, "sssp", weight)
    return dijkstra(graph, source, weights)[0]


def sswp_widths(graph: Graph, source: int) -> tuple[np.ndarray, int]:
    """Widest-path width of every vertex from ``source``.

    Parameters
    ----------
    graph : Graph
        A weighted graph.
    source : int
        Internal id of the start vertex.

    Returns
    -------
    width : numpy.ndarray
        float64 per vertex: ``inf`` at the source, ``-inf`` where unreachable.
    settled : int
        Vertices settled (taken off the heap), the search's iterations.

    Raises
    ------
    InvalidArgument
        The graph has no weights, or NaN weights.
    """
    weights = graph.weights("out")
    if weights is None:  # the spec's bind-time check refuses this for queries
        raise InvalidArgument(
            f"sswp(): graph '{graph.name}' has no edge weights; widest paths need them"
        )
    if weights.size and graph.derived("weights:out:nan", lambda: bool(np.isnan(weights).any()),
                                      nbytes=lambda _: 0):
        raise InvalidArgument(f"sswp(): graph '{graph.name}' has NaN edge weights")
    off, tgt = kernel_csr(graph, "out")
    width = np.full(graph.num_vertices, -np.inf)
    heap = np.empty(graph.num_vertices, dtype=tgt.dtype)
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    kernels = KERNELS.for_work(graph.num_vertices + len(tgt))
    settled = kernels.widest(off, tgt, weights, int(source), width, heap)
    return width, int(settled)


def sssp(graph: Graph, config: OperatorConfig, source: int,
         weight: str | None = None) -> AlgorithmOutput:
    """Shortest-path distances of the vertices reachable from ``source``."""
    check_source(graph, source, "sssp")
    weights = edge_weights(graph, weight)
    if weights is None:  # unit weights: hop counts from the BFS, already only reached vertices
        vertices, depth = bfs_levels(graph, source)
        return AlgorithmOutput(
            {"vertex": vertices, "distance": depth.astype(np.float64)},
            {"reached": int(vertices.size), "method": "bfs"},
        )
    dist = sssp_distances(graph, source, weight)
    return AlgorithmOutput.vertices({"distance": dist}, {"method": "dijkstra"},
                                    reached="distance", drop="pos_inf")


def sssp_many(graph: Graph, config: OperatorConfig, source: np.ndarray,
              weight: str | None = None) -> AlgorithmOutput:
    """:func:`sssp` from each of many sources (``FROM t, LATERAL sssp(g, t.v)``)."""
    return per_source(lambda s: sssp(graph, config, s, weight), source, ("vertex", "distance"))


def sswp(graph: Graph, config: OperatorConfig, source: int) -> AlgorithmOutput:
    """Widest-path widths of the vertices reachable from ``source``."""
    check_source(graph, source, "sswp")
    width, settled = sswp_widths(graph, source)
    return AlgorithmOutput.vertices({"width": width}, {"iterations": settled},
                                    reached="width", drop="neg_inf")
