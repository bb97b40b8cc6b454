"""Paths as values: what a quantified hop ``{m,n}`` of a pattern matches, under SQL/PGQ's path
search prefixes.

A hop ``(a)-[e]->{m,n}(b)`` matches walks of m..n edges. What the rows are depends on the
pattern's prefix (:data:`MODES`):

- ``walk`` (no prefix, SQL/PGQ's default): one row per walk. Their number is counted first, by
  a walk count per (row, vertex) and level (a dynamic program over sparse keys, bounded by the
  rows times the vertices per level), and a pattern whose walks exceed the row limit is refused
  before one is built (:class:`TooManyPaths`). Without a path variable the rows are the counted
  (row, end) pairs, each repeated as often as walks reach it; with one, the walks are built.
- ``any`` with ``k`` (``ANY``, ``ANY k``, ``ANY SHORTEST`` = ``ANY 1``, ``SHORTEST k``): at
  most k walks per (row, end), the shortest ones (by edges; ties as found). A prefix of one of
  the k shortest walks to b, ending at v, is one of the k shortest walks to v, so each level
  keeps at most k walks per (row, vertex), counted over all levels: level-synchronous, the work
  bounded by k times the reachable pairs.
- ``all_shortest`` (``ALL SHORTEST``): every walk of the smallest length in m..n to each end.
  Every prefix of a shortest walk is a shortest walk to its own end, so a level keeps the walks
  ending at vertices first reached there; their number (sum of the shortest-path counts) is
  counted first, as for walks.

With ``m = 1`` the start vertex is not reached at level 0: a walk back to it (a cycle) is a
match, found at its shortest length; ``m = 0`` adds the walk of no edges. The selective modes
take ``m`` of 0 or 1 (a shortest walk of at least m > 1 edges would need per-level states; the
binder refuses it). Everything is written for numpy and CuPy alike (``xp``): sorted keys
``row * V + vertex``, gathers, segmented counts.

The target's own conditions (labels, ``WHERE b.id = 7``) arrive as ``ends``, a bool per
vertex: only walks ending there count against the row limit, and a selective search stops at the
level where every (row, allowed end) pair has its walks, instead of reaching every vertex.

A result is (row, end vertex) and, when the walks are wanted, their steps: the vertices after the
start and the stored edge positions, flat, in result order, ``length`` of each per result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .errors import InvalidArgument
from .pattern_count import walks_by_vertex

__all__ = ["DEFAULT_PATH_ROWS", "MODES", "Steps", "TooManyPaths", "check_rows", "count_paths",
           "match_paths", "not_in_sorted", "ragged_take", "segment_owners"]

#: The row semantics of a quantified hop (see the module docstring).
MODES = ("walk", "any", "all_shortest")
#: The most rows a quantified hop may make unless ``SET max_path_rows`` says otherwise.
DEFAULT_PATH_ROWS = 10_000_000
#: (rows x vertices) up to which ``ANY``/``ANY SHORTEST`` (one walk per pair) marks the pairs
#: reached in dense arrays on the host instead of merging sorted keys every level.
DENSE_PAIRS = 1 << 24


class TooManyPaths(InvalidArgument):
    """A pattern's rows (one per path) would exceed the row limit."""


@dataclass
class Steps:
    """Results of a hop: ``row`` (the binding each came from), ``end`` (vertex); with the walks,
    ``length`` (edges) per result and, flat in result order, each step's vertex and stored edge
    position (``None`` when the walks were not asked for)."""

    row: Any
    end: Any
    length: Any = None
    vertices: Any = None
    edges: Any = None


def segment_owners(xp, lengths, total: int):
    """The segment of each of ``total`` slots, segments of ``lengths`` slots in order."""
    if xp is np:
        return np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
    return xp.searchsorted(xp.cumsum(lengths), xp.arange(total, dtype=np.int64), side="right")


def ragged_take(xp, lengths, values: list, idx):
    """Rows ``idx`` of ragged arrays (``lengths`` per row, ``values`` flat, each in row order):
    (new lengths, new flat values)."""
    offsets = xp.zeros(lengths.size + 1, dtype=np.int64)
    xp.cumsum(lengths, out=offsets[1:])
    chosen = lengths[idx]
    total = int(chosen.sum()) if chosen.size else 0
    owner = segment_owners(xp, chosen, total)
    first = xp.zeros(chosen.size + 1, dtype=np.int64)
    xp.cumsum(chosen, out=first[1:])
    source = offsets[idx][owner] + (xp.arange(total, dtype=np.int64) - first[owner])
    return chosen, [v[source] for v in values]


def _group_sums(xp, keys, counts):
    """(unique keys, summed counts) of key/count pairs."""
    unique, inverse = xp.unique(keys, return_inverse=True)
    return unique, xp.bincount(inverse.ravel(), weights=counts, minlength=unique.size)


def not_in_sorted(xp, keys, reached):
    """Which of ``keys`` are not in the sorted ``reached``."""
    if reached.size == 0:
        return xp.ones(keys.size, dtype=bool)
    at = xp.minimum(xp.searchsorted(reached, keys), reached.size - 1)
    return reached[at] != keys


def check_rows(limit: int, count: float, what: str) -> None:
    """Refuse a pattern whose rows (one per ``what``) would exceed ``limit``."""
    if count > limit:
        raise TooManyPaths(
            f"the pattern would return {count:,.0f} rows, one per {what}, over the limit of "
            f"{limit:,} (SET max_path_rows): ask for one path per pair of endpoints (MATCH ANY "
            "..., ANY SHORTEST, ANY k), narrow the quantifier, or filter the start vertices")


def _settled(xp, keys, counts, ends, n: int, rows: int, k: int) -> bool:
    """Whether every (row, end) pair with an end allowed by ``ends`` has its ``k`` walks among
    the sorted unique ``keys`` (``counts`` walks each; None: one): a selective search may stop,
    for a later level only brings longer walks, which no such pair keeps."""
    allowed = int(ends.sum())
    if keys.size < rows * allowed:
        return False
    hit = ends[keys % n]
    if counts is not None:
        hit &= counts >= k
    return int(hit.sum()) == rows * allowed


def count_paths(step, start, low: int, high: int, n: int, xp, mode: str,
                check: Callable[[], None], ends=None,
                memory: Callable[[int, str], None] = lambda nbytes, what: None,
                record: list | None = None, limit: float | None = None):
    """(keys ``row * n + end``, counts) of the walks a hop matches, per (row, end), before any
    is built: every walk (``walk``) or the shortest ones (``all_shortest``). ``ends`` (a bool
    per vertex, or None) keeps the walks ending there only, and ends a shortest search once
    each of them is reached. ``record`` receives (level, the level's sorted keys, its results'
    keys, their counts) per level; ``limit`` refuses past that many walks as they add up."""
    rows = xp.arange(start.size, dtype=np.int64)
    keys = rows * n + start.astype(np.int64)
    counts = xp.ones(keys.size, dtype=np.float64)
    keys, counts = _group_sums(xp, keys, counts)
    found_keys, found_counts = [], []
    total = 0.0

    def level_done(level: int, kept) -> None:
        nonlocal total
        found_keys.append(keys[kept])
        found_counts.append(counts[kept])
        if record is not None:
            record.append((level, keys, found_keys[-1], found_counts[-1]))
        if limit is not None:
            total += float(found_counts[-1].sum())
            check_rows(limit, total, "walk" if mode == "walk" else "shortest walk")

    if low == 0:
        level_done(0, slice(None) if ends is None else ends[keys % n])
    elif record is not None:
        record.append((0, keys, None, None))
    reached = keys if low == 0 else xp.zeros(0, np.int64)
    for level in range(1, high + 1):
        check()
        if keys.size == 0:
            break
        idx, nbrs, _ = step(keys % n)
        new = (keys // n)[idx] * n + nbrs
        weights = counts[idx]
        if mode == "all_shortest":
            fresh = not_in_sorted(xp, new, reached)
            new, weights = new[fresh], weights[fresh]
        keys, counts = _group_sums(xp, new, weights)
        if mode == "all_shortest":
            reached = xp.union1d(reached, keys)
        if level >= low:
            level_done(level, slice(None) if ends is None else ends[keys % n])
        elif record is not None:
            record.append((level, keys, None, None))
        held = sum(a.nbytes for a in found_keys + found_counts) + reached.nbytes + (
            sum(r[1].nbytes for r in record) if record is not None else 0)
        memory(held + 4 * keys.nbytes, f"count walks to {int(keys.size):,} (row, vertex) pairs")
        if mode == "all_shortest" and ends is not None and _settled(
                xp, reached, None, ends, n, int(start.size), 1):
            break
    if not found_keys:
        return xp.zeros(0, np.int64), xp.zeros(0, np.float64)
    return xp.concatenate(found_keys), xp.concatenate(found_counts)


def match_paths(step, start, low: int, high: int, n: int, xp, *, mode: str = "walk",
                k: int = 1, want_walks: bool = False, limit: int = DEFAULT_PATH_ROWS,
                check: Callable[[], None] = lambda: None,
                memory: Callable[[int, str], None] = lambda nbytes, what: None,
                ends=None) -> Steps:
    """The results of a quantified hop from the vertices ``start`` (one per binding row).

    ``step(vertices)`` gathers the edges one step from ``vertices``: (index into them, neighbour,
    stored edge position), masks applied. ``limit`` bounds the rows; ``memory(bytes, what)``
    refuses a step whose arrays would not fit the budget.
    """
    assert mode in MODES, mode
    if mode == "walk":
        # Every walk's rows from all starts at once, counted per vertex (no state per row):
        # a pattern past the limit is refused before its per-row counts take any memory.
        check_rows(limit, float(walks_by_vertex(xp, n, start, [(step, low, high, ends)], check,
                                                exact=False)), "walk")
    if mode != "any":
        keys, counts = count_paths(step, start, low, high, n, xp, mode, check, ends, memory)
        check_rows(limit, float(counts.sum()) if counts.size else 0.0,
               "walk" if mode == "walk" else "shortest walk")
        if mode == "walk" and not want_walks:
            whole = counts.astype(np.int64)
            total = int(whole.sum()) if whole.size else 0
            memory(16 * total, f"bind {total:,} walks")
            picked = keys[segment_owners(xp, whole, total)]
            return Steps(picked // n, picked % n)
    return _enumerate(step, start, low, high, n, xp, mode, k, limit, check, memory, want_walks,
                      ends)


def _enumerate(step, start, low, high, n, xp, mode, k, limit, check, memory, want_walks,
               ends=None):
    """The walks themselves, level by level (see the module docstring)."""
    rows = xp.arange(start.size, dtype=np.int64)
    cur = start.astype(np.int64)
    verts = xp.zeros((rows.size, 0), dtype=np.int64)
    edges = xp.zeros((rows.size, 0), dtype=np.int64)
    found = []  # (rows, cur, verts, edges) of each level's results
    seeds = rows * n + cur
    if low == 0:
        found.append((rows, cur, verts, edges))
    # per (row, vertex): walks kept so far (mode any), or reached already (all_shortest)
    kept_keys = xp.unique(seeds) if low == 0 else xp.zeros(0, np.int64)
    kept_counts = xp.ones(kept_keys.size, dtype=np.int64)
    results = int(rows.size) if low == 0 else 0
    dense = _DensePairs(rows.size, n, kept_keys, ends, memory) if (
        xp is np and mode == "any" and k == 1 and rows.size * n <= DENSE_PAIRS) else None
    for level in range(1, high + 1):
        check()
        if rows.size == 0:
            break
        memory(rows.size * 16 * (level + 2) * 2, f"extend {rows.size:,} walks")
        idx, nbrs, positions = step(cur)
        keys = rows[idx] * n + nbrs
        if mode == "all_shortest":
            keep = not_in_sorted(xp, keys, kept_keys)
            kept_keys = xp.union1d(kept_keys, keys[keep])
        elif dense is not None:
            keep = dense.first_new(keys)
        elif mode == "any":
            keep, kept_keys, kept_counts = _first_k(xp, keys, kept_keys, kept_counts, k)
        else:
            keep = None
        if keep is not None:
            idx, nbrs, positions = idx[keep], nbrs[keep], positions[keep]
        rows, cur = rows[idx], nbrs
        if want_walks:
            verts = xp.concatenate([verts[idx], nbrs[:, None]], axis=1)
            edges = xp.concatenate([edges[idx], positions.astype(np.int64)[:, None]], axis=1)
        else:
            verts = edges = xp.zeros((rows.size, 0), dtype=np.int64)
        if level >= low:
            found.append((rows, cur, verts, edges))
            results += int(rows.size) if ends is None else int(ends[cur].sum())
            check_rows(limit, results, "path")
        if dense is not None:
            if dense.settled():
                break
        elif ends is not None and mode != "walk" and _settled(
                xp, kept_keys, kept_counts if mode == "any" else None, ends, n,
                int(start.size), k if mode == "any" else 1):
            break
    if not found:
        empty = xp.zeros(0, np.int64)
        return Steps(empty, empty, empty, empty, empty)
    row = xp.concatenate([f[0] for f in found])
    end = xp.concatenate([f[1] for f in found])
    if not want_walks:
        return Steps(row, end)
    length = xp.concatenate([xp.full(f[0].size, f[2].shape[1], dtype=np.int64) for f in found])
    return Steps(row, end, length, xp.concatenate([f[2].ravel() for f in found]),
                 xp.concatenate([f[3].ravel() for f in found]))


class _DensePairs:
    """The (row, vertex) pairs one walk each reached so far (``ANY``, ``ANY SHORTEST``), as a
    bool per pair: for a few start rows the sorted-key merge of :func:`_first_k` (an argsort of
    every gathered edge each level) was most of a shortest-path query (28 of 55 ms from one
    person to another at 50k persons/1M knows). Host only: picking the first of repeated keys
    relies on numpy's in-order scatter; a GPU's scatter picks any, so it keeps the sort."""

    def __init__(self, rows: int, n: int, seeds, ends, memory):
        memory(9 * rows * n, f"mark {rows * n:,} (row, vertex) pairs")
        self.seen = np.zeros(rows * n, dtype=bool)
        self.seen[seeds] = True
        self.first = np.empty(rows * n, dtype=np.int64)  # scratch, read where just written
        # the (row, allowed end) pairs a search may stop at once all are reached
        self.wanted = None if ends is None else (
            np.arange(rows, dtype=np.int64)[:, None] * n + np.flatnonzero(ends)).ravel()

    def first_new(self, keys):
        """Which of ``keys`` (a level's candidate walks, in gather order) to keep: the first
        walk to each pair not reached before; marks those pairs reached."""
        fresh = np.flatnonzero(~self.seen[keys])
        new = keys[fresh]
        self.first[new[::-1]] = fresh[::-1]  # in order: the first of equal keys writes last
        won = self.first[new] == fresh
        self.seen[new[won]] = True
        keep = np.zeros(keys.size, dtype=bool)
        keep[fresh[won]] = True
        return keep

    def settled(self) -> bool:
        return self.wanted is not None and bool(self.seen[self.wanted].all())


def _first_k(xp, keys, kept_keys, kept_counts, k: int):
    """Which of the candidate walks (ending at ``keys``) to keep so that no (row, vertex) has
    more than ``k`` walks over all levels; the updated (sorted keys, counts) kept."""
    order = xp.argsort(keys, kind="stable")
    ordered = keys[order]
    if ordered.size == 0:
        return xp.zeros(0, dtype=bool), kept_keys, kept_counts
    starts = xp.concatenate([xp.ones(1, dtype=bool), ordered[1:] != ordered[:-1]])
    group_first = xp.flatnonzero(starts)
    group = xp.cumsum(starts) - 1
    rank = xp.arange(ordered.size, dtype=np.int64) - group_first[group]
    had = xp.zeros(ordered.size, dtype=np.int64)
    if kept_keys.size:
        at = xp.minimum(xp.searchsorted(kept_keys, ordered), kept_keys.size - 1)
        hit = kept_keys[at] == ordered
        had = xp.where(hit, kept_counts[at], 0)
    take = rank < (k - had)
    keep = xp.zeros(keys.size, dtype=bool)
    keep[order[take]] = True
    taken, counts = _group_sums(xp, ordered[take], xp.ones(int(take.sum()), dtype=np.float64))
    merged = xp.concatenate([kept_keys, taken])
    merged_counts = xp.concatenate([kept_counts.astype(np.float64), counts])
    kept_keys, summed = _group_sums(xp, merged, merged_counts)
    return keep, kept_keys, summed.astype(np.int64)
