"""WCC over several ranks: Afforest on each rank's shard, the forests merged by MIN.

Every rank keeps a union-find forest over all |V| vertices (``parent[v] <= v``). It links the
edges of its shard with the one-device step (:class:`~.gpu.Afforest` on a GPU: each row's first
edges, then, past the giant component, the rest; the compiled union-find on the CPU), and the
forests are *merged*: the element-wise MIN of the ranks' forests (one allreduce), compressed to
roots. The MIN can lose a union (rank 0 linked 1-5, rank 1 linked 2-5: 5 -> 1, 2 -> 2), so
each rank checks its own links ``v -> parent[v]`` against the merged labels and, while any link
disagrees (the count is one allreduce), unites its links into the merged forest and the forests
are merged again; each round only joins components, so a few rounds end it. Then every
component carries one root, its smallest vertex: the one-device labels exactly.

On a GPU the giant component is skipped as on one GPU, and correctly so across ranks: it is
found from a seeded sample of the *merged* labels (the same on every rank) after the first
links are merged, and an edge is skipped only when its row's vertex is in it; every edge is in
a row of each of its two ends (a shard holds its vertices' out- and in-rows), so an edge between
the giant component and another is linked from the other end.
"""

from __future__ import annotations

import numpy as np

from ...cancel import checkpoint
from ...graph import Graph
from ...operators.partitioned import Team
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["wcc", "wcc_partitioned"]


def wcc_partitioned(graph: Graph, config: OperatorConfig):
    """(component per vertex, on local rank 0's device or the host; metrics)."""
    team = Team(graph, config, ("out", "in"))
    ranks = _GpuForest.make(team) if team.xp is not np else _HostForest.make(team)
    team.each(lambda i: ranks[i].link_first())
    rounds = _merge(team, ranks)
    if ranks[0].skips_giant:
        giant = ranks[0].giant()
        team.each(lambda i: ranks[i].link_rest(giant))
        rounds += _merge(team, ranks)
    return ranks[0].parent, team.metrics(hook_rounds=rounds)


def _merge(team: Team, ranks: list) -> int:
    """Merge the ranks' forests until no rank's link disagrees (see the module docstring);
    the rounds of hooks it took."""
    if team.size == 1:
        return 0
    team.each(lambda i: ranks[i].keep_links())
    rounds = 0
    while True:
        checkpoint()
        merged = team.reduce([r.exchanged() for r in ranks], "min")
        team.each(lambda i: ranks[i].adopt(merged[i]))
        bad = team.total(team.each(lambda i: [ranks[i].disagree()]), dtype=np.int64)
        team.steps += 1
        if not int(bad[0]):
            return rounds
        team.each(lambda i: ranks[i].replay())
        rounds += 1


class _HostForest:
    """A numpy rank: the compiled union-find over its out-rows (every edge is in one rank's
    out-rows: its source's), no giant component skipped."""

    skips_giant = False

    @classmethod
    def make(cls, team: Team) -> list:
        return [cls(team, shard) for shard in team.shards(("out",))]

    def __init__(self, team: Team, shard):
        self.n, self.shard, self.directed = team.n, shard, team.graph.directed
        self.ids = team.graph.id_dtype()
        self.parent = np.arange(self.n, dtype=np.int64)
        self.links = None

    def link_first(self) -> None:
        from ...operators.adjacency import plain
        from ..common import unsigned_pair
        from .cpu import KERNELS

        off, tgt = unsigned_pair(self.shard.out.offsets, self.shard.out.targets)
        KERNELS.for_work(self.n + self.shard.out.num_edges).components(
            plain(off, tgt), not self.directed, self.parent)

    def keep_links(self) -> None:
        self.links = self.parent.copy()

    def exchanged(self):
        """The forest as it travels: in the graph's id type (half the bytes below 2**31)."""
        return self.parent.astype(self.ids)

    def adopt(self, merged) -> None:
        labels = np.asarray(merged, dtype=np.int64)
        while True:
            nxt = labels[labels]
            if np.array_equal(nxt, labels):
                break
            labels = nxt
        self.parent = labels

    def disagree(self) -> int:
        return int(np.count_nonzero(self.parent != self.parent[self.links]))

    def replay(self) -> None:
        """Union of the merged forest and this rank's links: the union-find over the edges
        ``v -> parent[v]`` and ``v -> link[v]``."""
        from ...operators.adjacency import plain
        from .cpu import KERNELS

        n = self.n
        offsets = np.arange(0, 2 * n + 1, 2, dtype=np.int64)
        targets = np.empty(2 * n, dtype=np.int64)
        targets[0::2], targets[1::2] = self.parent, self.links
        KERNELS.for_work(3 * n).components(plain(offsets.view(np.uint64),
                                                 targets.view(np.uint64)), False, self.parent)


class _GpuForest:
    """A GPU rank: Afforest's steps on its out-shard (and in-shard of a directed graph), the
    merge's replay and disagreement count (``wcc.cu``)."""

    skips_giant = True

    @classmethod
    def make(cls, team: Team) -> list:
        forms = ("out", "in") if team.graph.directed else ("out",)
        shards = team.shards(forms)
        return team.each(lambda i: cls(team, shards[i]))

    def __init__(self, team: Team, shard):
        from ...gpu import runtime as rt
        from .gpu import WCC_KERNELS, Afforest

        self.cp = rt.cp()
        self.shard, self.n = shard, team.n
        ids = shard.out.targets.dtype
        self.steps = Afforest(ids)
        self.replay_k = WCC_KERNELS.kernel("graphdb_wcc_replay", ids)
        self.disagree_k = WCC_KERNELS.kernel("graphdb_wcc_disagree", ids)
        self.grid = (rt.grid_for(max(self.n, 1), 256),)
        self.parent = self.steps.start(self.n)
        self.links = None
        self.count = self.cp.zeros(1, dtype=np.uint64)

    def link_first(self) -> None:
        self.steps.sample(self.shard.out.offsets, self.shard.out.targets, self.parent,
                          (self.shard.lo, self.shard.hi))

    def giant(self) -> int:
        return self.steps.giant(self.parent)

    def link_rest(self, giant: int) -> None:
        from .gpu import SAMPLE_EDGES

        shard = self.shard
        rows = (shard.lo, shard.hi)
        self.steps.rest(shard.out.offsets, shard.out.targets, self.parent, SAMPLE_EDGES, giant,
                        rows)
        if shard.inn is not None and shard.inn is not shard.out:
            self.steps.rest(shard.inn.offsets, shard.inn.targets, self.parent, 0, giant, rows)
        self.steps.compress(self.parent)

    def keep_links(self) -> None:
        self.links = self.parent.copy()

    def exchanged(self):
        return self.parent

    def adopt(self, merged) -> None:
        self.parent = merged
        self.steps.compress(self.parent)

    def disagree(self):
        self.count.fill(0)
        self.disagree_k(self.grid, (256,), (self.links, self.parent, np.int64(self.n),
                                            self.count))
        return self.count[0].astype(np.int64)

    def replay(self) -> None:
        self.replay_k(self.grid, (256,), (self.links, self.parent, np.int64(self.n)))
        self.steps.compress(self.parent)


def wcc(graph: Graph, config: OperatorConfig) -> AlgorithmOutput:
    """Partitioned twin of :func:`graphdb.executor.algorithms.wcc.cpu.wcc`: the labels stay
    where the ranks computed them (local rank 0's device) for the result path."""
    component, metrics = wcc_partitioned(graph, config)
    return AlgorithmOutput.vertices({"component": component}, metrics)
