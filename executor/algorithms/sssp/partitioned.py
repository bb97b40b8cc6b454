"""SSSP over several ranks: near-far buckets, each rank's rounds run by the one-device relax on
its shard, lowered distances of other ranks' vertices routed to their owners and merged by MIN.

Rank r owns the vertices ``lo..hi-1`` (their out-rows and weights are its shard) and keeps a
distance for every vertex, authoritative for its own. A bucket ``[lo, hi)`` starts with each rank
queueing its vertices whose distance falls in it (the one-GPU bucket kernel, over its range);
then rounds until no rank has work left, each launched on every rank before the host waits:

1. the one-GPU relaxation of the rank's queue on its shard (degree-cut pieces staged in shared
   memory, an atomic MIN per edge), which flags every vertex whose distance it lowered;
2. the flagged vertices of other ranks, with their distances, grouped by owner on the device;
   the host reads the group sizes and the rank's next queue length (the round's one read);
3. one all-to-all of ids and one of distances, then each owner merges what it received by MIN
   and queues what dropped below ``hi`` (once per round: the relaxation's stamps).

The search ends when no rank has a vertex left at or above the last bucket (the smallest such
distance, over the ranks, places the next bucket, skipping empty ones). The distances are the
least fixed point of ``d(v) = min(d(u) + w(u, v))``, the one-device result to the last bit. The
owned slices are gathered on one GPU (local rank 0) for the result path. On the CPU (numpy
ranks) each step is the same in numpy, in the very same loop.
"""

from __future__ import annotations

import numpy as np

from ...abi import UDC_K, ctrl_slot
from ...cancel import checkpoint
from ...graph import Graph
from ...operators.partitioned import Team, expand_rows, min_by_key
from ..common import check_source, negative_weights
from ..spec import AlgorithmOutput, OperatorConfig
from .gpu import default_delta

__all__ = ["sssp", "sssp_partitioned"]

_INF_BITS = 0x7FF0000000000000


def sssp_partitioned(graph: Graph, config: OperatorConfig, source: int):
    """(distance per vertex on local rank 0's device or the host, inf unreached; metrics)."""
    team = Team(graph, config, ("out", "weights"))
    ranks = _GpuRelax.make(team, source) if team.xp is not np else _HostRelax.make(team, source)
    lowest, total, count = team.total(team.each(lambda i: ranks[i].weight_totals()))
    if not lowest >= 0:  # NaN compares false too
        raise negative_weights(graph, "sssp")
    delta = default_delta(total / count if count else 1.0,
                          graph.num_edges / max(graph.num_vertices, 1))
    if not delta > 0:
        delta = 1.0
    lo, hi, step = 0.0, float(delta), 0
    buckets = rounds = 0
    while True:
        checkpoint()
        team.each(lambda i: ranks[i].bucket(lo, hi, step))
        step += 1
        buckets += 1
        queued, above = _combine(team, team.each(lambda i: ranks[i].bucket_counts(step)))
        if not queued:
            if not above:
                break  # nothing left at or above hi
            nearest = float(np.array([_INF_BITS - above], dtype=np.uint64).view(np.float64)[0])
            lo, hi = nearest, nearest + delta
            continue
        while True:
            checkpoint()
            team.each(lambda i: ranks[i].relax(step, hi))
            team.each(lambda i: ranks[i].compact())
            info = team.read(team.each(lambda i: ranks[i].round_counts(step + 1)))
            sends = [np.asarray(x[:team.size], dtype=np.int64) for x in info]
            left = sum(int(x[team.size]) for x in info)
            sent = sum(int(s.sum()) for s in sends)
            if team.local < team.size:  # a cluster job: the totals of every process
                left, sent = (int(x) for x in team.total(
                    [[left, sent]], dtype=np.int64))
            if sent:
                firsts = [ranks[i].send_first() for i in range(team.local)]
                ids, got = team.comm.alltoallv([r.send_ids for r in ranks], sends,
                                               send_first=firsts,
                                               out=[r.recv_ids for r in ranks])
                values, _ = team.comm.alltoallv([r.send_values for r in ranks], sends, got,
                                                send_first=firsts,
                                                out=[r.recv_values for r in ranks])
                team.each(lambda i: ranks[i].merge(int(got[i].sum()), step, hi))
            step += 1
            rounds += 1
            team.steps += 1
            if not left and not sent:
                break
        lo, hi = hi, hi + delta
    if team.size == 1:
        dist = ranks[0].dist
    else:
        dist = team.collect(team.each(lambda i: ranks[i].owned()))
    return dist, team.metrics(delta=float(delta), buckets=buckets, relax_rounds=rounds)


def _combine(team: Team, per_rank: list) -> tuple[int, int]:
    """(queued pieces summed, the largest 'above' mark) over every rank."""
    values = team.read(per_rank)
    queued = sum(int(v[0]) for v in values)
    above = max(int(v[1]) for v in values)
    if team.local < team.size:
        queued = int(team.total([[queued]], dtype=np.int64)[0])
        above = int(team.total([[above]], op="max", dtype=np.int64)[0])
    return queued, above


class _HostRelax:
    """A numpy rank: its queue as an array of its vertices, the rounds as array operations
    (Jacobi: every candidate of a round from the distances before it; the same fixed point)."""

    @classmethod
    def make(cls, team: Team, source: int) -> list:
        return [cls(team, shard, source) for shard in team.shards(("out", "weights"))]

    def __init__(self, team: Team, shard, source: int):
        n = team.n
        self.team, self.n, self.shard, self.lo, self.hi = team, n, shard, shard.lo, shard.hi
        self.weights = (shard.out.weights if shard.out.weights is not None
                        else np.ones(shard.out.num_edges))
        self.dist = np.full(n, np.inf)
        if n:
            self.dist[source] = 0.0
        self.queue = np.zeros(0, dtype=np.int64)
        self.changed = np.zeros(n, dtype=bool)
        self.above = 0
        self.recv_ids = np.zeros(n, dtype=np.int64)
        self.recv_values = np.zeros(n)

    def weight_totals(self):
        w = self.weights
        return [w.min() if w.size else np.inf, w.sum(), w.size]

    def bucket(self, lo: float, hi: float, step: int) -> None:
        own = self.dist[self.lo:self.hi]
        self.queue = self.lo + np.flatnonzero((own >= lo) & (own < hi))
        rest = own[(own >= hi) & np.isfinite(own)]
        self.above = 0 if not rest.size else \
            _INF_BITS - int(np.array([rest.min()]).view(np.uint64)[0])

    def bucket_counts(self, step: int):
        return np.array([self.queue.size, self.above], dtype=np.uint64)

    def relax(self, step: int, hi: float) -> None:
        edges, which = expand_rows(np, self.shard.out.offsets, self.queue)
        targets = self.shard.out.targets[edges].astype(np.int64)
        ids, best = min_by_key(np, targets, self.dist[self.queue][which] + self.weights[edges],
                               self.n)
        better = best < self.dist[ids]
        ids, best = ids[better], best[better]
        self.dist[ids] = best
        self.changed[ids] = True
        own = (ids >= self.lo) & (ids < self.hi) & (best < hi)
        self.queue = ids[own]

    def compact(self) -> None:
        flagged = np.flatnonzero(self.changed)
        self.changed[:] = False
        flagged = flagged[(flagged < self.lo) | (flagged >= self.hi)]  # ascending: by owner
        self.send_ids, self.send_values = flagged, self.dist[flagged]
        bounds = self.team.segments.bounds
        self.sends = np.diff(np.searchsorted(flagged, bounds)).astype(np.int64)

    def round_counts(self, step: int):
        return np.concatenate((self.sends, [self.queue.size])).astype(np.uint64)

    def send_first(self):
        return np.concatenate(([0], np.cumsum(self.sends)[:-1])).astype(np.int64)

    def merge(self, received: int, step: int, hi: float) -> None:
        ids, values = min_by_key(np, self.recv_ids[:received], self.recv_values[:received],
                                 self.n)
        better = values < self.dist[ids]
        ids, values = ids[better], values[better]
        self.dist[ids] = values
        self.queue = np.union1d(self.queue, ids[values < hi])

    def owned(self):
        return self.dist[self.lo:self.hi]


class _GpuRelax:
    """A GPU rank: the one-GPU bucket and relax kernels on its shard, its piece queues and
    stamps, and the grouping and merge of lowered distances (``partitioned.cu``); every buffer
    is allocated once for the query."""

    @classmethod
    def make(cls, team: Team, source: int) -> list:
        shards = team.shards(("out", "weights"))
        return team.each(lambda i: cls(team, i, shards[i], source))

    def __init__(self, team: Team, i: int, shard, source: int):
        from ...gpu import runtime as rt
        from ...operators.frontier_gpu import FRONTIER, THREADS, PieceQueues, queue_capacity
        from ...operators.partitioned import PARTITIONED

        cp = self.cp = rt.cp()
        n = team.n
        self.team, self.i, self.rank = team, i, team.comm.ranks[i]
        self.n, self.shard, self.lo, self.hi = n, shard, shard.lo, shard.hi
        out = shard.out
        ids = out.targets.dtype
        self.K = UDC_K
        self.relax_k = FRONTIER.kernel("graphdb_frontier_sssp_relax", ids)
        self.bucket_k = FRONTIER.kernel("graphdb_frontier_sssp_bucket", ids)
        self.compact_k = PARTITIONED.kernel("graphdb_team_sssp_compact", ids)
        self.merge_k = PARTITIONED.kernel("graphdb_team_sssp_apply", ids)
        self.weights = out.weights if out.weights is not None else \
            cp.ones(out.num_edges, dtype=np.float64)
        self.dist = cp.full(n, np.inf, dtype=np.float64)
        if n:
            self.dist[source:source + 1] = 0.0
        self.stamp = cp.full(n, -1, dtype=np.int32)
        self.changed = cp.zeros(n, dtype=np.uint8)
        self.queues = PieceQueues(cp, queue_capacity(n, out.num_edges, self.K) * 2, ids)
        size, parts = team.size, team.size
        self.capacity = max(team.widest(), 1)
        self.send_ids = cp.empty(self.capacity * parts, dtype=ids)
        self.send_values = cp.empty(self.capacity * parts, dtype=np.float64)
        self.recv_ids = cp.empty(self.capacity * max(size - 1, 1), dtype=ids)
        self.recv_values = cp.empty(self.capacity * max(size - 1, 1), dtype=np.float64)
        self.counts = cp.zeros(parts + 1, dtype=np.uint64)
        self.bounds = cp.asarray(team.segments.bounds.astype(np.int64))
        self.scan_blocks = rt.grid_for(max(self.hi - self.lo, 1), THREADS)
        self.all_blocks = rt.grid_for(max(n, 1), THREADS)
        self.threads = THREADS
        self.relax_threads = 128  # weights double the staged bytes: smaller blocks, occupancy
        self.relax_blocks = rt.grid_for(max(out.num_edges // self.K, 1), self.relax_threads,
                                        per_sm=16)
        self.shared = (self.relax_threads // 32) * 32 * (self.K + 1) * (8 + ids.itemsize)

    def weight_totals(self):
        """(smallest, sum, count) of the shard's weights: two passes over them, made once per
        graph version (held beside the shard)."""
        w = self.weights
        if not w.size:
            return [np.inf, 0.0, 0]
        team = self.team
        cut = "-".join(str(int(b)) for b in team.segments.bounds)
        return team.graph.derived(f"shard:{cut}:{self.rank}:weight_totals",
                                  lambda: [w.min(), w.sum(), w.size],
                                  device=team.device_of(self.i), nbytes=lambda _: 0)

    def bucket(self, lo: float, hi: float, step: int) -> None:
        _, _, nv, np_ = self.queues.pair(step)
        self.bucket_k((self.scan_blocks,), (self.threads,), (
            self.shard.out.offsets, self.dist, np.int64(self.hi), np.float64(lo),
            np.float64(hi), nv, np_, self.queues.ctrl, np.int32(step), np.int32(self.K),
            np.int64(self.lo)))

    def bucket_counts(self, step: int):
        slot = ctrl_slot(step)
        return self.queues.ctrl[slot:slot + 4:3]  # queue length, the 'above' mark

    def relax(self, step: int, hi: float) -> None:
        qv, qp, nv, np_ = self.queues.pair(step)
        self.relax_k((self.relax_blocks,), (self.relax_threads,), (
            self.shard.out.offsets, self.shard.out.targets, self.weights, self.dist,
            self.stamp, qv, qp, nv, np_, self.queues.ctrl, np.int32(step), np.float64(hi),
            np.int32(self.K), self.changed), shared_mem=self.shared)

    def compact(self) -> None:
        self.counts.fill(0)
        self.compact_k((self.all_blocks,), (self.threads,), (
            self.changed, self.dist, np.int64(self.n), self.bounds,
            np.int32(self.team.size), np.int32(self.rank), np.int64(self.capacity),
            self.send_ids, self.send_values, self.counts))

    def round_counts(self, step: int):
        self.counts[-1:] = self.queues.ctrl[ctrl_slot(step):ctrl_slot(step) + 1]
        return self.counts

    def send_first(self):
        return np.arange(self.team.size, dtype=np.int64) * self.capacity

    def merge(self, received: int, step: int, hi: float) -> None:
        if not received:
            return
        _, _, nv, np_ = self.queues.pair(step)
        from ...gpu import runtime as rt

        self.merge_k((rt.grid_for(received, self.threads),), (self.threads,), (
            self.recv_ids, self.recv_values, np.int64(received), self.shard.out.offsets,
            self.dist, self.stamp, nv, np_, self.queues.ctrl, np.int32(step), np.float64(hi),
            np.int32(self.K)))

    def owned(self):
        return self.dist[self.lo:self.hi]


def sssp(graph: Graph, config: OperatorConfig, source: int,
         weight: str | None = None) -> AlgorithmOutput:
    """Partitioned twin of :func:`graphdb.executor.algorithms.sssp.cpu.sssp`: the distances
    stay where the ranks computed them (local rank 0's device) for the result path."""
    check_source(graph, source, "sssp")
    distance, metrics = sssp_partitioned(graph, config, source)
    return AlgorithmOutput.vertices({"distance": distance}, metrics, reached="distance",
                                    drop="pos_inf")
