"""WCC over several ranks: local linking, then MIN allreduce with pointer jumping.

Each rank links the edges of its out-rows alone (every edge is some rank's: its source's owner)
with the single-device union-find, compiled on the CPU and Afforest on a GPU, over a CSR whose
rows outside the segment are empty: a label per vertex, the smallest id of its *local*
component. The global labels are the element-wise MIN of those over the ranks, pointer-jumped
until every label is a root (``L[L[v]] == L[v]``). Two vertices one rank linked may still carry
different roots (rank 0 linked 1-5, rank 1 linked 2-5: 5 -> 1, 2 -> 2); so each rank checks its
local links ``v -> local label of v`` against the global labels, hooks the larger root of every
link that disagrees under the smaller, and the hooks are merged by another MIN allreduce and
pointer jumping, until no link disagrees (a few rounds; each round makes a root smaller). Then
every component carries one root, its smallest vertex: the single-device labels exactly.
"""

from __future__ import annotations

import numpy as np

from ...cancel import checkpoint
from ...graph import Graph
from ...operators.partitioned import Team, min_by_key
from ..common import _unsigned_pair
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["wcc", "wcc_partitioned"]


def _full_offsets(xp, part, n: int):
    """The part's out-offsets as rows of all n vertices (empty outside its segment)."""
    local = part.out.offsets
    offsets = xp.empty(n + 1, dtype=np.int64)
    offsets[:part.lo + 1] = 0
    offsets[part.lo + 1:part.hi + 1] = local[1:]
    offsets[part.hi + 1:] = local[-1]
    return offsets


def _local_labels(team: Team, i: int, part) -> object:
    """Smallest id of each vertex's component among this rank's edges (int64 per vertex)."""
    xp, n = team.xp, team.n
    offsets = _full_offsets(xp, part, n)
    if xp is np:
        from .cpu import KERNELS

        off, tgt = _unsigned_pair(offsets, part.out.targets)
        parent = np.empty(n, dtype=np.int64)
        KERNELS.for_work(n + part.out.num_edges).components(off, tgt, False, parent)
        return parent
    from .gpu import afforest_labels

    labels, _ = afforest_labels(offsets, part.out.targets, n, skip_giant=False)
    return labels.astype(np.int64)


def _jump(xp, labels):
    """Pointer jumping until every label is a root."""
    while True:
        nxt = labels[labels]
        if bool((nxt == labels).all()):
            return labels
        labels = nxt


def wcc_partitioned(graph: Graph, config: OperatorConfig) -> tuple[np.ndarray, dict]:
    """(component per vertex, metrics)."""
    team = Team(graph, config, ("out",))
    xp, n = team.xp, team.n
    label_type = np.int32 if n < 2**31 else np.int64
    local = team.map(lambda i, part: _local_labels(team, i, part))

    def links(i, part, labels):
        linked = xp.flatnonzero(labels != xp.arange(n, dtype=np.int64))
        return linked, labels[linked]

    links_of = team.map(links, local)
    merged = team.reduce(team.map(lambda i, part, labels: labels.astype(label_type), local),
                         "min")
    merged = team.map(lambda i, part, labels: _jump(xp, labels), merged)
    rounds = 0
    while True:
        checkpoint()

        def disagree(i, part, labels, link):
            vertices, roots = link
            a, b = labels[vertices], labels[roots]
            bad = a != b
            return xp.maximum(a, b)[bad], xp.minimum(a, b)[bad]

        hooks = team.map(disagree, merged, links_of)
        if not int(team.total(team.map(lambda i, part, h: [h[0].shape[0]], hooks),
                              dtype=np.int64)[0]):
            break

        def hook(i, part, labels, h):
            roots, lower = min_by_key(xp, h[0], h[1])
            proposed = labels.copy()
            proposed[roots] = xp.minimum(proposed[roots], lower)
            return proposed

        merged = team.reduce(team.map(hook, merged, hooks), "min")
        merged = team.map(lambda i, part, labels: _jump(xp, labels), merged)
        rounds += 1
        team.steps += 1
    component = team.comm.fetch(0, merged[0]).astype(np.int64)
    return component, team.metrics(hook_rounds=rounds)


def wcc(graph: Graph, config: OperatorConfig) -> AlgorithmOutput:
    """Partitioned twin of :func:`graphdb.executor.algorithms.wcc.cpu.wcc`."""
    component, metrics = wcc_partitioned(graph, config)
    vertices = np.arange(graph.num_vertices, dtype=np.int64)
    return AlgorithmOutput({"vertex": vertices, "component": component},
                           {"components": int(np.count_nonzero(component == vertices)),
                            **metrics})
