"""Cyclic patterns through bound vertices: a hop back to a vertex the pattern has bound already is
an edge lookup, and the hop before it an intersection of neighbour lists.

A pattern that returns to one of its variables, ``(a)-[]-(b)-[]-(c)-[]-(a)``, was matched by
expanding every hop and keeping the rows whose last vertex is the bound one: the last hop gathered
every neighbour of every ``c`` (300 million edges for the triangles through a person with 10 k
friends) to keep the few that are ``a``. Here:

- **the closing hop** ``(c)-[]-(a)`` with both ends bound looks each row's edges up: the in-edge
  index lists each vertex's in-edges by ascending source, so a binary search within a row finds
  the edges between two vertices, parallel edges and all, whichever direction the hop takes
  (compiled on the host; on a GPU one search of the index's keys, :func:`in_keys`);
- **the hop before it** ``(b)-[]-(c)`` then only makes the ``c`` that are also neighbours of
  ``a``: the intersection of b's and a's neighbour lists, found from the shorter of the two for
  each row (the worst-case optimal join's step, as Kuzu and Umbra plan cyclic patterns): b's
  neighbours looked up among a's edges, or a's neighbours looked up among b's. A hub's friends
  then cost their own degrees, not their friends' friends.

Written for numpy and CuPy alike; the expanders are :mod:`graphdb.executor.pattern`'s (a hop's
direction, masks and the graph's arrays).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphdb.storage.compiled import KernelSet

from .paths import segment_owners

__all__ = ["KERNELS", "edges_between", "in_keys", "intersect"]

KERNELS = KernelSet(__name__)
prange = range  # numba.prange once compiled


def in_keys(graph) -> Any:
    """The stored edges' keys ``target * V + source`` in the in-edge index's order (ascending:
    the index groups by target, and a target's sources ascend with the out-CSR's rows)."""
    def build():
        xp, n = graph.xp, graph.num_vertices
        inverse = graph.inverse()
        counts = inverse.offsets[1:] - inverse.offsets[:-1]
        targets = segment_owners(xp, counts, int(inverse.sources.size))
        return targets * n + inverse.sources.astype(np.int64)

    return build() if graph.derived is None else graph.derived("pattern:in_keys", build)


def _equal(xp, keys, wanted, positions):
    """(index into ``wanted``, stored position) of every key equal to one of ``wanted``."""
    low = xp.searchsorted(keys, wanted, side="left")
    counts = xp.searchsorted(keys, wanted, side="right") - low
    total = int(counts.sum()) if counts.size else 0
    rows = segment_owners(xp, counts, total)
    slots = low[rows] + xp.arange(total, dtype=np.int64) - (xp.cumsum(counts) - counts)[rows]
    return rows, positions[slots].astype(np.int64)


@KERNELS.kernel(parallel=True)
def equal_ranges(offsets, sources, rows, values, low, high):
    """For each ``i``: the range ``low[i]:high[i]`` of ``sources`` (ascending within each row
    of ``offsets``) in row ``rows[i]`` that equals ``values[i]``: a binary search within the
    row, whose few entries stay in cache (a search of all the edges' keys missed it: 2 s for
    434 k lookups)."""
    for i in prange(values.size):
        row = rows[i]
        a, b = offsets[row], offsets[row + 1]
        end = b
        value = values[i]
        while a < b:
            middle = (a + b) >> 1
            if sources[middle] < value:
                a = middle + 1
            else:
                b = middle
        low[i] = a
        b = end
        while a < b:
            middle = (a + b) >> 1
            if sources[middle] <= value:
                a = middle + 1
            else:
                b = middle
        high[i] = a


def _in_row(expand, rows, values):
    """(index into ``values``, stored position) of the in-edges of vertex ``rows[i]`` from
    ``values[i]``, each pair's edges in order."""
    xp = expand.xp
    inverse = expand.inverse()
    if xp is not np:
        n = expand.graph.num_vertices
        return _equal(xp, in_keys(expand.graph), rows * n + values, inverse.positions)
    low = np.empty(values.size, dtype=np.int64)
    high = np.empty(values.size, dtype=np.int64)
    kernels = KERNELS.for_work(int(values.size) * 16, parallel=True)
    kernels.equal_ranges(inverse.offsets, inverse.sources, rows, values, low, high)
    counts = high - low
    total = int(counts.sum())
    found = segment_owners(np, counts, total)
    slots = low[found] + np.arange(total, dtype=np.int64) - (np.cumsum(counts) - counts)[found]
    return found, inverse.positions[slots].astype(np.int64)


#: Lookups whose ends are at most this many distinct vertices search those vertices' own
#: neighbour lists, sorted once per lookup (a triangle through one person: one list, which stays
#: in cache, where each row's search in another vertex's list misses it).
FEW_ENDS = 64


def _from_few(expand, frm, to, ends):
    """:func:`edges_between`'s pairs for the few distinct ``ends`` of ``to``: each end's
    neighbours one step back against the hop, sorted, searched for the rows' ``frm``."""
    xp = expand.xp
    graph, inverse = expand.graph, expand.inverse()
    order = xp.argsort(to, kind="stable")
    bounds = xp.searchsorted(to[order], ends, side="left").tolist() + [int(to.size)]
    parts = []
    for i, x in enumerate(ends.tolist()):
        rows = order[bounds[i]:bounds[i + 1]]
        lists = []
        if expand.direction in ("out", "both"):  # edges frm -> x: x's in-edges
            a, b = int(inverse.offsets[x]), int(inverse.offsets[x + 1])
            lists.append((inverse.sources[a:b], inverse.positions[a:b]))
        if expand.direction in ("in", "both"):  # edges x -> frm: x's out-edges
            a, b = int(graph.out.offsets[x]), int(graph.out.offsets[x + 1])
            targets, slots = graph.out.targets[a:b], xp.arange(a, b, dtype=np.int64)
            if expand.direction == "both":  # x's self-loop is one edge: its in-edges have it
                other = targets != x
                targets, slots = targets[other], slots[other]
            lists.append((targets, slots))
        nbrs = xp.concatenate([n for n, _ in lists]).astype(np.int64)
        slots = xp.concatenate([p for _, p in lists]).astype(np.int64)
        by = xp.argsort(nbrs, kind="stable")
        nbrs, slots = nbrs[by], slots[by]
        wanted = frm[rows]
        low = xp.searchsorted(nbrs, wanted, side="left")
        counts = xp.searchsorted(nbrs, wanted, side="right") - low
        total = int(counts.sum())
        owner = segment_owners(xp, counts, total)
        at = low[owner] + xp.arange(total, dtype=np.int64) - (xp.cumsum(counts) - counts)[owner]
        parts.append((rows[owner], slots[at]))
    return parts


def edges_between(expand, frm, to, metrics: dict):
    """(row, stored edge position) of every edge a step of ``expand``'s hop may take from
    ``frm[row]`` to ``to[row]`` (masks applied)."""
    xp = expand.xp
    frm, to = frm.astype(np.int64), to.astype(np.int64)
    ends = xp.unique(to)
    if int(ends.size) <= FEW_ENDS:
        parts = _from_few(expand, frm, to, ends)
    else:
        parts = []
        if expand.direction in ("out", "both"):  # edges frm -> to: to's in-edges from frm
            parts.append(_in_row(expand, to, frm))
        if expand.direction in ("in", "both"):  # edges to -> frm
            rows, found = _in_row(expand, frm, to)
            if expand.direction == "both":  # a self-loop is one edge: the first part has it
                other = frm[rows] != to[rows]
                rows, found = rows[other], found[other]
            parts.append((rows, found))
    if not parts:
        empty = xp.zeros(0, dtype=np.int64)
        return empty, empty
    rows = xp.concatenate([p[0] for p in parts])
    found = xp.concatenate([p[1] for p in parts])
    metrics["edges_looked_up"] = metrics.get("edges_looked_up", 0) + int(frm.size)
    if expand.masks is not None:
        keep = expand.masks.keep(xp, frm[rows], to[rows], found)
        rows, found = rows[keep], found[keep]
    return rows, found


def degrees(expand, frontier):
    """Edges a step of ``expand``'s hop gathers from each vertex of ``frontier`` (masks not
    applied)."""
    graph = expand.graph
    out = graph.out.offsets[frontier + 1] - graph.out.offsets[frontier]
    if expand.direction == "out":
        return out
    inverse = expand.inverse()
    inward = inverse.offsets[frontier + 1] - inverse.offsets[frontier]
    return inward if expand.direction == "in" else out + inward


def intersect(first, second, second_back, frm, far, metrics: dict):
    """The hop ``first`` from ``frm[row]`` to a new vertex ``c`` followed by the hop ``second``
    from ``c`` back to the bound ``far[row]``, both at once: (row, c, first's edge, second's
    edge) of every pair of edges that closes the cycle. ``second_back`` is ``second`` taken
    backwards (from ``far``). Each row starts from the shorter neighbour list: ``frm``'s,
    looked up among ``far``'s edges, or ``far``'s, looked up among ``frm``'s."""
    xp = first.xp
    mine, theirs = degrees(first, frm), degrees(second_back, far)
    parts = []
    for rows, forward in ((xp.flatnonzero(mine <= theirs), True),
                          (xp.flatnonzero(mine > theirs), False)):
        if rows.size == 0:
            continue
        if forward:  # frm's neighbours c, then the edges c -> far
            idx, c, e1 = first(frm[rows], metrics)
            hit, e2 = edges_between(second, c, far[rows][idx], metrics)
            parts.append((rows[idx[hit]], c[hit], e1[hit].astype(np.int64), e2))
        else:  # far's neighbours c (backwards over second), then the edges frm -> c
            idx, c, e2 = second_back(far[rows], metrics)
            hit, e1 = edges_between(first, frm[rows][idx], c, metrics)
            parts.append((rows[idx[hit]], c[hit], e1, e2[hit].astype(np.int64)))
    if not parts:
        empty = xp.zeros(0, dtype=np.int64)
        return empty, empty, empty, empty
    return tuple(xp.concatenate([p[i] for p in parts]) for i in range(4))
