"""PageRank over several ranks (GTS Strategy-P): the contributions replicated, each rank's
vertices pulled by the one-device step, the owned slices gathered by one AllGather.

Rank r owns the destinations ``lo..hi-1`` of a vertex order (on a GPU the one-GPU operator's:
relabelled by decreasing out-degree on a large graph, so the hot sources crowd into few cache
lines) and holds their in-rows, cut into the one-GPU operator's layout (:mod:`.blocks`: L2-sized
source-range blocks, hot-source tiles, heavy-row pieces), with block bounds at the segment
bounds too. An iteration on each rank, all launched before anything waits:

1. gather the blocks of its own sources (their contributions are its own, ready);
2. wait for the exchange of the previous iteration (only now), gather the peers' blocks;
3. merge and apply ``pagerank_vertex`` to its rows (the one-GPU kernel, limited to
   ``lo..hi-1``): new ranks, its slice of the next contributions, its dangling total and L1
   change;
4. put its slice and the two totals into its slot of the exchange buffer and start one
   in-place AllGather of the slots on the exchange stream; the slots are copied to the peers'
   ranges and the totals summed (in rank order: the same on every rank) there, while the next
   iteration's own blocks already run.

A rank receives ``(P - 1) x (largest segment + 4)`` float32 values per iteration: at most 4
bytes a vertex. The ranks stay on the device: the owned slices are gathered on one GPU (local
rank 0; every process of a cluster job) and mapped back to the caller's order there. On the
CPU (numpy ranks, the tests) the step is :func:`~graphdb.executor.operators.partitioned.
pull_sum` over the shard and the update in float64, in the very same loop.

Placed ``streamed`` (the rows do not fit) or with split state (Strategy-S: the state does not
fit), each rank pulls its rows through :func:`pull_sum` (``_by_rows``): those placements are
about capacity.
"""

from __future__ import annotations

import numpy as np

from ...cancel import checkpoint
from ...comm import communicator
from ...graph import Graph
from ...operators.partitioned import Team, pull_sum
from ...operators.state import exchange_for
from ...partition import ALIGN, Rows, Segments, balanced_bounds
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["VERTEX_WEIGHT", "balanced_segments", "pagerank"]

#: A vertex weighs this many in-edges when segments are balanced: the merge's work per vertex.
VERTEX_WEIGHT = 2
#: Values of a slot's tail: the dangling total and the L1 change (two float64).
TAIL_BYTES = 16


def pagerank(graph: Graph, config: OperatorConfig, damping: float = 0.85,
             max_iterations: int = 20, tolerance: float = 0.0) -> AlgorithmOutput:
    """Graphalytics PageRank of every vertex, partitioned (see the module docstring)."""
    placement = config.placement
    if placement.streamed or placement.strategy == "split":
        return _by_rows(graph, config, damping, max_iterations, tolerance)
    n = graph.num_vertices
    comm = communicator(placement)
    if comm.kind == "gpu":
        from . import partitioned_gpu as backend
    else:
        backend = _HostRanks
    layout = backend.layout(graph, config)
    segs = backend.segments(graph, comm, layout)
    team = Team(graph, config, ("in",), comm=comm, segs=segs)
    fixed = tolerance <= 0
    ranks = backend.ranks(team, layout, damping, max(int(max_iterations), 1), fixed)
    iterations = 0
    widest = team.widest() + (team.widest() & 1)  # float32 slots keep the tail 8-aligned
    tail = TAIL_BYTES // ranks[0].itemsize
    slot = widest + tail
    slots = team.each(lambda i: team.xp.zeros(slot * team.size, dtype=ranks[0].dtype))
    own = [s[r * slot:(r + 1) * slot] for r, s in zip(team.comm.ranks, slots)]
    for it in range(int(max_iterations)):
        checkpoint()
        last = fixed and it == max_iterations - 1
        team.each(lambda i: ranks[i].own_sources(it))
        if it:
            for i in range(team.local):
                team.comm.join(i)  # the previous exchange: the peers' contributions and totals
        team.each(lambda i: ranks[i].rest(it, last, track=not fixed))
        iterations += 1
        team.steps += 1
        if last:
            break
        if team.size > 1:
            team.each(lambda i: ranks[i].pack(it, own[i], widest))
            team.allgather(own, slots, overlap=True)
            for i in range(team.local):
                with team.comm.exchange_on(i):
                    ranks[i].unpack(it, slots[i], slot, widest, team.segments)
        if not fixed:
            for i in range(team.local):
                team.comm.join(i)
            if float(team.read([ranks[0].l1[it:it + 1]])[0][0]) < tolerance:
                break
    for i in range(team.local):
        team.comm.join(i)
    if team.size == 1:
        rank = ranks[0].result()
    else:
        rank = ranks[0].unorder(team.collect(team.each(lambda i: ranks[i].owned_ranks())))
    if iterations == 0:
        rank = team.xp.full(n, 1.0 / max(n, 1))
    return AlgorithmOutput.vertices({"rank": rank}, {
        "iterations": iterations,
        **team.metrics(strategy="replicated", streamed=False, **ranks[0].stats())})


class _HostRanks:
    """The numpy ranks: the float64 pull over each rank's shard, the update in numpy; no
    relabelling (the vertex order is the graph's)."""

    itemsize = 8
    dtype = np.dtype(np.float64)

    @staticmethod
    def layout(graph: Graph, config: OperatorConfig):
        return None

    @staticmethod
    def segments(graph: Graph, comm, layout) -> Segments:
        return graph.derived(f"pagerank:segments:{comm.size}", lambda: balanced_segments(
            graph.offsets("in"), comm.size))

    @staticmethod
    def ranks(team: Team, layout, damping: float, iterations: int, fixed: bool) -> list:
        shards = team.shards(("in",))
        return [_HostRanks(team, s, damping, iterations) for s in shards]

    def __init__(self, team: Team, shard, damping: float, iterations: int):
        n = team.n
        self.n, self.damping, self.shard = n, damping, shard
        self.lo, self.hi = shard.lo, shard.hi
        offsets = shard.inn.offsets[self.lo:self.hi + 1]
        self.rows = Rows(offsets - offsets[0], shard.inn.targets)
        degree = shard.out_degree.astype(np.float64)
        self.dangling_mask = degree[self.lo:self.hi] == 0
        self.inverse = np.where(degree > 0, 1.0 / np.maximum(degree, 1), 0.0)
        self.rank = np.full(self.hi - self.lo, 1.0 / max(n, 1))
        self.contrib = np.full(n, 1.0 / max(n, 1)) * self.inverse
        self.scal = np.zeros(3)
        self.scal[0] = np.count_nonzero(degree == 0) / max(n, 1)
        self.l1 = np.zeros(iterations)

    def own_sources(self, it: int) -> None:
        """Nothing to start early: the host pull reads every contribution at once."""

    def rest(self, it: int, last: bool, track: bool) -> None:
        n, d = max(self.n, 1), self.damping
        base = (1.0 - d) / n + d * self.scal[it % 3] / n
        self.scal[(it + 2) % 3] = 0.0
        fresh = base + d * pull_sum(np, self.rows, self.contrib)
        change = float(np.abs(fresh - self.rank).sum()) if track else 0.0
        self.rank = fresh
        self.contrib[self.lo:self.hi] = fresh * self.inverse[self.lo:self.hi]
        self.scal[(it + 1) % 3] = float(fresh[self.dangling_mask].sum())
        self.l1[it] = change

    def pack(self, it: int, own, widest: int) -> None:
        own[:self.hi - self.lo] = self.contrib[self.lo:self.hi]
        own[widest:widest + 2] = (self.scal[(it + 1) % 3], self.l1[it])

    def unpack(self, it: int, slots, slot: int, widest: int, segs: Segments) -> None:
        for q in range(segs.parts):
            lo, hi = segs.range(q)
            if lo != self.lo:
                self.contrib[lo:hi] = slots[q * slot:q * slot + hi - lo]
        tails = slots.reshape(segs.parts, slot)[:, widest:widest + 2]
        self.scal[(it + 1) % 3], self.l1[it] = tails.sum(axis=0)

    def owned_ranks(self):
        return self.rank

    def result(self):
        return self.rank

    def unorder(self, full):
        return full

    def stats(self) -> dict:
        return {}


def balanced_segments(in_offsets, parts: int, align: int = ALIGN) -> Segments:
    """Segments of a vertex order balanced by in-edges plus :data:`VERTEX_WEIGHT` a vertex
    (``in_offsets``: the in-CSR's offsets in that order, host)."""
    n = len(in_offsets) - 1
    prefix = np.asarray(in_offsets, dtype=np.int64) + VERTEX_WEIGHT * np.arange(n + 1)
    bounds = balanced_bounds(prefix, parts, align)
    return Segments(bounds, np.diff(np.asarray(in_offsets, dtype=np.int64)[bounds]))


def _by_rows(graph: Graph, config: OperatorConfig, damping: float, max_iterations: int,
             tolerance: float) -> AlgorithmOutput:
    """Streamed or split-state placements: each rank pulls its rows (read a chunk at a time
    when streamed) with :func:`pull_sum` in float64, the contributions exchanged by their
    strategy, the two totals by an allreduce."""
    n = graph.num_vertices
    team = Team(graph, config, ("in",), stream="in")
    xp = team.xp
    parts = team.parts
    streamed = bool(team.streams)
    strategy = "replicated" if streamed else config.placement.strategy
    exchange = None if streamed else exchange_for(strategy, team, team.each(
        lambda i: parts[i].inn.targets))
    rows = None if streamed else team.each(
        lambda i, cols: Rows(parts[i].inn.offsets, cols), exchange.columns)

    def init(i, part):
        degree = part.out_degree
        inverse = xp.where(degree > 0, 1.0 / xp.maximum(degree, 1), 0.0)
        rank = xp.full(part.size, 1.0 / max(n, 1))
        return inverse, rank, rank * inverse, rank[degree == 0].sum()

    start = team.map(init)
    inverse = [s[0] for s in start]
    ranks = [s[1] for s in start]
    contrib = [s[2] for s in start]
    dangling = float(team.total([[s[3]] for s in start])[0])
    teleport = (1.0 - damping) / max(n, 1)
    measure = tolerance > 0.0
    iterations = 0

    def sums_of(i, part, vector):
        if not streamed:
            return pull_sum(xp, rows[i], vector)
        sums = xp.zeros(part.size, dtype=np.float64)
        for a, b, chunk in team.streams[i].chunks(xp):
            sums[a:b] = pull_sum(xp, chunk, vector)
        return sums

    for _ in range(int(max_iterations)):
        checkpoint()
        vectors = team.replicate(contrib) if streamed else exchange.exchange(contrib)
        base = teleport + damping * dangling / max(n, 1)

        def step(i, part, vector, inv, old):
            fresh = base + damping * sums_of(i, part, vector)
            change = xp.abs(fresh - old).sum() if measure else 0.0
            return fresh, fresh * inv, fresh[inv == 0].sum(), change

        done = team.map(step, vectors, inverse, ranks)
        ranks = [d[0] for d in done]
        contrib = [d[1] for d in done]
        dangling, change = team.total([[d[2], d[3]] for d in done])
        team.steps += 1
        iterations += 1
        if measure and change < tolerance:
            break
    rank = team.gather(ranks) if n else np.zeros(0)
    return AlgorithmOutput(
        {"vertex": np.arange(n, dtype=np.int64), "rank": rank},
        {"iterations": iterations, **team.metrics(strategy=strategy, streamed=streamed)},
    )

