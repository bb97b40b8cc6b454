"""PageRank over several ranks: pull, the owner computes, the owned slices are exchanged.

Rank r owns the vertices of its segment and their in-rows. Each iteration it sums its
vertices' in-neighbours' contributions (:func:`~graphdb.executor.operators.partitioned.
pull_sum` over the vector it received), applies the Graphalytics update to them, and sends its
new contributions on: by an allgatherv of the owned slices (replicated state, 8 bytes a vertex
a rank receives per iteration times (P - 1)/P) or only to the ranks whose rows read them (split
state). One allreduce of two numbers per iteration carries the dangling total and the L1
change. Placed ``streamed``, each rank reads its in-rows a chunk at a time every iteration.

float64 throughout, so the ranks equal the single-device CPU result to rounding (the summation
order differs).
"""

from __future__ import annotations

import numpy as np

from ...cancel import checkpoint
from ...graph import Graph
from ...operators.partitioned import Team, pull_sum
from ...operators.state import exchange_for
from ...partition import Rows
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["pagerank"]


def pagerank(graph: Graph, config: OperatorConfig, damping: float = 0.85,
             max_iterations: int = 20, tolerance: float = 0.0) -> AlgorithmOutput:
    """Graphalytics PageRank of every vertex, partitioned (see the module docstring)."""
    n = graph.num_vertices
    team = Team(graph, config, ("in",), stream="in")
    xp = team.xp
    streamed = bool(team.streams)
    strategy = "replicated" if streamed else config.placement.strategy
    exchange = None if streamed else exchange_for(strategy, team, team.map(
        lambda i, part: part.inn.targets))
    rows = None if streamed else team.map(
        lambda i, part, cols: Rows(part.inn.offsets, cols), exchange.columns)

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
