"""CDLP over several ranks: pull, the owner computes, the owned labels are exchanged.

Rank r owns its segment's vertices and their neighbour relations: the out-rows of its shard
(:mod:`graphdb.executor.operators.shards`: cut on the GPU that holds the graph, global ids; the
vertex sees each out-neighbour) and, on a directed graph, its in-rows (each in-neighbour), with
multiplicity as the single-device operator counts them. Each iteration every rank runs the family's step
(:func:`.step.most_frequent_label`, the same numpy/CuPy code) for its vertices over the labels
it received, counts the labels that changed (allreduce: the fixed point ends the loop, as on one
device), and sends its new labels on (allgatherv of the owned slices, or to the ranks that read
them with split state). The labels equal the single-device ones exactly.
"""

from __future__ import annotations

import numpy as np

from ...cancel import checkpoint
from ...graph import Graph
from ...operators.partitioned import Team, expand_rows
from ...operators.state import exchange_for
from ..spec import AlgorithmOutput, OperatorConfig
from .step import most_frequent_label

__all__ = ["cdlp", "cdlp_partitioned"]


def _relations(xp, shard, directed: bool):
    """(receiver: local row, sender: global id) of every neighbour relation of the shard."""
    rows = [shard.out] + ([shard.inn] if directed else [])
    owned = xp.arange(shard.lo, shard.hi, dtype=np.int64)
    receivers, senders = [], []
    for r in rows:
        edges, which = expand_rows(xp, r.offsets, owned)
        receivers.append(which)
        senders.append(r.targets[edges].astype(np.int64))
    return xp.concatenate(receivers), xp.concatenate(senders)


def cdlp_partitioned(graph: Graph, config: OperatorConfig, max_iterations: int = 10):
    """(label per vertex on local rank 0's device or the host, iterations that changed a label,
    metrics)."""
    team = Team(graph, config, ("out", "in"))
    xp, n = team.xp, team.n
    shards = team.shards(("out", "in"))
    relations = team.each(lambda i, shard: _relations(xp, shard, graph.directed), shards)
    exchange = exchange_for(config.placement.strategy, team, [r[1] for r in relations])
    owned = team.each(lambda i, shard: xp.arange(shard.lo, shard.hi, dtype=np.int64), shards)
    iterations = max_iterations
    for iteration in range(max_iterations):
        checkpoint()
        vectors = exchange.exchange(owned)

        def step(i, labels, vector, relation, columns):
            fresh = most_frequent_label(xp, relation[0], vector[columns], labels, n)
            return fresh, (fresh != labels).sum()

        done = team.each(step, owned, vectors, relations, exchange.columns)
        team.steps += 1
        if not int(team.total([[d[1]] for d in done], dtype=np.int64)[0]):
            iterations = iteration
            break
        owned = [d[0] for d in done]
    if team.size == 1:
        labels = owned[0]
    else:
        labels = team.collect(owned) if n else xp.zeros(0, dtype=np.int64)
    return labels, iterations, team.metrics(strategy=exchange.strategy)


def cdlp(graph: Graph, config: OperatorConfig, max_iterations: int = 10) -> AlgorithmOutput:
    """Partitioned twin of :func:`graphdb.executor.algorithms.cdlp.cpu.cdlp`."""
    labels, iterations, metrics = cdlp_partitioned(graph, config, max_iterations)
    return AlgorithmOutput.vertices({"label": labels}, {"iterations": iterations, **metrics})
