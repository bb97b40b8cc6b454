"""``ALL SHORTEST`` paths from the BFS DAG: counted from the search's levels, then enumerated
backwards over them; between one start and one end, a search from both ends.

Every prefix of a shortest walk is a shortest walk to its own end, so the shortest walks from a
start form a DAG over the BFS levels: a step ``u -> v`` is on one exactly when ``v`` is first
reached one level after ``u``. The number of shortest walks to each vertex (``sigma``) is the
sum of its DAG predecessors' numbers, level by level: the rows a pattern makes are known before
any is built (and refused past ``max_path_rows``). A walk is then built from its end backwards:
a partial walk at a vertex of level ``j`` extends by every predecessor of level ``j - 1``, and
every such predecessor leads back to the start, so the partial walks never outnumber the walks
made. Building walks forward instead (as :func:`graphdb.executor.paths.match_paths` does for
the other prefixes) makes every shortest walk to every vertex reached on the way: millions
between two persons of a social network, for five walks to the one end asked for.

Between one start ``s`` and one end ``t`` (``WHERE a.id = ? ... WHERE b.id = ?``) both sides
search, each level expanding the side whose frontier has fewer edges, until a level's new
vertices meet the other side's reached ones. If side ``s`` reached depth ``a`` and ``t`` depth
``b`` without meeting, no walk has ``a + b`` edges or fewer (the vertex ``a`` steps along it
would have been reached by both), so the first vertices that meet, ``M``, are exactly at
distance ``a`` from ``s`` and ``b`` from ``t``, and every shortest walk passes through one of
them: there are ``sum over M of sigma_s * sigma_t``, each the pair of a walk ``s -> v`` (built
backwards over s's levels) and a walk ``v -> t`` (forwards over t's). On a social network of
50 k persons and 1 M friendships both sides stop after two levels each, where a search from one
end alone reaches every person.

Written for numpy and CuPy alike (``xp``); ``step(vertices)`` and ``back(vertices)`` are a hop's
expansion along its direction and against it, masks applied (:class:`graphdb.executor.pattern.
HopMasks`): (index into ``vertices``, neighbour, stored edge position).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .paths import (
    Steps,
    check_rows,
    count_paths,
    match_paths,
    not_in_sorted,
    segment_owners,
)

__all__ = ["PAIRS_FROM_BOTH_ENDS", "search"]

#: (start, end) pairs up to which each pair is searched from both ends; past it, one search per
#: level for all start rows at once, stopping once every end is reached.
PAIRS_FROM_BOTH_ENDS = 16


def search(step, back, start, low: int, high: int, n: int, xp, *, mode: str, k: int = 1,
           ends=None, want_walks: bool = True, limit: int, check: Callable[[], None],
           memory: Callable[[int, str], None]) -> Steps:
    """The walks of ``low``..``high`` edges (``low`` 0 or 1) from ``start[row]`` to each end
    allowed by ``ends`` (a bool per vertex; None: every vertex) that a selective hop keeps:
    every shortest one (``mode`` 'all_shortest'), or ``k`` of the shortest ('any'), as
    :class:`Steps` (the walks' steps only with ``want_walks``; without, each (row, end) once
    per walk). Every walk ('walk', no prefix) is :func:`graphdb.executor.paths.match_paths`'s."""
    start = xp.asarray(start, dtype=np.int64)
    if mode not in ("any", "all_shortest"):  # every walk: counted and built forwards
        return match_paths(step, start, low, high, n, xp, mode=mode, k=k, want_walks=want_walks,
                           limit=limit, check=check, memory=memory, ends=ends)
    if ends is not None and start.size:
        targets = xp.flatnonzero(ends)
        sources = xp.unique(start)
        if int(sources.size) * int(targets.size) <= PAIRS_FROM_BOTH_ENDS:
            return _pairs(step, back, start, sources, targets, low, high, n, xp, mode, k,
                          want_walks, limit, check, memory)
    if mode == "all_shortest":
        return _from_starts(step, back, start, low, high, n, xp, ends, want_walks, limit,
                            check, memory)
    return match_paths(step, start, low, high, n, xp, mode=mode, k=k, want_walks=want_walks,
                       limit=limit, check=check, memory=memory, ends=ends)


# -- one search per level for every start row ------------------------------------------------------
def _from_starts(step, back, start, low, high, n, xp, ends, want_walks, limit, check, memory):
    """BFS levels of (row, vertex) keys with their numbers of shortest walks
    (:func:`graphdb.executor.paths.count_paths`), then the walks to the allowed ends, built
    backwards over the levels."""
    record: list = []
    count_paths(step, start, low, high, n, xp, "all_shortest", check, ends, memory, record,
                limit)
    levels = [keys for _, keys, _, _ in record]
    found = [(level, keys, counts) for level, _, keys, counts in record if keys is not None]
    return _build(found, levels, back, n, xp, want_walks, memory)


def _build(found, levels, back, n, xp, want_walks, memory) -> Steps:
    """The rows of the results ``found`` ((level, sorted (row, end) keys, walk counts; None:
    one each)), their walks built backwards over ``levels`` when wanted."""
    parts = []
    for level, keys, counts in found:
        if keys.size == 0:
            continue
        many = xp.ones(keys.size, dtype=np.int64) if counts is None else \
            xp.rint(counts).astype(np.int64)
        if not want_walks:
            picked = keys[segment_owners(xp, many, int(many.sum()))]
            parts.append(Steps(picked // n, picked % n))
            continue
        memory(8 * (level + 3) * int(many.sum()), f"build {int(many.sum()):,} walks")

        def member(at: int, owner_keys, vertices):
            return ~not_in_sorted(xp, (owner_keys // n) * n + vertices, levels[at])

        rows, walk_vertices, walk_edges = _backwards(back, keys, keys % n, level, member, xp,
                                                     memory)
        end = walk_vertices[:, -1] if level else keys[rows] % n
        parts.append(Steps(keys[rows] // n, end, xp.full(rows.size, level, dtype=np.int64),
                           walk_vertices[:, 1:].ravel(), walk_edges.ravel()))
    return _concat(parts, xp, want_walks)


def _backwards(back, owner_keys, vertices, level: int, member, xp, memory, cap=None):
    """Every walk of ``level`` edges ending at ``vertices`` whose vertex after ``j`` steps is a
    member of level ``j`` (``member(j, owner_keys, vertices)``): (index of the end each walk
    belongs to, its vertices (level + 1 columns, first to last), its stored edges (level
    columns)); the walks of one end are adjacent, in order of the ends. ``cap`` (per end):
    at most that many walks of each end (every partial walk leads back to a whole one, so
    keeping the first ``cap`` at each step keeps ``cap`` whole ones)."""
    owner = xp.arange(vertices.size, dtype=np.int64)
    walk_vertices = vertices[:, None]
    walk_edges = xp.zeros((vertices.size, 0), dtype=np.int64)
    current = vertices
    for at in range(level - 1, -1, -1):
        idx, before, positions = back(current)
        keep = member(at, owner_keys[owner[idx]], before)
        idx, before, positions = idx[keep], before[keep], positions[keep]
        order = xp.argsort(idx, kind="stable")  # keep each end's walks together
        idx, before, positions = idx[order], before[order], positions[order]
        if cap is not None and idx.size:
            ends_of = owner[idx]
            first = xp.concatenate([xp.ones(1, dtype=bool), ends_of[1:] != ends_of[:-1]])
            group = xp.cumsum(first) - 1
            rank = xp.arange(idx.size, dtype=np.int64) - xp.flatnonzero(first)[group]
            kept = rank < cap[ends_of]
            idx, before, positions = idx[kept], before[kept], positions[kept]
        memory(8 * int(idx.size) * (2 * (level - at) + 3), f"extend {int(idx.size):,} walks")
        owner = owner[idx]
        walk_vertices = xp.concatenate([before[:, None], walk_vertices[idx]], axis=1)
        walk_edges = xp.concatenate([positions.astype(np.int64)[:, None], walk_edges[idx]],
                                    axis=1)
        current = before
    return owner, walk_vertices, walk_edges


def _concat(parts: list[Steps], xp, want_walks: bool) -> Steps:
    empty = xp.zeros(0, dtype=np.int64)
    if not parts:
        return Steps(empty, empty, *((empty, empty, empty) if want_walks else ()))
    row = xp.concatenate([p.row for p in parts])
    end = xp.concatenate([p.end for p in parts])
    if not want_walks:
        return Steps(row, end)
    return Steps(row, end, xp.concatenate([p.length for p in parts]),
                 xp.concatenate([p.vertices for p in parts]),
                 xp.concatenate([p.edges for p in parts]))


# -- few (start, end) pairs: a search from both ends ---------------------------------------------
class _Side:
    """One end's search: depth of each vertex reached (-1: not yet), its number of shortest
    walks from that end, the last level's vertices."""

    def __init__(self, origin: int, n: int, xp, expand):
        self.depth_of = xp.full(n, -1, dtype=np.int32)
        self.depth_of[origin] = 0
        self.walks = xp.zeros(n, dtype=np.float64)
        self.walks[origin] = 1.0
        self.frontier = xp.asarray([origin], dtype=np.int64)
        self.depth, self.expand, self.xp, self.n = 0, expand, xp, n

    def advance(self):
        """One level further; the vertices first reached there."""
        xp = self.xp
        idx, nbrs, _ = self.expand(self.frontier)
        fresh = self.depth_of[nbrs] < 0
        idx, nbrs = idx[fresh], nbrs[fresh]
        gained = xp.bincount(nbrs, weights=self.walks[self.frontier[idx]], minlength=self.n)
        new = xp.flatnonzero(gained)
        self.depth += 1
        self.depth_of[new] = self.depth
        self.walks[new] = gained[new]
        self.frontier = new
        return new

    def on_level(self, at: int, _owners, vertices):
        return self.depth_of[vertices] == at


def _pairs(step, back, start, sources, targets, low, high, n, xp, mode, k, want_walks, limit,
           check, memory) -> Steps:
    """Every (start vertex, end) pair searched from both ends; each start row gets its start
    vertex's walks."""
    memory(2 * 12 * n, "search from both ends")
    parts, total = [], 0.0
    host_sources = sources.tolist() if xp is np else xp.asnumpy(sources).tolist()
    host_targets = targets.tolist() if xp is np else xp.asnumpy(targets).tolist()
    for s in host_sources:
        rows = xp.flatnonzero(start == s)
        for t in host_targets:
            check()
            if mode == "any":
                found = _any_between(step, back, s, t, k, low, high, n, xp, want_walks, check,
                                     memory)
            elif s == t:  # a shortest cycle, or the walk of no edges
                one = xp.zeros(n, dtype=bool)
                one[t] = True
                found = _from_starts(step, back, xp.asarray([s], dtype=np.int64), low, high, n,
                                     xp, one, want_walks, limit - total, check, memory)
            else:
                found = _between(step, back, s, t, high, n, xp, want_walks, limit - total,
                                 check, memory)
            total += float(found.row.size) * int(rows.size)
            check_rows(limit, total, "shortest walk" if mode == "all_shortest" else "path")
            if found.row.size:
                parts.append(_for_rows(found, rows, xp, want_walks))
    return _concat(parts, xp, want_walks)


def _for_rows(found: Steps, rows, xp, want_walks: bool) -> Steps:
    """The walks of one start vertex for each of the start ``rows`` that have it."""
    count = int(rows.size)
    row = xp.repeat(rows, found.row.size)
    end = xp.tile(found.end, count)
    if not want_walks:
        return Steps(row, end)
    return Steps(row, end, xp.tile(found.length, count), xp.tile(found.vertices, count),
                 xp.tile(found.edges, count))


def _meet(step, back, s: int, t: int, high: int, n: int, xp, check):
    """(the two sides, the vertices where they met) of a search from both ends of ``s -> t``
    (s != t) within ``high`` edges; None when t is not reached."""
    forward, backward = _Side(s, n, xp, step), _Side(t, n, xp, back)
    while forward.depth + backward.depth < high:
        check()
        if forward.frontier.size == 0 or backward.frontier.size == 0:
            return None
        side, other = ((forward, backward) if _edges(step, forward.frontier) <=
                       _edges(back, backward.frontier) else (backward, forward))
        new = side.advance()
        met = new[other.depth_of[new] >= 0]
        if met.size:
            return forward, backward, met
    return None


def _empty(xp, want_walks: bool) -> Steps:
    empty = xp.zeros(0, dtype=np.int64)
    return Steps(empty, empty, empty, empty, empty) if want_walks else Steps(empty, empty)


def _between(step, back, s: int, t: int, high: int, n: int, xp, want_walks, limit, check,
             memory) -> Steps:
    """The shortest walks ``s -> t`` (s != t) by a search from both ends."""
    met = _meet(step, back, s, t, high, n, xp, check)
    if met is None:
        return _empty(xp, want_walks)
    forward, backward, middle = met
    walks = forward.walks[middle] * backward.walks[middle]
    total = float(walks.sum())
    check_rows(limit, total, "shortest walk")
    if not want_walks:
        many = int(round(total))
        return Steps(xp.zeros(many, dtype=np.int64), xp.full(many, t, dtype=np.int64))
    memory(8 * (forward.depth + backward.depth + 3) * int(round(total)),
           f"build {int(round(total)):,} walks")
    return _joined(step, back, t, middle, forward.depth, forward.on_level, backward.depth,
                   backward.on_level, None, xp, memory)


def _joined(step, back, t: int, middle, before: int, on_before, after: int, on_after, cap, xp,
            memory) -> Steps:
    """Walks through the ``middle`` vertices: every walk of ``before`` edges from the start to
    one (built backwards over ``on_before``'s levels) with every walk of ``after`` edges from
    it to ``t`` (forwards over ``on_after``'s); with ``cap`` (per middle vertex), at most that
    many per middle vertex."""
    ids = xp.zeros(middle.size, dtype=np.int64)  # (owner keys: one search, no rows)
    first, first_vertices, first_edges = _backwards(back, ids, middle, before, on_before, xp,
                                                    memory, cap)
    second, second_vertices, second_edges = _backwards(step, ids, middle, after, on_after, xp,
                                                       memory, cap)
    # second's walks run t -> v over the edges against the search: turn them around
    second_vertices, second_edges = second_vertices[:, ::-1], second_edges[:, ::-1]
    # every walk s -> v with every walk v -> t, for each middle vertex v
    halves = xp.bincount(first, minlength=middle.size)
    others = xp.bincount(second, minlength=middle.size)
    pairs = halves * others
    owner = segment_owners(xp, pairs, int(pairs.sum()))
    within = xp.arange(owner.size, dtype=np.int64) - (xp.cumsum(pairs) - pairs)[owner]
    if cap is not None:
        taken = within < cap[owner]
        owner, within = owner[taken], within[taken]
    a = (xp.cumsum(halves) - halves)[owner] + within // others[owner]
    b = (xp.cumsum(others) - others)[owner] + within % others[owner]
    vertices = xp.concatenate([first_vertices[a][:, 1:], second_vertices[b][:, 1:]], axis=1)
    edges = xp.concatenate([first_edges[a], second_edges[b]], axis=1)
    rows = owner.size
    return Steps(xp.zeros(rows, dtype=np.int64), xp.full(rows, t, dtype=np.int64),
                 xp.full(rows, before + after, dtype=np.int64), vertices.ravel(), edges.ravel())


def _edges(expand, frontier) -> int:
    """Edges the next level of a side gathers (known before gathering them), or the frontier's
    size where the expansion cannot say."""
    counted = getattr(expand, "gathered", None)
    return counted(frontier) if counted is not None else int(frontier.size)


# -- ANY k between two ends: walks counted by length from both ends --------------------------------
#: Levels past the shortest length after which a search for ANY k walks continues only through
#: vertices on some walk between the two ends (found then by a search from each end), so that
#: walks going round cycles that lead nowhere near the other end do not keep it going.
PRUNE_AFTER = 2


class _Counts:
    """One end's walks by length: per level the vertices some walk of that many edges from the
    end reaches (ascending) and how many walks reach each; ``allowed`` (once set) the vertices
    walks may go on through."""

    def __init__(self, origin: int, n: int, xp, expand):
        self.levels = [xp.asarray([origin], dtype=np.int64)]
        self.counts = [xp.ones(1, dtype=np.float64)]
        self.allowed = None
        self.n, self.xp, self.expand = n, xp, expand

    @property
    def depth(self) -> int:
        return len(self.levels) - 1

    def advance(self) -> None:
        xp = self.xp
        idx, nbrs, _ = self.expand(self.levels[-1])
        if self.allowed is not None:
            keep = self.allowed[nbrs]
            idx, nbrs = idx[keep], nbrs[keep]
        gained = xp.bincount(nbrs, weights=self.counts[-1][idx], minlength=self.n)
        new = xp.flatnonzero(gained)
        self.levels.append(new)
        self.counts.append(gained[new])

    def restrict(self, allowed) -> None:
        self.allowed = allowed
        keep = allowed[self.levels[-1]]
        self.levels[-1], self.counts[-1] = self.levels[-1][keep], self.counts[-1][keep]

    def on_level(self, at: int, _owners, vertices):
        return ~not_in_sorted(self.xp, vertices, self.levels[at])


def _overlap(xp, forward: _Counts, before: int, backward: _Counts, after: int):
    """(vertices, walks through each) where walks of ``before`` edges from the start meet
    walks of ``after`` edges to the end."""
    mine, theirs = forward.levels[before], backward.levels[after]
    if mine.size == 0 or theirs.size == 0:
        return mine[:0], forward.counts[before][:0]
    at = xp.minimum(xp.searchsorted(theirs, mine), theirs.size - 1)
    hit = theirs[at] == mine
    return mine[hit], forward.counts[before][hit] * backward.counts[after][at[hit]]


def _reached(expand, origin: int, n: int, xp, check):
    """Which vertices a search from ``origin`` reaches (a bool per vertex)."""
    side = _Side(origin, n, xp, expand)
    while side.frontier.size:
        check()
        side.advance()
    return side.depth_of >= 0


def _any_between(step, back, s: int, t: int, k: int, low: int, high: int, n: int, xp,
                 want_walks: bool, check, memory) -> Steps:
    """``k`` of the shortest walks ``s -> t`` of ``low``..``high`` edges (fewer where fewer
    exist): their number by length, counted from both ends, then that many built through the
    vertices where the two sides' walks meet."""
    shortest = 0 if low == 0 else 1
    if s != t:
        met = _meet(step, back, s, t, high, n, xp, check)
        if met is None:
            return _empty(xp, want_walks)
        forward, backward, middle = met
        if k == 1:  # one of the shortest: through the first vertex where they met
            if not want_walks:
                return Steps(xp.zeros(1, dtype=np.int64), xp.full(1, t, dtype=np.int64))
            return _joined(step, back, t, middle[:1], forward.depth, forward.on_level,
                           backward.depth, backward.on_level, xp.ones(1, dtype=np.int64), xp,
                           memory)
        shortest = forward.depth + backward.depth
    memory(2 * 16 * n, "count walks from both ends")
    forward, backward = _Counts(s, n, xp, step), _Counts(t, n, xp, back)
    found = [(0, 0, 1.0)] if s == t and low == 0 else []  # (before, after, walks)
    total = sum(w for _, _, w in found)
    pruned = False
    while total < k and forward.depth + backward.depth < high:
        check()
        if forward.levels[-1].size == 0 or backward.levels[-1].size == 0:
            break
        side = forward if _edges(step, forward.levels[-1]) <= \
            _edges(back, backward.levels[-1]) else backward
        side.advance()
        _, walks = _overlap(xp, forward, forward.depth, backward, backward.depth)
        count = float(walks.sum())
        if count and forward.depth + backward.depth >= low:
            found.append((forward.depth, backward.depth, count))
            total += count
        if not pruned and total < k and \
                forward.depth + backward.depth >= shortest + PRUNE_AFTER:
            forward.restrict(_reached(back, t, n, xp, check))
            backward.restrict(_reached(step, s, n, xp, check))
            pruned = True
    parts, taken = [], 0
    for before, after, count in found:
        need = int(min(count, k - taken))
        taken += need
        if not want_walks:
            parts.append(Steps(xp.zeros(need, dtype=np.int64), xp.full(need, t, dtype=np.int64)))
        elif before + after == 0:  # the walk of no edges
            empty = xp.zeros(0, dtype=np.int64)
            parts.append(Steps(xp.zeros(1, dtype=np.int64), xp.full(1, t, dtype=np.int64),
                               xp.zeros(1, dtype=np.int64), empty, empty))
        else:
            memory(8 * (before + after + 3) * need, f"build {need:,} walks")
            middle, walks = _overlap(xp, forward, before, backward, after)
            upto = xp.cumsum(walks)
            chosen = int(xp.searchsorted(upto, need)) + 1
            cap = xp.minimum(walks[:chosen], need - (upto[:chosen] - walks[:chosen]))
            parts.append(_joined(step, back, t, middle[:chosen], before, forward.on_level,
                                 after, backward.on_level, cap.astype(np.int64), xp, memory))
        if taken >= k:
            break
    return _concat(parts, xp, want_walks)
