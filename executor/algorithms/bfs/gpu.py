"""BFS on the GPU: degree-cut frontier levels, top-down or bottom-up (direction-optimizing).

The level kernels are the shared frontier operator (:mod:`graphdb.executor.operators.frontier_gpu`).
Per-level cost on high-diameter graphs: while the frontier holds at most ``SMALL_FRONTIER``
pieces, one thread block runs level after level without returning to the host
(``graphdb_frontier_bfs_small``: a grid's or a road network's levels cost a few round trips to
L2 each, not a launch and a host sync). Larger top-down frontiers go to the many-block level
kernel, which reads the queue length from device memory and rotates its counters itself, so the
host launches levels back to back and only reads the counters every few levels while the frontier
is small and steady (doubling the batch up to ``MAX_BATCH``), and every level while it grows fast
(where the direction decision needs them).
"""

from __future__ import annotations

import numpy as np

from ...abi import (
    BFS_UDC_K,
    CTRL_ACTIVATED_EDGES,
    CTRL_ACTIVATED_VERTICES,
    CTRL_DEEPEST,
    CTRL_STEPS_RUN,
    DIRECTION_ALPHA,
    DIRECTION_BETA,
    SMALL_FRONTIER,
    SMALL_FRONTIER_THREADS,
    ctrl_slot,
)
from ...cancel import checkpoint
from ...gpu import runtime as rt
from ...graph import Graph
from ...operators.frontier_gpu import FRONTIER, THREADS, PieceQueues, check_k, queue_capacity
from ..common import check_source
from ..spec import AlgorithmOutput, OperatorConfig
from .cpu import as_khop

__all__ = ["bfs", "bfs_depths_gpu", "direction", "khop"]

MAX_BATCH = 64
#: Levels one single-block launch may run before the host looks (a cancel is noticed then).
SMALL_MAX_STEPS = 4096


def direction(bottom_up: bool, nf: int, mf: int, unexplored: int, n: int, prev_nf: int,
              batch: int, optimizing: bool = True) -> tuple[bool, int]:
    """The next levels' direction (Beamer et al.: bottom-up once the frontier's out-edges
    outweigh the unexplored ones, top-down again once it shrinks small) and how many levels may
    run before the counters are read again, from a level's global counts (``nf`` vertices and
    ``mf`` out-edges in the frontier). Levels are batched only while top-down, far from the
    switch and growing slowly: then the counters skipped could not have changed the decision.
    One GPU's levels and a partitioned team's decide by this one rule."""
    if optimizing:
        if not bottom_up and mf * DIRECTION_ALPHA > unexplored:
            bottom_up = True
        elif bottom_up and nf * DIRECTION_BETA < n and nf < prev_nf:
            bottom_up = False
    steady = not bottom_up and mf * DIRECTION_ALPHA < unexplored and nf <= 2 * prev_nf
    return bottom_up, (min(batch * 2, MAX_BATCH) if steady else 1)


def bfs_depths_gpu(graph: Graph, source: int, max_depth: int | None = None, *,
                   K: int = BFS_UDC_K,
                   direction_optimizing: bool = True, small_frontier: int = SMALL_FRONTIER,
                   target: int | None = None, small=None):
    """(depth per vertex as a device int32 array, -1 unreached; stats).

    ``stats`` has ``reached`` (vertices with a depth), ``levels`` (the deepest depth + 1, the
    levels that found vertices) and how the levels ran. The in-edges (for the bottom-up levels)
    are uploaded only when a level first goes bottom-up: a small search, or one on a
    high-diameter graph, never needs them. ``small_frontier``: frontiers of at most this many
    pieces run in the single-block kernel (0: never). ``target``: stop once it has a depth
    (the depths of other vertices are then those of the levels run so far). ``small``: (kernel,
    dynamic shared bytes) in place of ``graphdb_frontier_bfs_small``, with its arguments
    (a variant in measurement: tools/gpu_variants)."""
    cp = rt.cp()
    K = check_k(K)
    n = graph.num_vertices
    out = rt.device_csr(graph, "out")
    inn = out if not graph.directed else None  # an undirected graph's in-edges are its out-edges
    m = out.num_edges
    ids = out.targets.dtype
    level_kernel = FRONTIER.kernel("graphdb_frontier_bfs_level", ids)
    small_kernel, small_shared = small or (FRONTIER.kernel("graphdb_frontier_bfs_small", ids), 0)
    seed = FRONTIER.kernel("graphdb_frontier_seed", ids)
    stream = rt.operator_stream()
    with rt.translate_oom("bfs on the GPU"), stream:
        # -1 everywhere (all bytes 0xFF), then 0 at the source by the seed kernel: no CuPy
        # elementwise kernel on BFS's path, so a BFS query never imports cupyx (runtime.py)
        depth = cp.empty(n, dtype=np.int32)
        depth.data.memset_async(0xFF, depth.nbytes)
        queues = PieceQueues(cp, queue_capacity(n, m, K), ids)
        seed((1,), (THREADS,), (out.offsets, ids.type(source), np.int32(K), depth,
                                queues.vertex[0], queues.piece[0], queues.ctrl))
        blocks = rt.grid_for(max(n, 1), THREADS)
        shared = (THREADS // 32) * 32 * (K + 1) * ids.itemsize
        level, batch, bottom_up = 0, 1, False
        stats = {"bottom_up_levels": 0, "small_levels": 0, "host_syncs": 1}
        ctrl = queues.ctrl.get()  # the source's pieces decide which kernel runs first
        prev_nf = 1
        while max_depth is None or level < max_depth:
            left = SMALL_MAX_STEPS if max_depth is None else min(SMALL_MAX_STEPS,
                                                                 max_depth - level)
            if not bottom_up and int(ctrl[ctrl_slot(level)]) <= small_frontier:
                small_kernel((1,), (SMALL_FRONTIER_THREADS,), (
                    out.offsets, out.targets, depth, queues.vertex[0], queues.piece[0],
                    queues.vertex[1], queues.piece[1], queues.ctrl, np.int32(level),
                    np.int32(K), np.int32(left), np.int64(small_frontier)), shared_mem=small_shared)
                ctrl = queues.ctrl.get()
                ran = int(ctrl[CTRL_STEPS_RUN])
                level += ran
                stats["small_levels"] += ran
            else:
                steps = min(batch, left)
                for _ in range(steps):
                    qv, qp, nv, np_ = queues.pair(level)
                    back = inn if bottom_up else out  # top-down levels never read the in-edges
                    level_kernel((blocks,), (THREADS,), (
                        out.offsets, out.targets, back.offsets, back.targets, depth,
                        np.int64(n), qv, qp, nv, np_, queues.ctrl, np.int32(level),
                        np.int32(K), np.int32(bottom_up), None, np.int64(0)), shared_mem=shared)
                    stats["bottom_up_levels"] += int(bottom_up)
                    level += 1
                ctrl = queues.ctrl.get()  # the one host round trip of this batch
            stats["host_syncs"] += 1
            checkpoint()
            slot = ctrl_slot(level)
            nf, mf = int(ctrl[slot + 1]), int(ctrl[slot + 2])
            if nf == 0 or (target is not None and int(depth[target:target + 1].get()[0]) >= 0):
                break
            unexplored = max(m - int(ctrl[CTRL_ACTIVATED_EDGES]), 0)
            bottom_up, batch = direction(bottom_up, nf, mf, unexplored, n, prev_nf, batch,
                                         direction_optimizing)
            if bottom_up and inn is None:
                inn = rt.device_csr(graph, "in")
            prev_nf = nf
    stats["reached"] = int(ctrl[CTRL_ACTIVATED_VERTICES])
    stats["levels"] = int(ctrl[CTRL_DEEPEST]) + 1
    stats["levels_run"] = level
    return depth, stats


def bfs(graph: Graph, config: OperatorConfig, source: int,
        max_depth: int | None = None) -> AlgorithmOutput:
    """GPU twin of :func:`graphdb.executor.algorithms.bfs.cpu.bfs`: the depths stay on the
    device; the result path keeps the reached vertices there (:mod:`graphdb.executor.results`)."""
    check_source(graph, source, "bfs")
    depth, stats = bfs_depths_gpu(graph, source, max_depth)
    levels = stats["levels"] if max_depth is None else min(stats["levels"], max_depth)
    return AlgorithmOutput.vertices({"depth": depth}, {"iterations": levels, **stats},
                                    reached="depth", drop="negative")


def khop(graph: Graph, config: OperatorConfig, source: int, k: int) -> AlgorithmOutput:
    """GPU twin of :func:`graphdb.executor.algorithms.bfs.cpu.khop`."""
    return as_khop(bfs(graph, config, source, k))
