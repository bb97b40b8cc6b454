"""GPU traversals over a resident graph: degree-cut frontier BFS and near-far SSSP.

Both keep the frontier as a queue of pieces (vertex, piece number) of at most ``K`` edges
(EtaGraph's Unified Degree Cut, ``cuda/frontier.cu``). Same signatures and outputs as the CPU
twins in :mod:`graphdb.executor.algorithms`.

Per-level cost on high-diameter graphs: the level kernel reads the queue length from device
memory and rotates its counters itself, so the host launches levels back to back and only reads
the counters every few levels while the frontier is small and steady (doubling the batch up to
``MAX_BATCH``), and every level while it grows fast (where the direction decision needs them).
"""

from __future__ import annotations

import math

import numpy as np

from ..algorithms.registry import AlgorithmOutput, check_source
from ..cancel import checkpoint
from ..errors import InvalidArgument
from ..graph import Graph
from . import runtime as rt

__all__ = ["bfs", "bfs_depths_gpu", "sssp", "sssp_distances_gpu"]

#: Degree limit of a piece (edges per thread); a power of two <= 32. Tuned on RMAT and grids.
DEFAULT_K = 16
THREADS = 256
#: Beamer's direction-optimizing thresholds: go bottom-up when the frontier's edges exceed
#: the unexplored edges / ALPHA, back top-down when the frontier has fewer than V / BETA vertices.
ALPHA = 14.0
BETA = 24.0
MAX_BATCH = 64


def _check_k(K: int) -> int:
    if K < 1 or K > 32 or K & (K - 1):
        raise InvalidArgument(f"degree limit K must be a power of two in 1..32, got {K}")
    return K


class _PieceQueues:
    """Two piece queues (vertex ids, piece numbers) used alternately, and the counter block."""

    def __init__(self, cp, capacity: int, id_dtype):
        self.vertex = [cp.empty(capacity, dtype=id_dtype) for _ in range(2)]
        self.piece = [cp.empty(capacity, dtype=np.int32) for _ in range(2)]
        self.ctrl = cp.zeros(16, dtype=np.uint64)

    def pair(self, step: int):
        """(in vertex, in piece, out vertex, out piece) of step ``step``."""
        a, b = step % 2, (step + 1) % 2
        return self.vertex[a], self.piece[a], self.vertex[b], self.piece[b]


def _capacity(n: int, m: int, K: int) -> int:
    # Each vertex is queued at most once per BFS level set: sum of ceil(deg/K) <= V + E/K.
    return n + m // K + 1


def bfs_depths_gpu(graph: Graph, source: int, max_depth: int | None = None, *, K: int = DEFAULT_K,
                   direction_optimizing: bool = True):
    """(depth per vertex as a device int32 array, -1 unreached; number of levels; stats)."""
    cp = rt.cp()
    K = _check_k(K)
    n = graph.num_vertices
    out = rt.device_csr(graph, "out")
    inn = rt.device_csr(graph, "in") if direction_optimizing else out
    m = out.num_edges
    ids = out.targets.dtype
    level_kernel = rt.kernel("frontier", "graphdb_frontier_bfs_level", ids)
    seed = rt.kernel("frontier", "graphdb_frontier_seed", ids)
    stream = rt.operator_stream()
    with rt.translate_oom("bfs on the GPU"), stream:
        # -1 everywhere (all bytes 0xFF), then 0 at the source by the seed kernel: no CuPy
        # elementwise kernel on BFS's path, so a BFS query never imports cupyx (runtime.py)
        depth = cp.empty(n, dtype=np.int32)
        depth.data.memset_async(0xFF, depth.nbytes)
        queues = _PieceQueues(cp, _capacity(n, m, K), ids)
        seed((1,), (THREADS,), (out.offsets, ids.type(source), np.int32(K), depth,
                                queues.vertex[0], queues.piece[0], queues.ctrl))
        blocks = rt.grid_for(max(n, 1), THREADS)
        shared = (THREADS // 32) * 32 * (K + 1) * ids.itemsize
        level, batch, bottom_up = 0, 1, False
        stats = {"bottom_up_levels": 0, "host_syncs": 0}
        prev_nf = 1
        while max_depth is None or level < max_depth:
            steps = batch if max_depth is None else min(batch, max_depth - level)
            for _ in range(steps):
                qv, qp, nv, np_ = queues.pair(level)
                level_kernel((blocks,), (THREADS,), (
                    out.offsets, out.targets, inn.offsets, inn.targets, depth, np.int64(n),
                    qv, qp, nv, np_, queues.ctrl, np.int32(level), np.int32(K),
                    np.int32(bottom_up)), shared_mem=shared)
                stats["bottom_up_levels"] += int(bottom_up)
                level += 1
            ctrl = queues.ctrl.get()  # the one host round trip of this batch
            stats["host_syncs"] += 1
            checkpoint()
            slot = 4 * (level % 3)
            nf, mf = int(ctrl[slot + 1]), int(ctrl[slot + 2])
            if nf == 0:
                break
            unexplored = max(m - int(ctrl[13]), 0)
            if direction_optimizing:
                if not bottom_up and mf > unexplored / ALPHA:
                    bottom_up = True
                elif bottom_up and nf < n / BETA and nf < prev_nf:
                    bottom_up = False
            # Batch levels only while top-down, far from the switch and growing slowly: then the
            # counters we skip could not have changed the decision.
            steady = not bottom_up and mf * ALPHA < unexplored and nf <= 2 * prev_nf
            batch = min(batch * 2, MAX_BATCH) if steady else 1
            prev_nf = nf
    return depth, stats


def bfs(graph: Graph, source: int, max_depth: int | None = None) -> AlgorithmOutput:
    """GPU twin of :func:`graphdb.executor.algorithms.bfs._bfs_cpu`."""
    check_source(graph, source, "bfs")
    depth, stats = bfs_depths_gpu(graph, source, max_depth)
    with rt.operator_stream():
        # The reached vertices are picked on the host: the rows go there anyway, 4 bytes per
        # vertex cross the bus instead of 16 per reached vertex, and no elementwise kernel runs
        depth = depth.get()
    vertex = np.flatnonzero(depth >= 0)
    depths = depth[vertex].astype(np.int64)
    top = int(depths.max()) if depths.size else 0
    levels = top + 1 if max_depth is None else min(top + 1, max_depth)
    return AlgorithmOutput(
        {"vertex": vertex, "depth": depths},
        {"iterations": levels, "reached": int(vertex.size), **stats},
    )


def default_delta(weights_mean: float, avg_degree: float) -> float:
    """Bucket width of near-far SSSP: wide enough that a bucket holds a few frontiers' worth of
    work on low-degree (high-diameter) graphs, about one mean weight on dense ones."""
    return weights_mean * max(1.0, 32.0 / max(avg_degree, 1.0))


def sssp_distances_gpu(graph: Graph, source: int, *, K: int = DEFAULT_K,
                       delta: float | None = None):
    """(distance per vertex as a device float64 array, inf unreached; stats)."""
    cp = rt.cp()
    K = _check_k(K)
    n = graph.num_vertices
    out = rt.device_csr(graph, "out", weights=True)
    m = out.num_edges
    ids = out.targets.dtype
    relax = rt.kernel("frontier", "graphdb_frontier_sssp_relax", ids)
    bucket = rt.kernel("frontier", "graphdb_frontier_sssp_bucket", ids)
    stream = rt.operator_stream()
    with rt.translate_oom("sssp on the GPU"), stream:
        weights = out.weights if out.weights is not None else cp.ones(m, dtype=np.float64)
        if m and float(weights.min()) < 0:
            raise InvalidArgument("sssp(): edge weights must not be negative")
        if delta is None:
            mean = float(weights.mean()) if m else 1.0
            delta = default_delta(mean, m / max(n, 1))
        if not delta > 0:  # all-zero weights: any positive width terminates
            delta = 1.0
        dist = cp.full(n, np.inf, dtype=np.float64)
        dist[source] = 0.0
        stamp = cp.full(n, -1, dtype=np.int32)
        queues = _PieceQueues(cp, _capacity(n, m, K) * 2, ids)
        blocks = rt.grid_for(max(n, 1), THREADS)
        relax_threads = 128  # weights double the staged bytes: smaller blocks keep occupancy
        shared = (relax_threads // 32) * 32 * (K + 1) * (8 + ids.itemsize)
        capacity = queues.vertex[0].size
        lo, hi = 0.0, float(delta)
        step = 0
        stats = {"buckets": 0, "relax_rounds": 0, "delta": float(delta)}
        while True:
            _, _, nv, np_ = queues.pair(step)
            bucket((blocks,), (THREADS,), (out.offsets, dist, np.int64(n), np.float64(lo),
                                           np.float64(hi), nv, np_, queues.ctrl,
                                           np.int32(step), np.int32(K)))
            step += 1
            stats["buckets"] += 1
            checkpoint()
            ctrl = queues.ctrl.get()
            slot = 4 * (step % 3)
            qlen = int(ctrl[slot])
            if qlen == 0:
                inv = int(ctrl[slot + 3])
                if inv == 0:
                    break  # nothing left at or above hi: done
                nearest = float(np.array([0x7FF0000000000000 - inv], dtype=np.uint64)
                                .view(np.float64)[0])
                lo, hi = nearest, nearest + delta
                continue
            while qlen:
                if qlen > capacity:  # cannot happen with per-round dedup; guard anyway
                    raise RuntimeError("sssp frontier queue overflow")
                qv, qp, nv, np_ = queues.pair(step)
                relax_blocks = max(1, min(rt.grid_for(qlen, relax_threads, per_sm=16),
                                          math.ceil(qlen / relax_threads)))
                relax((relax_blocks,), (relax_threads,), (
                    out.offsets, out.targets, weights, dist, stamp, qv, qp, nv, np_,
                    queues.ctrl, np.int32(step), np.float64(hi), np.int32(K)),
                    shared_mem=shared)
                step += 1
                stats["relax_rounds"] += 1
                qlen = int(queues.ctrl[4 * (step % 3)].get())
            lo, hi = hi, hi + delta
    return dist, stats


def sssp(graph: Graph, source: int, weight: str | None = None) -> AlgorithmOutput:
    """GPU twin of the CPU sssp: distances of reached vertices (edge weights, else 1 per edge)."""
    check_source(graph, source, "sssp")
    cp = rt.cp()
    dist, stats = sssp_distances_gpu(graph, source)
    with rt.operator_stream():
        reached = cp.flatnonzero(cp.isfinite(dist))
        values = dist[reached]
    return AlgorithmOutput(
        {"vertex": cp.asnumpy(reached).astype(np.int64), "distance": cp.asnumpy(values)},
        {"reached": int(reached.size), **stats},
    )
