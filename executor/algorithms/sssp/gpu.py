"""SSSP on the GPU: near-far buckets of width delta, Bellman-Ford rounds inside a bucket, over
the shared degree-cut frontier operator (:mod:`graphdb.executor.operators.frontier_gpu`).

While a bucket's queue holds at most ``SMALL_FRONTIER`` pieces its rounds run in one thread
block without returning to the host (``graphdb_frontier_relax_rounds``): on road-like graphs most
rounds are small, and each would otherwise cost a launch and a host read of the queue length."""

from __future__ import annotations

import math

import numpy as np

from ...abi import CTRL_STEPS_RUN, SMALL_FRONTIER, SMALL_FRONTIER_THREADS, UDC_K, ctrl_slot
from ...cancel import checkpoint
from ...errors import InvalidArgument
from ...gpu import runtime as rt
from ...graph import Graph
from ...operators.frontier_gpu import FRONTIER, THREADS, PieceQueues, check_k, queue_capacity
from ..common import check_non_negative, check_source
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["default_delta", "sssp", "sssp_distances_gpu", "sswp", "sswp_widths_gpu"]


def default_delta(weights_mean: float, avg_degree: float) -> float:
    """Bucket width of near-far SSSP: wide enough that a bucket holds a few frontiers' worth of
    work on low-degree (high-diameter) graphs, about one mean weight on dense ones."""
    return weights_mean * max(1.0, 32.0 / max(avg_degree, 1.0))


#: Rounds one single-block launch may run before the host looks.
SMALL_MAX_STEPS = 4096


def sssp_distances_gpu(graph: Graph, source: int, *, K: int = UDC_K,
                       delta: float | None = None, target: int | None = None,
                       small_frontier: int = SMALL_FRONTIER):
    """(distance per vertex as a device float64 array, inf unreached; stats).

    With ``target`` the search stops once the target's distance is final (the first bucket
    boundary above it): distances below it are final, the others may be too large.
    ``small_frontier``: queues of at most this many pieces run in the single-block kernel."""
    cp = rt.cp()
    K = check_k(K)
    n = graph.num_vertices
    out = rt.device_csr(graph, "out", weights=True)
    m = out.num_edges
    ids = out.targets.dtype
    relax = FRONTIER.kernel("graphdb_frontier_sssp_relax", ids)
    small = FRONTIER.kernel("graphdb_frontier_relax_rounds", ids, "false")
    bucket = FRONTIER.kernel("graphdb_frontier_sssp_bucket", ids)
    stream = rt.operator_stream()
    with rt.translate_oom("sssp on the GPU"), stream:
        weights = out.weights if out.weights is not None else cp.ones(m, dtype=np.float64)
        check_non_negative(graph, out.weights, "sssp")
        if delta is None:
            mean = float(weights.mean()) if m else 1.0
            delta = default_delta(mean, m / max(n, 1))
        if not delta > 0:  # all-zero weights: any positive width terminates
            delta = 1.0
        dist = cp.full(n, np.inf, dtype=np.float64)
        dist[source] = 0.0
        stamp = cp.full(n, -1, dtype=np.int32)
        queues = PieceQueues(cp, queue_capacity(n, m, K) * 2, ids)
        blocks = rt.grid_for(max(n, 1), THREADS)
        relax_threads = 128  # weights double the staged bytes: smaller blocks keep occupancy
        shared = (relax_threads // 32) * 32 * (K + 1) * (8 + ids.itemsize)
        capacity = queues.vertex[0].size
        lo, hi = 0.0, float(delta)
        step = 0
        stats = {"buckets": 0, "relax_rounds": 0, "small_rounds": 0, "delta": float(delta)}
        while True:
            if target is not None and float(dist[target].get()) < lo:
                break  # every distance below lo is final
            _, _, nv, np_ = queues.pair(step)
            bucket((blocks,), (THREADS,), (out.offsets, dist, np.int64(n), np.float64(lo),
                                           np.float64(hi), nv, np_, queues.ctrl,
                                           np.int32(step), np.int32(K), np.int64(0)))
            step += 1
            stats["buckets"] += 1
            checkpoint()
            ctrl = queues.ctrl.get()
            slot = ctrl_slot(step)
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
                if qlen <= small_frontier:
                    small((1,), (SMALL_FRONTIER_THREADS,), (
                        out.offsets, out.targets, weights, dist, stamp, queues.vertex[0],
                        queues.piece[0], queues.vertex[1], queues.piece[1], queues.ctrl,
                        np.int32(step), np.float64(hi), np.int32(K),
                        np.int32(SMALL_MAX_STEPS), np.int64(small_frontier)))
                    ctrl = queues.ctrl.get()
                    ran = int(ctrl[CTRL_STEPS_RUN])
                    step += ran
                    stats["relax_rounds"] += ran
                    stats["small_rounds"] += ran
                    qlen = int(ctrl[ctrl_slot(step)])
                    checkpoint()
                    continue
                qv, qp, nv, np_ = queues.pair(step)
                relax_blocks = max(1, min(rt.grid_for(qlen, relax_threads, per_sm=16),
                                          math.ceil(qlen / relax_threads)))
                relax((relax_blocks,), (relax_threads,), (
                    out.offsets, out.targets, weights, dist, stamp, qv, qp, nv, np_,
                    queues.ctrl, np.int32(step), np.float64(hi), np.int32(K), None),
                    shared_mem=shared)
                step += 1
                stats["relax_rounds"] += 1
                qlen = int(queues.ctrl[ctrl_slot(step)].get())
            lo, hi = hi, hi + delta
    return dist, stats


def sssp(graph: Graph, config: OperatorConfig, source: int,
         weight: str | None = None) -> AlgorithmOutput:
    """GPU twin of :func:`graphdb.executor.algorithms.sssp.cpu.sssp`: distances of reached
    vertices (edge weights, else 1 per edge), kept on the device for the result path."""
    check_source(graph, source, "sssp")
    dist, stats = sssp_distances_gpu(graph, source)
    return AlgorithmOutput.vertices({"distance": dist}, stats, reached="distance",
                                    drop="pos_inf")


def sswp_widths_gpu(graph: Graph, source: int, *, K: int = UDC_K,
                    small_frontier: int = SMALL_FRONTIER):
    """(width per vertex as a device float64 array: +inf at the source, -inf unreached; stats).

    Label-correcting rounds over the vertices whose width grew (``graphdb_frontier_relax_rounds``),
    in one thread block while the queue is small, else one many-block launch per round."""
    cp = rt.cp()
    K = check_k(K)
    n = graph.num_vertices
    out = rt.device_csr(graph, "out", weights=True)
    if out.weights is None:  # the spec's bind-time check refuses this for queries
        raise InvalidArgument(f"sswp(): graph '{graph.name}' has no edge weights; widest paths "
                              "need them")
    m = out.num_edges
    ids = out.targets.dtype
    rounds = FRONTIER.kernel("graphdb_frontier_relax_rounds", ids, "true")
    stream = rt.operator_stream()
    with rt.translate_oom("sswp on the GPU"), stream:
        if m and graph.derived("weights:out:nan", lambda: bool(cp.isnan(out.weights).any()),
                               nbytes=lambda _: 0):
            raise InvalidArgument(f"sswp(): graph '{graph.name}' has NaN edge weights")
        width = cp.full(n, -np.inf, dtype=np.float64)
        width[source] = np.inf
        stamp = cp.empty(n, dtype=np.int32)
        stamp.data.memset_async(0xFF, stamp.nbytes)  # -1: no round yet
        queues = PieceQueues(cp, queue_capacity(n, m, K), ids)
        lo, hi = (int(x) for x in out.offsets[source:source + 2].get())
        pieces = -(-(hi - lo) // K)
        if pieces:  # the source's pieces: the first queue
            queues.vertex[0][:pieces].set(np.full(pieces, source, dtype=ids))
            queues.piece[0][:pieces].set(np.arange(pieces, dtype=np.int32))
            queues.ctrl[:1].set(np.array([pieces], dtype=np.uint64))
        step, qlen = 0, pieces
        stats = {"rounds": 0, "small_rounds": 0}
        while qlen:
            small = qlen <= small_frontier
            grid = 1 if small else rt.grid_for(qlen, THREADS)
            rounds((grid,), (SMALL_FRONTIER_THREADS if small else THREADS,), (
                out.offsets, out.targets, out.weights, width, stamp, queues.vertex[0],
                queues.piece[0], queues.vertex[1], queues.piece[1], queues.ctrl,
                np.int32(step), np.float64(np.inf), np.int32(K),
                np.int32(SMALL_MAX_STEPS if small else 1), np.int64(small_frontier)))
            ctrl = queues.ctrl.get()
            ran = int(ctrl[CTRL_STEPS_RUN])
            step += ran
            stats["rounds"] += ran
            stats["small_rounds"] += ran if small else 0
            qlen = int(ctrl[ctrl_slot(step)])
            checkpoint()
    return width, stats


def sswp(graph: Graph, config: OperatorConfig, source: int) -> AlgorithmOutput:
    """GPU twin of :func:`graphdb.executor.algorithms.sssp.cpu.sswp`."""
    check_source(graph, source, "sswp")
    width, stats = sswp_widths_gpu(graph, source)
    return AlgorithmOutput.vertices({"width": width}, stats, reached="width", drop="neg_inf")
