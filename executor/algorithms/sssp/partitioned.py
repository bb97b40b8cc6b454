"""SSSP over several ranks: near-far buckets, candidate distances routed to their owners and
merged by MIN.

Rank r owns the distances of its segment's vertices and their out-rows with weights. Vertices
whose distance improved are *active*. A round relaxes the active vertices below the bucket's
upper bound (the near set): their out-edges give candidate distances, each rank keeps the
smallest per target and routes them to the owners (alltoallv of ids and distances), and an
owner takes a candidate below its vertex's distance (MIN) and activates it. When no rank has a
near vertex the bound moves one bucket (``delta``) past the smallest active distance (MIN
allreduce); when none has an active vertex the search is over. One allreduce per round counts
the near and active vertices. The distances are the least fixed point of
``d(v) = min(d(u) + w(u, v))``, the same as the single-device search, to the last bit.
"""

from __future__ import annotations

import numpy as np

from ...cancel import checkpoint
from ...graph import Graph
from ...operators.partitioned import Team, expand_rows, min_by_key
from ..common import check_source, negative_weights
from ..spec import AlgorithmOutput, OperatorConfig
from .gpu import default_delta

__all__ = ["sssp", "sssp_partitioned"]


def sssp_partitioned(graph: Graph, config: OperatorConfig,
                     source: int) -> tuple[np.ndarray, np.ndarray, dict]:
    """(reached vertices ascending, their distances, metrics)."""
    team = Team(graph, config, ("out", "weights"))
    xp = team.xp

    def weights_of(i, part):
        w = part.out.weights
        return xp.ones(part.out.num_edges, dtype=np.float64) if w is None else w

    weights = team.map(weights_of)
    lowest, total, count = team.total(team.map(lambda i, part, w: [
        w.min() if w.size else np.inf, w.sum(), w.size], weights))
    if not lowest >= 0:  # NaN compares false too
        raise negative_weights(graph, "sssp")
    delta = default_delta(total / count if count else 1.0,
                          graph.num_edges / max(graph.num_vertices, 1))
    if not delta > 0:
        delta = 1.0

    def start(i, part):
        dist = xp.full(part.size, np.inf, dtype=np.float64)
        active = xp.zeros(part.size, dtype=bool)
        if part.lo <= source < part.hi:
            dist[source - part.lo] = 0.0
            active[source - part.lo] = True
        return dist, active

    state = team.map(start)
    dists = [s[0] for s in state]
    actives = [s[1] for s in state]
    upper = delta
    buckets = rounds = 0
    while True:
        checkpoint()
        near = team.map(lambda i, part, d, a: xp.flatnonzero(a & (d < upper)), dists, actives)
        near_count, active_count = team.total(team.map(
            lambda i, part, nr, a: [nr.shape[0], a.sum()], near, actives), dtype=np.int64)
        if not near_count:
            if not active_count:
                break
            lowest = team.total(team.map(lambda i, part, d, a: [
                d[a].min() if bool(a.any()) else np.inf], dists, actives), op="min")[0]
            upper = float(lowest) + delta
            buckets += 1
            continue

        def relax(i, part, nr, dist, active, w):
            active[nr] = False
            edges, which = expand_rows(xp, part.out.offsets, nr)
            targets = part.out.targets[edges].astype(np.int64)
            return min_by_key(xp, targets, dist[nr][which] + w[edges], team.n)

        candidates = team.map(relax, near, dists, actives, weights)
        routed = team.route([c[0] for c in candidates], [c[1] for c in candidates])

        def merge(i, part, ids, values, dist, active):
            ids, values = min_by_key(xp, ids - part.lo, values, part.size)
            better = values < dist[ids]
            ids, values = ids[better], values[better]
            dist[ids] = values
            active[ids] = True

        team.map(merge, routed.ids, routed.payloads[0], dists, actives)
        rounds += 1
        team.steps += 1

    def reached(i, part, dist):
        local = xp.flatnonzero(xp.isfinite(dist))
        return local + part.lo, dist[local]

    pairs = team.map(reached, dists)
    return (team.gather([p[0] for p in pairs]), team.gather([p[1] for p in pairs]),
            team.metrics(delta=float(delta), buckets=buckets, relax_rounds=rounds))


def sssp(graph: Graph, config: OperatorConfig, source: int,
         weight: str | None = None) -> AlgorithmOutput:
    """Partitioned twin of :func:`graphdb.executor.algorithms.sssp.cpu.sssp`."""
    check_source(graph, source, "sssp")
    vertices, distance, metrics = sssp_partitioned(graph, config, source)
    return AlgorithmOutput({"vertex": vertices, "distance": distance},
                           {"reached": int(vertices.size), **metrics})
