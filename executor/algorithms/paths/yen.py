"""The k shortest loopless paths from a source to a target: Yen's algorithm.

The first path is a shortest path. The i-th is the cheapest of the candidates made from the
(i-1)-th: for each vertex of it (the *spur*), the path's prefix up to the spur (the *root*),
joined to a shortest path from the spur to the target that leaves out the root's other vertices
(so the path stays loopless) and the edges that the paths found so far take after the same root
(so it is new). Candidates are kept in a heap, each edge sequence once. Parallel edges make
distinct paths (they are distinct edges), as in SQL/PGQ.

Every spur search is a compiled Dijkstra with an indexed binary heap that skips banned vertices
and edges and stops when the target is settled (:func:`spur_path`); with unit weights it
returns paths with the fewest edges. Costs add the weights the view gives (the graph's weight
column, another column, or 1 per edge), which must be >= 0.
"""

from __future__ import annotations

import heapq

import numpy as np

from graphdb.storage.compiled import KernelSet

from ...cancel import checkpoint
from ...graph import Graph
from ..common import check_non_negative, check_source, kernel_csr
from ..spec import AlgorithmOutput, OperatorConfig
from ..sssp.cpu import _pop, _sift_up

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
        size = _pop(heap_key, heap_vertex, position, size)  # settles u
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
                _sift_up(heap_key, heap_vertex, position, at)
    return False


class _Search:
    """What the spur searches share: the graph's kernel CSR, the weights and scratch arrays."""

    def __init__(self, graph: Graph, weights: np.ndarray):
        self.off, self.tgt = kernel_csr(graph, "out")
        self.sources = graph.out_csr.sources()
        self.targets = graph.out_csr.targets
        self.weights = np.ascontiguousarray(weights, dtype=np.float64)
        n, m = graph.num_vertices, len(self.tgt)
        self.kernels = KERNELS.for_work(n + m)
        self.n = n
        self.banned_vertex = np.zeros(n, dtype=np.bool_)
        self.banned_edge = np.zeros(m, dtype=np.bool_)

    def path(self, source: int, target: int) -> tuple[list[int], float] | None:
        """The edges of a shortest path from ``source`` to ``target`` avoiding the banned
        vertices and edges, and its cost; None if there is none."""
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


def spur_path(graph: Graph, weights: np.ndarray, source: int, target: int,
              banned_vertices=(), banned_edges=()) -> tuple[list[int], float] | None:
    """A shortest path's edges (out-CSR positions) and cost, avoiding the vertices and edges
    given; None if there is none (a building block, and the tests' handle on the kernel)."""
    search = _Search(graph, weights)
    search.banned_vertex[list(banned_vertices)] = True
    search.banned_edge[list(banned_edges)] = True
    return search.path(source, target)


def yen(graph: Graph, weights: np.ndarray, source: int, target: int,
        k: int) -> list[tuple[list[int], float]]:
    """Up to ``k`` loopless paths from ``source`` to ``target`` by increasing cost, each as
    (its edges, its cost): Yen's algorithm (see the module docstring)."""
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
            root_cost += float(search.weights[edges[j]])
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
    if weights is None:
        weights = np.ones(graph.num_edges, dtype=np.float64)
    else:
        check_non_negative(graph, weights, "k_shortest_paths", weight)
    paths = yen(graph, weights, source, target, k)
    columns: dict[str, list] = {"path": [], "step": [], "vertex": [], "distance": []}
    targets = graph.out_csr.targets
    for i, (edges, _) in enumerate(paths):
        vertices = [source] + [int(targets[e]) for e in edges]
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
