"""BFS over several ranks, direction-optimizing: owner-routed discoveries top-down, a frontier
bitmap exchanged bottom-up.

Rank r owns the depths of its segment's vertices. A top-down level expands the out-rows of the
rank's frontier, drops repeats, and routes each discovered vertex to its owner (alltoallv of
vertex ids), which keeps the unvisited ones as its next frontier. A bottom-up level exchanges
the frontier as a bitmap (each rank its segment's bytes, allgatherv: |V|/8 bytes in all) and
every rank looks for a parent of its unvisited vertices among their in-rows. The direction is
decided from global counts, with the single-device rule (Beamer et al.; ``abi.DIRECTION_*``),
which the one allreduce of a level (frontier vertices and out-edges) provides. Depths do not
depend on the direction taken, so the result equals the single-device BFS exactly.
"""

from __future__ import annotations

import numpy as np

from ...abi import DIRECTION_ALPHA, DIRECTION_BETA
from ...cancel import checkpoint
from ...graph import Graph
from ...operators.partitioned import Team, expand_rows, pull_sum
from ..common import check_source
from ..spec import AlgorithmOutput, OperatorConfig
from .cpu import as_khop

__all__ = ["bfs", "bfs_levels_partitioned", "khop"]


def bfs_levels_partitioned(graph: Graph, config: OperatorConfig, source: int,
                           max_depth: int | None = None) -> tuple[np.ndarray, np.ndarray, dict]:
    """(reached vertices ascending, their depths, metrics)."""
    n = graph.num_vertices
    team = Team(graph, config, ("out", "in"))
    xp = team.xp
    limit = n if max_depth is None else min(int(max_depth), n)

    def start(i, part):
        depth = xp.full(part.size, -1, dtype=np.int64)
        frontier = xp.zeros(0, dtype=np.int64)
        if part.lo <= source < part.hi:
            depth[source - part.lo] = 0
            frontier = xp.asarray([source - part.lo], dtype=np.int64)
        return depth, frontier

    state = team.map(start)
    depths = [s[0] for s in state]
    frontiers = [s[1] for s in state]  # local indices, this level
    out_degree = int(graph.out_degrees()[source]) if n else 0
    unexplored = graph.num_edges - out_degree
    frontier_vertices, frontier_edges = 1, out_degree
    level, bottom_up, bottom_up_levels = 0, False, 0
    while frontier_vertices and level < limit:
        checkpoint()
        big = frontier_vertices * DIRECTION_BETA > n
        if not bottom_up and big and frontier_edges * DIRECTION_ALPHA > unexplored:
            bottom_up = True
        elif bottom_up and not big:
            bottom_up = False
        if bottom_up:
            found = _bottom_up(team, depths, frontiers)
            bottom_up_levels += 1
        else:
            found = _top_down(team, depths, frontiers)

        def settle(i, part, depth, new):
            depth[new] = level + 1
            return new, part.out_degree[new].sum()

        settled = team.map(settle, depths, found)
        frontiers = [s[0] for s in settled]
        frontier_vertices, frontier_edges = (int(x) for x in team.total(
            [[s[0].shape[0], s[1]] for s in settled], dtype=np.int64))
        unexplored -= frontier_edges
        level += 1
        team.steps += 1

    def reached(i, part, depth):
        local = xp.flatnonzero(depth >= 0)
        return local + part.lo, depth[local]

    pairs = team.map(reached, depths)
    vertices = team.gather([p[0] for p in pairs])
    depth = team.gather([p[1] for p in pairs])
    return vertices, depth, team.metrics(levels=level, bottom_up_levels=bottom_up_levels)


def _top_down(team: Team, depths: list, frontiers: list) -> list:
    """Next-level vertices (local indices, distinct) of each rank: the frontier's out-rows
    expanded, repeats dropped, routed to their owners, the visited ones dropped there."""
    xp = team.xp

    def expand(i, part, frontier):
        edges, _ = expand_rows(xp, part.out.offsets, frontier)
        return xp.unique(part.out.targets[edges].astype(np.int64))

    routed = team.route(team.map(expand, frontiers))

    def keep(i, part, depth, ids):
        local = xp.unique(ids - part.lo)
        return local[depth[local] < 0]

    return team.map(keep, depths, routed.ids)


def _bottom_up(team: Team, depths: list, frontiers: list) -> list:
    """Next-level vertices of each rank: its unvisited vertices with an in-neighbour in the
    frontier, the frontier exchanged as a bitmap of |V|/8 bytes (segments are whole bytes)."""
    xp = team.xp

    def bits(i, part, frontier):
        mask = xp.zeros(part.size, dtype=bool)
        mask[frontier] = True
        return xp.packbits(mask)

    full = team.replicate(team.map(bits, frontiers))

    def find(i, part, depth, packed):
        in_frontier = xp.unpackbits(packed)[:team.n].astype(np.float64)
        parents = pull_sum(xp, part.inn, in_frontier)
        return xp.flatnonzero((depth < 0) & (parents > 0))

    return team.map(find, depths, full)


def bfs(graph: Graph, config: OperatorConfig, source: int,
        max_depth: int | None = None) -> AlgorithmOutput:
    """Partitioned twin of :func:`graphdb.executor.algorithms.bfs.cpu.bfs`."""
    check_source(graph, source, "bfs")
    vertices, depth, metrics = bfs_levels_partitioned(graph, config, source, max_depth)
    top = int(depth.max()) if depth.size else 0
    return AlgorithmOutput(
        {"vertex": vertices, "depth": depth},
        {"iterations": top, "reached": int(vertices.size), **metrics},
    )


def khop(graph: Graph, config: OperatorConfig, source: int, k: int) -> AlgorithmOutput:
    """Partitioned twin of :func:`graphdb.executor.algorithms.bfs.cpu.khop`."""
    return as_khop(bfs(graph, config, source, k))
