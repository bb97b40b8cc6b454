"""LCC over several ranks: the work split by owner, remote out-neighbourhoods fetched once.

Rank r computes the coefficients of its segment's vertices. Their distinct neighbour sets N(v)
come from its own out- and in-rows (its shard: :mod:`graphdb.executor.operators.shards`, cut on
the GPU that holds the graph); the count of v needs, for every a in N(v), the distinct
out-neighbours D(a), which a's owner has: each rank asks the owners for the D rows of the
vertices its neighbour sets hold (one alltoallv of ids, two of answers: row lengths and
targets). It then walks the two-step paths v - a -> b in blocks of bounded size and counts those
that close (b in N(v)) by a binary search in its sorted (v, b) keys. Integer counts over the same
pairs, divided as on one device: the coefficients equal the single-device ones exactly. They
are gathered on one device (local rank 0) and leave by the device result path.
"""

from __future__ import annotations

import numpy as np

from ...cancel import checkpoint
from ...graph import Graph
from ...operators.partitioned import Team, expand_rows
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["BLOCK_PATHS", "lcc", "lcc_partitioned"]

#: Two-step paths walked at a time.
BLOCK_PATHS = 1 << 22


def _distinct_keys(xp, rows_list, lo: int, hi: int, n: int):
    """Sorted distinct keys ``local row * n + neighbour`` of the shard rows lo..hi-1 (self
    loops dropped)."""
    keys = []
    owned = xp.arange(lo, hi, dtype=np.int64)
    for rows in rows_list:
        edges, row = expand_rows(xp, rows.offsets, owned)
        target = rows.targets[edges].astype(np.int64)
        proper = target != row + lo
        keys.append(row[proper] * n + target[proper])
    return xp.unique(xp.concatenate(keys)) if keys else xp.zeros(0, dtype=np.int64)


def _csr_of(xp, keys, rows: int, n: int):
    """(offsets, targets) of sorted ``row * n + column`` keys."""
    offsets = xp.zeros(rows + 1, dtype=np.int64)
    if keys.size:
        offsets[1:] = xp.cumsum(xp.bincount(keys // n, minlength=rows))
    return offsets, keys % n


def lcc_partitioned(graph: Graph, config: OperatorConfig):
    """(coefficient per vertex on local rank 0's device or the host, metrics)."""
    team = Team(graph, config, ("out", "in"))
    xp, n = team.xp, team.n
    shards = team.shards(("out", "in"))

    def neighbourhoods(i, part):
        both = [part.out] + ([part.inn] if graph.directed else [])
        u_keys = _distinct_keys(xp, both, part.lo, part.hi, n)  # v - a: a in N(v)
        d_keys = _distinct_keys(xp, [part.out], part.lo, part.hi, n)  # a -> b: b in D(a)
        return u_keys, _csr_of(xp, d_keys, part.size, n)

    local = team.each(neighbourhoods, shards)
    needed = team.each(lambda i, loc: xp.unique(loc[0] % n), local)
    asked = team.route(needed)

    def answer(i, part, ids, loc):
        offsets, targets = loc[1]
        rows = ids - part.lo
        edges, _ = expand_rows(xp, offsets, rows)
        return offsets[rows + 1] - offsets[rows], targets[edges]

    answers = team.each(answer, shards, asked.ids, local)
    # back to the asking ranks: row lengths in the order asked, then the rows' targets
    lengths, _ = team.comm.alltoallv([a[0] for a in answers], asked.counts, asked.sent)
    per_rank = [_group_sums(team.comm.fetch(i, a[0]), c)
                for i, (a, c) in enumerate(zip(answers, asked.counts))]
    targets, _ = team.comm.alltoallv([a[1] for a in answers], per_rank)

    def count(i, part, loc, need, length, target):
        u_keys = loc[0]
        d_offsets = xp.zeros(need.shape[0] + 1, dtype=np.int64)
        d_offsets[1:] = xp.cumsum(length)
        v = u_keys // n
        a = xp.searchsorted(need, u_keys % n)  # row of D' for each pair v - a
        paths = xp.cumsum(length[a]) if a.size else xp.zeros(0, dtype=np.int64)
        closed = xp.zeros(part.size, dtype=np.int64)
        start = 0
        while start < a.shape[0]:
            checkpoint()
            base = int(paths[start - 1]) if start else 0
            stop = int(xp.searchsorted(paths, xp.asarray([base + BLOCK_PATHS]),
                                       side="right")[0])
            stop = max(stop, start + 1)
            edges, which = expand_rows(xp, d_offsets, a[start:stop])
            owner = v[start:stop][which]
            key = owner * n + target[edges].astype(np.int64)
            pos = xp.minimum(xp.searchsorted(u_keys, key), max(u_keys.shape[0] - 1, 0))
            found = owner[u_keys[pos] == key]
            if found.size:
                closed += xp.bincount(found, minlength=part.size)
            start = stop
        degree = (xp.bincount(v, minlength=part.size) if v.size
                  else xp.zeros(part.size, dtype=np.int64)).astype(np.float64)
        pairs = degree * (degree - 1)
        ok = degree >= 2
        coefficient = xp.zeros(part.size, dtype=np.float64)
        coefficient[ok] = closed[ok].astype(np.float64) / pairs[ok]
        return coefficient

    coefficients = team.each(count, shards, local, needed, lengths, targets)
    team.steps += 1
    if team.size == 1:
        return coefficients[0], team.metrics()
    return (team.collect(coefficients) if n else xp.zeros(0)), team.metrics()


def _group_sums(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Sums of consecutive groups of ``counts`` elements of ``values`` (host arrays)."""
    total = np.concatenate(([0], np.cumsum(values, dtype=np.int64)))
    ends = np.cumsum(counts)
    return total[ends] - total[ends - counts]


def lcc(graph: Graph, config: OperatorConfig) -> AlgorithmOutput:
    """Partitioned twin of :func:`graphdb.executor.algorithms.lcc.cpu.lcc`."""
    coefficient, metrics = lcc_partitioned(graph, config)
    return AlgorithmOutput.vertices({"coefficient": coefficient}, metrics)
