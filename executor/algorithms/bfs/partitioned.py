"""BFS over several ranks (GTS Strategy-P): the depths replicated, each rank's level run by the
one-device step on its shard, the level's discoveries exchanged as bitmaps.

Rank r owns the vertices ``lo..hi-1``: its shard holds their out- and in-rows (global ids,
:mod:`graphdb.executor.operators.shards`), its piece queue their frontier, and every rank keeps
the depth of every vertex. A level, launched on every rank before the host waits for anything:

1. the one-GPU level kernel on the shard (the degree-cut advance top-down, the bottom-up scan of
   the rank's unvisited vertices with first-parent exit), which marks every vertex it claims in
   the rank's bitmap of |V| bits;
2. one AllGather of the bitmaps (|V| / 8 bytes from each rank, whichever the direction);
3. every claimed vertex takes its depth on every rank, and the rank's own vertices that only a
   peer claimed join its queue; the level's global counts (vertices, their out-edges) stay on
   the device, where the host reads them when the direction must be decided (every level while
   the frontier grows fast, every few levels while it is small and steady, as on one GPU).

The direction is decided from the global counts by the one-device rule (Beamer et al.,
``abi.DIRECTION_*``); depths do not depend on it. Depths are the same on every rank at the end,
so the result is local rank 0's vector and leaves by the device result path. On the CPU (numpy
ranks) each step is the same in numpy, in the very same loop.
"""

from __future__ import annotations

import numpy as np

from ...abi import (
    CTRL_ACTIVATED_EDGES,
    CTRL_ACTIVATED_VERTICES,
    CTRL_DEEPEST,
    CTRL_WORDS,
    UDC_K,
    ctrl_slot,
)
from ...cancel import checkpoint
from ...graph import Graph
from ...operators.partitioned import Team, expand_rows
from ..common import check_source
from ..spec import AlgorithmOutput, OperatorConfig
from .cpu import as_khop
from .gpu import direction

__all__ = ["bfs", "bfs_depths_partitioned", "khop"]


def bfs_depths_partitioned(graph: Graph, config: OperatorConfig, source: int,
                           max_depth: int | None = None):
    """(depth per vertex, -1 unreached, on local rank 0's device or the host; stats)."""
    n, m = graph.num_vertices, graph.num_edges
    team = Team(graph, config, ("out", "in"))
    ranks = _GpuLevels.make(team, source) if team.xp is not np else _HostLevels.make(team, source)
    words = -(-n // 32)
    limit = n if max_depth is None else min(int(max_depth), n)
    bits = team.each(lambda i: team.xp.zeros(words * team.size, dtype=np.uint32))
    own = [b[r * words:(r + 1) * words] for r, b in zip(team.comm.ranks, bits)]
    offsets = graph.offsets("out")
    degree = int(offsets[source + 1] - offsets[source]) if n else 0  # not a pass over |V|
    counts = np.zeros(CTRL_WORDS, dtype=np.uint64)
    counts[ctrl_slot(0) + 1], counts[ctrl_slot(0) + 2] = 1, degree
    counts[CTRL_ACTIVATED_VERTICES], counts[CTRL_ACTIVATED_EDGES] = 1, degree
    level, batch, bottom_up, prev_nf = 0, 1, False, 1
    stats = {"bottom_up_levels": 0, "host_syncs": 0}
    while level < limit:
        for _ in range(min(batch, limit - level)):
            team.each(lambda i: ranks[i].level(level, bottom_up, own[i]))
            if team.size > 1:
                team.allgather(own, bits)
            team.each(lambda i: ranks[i].apply(level, bits[i], words))
            stats["bottom_up_levels"] += int(bottom_up)
            level += 1
            team.steps += 1
        checkpoint()
        counts = ranks[0].counts()  # the one host round trip of this batch
        stats["host_syncs"] += 1
        slot = ctrl_slot(level)
        nf, mf = int(counts[slot + 1]), int(counts[slot + 2])
        if nf == 0:
            break
        unexplored = max(m - int(counts[CTRL_ACTIVATED_EDGES]), 0)
        bottom_up, batch = direction(bottom_up, nf, mf, unexplored, n, prev_nf, batch)
        prev_nf = nf
    stats["reached"] = int(counts[CTRL_ACTIVATED_VERTICES])
    stats["levels"] = int(counts[CTRL_DEEPEST]) + 1
    stats["levels_run"] = level
    return ranks[0].depth, {**stats, **team.metrics()}


class _HostLevels:
    """A numpy rank: its frontier (its own vertices of the current level) and its copy of the
    depths; the level and the merge of the bitmaps as array operations."""

    @classmethod
    def make(cls, team: Team, source: int) -> list:
        return [cls(team, shard, source) for shard in team.shards(("out", "in"))]

    def __init__(self, team: Team, shard, source: int):
        n = team.n
        self.n, self.shard, self.lo, self.hi = n, shard, shard.lo, shard.hi
        self.depth = np.full(n, -1, dtype=np.int32)
        if n:
            self.depth[source] = 0
        own = self.lo <= source < self.hi
        self.frontier = np.array([source] if own else [], dtype=np.int64)
        self.degree = shard.out_degree
        self.team = np.zeros(CTRL_WORDS, dtype=np.uint64)
        self.team[ctrl_slot(0) + 1] = 1
        self.team[ctrl_slot(0) + 2] = int(self.degree[source]) if n else 0
        self.team[CTRL_ACTIVATED_VERTICES] = 1
        self.team[CTRL_ACTIVATED_EDGES] = self.team[ctrl_slot(0) + 2]

    def level(self, level: int, bottom_up: bool, claimed) -> None:
        depth, shard = self.depth, self.shard
        if bottom_up:
            candidates = self.lo + np.flatnonzero(depth[self.lo:self.hi] < 0)
            edges, which = expand_rows(np, shard.inn.offsets, candidates)
            hit = depth[shard.inn.targets[edges]] == level
            found = np.unique(candidates[which[hit]])
        else:
            edges, _ = expand_rows(np, shard.out.offsets, self.frontier)
            targets = shard.out.targets[edges].astype(np.int64)
            found = np.unique(targets[depth[targets] < 0])
        depth[found] = level + 1
        mask = np.zeros(claimed.size * 32, dtype=bool)
        mask[found] = True
        claimed[:] = np.packbits(mask, bitorder="little").view(np.uint32)

    def apply(self, level: int, bits, words: int) -> None:
        union = np.bitwise_or.reduce(bits.reshape(-1, words), axis=0)
        new = np.flatnonzero(np.unpackbits(union.view(np.uint8), bitorder="little")[:self.n])
        self.depth[new] = level + 1  # unvisited before this level, on every rank
        self.frontier = new[(new >= self.lo) & (new < self.hi)]
        slot = ctrl_slot(level + 1)
        self.team[ctrl_slot(level + 2):ctrl_slot(level + 2) + 4] = 0
        self.team[slot + 1] = new.size
        self.team[slot + 2] = int(self.degree[new].sum(dtype=np.int64))
        self.team[CTRL_ACTIVATED_VERTICES] += np.uint64(new.size)
        self.team[CTRL_ACTIVATED_EDGES] += np.uint64(self.team[slot + 2])
        if new.size:
            self.team[CTRL_DEEPEST] = level + 1
        bits[:] = 0

    def counts(self) -> np.ndarray:
        return self.team.copy()


class _GpuLevels:
    """A GPU rank: the one-GPU level kernel on its shard, its piece queues and counters, and
    the merge of the gathered bitmaps (``graphdb_team_bfs_apply``)."""

    @classmethod
    def make(cls, team: Team, source: int) -> list:
        shards = team.shards(("out", "in"))
        return team.each(lambda i: cls(team, i, shards[i], source))

    def __init__(self, team: Team, i: int, shard, source: int):
        from ...gpu import runtime as rt
        from ...operators.frontier_gpu import FRONTIER, THREADS, PieceQueues, queue_capacity
        from ...operators.partitioned import PARTITIONED

        cp = rt.cp()
        n = team.n
        self.team_, self.i, self.cp = team, i, cp
        self.n, self.shard, self.lo, self.hi = n, shard, shard.lo, shard.hi
        self.rank = team.comm.ranks[i]
        ids = shard.out.targets.dtype
        self.K = UDC_K
        self.level_k = FRONTIER.kernel("graphdb_frontier_bfs_level", ids)
        self.apply_k = PARTITIONED.kernel("graphdb_team_bfs_apply", ids)
        seed = FRONTIER.kernel("graphdb_frontier_seed", ids)
        self.depth = cp.empty(n, dtype=np.int32)
        self.depth.data.memset_async(0xFF, self.depth.nbytes)
        self.queues = PieceQueues(cp, queue_capacity(n, shard.out.num_edges, self.K), ids)
        seed((1,), (THREADS,), (shard.out.offsets, ids.type(source), np.int32(self.K),
                                self.depth, self.queues.vertex[0], self.queues.piece[0],
                                self.queues.ctrl))
        start = np.zeros(CTRL_WORDS, dtype=np.uint64)
        degree = int(shard.out_degree[source:source + 1].get()[0]) if n else 0
        start[ctrl_slot(0) + 1], start[ctrl_slot(0) + 2] = 1, degree
        start[CTRL_ACTIVATED_VERTICES], start[CTRL_ACTIVATED_EDGES] = 1, degree
        self.team = cp.asarray(start)
        self.blocks = rt.grid_for(max(n, 1), THREADS)
        self.apply_blocks = rt.grid_for(max(n, 1), THREADS)
        self.threads = THREADS
        self.shared = (THREADS // 32) * 32 * (self.K + 1) * ids.itemsize

    def level(self, level: int, bottom_up: bool, claimed) -> None:
        qv, qp, nv, np_ = self.queues.pair(level)
        out, inn = self.shard.out, self.shard.inn
        alone = self.team_.size == 1  # nothing to exchange: its own counters are the team's
        self.level_k((self.blocks,), (self.threads,), (
            out.offsets, out.targets, inn.offsets, inn.targets, self.depth,
            np.int64(self.hi), qv, qp, nv, np_, self.queues.ctrl, np.int32(level),
            np.int32(self.K), np.int32(bottom_up), None if alone else claimed,
            np.int64(self.lo)), shared_mem=self.shared)

    def apply(self, level: int, bits, words: int) -> None:
        if self.team_.size == 1:
            return
        _, _, nv, np_ = self.queues.pair(level)
        self.apply_k((self.apply_blocks,), (self.threads,), (
            bits, np.int64(words), np.int32(self.team_.size), np.int32(self.rank),
            np.int64(self.n), np.int64(self.lo), np.int64(self.hi), self.shard.out.offsets,
            self.shard.out_degree, self.depth, nv, np_, self.queues.ctrl, self.team,
            np.int32(level), np.int32(self.K)))
        bits.data.memset_async(0, bits.nbytes)

    def counts(self) -> np.ndarray:
        """The level's global counts (the control-block layout): one rank's own counters are
        the team's."""
        alone = self.team_.size == 1
        return self.team_.comm.fetch(self.i, self.queues.ctrl if alone else self.team)


def bfs(graph: Graph, config: OperatorConfig, source: int,
        max_depth: int | None = None) -> AlgorithmOutput:
    """Partitioned twin of :func:`graphdb.executor.algorithms.bfs.cpu.bfs`: the depths stay
    where the ranks computed them (local rank 0's device) for the result path."""
    check_source(graph, source, "bfs")
    depth, stats = bfs_depths_partitioned(graph, config, source, max_depth)
    levels = stats["levels"] if max_depth is None else min(stats["levels"], max_depth)
    return AlgorithmOutput.vertices({"depth": depth}, {"iterations": levels, **stats},
                                    reached="depth", drop="negative")


def khop(graph: Graph, config: OperatorConfig, source: int, k: int) -> AlgorithmOutput:
    """Partitioned twin of :func:`graphdb.executor.algorithms.bfs.cpu.khop`."""
    return as_khop(bfs(graph, config, source, k))
