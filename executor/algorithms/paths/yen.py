"""The k shortest loopless paths from a source to a target: Yen's algorithm.

The first path is a shortest path. The i-th is the cheapest of the candidates made from the
(i-1)-th: for each vertex of it (the *spur*), the path's prefix up to the spur (the *root*),
joined to a shortest path from the spur to the target that leaves out the root's other vertices
(so the path stays loopless) and the edges that the paths found so far take after the same root
(so it is new). Candidates are kept in a heap, each edge sequence once. Parallel edges make
distinct paths (they are distinct edges), as in SQL/PGQ.

Every spur search is compiled and skips banned vertices and edges (:func:`spur_path`): with
weights, a Dijkstra with an indexed binary heap that stops when the target is settled; for hop
counts (``weight => NULL``, or a graph without weights), a bidirectional BFS (networkx's
``shortest_simple_paths`` does the same), which meets in the middle instead of settling every
vertex closer than the target (k = 3 between two persons of a 50k-vertex, 1M-edge social
graph: 56 ms of Dijkstras, 5 ms). Costs add the weights the view gives (the graph's weight
column, another column, or 1 per edge), which must be >= 0.
"""

from __future__ import annotations

import heapq

import numpy as np

from graphdb.storage.compiled import KernelSet

from ...cancel import checkpoint
from ...graph import Graph
from ...pattern import in_index
from ..common import check_non_negative, check_source, kernel_csr
from ..spec import AlgorithmOutput, OperatorConfig
from ..sssp.cpu import heap_pop, heap_sift_up

__all__ = ["KERNELS", "k_shortest_paths", "spur_path", "yen"]

KERNELS = KernelSet(__name__)

_ONE = np.uint64(1)


@KERNELS.kernel()
def dijkstra_banned(off, tgt, weight, source, target, banned_vertex, banned_edge, dist,
                    pred_edge, heap_key, heap_vertex, position):
    """Dijkstra from ``source`` until ``target`` is settled, never entering a vertex with
    ``banned_vertex`` set nor taking an edge with ``banned_edge`` set. ``dist`` (all +inf),
    ``pred_edge`` (the edge each vertex was reached by), ``position`` (all -1) and the heap's
    arrays are of |V| entries. Returns whether the target was reached."""
    size = 1
    heap_key[0] = 0.0
    heap_vertex[0] = source
    position[source] = 0
    dist[source] = 0.0
    while size > 0:
        u = heap_vertex[0]
        du = heap_key[0]
        if u == target:
            position[u] = -2
            return True
        size = heap_pop(heap_key, heap_vertex, position, size)  # settles u
        uu = np.uint64(u)
        for e in range(off[uu], off[uu + _ONE]):
            v = tgt[e]
            if banned_edge[e] or banned_vertex[v] or position[v] == -2:
                continue
            candidate = du + weight[e]
            if candidate < dist[v]:
                dist[v] = candidate
                pred_edge[v] = e
                at = position[v]
                if at == -1:
                    at = size
                    size += 1
                heap_key[at] = candidate
                heap_vertex[at] = v
                heap_sift_up(heap_key, heap_vertex, position, at)
    return False


@KERNELS.kernel()
def bfs_banned(off, tgt, in_off, in_src, in_pos, source, target, banned_vertex, banned_edge,
               pred_edge, succ_edge, forward, backward):
    """Bidirectional BFS from ``source`` and into ``target`` (``source != target``), never
    entering a banned vertex nor taking a banned edge, a whole level of the smaller frontier at
    a time. ``pred_edge`` / ``succ_edge`` (all -1, |V|) get the out-CSR edge each vertex was
    reached by from the source / leaves by towards the target; ``forward`` / ``backward`` are
    |V| queues. Returns the vertex where the searches met (on a shortest path), or -1."""
    pred_edge[source] = -2
    succ_edge[target] = -2
    forward[0] = source
    backward[0] = target
    f_lo, f_hi, b_lo, b_hi = 0, 1, 0, 1
    while f_lo < f_hi and b_lo < b_hi:
        if f_hi - f_lo <= b_hi - b_lo:
            end = f_hi
            for i in range(f_lo, end):
                u = np.uint64(forward[i])
                for e in range(off[u], off[u + _ONE]):
                    if banned_edge[e]:
                        continue
                    v = tgt[e]
                    if banned_vertex[v] or pred_edge[v] != -1:
                        continue
                    pred_edge[v] = e
                    if succ_edge[v] != -1:
                        return v
                    forward[f_hi] = v
                    f_hi += 1
            f_lo = end
        else:
            end = b_hi
            for i in range(b_lo, end):
                u = np.uint64(backward[i])
                for slot in range(in_off[u], in_off[u + _ONE]):
                    e = in_pos[slot]
                    if banned_edge[e]:
                        continue
                    v = in_src[slot]
                    if banned_vertex[v] or succ_edge[v] != -1:
                        continue
                    succ_edge[v] = e
                    if pred_edge[v] != -1:
                        return v
                    backward[b_hi] = v
                    b_hi += 1
            b_lo = end
    return -1


class _Search:
    """What the spur searches share: the graph's kernel CSR, the weights and scratch arrays."""

    def __init__(self, graph: Graph, weights: np.ndarray | None):
        """``weights`` None: every edge costs 1 (the searches are BFS)."""
        self.off, self.tgt = kernel_csr(graph, "out")
        self.sources = graph.out_csr.sources()
        self.targets = graph.out_csr.targets
        n, m = graph.num_vertices, len(self.tgt)
        self.unit = weights is None
        self.weights = None
        if self.unit:
            self.inverse = in_index(graph)
        else:
            self.weights = np.ascontiguousarray(weights, dtype=np.float64)
        self.kernels = KERNELS.for_work(n + m)
        self.n = n
        self.banned_vertex = np.zeros(n, dtype=np.bool_)
        self.banned_edge = np.zeros(m, dtype=np.bool_)

    def path(self, source: int, target: int) -> tuple[list[int], float] | None:
        """The edges of a shortest path from ``source`` to ``target`` avoiding the banned
        vertices and edges, and its cost; None if there is none."""
        if self.unit:
            return self._bfs_path(source, target)
        n = self.n
        dist = np.full(n, np.inf)
        pred = np.full(n, -1, dtype=np.int64)
        found = self.kernels.dijkstra_banned(
            self.off, self.tgt, self.weights, source, target, self.banned_vertex,
            self.banned_edge, dist, pred, np.empty(n), np.empty(n, dtype=np.int64),
            np.full(n, -1, dtype=np.int64))
        if not found:
            return None
        edges, v = [], target
        while v != source:
            e = int(pred[v])
            edges.append(e)
            v = int(self.sources[e])
        edges.reverse()
        return edges, float(dist[target])

    def _bfs_path(self, source: int, target: int) -> tuple[list[int], float] | None:
        if source == target:
            return [], 0.0
        n, inv = self.n, self.inverse
        pred = np.full(n, -1, dtype=np.int64)
        succ = np.full(n, -1, dtype=np.int64)
        meet = int(self.kernels.bfs_banned(
            self.off, self.tgt, inv.offsets.view(np.uint64), inv.sources, inv.positions,
            source, target, self.banned_vertex, self.banned_edge, pred, succ,
            np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)))
        if meet < 0:
            return None
        edges, v = [], meet
        while v != source:
            e = int(pred[v])
            edges.append(e)
            v = int(self.sources[e])
        edges.reverse()
        v = meet
        while v != target:
            e = int(succ[v])
            edges.append(e)
            v = int(self.targets[e])
        return edges, float(len(edges))


def spur_path(graph: Graph, weights: np.ndarray | None, source: int, target: int,
              banned_vertices=(), banned_edges=()) -> tuple[list[int], float] | None:
    """A shortest path's edges (out-CSR positions) and cost, avoiding the vertices and edges
    given (``weights`` None: hops); None if there is none (a building block, and the tests'
    handle on the kernel)."""
    search = _Search(graph, weights)
    search.banned_vertex[list(banned_vertices)] = True
    search.banned_edge[list(banned_edges)] = True
    return search.path(source, target)


def yen(graph: Graph, weights: np.ndarray | None, source: int, target: int,
        k: int) -> list[tuple[list[int], float]]:
    """Up to ``k`` loopless paths from ``source`` to ``target`` by increasing cost, each as
    (its edges, its cost): Yen's algorithm (see the module docstring); ``weights`` None: hops."""
    search = _Search(graph, weights)
    if source == target:
        return [([], 0.0)]
    first = search.path(source, target)
    if first is None:
        return []
    found = [first]
    seen = {tuple(first[0])}
    candidates: list[tuple[float, int, tuple[int, ...]]] = []
    counter = 0
    while len(found) < k:
        checkpoint()
        edges, _ = found[-1]
        vertices = [source] + [int(search.targets[e]) for e in edges]
        root_cost = 0.0
        for j in range(len(edges)):
            spur = vertices[j]
            root = edges[:j]
            search.banned_vertex[:] = False
            search.banned_edge[:] = False
            search.banned_vertex[vertices[:j]] = True
            for path, _ in found:
                if len(path) > j and path[:j] == root:
                    search.banned_edge[path[j]] = True
            spur_found = search.path(spur, target)
            if spur_found is not None:
                total = tuple(root + spur_found[0])
                if total not in seen:
                    seen.add(total)
                    heapq.heappush(candidates, (root_cost + spur_found[1], counter, total))
                    counter += 1
            root_cost += 1.0 if search.unit else float(search.weights[edges[j]])
        if not candidates:
            break
        cost, _, best = heapq.heappop(candidates)
        found.append((list(best), cost))
    return found


def k_shortest_paths(graph: Graph, config: OperatorConfig, source: int, target: int, k: int,
                     weight: str | None = None) -> AlgorithmOutput:
    """The k shortest loopless paths, a row per vertex of each: (path, step, vertex, distance
    from the source along it)."""
    check_source(graph, source, "k_shortest_paths")
    check_source(graph, target, "k_shortest_paths")
    weights = graph.weights_of(weight)
    if weights is not None:
        check_non_negative(graph, weights, "k_shortest_paths", weight)
    paths = yen(graph, weights, source, target, k)
    columns: dict[str, list] = {"path": [], "step": [], "vertex": [], "distance": []}
    targets = graph.out_csr.targets
    for i, (edges, _) in enumerate(paths):
        vertices = [source] + [int(targets[e]) for e in edges]
        if weights is None:
            distance = np.arange(len(vertices), dtype=np.float64)
        else:
            distance = np.concatenate([[0.0], np.cumsum(weights[edges])]) if edges else [0.0]
        columns["path"] += [i] * len(vertices)
        columns["step"] += list(range(len(vertices)))
        columns["vertex"] += vertices
        columns["distance"] += list(distance)
    return AlgorithmOutput(
        {"path": np.asarray(columns["path"], dtype=np.int64),
         "step": np.asarray(columns["step"], dtype=np.int64),
         "vertex": np.asarray(columns["vertex"], dtype=np.int64),
         "distance": np.asarray(columns["distance"], dtype=np.float64)},
        {"paths": len(paths), "method": "yen"})
