"""The CSR of a graph version: the stored base CSR merged with the delta of a :class:`DeltaView`.

Row ``r`` of a merged direction (view ids) is the base row of its vertex less the deleted
entries, in stored order, then the vertex's delta entries in the order they were added::

    merged row r  =  base row inv[r] without tombstones   +   delta entries of r

That is exactly the row a fresh ingest of the same edges builds (it keeps input order within a
row, the base's edges having come first), so every algorithm answers what it answers on a fresh
load. A directed graph's in-CSR deletes, for each deleted out-edge ``u -> v`` (weight ``w``), one
entry ``u`` (weight ``w``) of base in-row ``v`` (:func:`in_tombstones`; equal entries are
interchangeable there). An undirected delta edge is entered in both rows (a self loop once); a
row's delta entries are in the order their edges were added, whichever end the row is.

:func:`plan_direction` computes the merged offsets and the delta's own CSR (O(V + delta));
:func:`merge_payload` places one array (targets, weights) with a compiled row-parallel pass on the
CPU, or, for any array module ``xp`` (numpy, CuPy), with :func:`merge_payload_xp`, the
vectorized form the GPU runs on its resident base (tests run both on numpy and compare).
Targets are merged as dense ids and mapped to view ids after (skipped when they coincide).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from graphdb.storage.compiled import KernelSet

from .delta import DeltaView
from .errors import CorruptGraph

__all__ = ["DirectionPlan", "deletion_runs", "in_tombstones", "match_in_entries",
           "match_in_sources", "merge_origin", "merge_payload", "merge_payload_xp",
           "plan_direction"]

KERNELS = KernelSet(__name__)
prange = range  # numba.prange once compiled


@dataclass
class DirectionPlan:
    """Where everything of one merged direction goes (host numpy arrays)."""

    offsets: np.ndarray  # int64, V_view + 1: the merged offsets
    base_row: np.ndarray  # int64, V_view: the base row of each view row, -1 for a new vertex
    tombstones: np.ndarray  # int64, sorted: base positions of this direction deleted
    tstart: np.ndarray  # int64, V_base: index of the first tombstone at or after each row
    doffsets: np.ndarray  # int64, V_view + 1: the delta entries' own CSR
    dtargets: np.ndarray  # int64: their targets, dense ids
    dweights: np.ndarray | None  # float64: their weights
    dorigin: np.ndarray  # int64: -(d + 1) for delta edge d
    slots: np.ndarray  # int64: the merged position of each delta entry
    lut: np.ndarray | None  # dense -> view ids; None where they coincide
    num_edges: int
    base_edges: int

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.offsets, self.base_row, self.tombstones, self.tstart,
                                      self.doffsets, self.dtargets, self.dorigin, self.slots)
                   ) + (0 if self.dweights is None else self.dweights.nbytes)


def in_tombstones(view: DeltaView, out_offsets: np.ndarray, out_targets: np.ndarray,
                  out_weights: np.ndarray | None, in_offsets: np.ndarray,
                  in_targets: np.ndarray, in_weights: np.ndarray | None) -> np.ndarray:
    """Base in-CSR positions deleted with the deleted out-edges (sorted): see
    :func:`match_in_entries`."""
    tomb = view.tombstones
    if not tomb.size:
        return tomb
    u = np.searchsorted(out_offsets, tomb, side="right") - 1
    v = out_targets[tomb].astype(np.int64)
    w = None if out_weights is None else out_weights[tomb]
    found = match_in_entries(in_offsets, in_targets, in_weights, u, v, w)
    if found is None:
        raise CorruptGraph(f"graph '{view.base.name}': a deleted edge has no entry in the "
                           "stored in-CSR", file="meta.lmdb/data.mdb")
    return found


def deletion_runs(u, v, w) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Deleted out-edges ``u -> v`` (weights ``w``, None unweighted) as the in-CSR matchers
    take them: (v, u, weight bits) sorted by in-row, then source, then weight, and the bounds
    of each in-row's run."""
    u = np.asarray(u, dtype=np.int64)
    v = np.asarray(v, dtype=np.int64)
    span = int(u.max()) + 1 if u.size else 1
    if w is None and (not v.size or int(v.max()) < (1 << 62) // span):
        # (row, source) as one key, sorted as such: several times a lexsort's speed on the
        # 840,000 deletions of a 10% delta on R-MAT 20
        key = np.sort(v * span + u)
        v = key // span
        u = key - v * span
        w = np.zeros(u.size, dtype=np.int64)
    else:
        w = (np.zeros(u.size, dtype=np.int64) if w is None
             else np.ascontiguousarray(w, dtype=np.float64).view(np.int64))
        order = np.lexsort((w, u, v))  # by row, then source, then weight
        v, u, w = v[order], u[order], w[order]
    rows = np.flatnonzero(np.concatenate(([True], v[1:] != v[:-1]))) if v.size else \
        np.zeros(0, dtype=np.int64)
    return v, u, w, np.append(rows, v.size).astype(np.int64)


def match_in_entries(in_offsets: np.ndarray, in_targets: np.ndarray,
                     in_weights: np.ndarray | None, u, v, w,
                     skip: np.ndarray | None = None) -> np.ndarray | None:
    """The base in-CSR positions of deleted out-edges ``u -> v`` (weights ``w``): for each,
    a distinct entry ``u`` of weight ``w`` in in-row ``v`` not set in the bitmap ``skip``
    (entries deleted before), the k-th deletion of equal edges taking their k-th such entry in
    stored order (equal entries are interchangeable). Sorted (rows ascend, and positions
    within each row); None where a deletion finds no entry (a damaged delta).

    Only the in-rows that lose an entry are read, each once, by a compiled pass in parallel
    over the rows, that looks every entry up among the row's deletions (sorted by source and
    weight): O(deletions log deletions + the affected rows' entries x log of their
    deletions). No pass over the whole graph, and no transposition of the base."""
    return _match(in_offsets, in_targets, in_weights, u, v, w, skip, False)[0]


def match_in_sources(in_offsets: np.ndarray, in_targets: np.ndarray, u, v,
                     skip: np.ndarray | None = None) -> tuple[np.ndarray | None, bool]:
    """:func:`match_in_entries` of a weighted graph without reading a weight: (the positions,
    whether they are exactly those the weighted match takes). They are wherever every deleted
    edge's source takes all the live entries of that source in its in-row (the common case:
    no parallel edges, or all of them deleted together), since the weighted match then takes
    those same entries; where a source keeps a live entry beside those it lost, only the
    weights say which ones went, and the answer is (None, False). A deletion that finds no
    entry gives (None, True)."""
    return _match(in_offsets, in_targets, None, u, v, None, skip, True)


def _match(in_offsets, in_targets, in_weights, u, v, w, skip, check):
    v, u, w, bounds = deletion_runs(u, v, w)
    found = np.empty(v.size, dtype=np.int64)
    if not v.size:
        return found, True
    weights = (np.zeros(0, dtype=np.int64) if in_weights is None
               else np.ascontiguousarray(in_weights).view(np.int64))
    bits = np.zeros(0, dtype=np.uint64) if skip is None else skip
    spare = np.zeros(bounds.size - 1, dtype=np.int64)
    kernels = KERNELS.for_work(v.size + len(in_targets), parallel=True)
    missing = kernels._match_rows(np.asarray(in_offsets, dtype=np.int64), in_targets, weights,
                                  in_weights is not None, bits, v, u, w, bounds, found, check,
                                  spare)
    if missing:
        return None, True
    if check and spare.any():
        return None, False
    return found, True


@KERNELS.kernel(parallel=True)
def _match_rows(in_off, in_src, in_w, weighted, skip, v, u, w, bounds, found, check, spare):
    """For each run ``bounds[i]..bounds[i+1]`` of deletions of one in-row (sorted by source,
    then weight bits), the positions of the row's entries they delete (:func:`_match_row`),
    in parallel; returns how many deletions found no entry. Each run's count goes to its own
    slot, summed after the loop: the loop holds no reduction and no inner loop, on which
    numba 0.68.0's parfor analysis fails ("unexpected cycle in lookup()")."""
    runs = bounds.size - 1
    missing = np.zeros(max(runs, 0), dtype=np.int64)
    for i in prange(runs):
        missing[i] = _match_row(in_off, in_src, in_w, weighted, skip, v, u, w, bounds[i],
                                bounds[i + 1], found, check, spare, i)
    return missing.sum()


@KERNELS.kernel()
def _match_row(in_off, in_src, in_w, weighted, skip, v, u, w, lo, hi, found, check, spare,
               run):
    """Deletions ``lo..hi`` of one in-row: scanning the row in stored order, an entry not set
    in ``skip`` (empty: none) whose (source, weight) still has an unmatched deletion takes it.
    Writes ``found[lo:hi]`` in ascending position; returns how many deletions found no
    entry. With ``check``, the row is read to its end and ``spare[run]`` set where a live
    entry's key has deletions but none left for it (then the match stops there)."""
    row = v[lo]
    taken = np.zeros(hi - lo, dtype=np.bool_)
    out = lo
    for p in range(in_off[row], in_off[row + 1]):
        if skip.size > 0:
            bit = np.uint64(p)
            if (skip[bit >> np.uint64(6)] >> (bit & np.uint64(63))) & np.uint64(1):
                continue
        s = np.int64(in_src[p])
        x = in_w[p] if weighted else np.int64(0)
        a = lo
        b = hi
        while a < b:  # the first deletion >= (s, x)
            m = (a + b) >> 1
            if u[m] < s or (u[m] == s and w[m] < x):
                a = m + 1
            else:
                b = m
        if a == hi or u[a] != s or w[a] != x:
            continue
        while a < hi and u[a] == s and w[a] == x and taken[a - lo]:
            a += 1
        if a < hi and u[a] == s and w[a] == x:
            taken[a - lo] = True
            found[out] = p
            out += 1
            if out == hi and not check:
                break
        elif check:
            spare[run] = 1
            return 0
    return hi - out


def plan_direction(view: DeltaView, direction: str, base_offsets: np.ndarray,
                   tombstones: np.ndarray | None = None) -> DirectionPlan:
    """The merged layout of ``direction`` ('out', or 'in' of a directed graph, whose
    ``tombstones`` come from :func:`in_tombstones`)."""
    base = view.base
    vb, n = base.num_vertices, view.num_vertices
    base_offsets = np.asarray(base_offsets, dtype=np.int64)
    tomb = view.tombstones if tombstones is None else tombstones
    rows_of_tomb = np.searchsorted(base_offsets, tomb, side="right") - 1
    kept = np.diff(base_offsets) - np.bincount(rows_of_tomb, minlength=vb)[:vb]
    lut = view.lut
    if base.directed:
        rows, targets = (view.src, view.dst) if direction == "out" else (view.dst, view.src)
        weights, origin = view.weights, -view.edge_ids - 1
    else:
        loop = view.src == view.dst
        rows = np.concatenate([view.src, view.dst[~loop]])
        targets = np.concatenate([view.dst, view.src[~loop]])
        weights = None if view.weights is None else np.concatenate(
            [view.weights, view.weights[~loop]])
        origin = np.concatenate([-view.edge_ids - 1, -view.edge_ids[~loop] - 1])
    view_rows = lut[rows]
    if base.directed:
        order = np.argsort(view_rows, kind="stable")
    else:  # a row's entries in the order their edges were added, either end's alike
        added = np.arange(len(view.src), dtype=np.int64)
        order = np.lexsort((np.concatenate([added, added[~loop]]), view_rows))
    view_rows = view_rows[order]
    dcounts = np.bincount(view_rows, minlength=n)[:n]
    doffsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(dcounts, out=doffsets[1:])
    live_base = lut[:vb] >= 0
    if np.any(kept[~live_base] != 0):
        raise CorruptGraph(f"graph '{base.name}': a deleted vertex keeps stored edges",
                           file="meta.lmdb/data.mdb")
    degrees = dcounts.copy()
    base_row = np.full(n, -1, dtype=np.int64)
    live = np.flatnonzero(live_base)
    degrees[lut[live]] += kept[live]
    base_row[lut[live]] = live
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(degrees, out=offsets[1:])
    kept_view = np.zeros(n, dtype=np.int64)
    kept_view[lut[live]] = kept[live]
    rank = np.arange(len(view_rows), dtype=np.int64) - doffsets[view_rows]
    slots = offsets[view_rows] + kept_view[view_rows] + rank
    return DirectionPlan(
        offsets=offsets, base_row=base_row, tombstones=tomb,
        tstart=np.searchsorted(tomb, base_offsets[:-1]).astype(np.int64),
        doffsets=doffsets, dtargets=targets[order].astype(np.int64),
        dweights=None if weights is None else weights[order], dorigin=origin[order],
        slots=slots, lut=None if view.identity else lut, num_edges=int(offsets[-1]),
        base_edges=int(base_offsets[-1]))


@KERNELS.kernel(parallel=True)
def _merge_rows(offsets, base_row, base_off, base_vals, tomb, tstart, doff, dvals, out):
    """Row ``r`` of ``out``: base row ``base_row[r]`` without the tombstoned positions, then
    the delta entries ``doff[r]..doff[r+1]``. One row per iteration, rows in parallel."""
    n = offsets.size - 1
    ntomb = tomb.size
    for r in prange(n):
        pos = offsets[r]
        b = base_row[r]
        if b >= 0:
            t = tstart[b]
            for e in range(base_off[b], base_off[b + 1]):
                if t < ntomb and tomb[t] == e:
                    t += 1
                    continue
                out[pos] = base_vals[e]
                pos += 1
        for k in range(doff[r], doff[r + 1]):
            out[pos] = dvals[k]
            pos += 1
    return out


def merge_payload(plan: DirectionPlan, base_offsets: np.ndarray, base_values: np.ndarray,
                  delta_values: np.ndarray, *, ids: bool = False) -> np.ndarray:
    """One merged array on the CPU (compiled, rows in parallel). ``ids``: the values are vertex
    ids (targets), mapped to view ids after the merge."""
    out = np.empty(plan.num_edges, dtype=base_values.dtype)
    kernels = KERNELS.for_work(len(plan.offsets) + plan.num_edges, parallel=True)
    kernels._merge_rows(plan.offsets, plan.base_row, np.asarray(base_offsets, dtype=np.int64),
                        base_values, plan.tombstones, plan.tstart, plan.doffsets,
                        delta_values.astype(base_values.dtype, copy=False), out)
    if ids and plan.lut is not None:
        out = plan.lut[out].astype(base_values.dtype, copy=False)
    return out


def merge_payload_xp(xp: Any, plan: DirectionPlan, base_values, delta_values, *,
                     ids: bool = False, lut=None, tombstones=None, slots=None):
    """:func:`merge_payload` for any array module: ``base_values`` (and ``lut``,
    ``tombstones``, ``slots`` if given: copies of the plan's already on the device) live
    there; only the delta's arrays and the plan's small ones are copied in."""
    tomb = xp.asarray(plan.tombstones) if tombstones is None else tombstones
    at = xp.asarray(plan.slots) if slots is None else slots
    keep = xp.ones(plan.base_edges, dtype=bool)
    keep[tomb] = False
    kept = base_values[keep]
    out = xp.empty(plan.num_edges, dtype=base_values.dtype)
    mask = xp.zeros(plan.num_edges, dtype=bool)
    mask[at] = True
    out[~mask] = kept
    out[at] = xp.asarray(delta_values).astype(base_values.dtype)
    if ids and plan.lut is not None:
        table = xp.asarray(plan.lut) if lut is None else lut
        out = table[out].astype(base_values.dtype)
    return out


def merge_origin(plan: DirectionPlan) -> np.ndarray:
    """For every merged position, where its edge comes from: a base position (>= 0), or
    ``-(d + 1)`` for delta edge ``d`` (the row identity of ``g.edges`` for writes, and how edge
    properties are aligned)."""
    return merge_payload_xp(np, plan, np.arange(plan.base_edges, dtype=np.int64), plan.dorigin)
