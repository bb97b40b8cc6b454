"""Single-pair shortest path on the GPU, with the path itself.

The distance comes from the family's GPU search stopped once the target is settled: the BFS for
hop counts, the near-far SSSP (``target``: it stops at the first bucket boundary above the
target's distance) for weights. The path is then read back from the target by one thread block
(``graphdb_frontier_path``): each step takes the smallest in-neighbour one level (BFS) or one
exact edge weight (SSSP) closer to the source, so no predecessor array is kept during the search.
A weighted walk that meets a long run of zero-weight edges (where equal distances could lead it
round a cycle) gives up, and the CPU twin finds the path instead.
"""

from __future__ import annotations

import numpy as np

from ...gpu import runtime as rt
from ...graph import Graph
from ...operators.frontier_gpu import FRONTIER
from ..bfs.gpu import bfs_depths_gpu
from ..common import check_source
from ..spec import AlgorithmOutput, OperatorConfig
from ..sssp.gpu import sssp_distances_gpu

__all__ = ["shortest_path"]

#: Zero-weight steps in a row the read-back takes before it leaves the path to the CPU.
MAX_FLAT = 64
_NULL = np.uint64(0)


def _read_back(graph: Graph, source: int, target: int, depth, dist, capacity: int):
    """The path's vertices (source first), or None when the walk gave up."""
    cp = rt.cp()
    inn = rt.device_csr(graph, "in", weights=dist is not None)
    ids = inn.targets.dtype
    reversed_path = cp.empty(max(capacity, 1), dtype=ids)
    ctrl = cp.zeros(2, dtype=np.uint64)
    in_weights = inn.weights if dist is not None else None
    FRONTIER.kernel("graphdb_frontier_path", ids)((1,), (256,), (
        inn.offsets, inn.targets, _NULL if in_weights is None else in_weights,
        _NULL if depth is None else depth, _NULL if dist is None else dist, ids.type(source),
        ids.type(target), np.int64(capacity), np.int32(MAX_FLAT), reversed_path, ctrl))
    gave_up, length = (int(x) for x in ctrl.get())
    if gave_up:
        return None
    return reversed_path[:length].get()[::-1].astype(np.int64)


def shortest_path(graph: Graph, config: OperatorConfig, source: int, target: int,
                  weight: str | None = None) -> AlgorithmOutput:
    """GPU twin of :func:`graphdb.executor.algorithms.paths.cpu.shortest_path`."""
    check_source(graph, source, "shortest_path")
    check_source(graph, target, "shortest_path")
    path = distances = None
    with rt.operator_stream():
        if not graph.weighted:
            depth, _ = bfs_depths_gpu(graph, source, target=target)
            hops = int(depth[target:target + 1].get()[0])
            method = "bfs"
            if hops >= 0:
                path = _read_back(graph, source, target, depth, None, hops + 1)
                distances = np.arange(hops + 1, dtype=np.float64)
        else:
            dist, _ = sssp_distances_gpu(graph, source, target=target)
            method = "sssp_bounded"
            if np.isfinite(float(dist[target:target + 1].get()[0])):
                path = _read_back(graph, source, target, None, dist, graph.num_vertices)
                if path is None:  # zero-weight runs: the CPU's Dijkstra keeps predecessors
                    from .cpu import dijkstra_path

                    path, distances = dijkstra_path(graph, source, target, graph.weights("out"))
                    path = np.asarray(path, dtype=np.int64)
                    method = "sssp_bounded, path on the cpu"
                else:
                    distances = dist[rt.cp().asarray(path)].get()
    if path is None:
        path, distances = np.zeros(0, dtype=np.int64), np.zeros(0)
    return AlgorithmOutput(
        {"step": np.arange(len(path), dtype=np.int64), "vertex": path,
         "distance": np.asarray(distances, dtype=np.float64)},
        {"method": method, "hops": max(len(path) - 1, 0)})
