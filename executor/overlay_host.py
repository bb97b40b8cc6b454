"""The host's operations on a version's state (:mod:`graphdb.executor.overlay`): numpy, with
compiled loops (numba, :mod:`graphdb.storage.compiled`) where numpy would sort, scatter with
repeats, or walk rows slowly. :mod:`graphdb.executor.overlay_gpu` is the device's twin; the
tests run both interfaces through the same states."""

from __future__ import annotations

import numpy as np

from graphdb.catalog.merge import match_in_entries, match_in_sources
from graphdb.storage.compiled import KernelSet

__all__ = ["KERNELS", "HostOps"]

KERNELS = KernelSet(__name__)
prange = range  # numba.prange once compiled

_ONE = np.uint64(1)
_SIX = np.uint64(6)
_LOW6 = np.uint64(63)
_NO_BITS = np.zeros(0, dtype=np.uint64)


class HostOps:
    """One device's operations (see the module docstring); every array is numpy."""

    xp = np

    @staticmethod
    def asarray(values, dtype=None):
        return np.asarray(values, dtype=dtype)

    @staticmethod
    def rows_of(offsets, positions):
        """The row of each CSR position."""
        rows = np.empty(len(positions), dtype=np.int64)
        kernels = KERNELS.for_work(len(offsets) + len(positions), parallel=True)
        kernels.rows_of(np.asarray(offsets, dtype=np.int64), positions, rows)
        return rows

    @staticmethod
    def set_bits(bits, positions) -> int:
        """Set bit ``p`` for each position; how many were set already."""
        return int(KERNELS.for_work(len(positions)).set_bits(bits, positions))

    @staticmethod
    def add_at(values, index, amount: int) -> None:
        """``values[index] += amount``, repeated indices counted each time."""
        KERNELS.for_work(len(index)).add_at(values, index, amount)

    @staticmethod
    def map_bits(bits, where, positions, size: int):
        """``bits`` (a copy; zeros of ``size`` bits for None) with bit ``where[p]`` set for each
        position ``p``."""
        out = np.zeros((size + 63) // 64, dtype=np.uint64) if bits is None else bits.copy()
        KERNELS.for_work(len(positions)).set_mapped_bits(out, where, positions)
        return out

    @staticmethod
    def splice(rows, n: int, removed, removed_rows, add_rows, add_targets, add_weights,
               add_edges):
        """``rows`` over ``n`` vertices without the entries of edges ``removed`` (sorted; they
        lie in rows ``removed_rows``) and with the entries ``add_*`` (sorted by row, then edge)
        after each row's own; (the new rows, entries removed). The rows between edited ones
        move as blocks."""
        from .overlay import DeltaRows

        old = rows.offsets
        if not len(removed) and not len(add_rows):
            if len(old) == n + 1:
                return rows, 0
            offsets = np.concatenate([old, np.full(n + 1 - len(old), old[-1])])
            return DeltaRows(offsets, rows.targets, rows.weights, rows.edges), 0
        edited = np.union1d(np.asarray(add_rows, np.int64), np.asarray(removed_rows, np.int64))
        size = len(rows.targets) + len(add_rows)
        offsets = np.empty(n + 1, dtype=np.int64)
        targets = np.empty(size, dtype=rows.targets.dtype)
        edges = np.empty(size, dtype=np.int64)
        weighted = rows.weights is not None
        weights = np.empty(size if weighted else 0, dtype=np.float64)
        # (the work counts the rows moved: the Python source would walk every one of them)
        kernels = KERNELS.for_work(n + len(edited) + len(add_rows) + len(removed))
        used = int(kernels.splice_rows(
            old, rows.targets, rows.weights if weighted else weights, rows.edges, weighted,
            edited, np.asarray(removed, dtype=np.int64), np.asarray(add_rows, np.int64),
            np.asarray(add_targets, rows.targets.dtype),
            np.asarray(add_weights if weighted else weights, np.float64),
            np.asarray(add_edges, np.int64), offsets, targets, weights, edges))
        return (DeltaRows(offsets, targets[:used], weights[:used] if weighted else None,
                          edges[:used]), size - used)

    @staticmethod
    def match_in(in_offsets, in_targets, in_weights, u, v, w, skip):
        """The stored in-CSR positions of deleted out-edges ``u -> v`` (weights ``w``), among
        the entries not set in ``skip`` (:func:`graphdb.catalog.merge.match_in_entries`);
        None where one has no entry."""
        return match_in_entries(in_offsets, in_targets, in_weights, u, v, w, skip)

    @staticmethod
    def match_in_sources(in_offsets, in_targets, u, v, skip):
        """:meth:`match_in` of a weighted graph without its weights: (positions, exact)
        (:func:`graphdb.catalog.merge.match_in_sources`)."""
        return match_in_sources(in_offsets, in_targets, u, v, skip)

    @staticmethod
    def merge(offsets, nbase: int, base_offsets, base_values, tomb, delta_offsets,
              delta_values):
        """One merged array: row ``r`` is base row ``r`` without the positions set in ``tomb``,
        then its delta entries (rows in parallel); None where a row's length is not
        ``offsets``' (the state does not fit the base)."""
        out = np.empty(int(offsets[-1]), dtype=base_values.dtype)
        kernels = KERNELS.for_work(len(offsets) + len(out), parallel=True)
        bad = kernels.merge_rows(offsets, np.int64(nbase), np.asarray(base_offsets, np.int64),
                                 base_values, _NO_BITS if tomb is None else tomb,
                                 delta_offsets, delta_values.astype(base_values.dtype,
                                                                    copy=False), out)
        return None if bad else out


@KERNELS.kernel(parallel=True)
def rows_of(offsets, positions, rows):
    """``rows[i]``: the row whose span holds ``positions[i]`` (binary search, in parallel)."""
    last = offsets.size - 2
    for i in prange(positions.size):
        p = positions[i]
        lo = 0
        hi = last
        while lo < hi:  # the last row starting at or before p
            mid = (lo + hi + 1) >> 1
            if offsets[mid] <= p:
                lo = mid
            else:
                hi = mid - 1
        rows[i] = lo


@KERNELS.kernel()
def set_bits(bits, positions):
    again = 0
    for i in range(positions.size):
        p = np.uint64(positions[i])
        word = p >> _SIX
        mask = _ONE << (p & _LOW6)
        if bits[word] & mask:
            again += 1
        bits[word] |= mask
    return again


@KERNELS.kernel()
def set_mapped_bits(bits, where, positions):
    for i in range(positions.size):
        q = np.uint64(where[positions[i]])
        bits[q >> _SIX] |= _ONE << (q & _LOW6)


@KERNELS.kernel()
def add_at(values, index, amount):
    for i in range(index.size):
        values[index[i]] += amount


@KERNELS.kernel(inline="always")
def _move_rows(old_off, old_tgt, old_w, old_edge, weighted, lo, hi, off, tgt, w, edge, pos):
    """Rows ``lo..hi-1`` unchanged: their offsets shifted and their entries copied as one
    block; returns the next free position."""
    rows = old_off.size - 1
    top = min(hi, rows)
    shift = pos - old_off[min(lo, rows)]
    for r in range(lo, top):
        off[r] = old_off[r] + shift
    for r in range(max(lo, top), hi):  # vertices added since: no entries
        off[r] = old_off[rows] + shift
    a = old_off[min(lo, rows)]
    b = old_off[top] if top > lo else a
    if b > a:
        tgt[pos:pos + b - a] = old_tgt[a:b]
        edge[pos:pos + b - a] = old_edge[a:b]
        if weighted:
            w[pos:pos + b - a] = old_w[a:b]
    return pos + (b - a)


@KERNELS.kernel()
def splice_rows(old_off, old_tgt, old_w, old_edge, weighted, edited, removed, add_row,
                add_tgt, add_w, add_edge, off, tgt, w, edge):
    """See :meth:`HostOps.splice`: the rows between edited ones as blocks; an edited row its
    old entries not removed (a binary search among the removed edges), then its added ones.
    Returns the entries written."""
    old_rows = old_off.size - 1
    n = off.size - 1
    pos = 0
    a = 0
    cur = 0
    for i in range(edited.size):
        r = edited[i]
        pos = _move_rows(old_off, old_tgt, old_w, old_edge, weighted, cur, r, off, tgt, w,
                         edge, pos)
        off[r] = pos
        if r < old_rows:
            for k in range(old_off[r], old_off[r + 1]):
                d = old_edge[k]
                lo = 0
                hi = removed.size
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if removed[mid] < d:
                        lo = mid + 1
                    else:
                        hi = mid
                if lo < removed.size and removed[lo] == d:
                    continue
                tgt[pos] = old_tgt[k]
                edge[pos] = d
                if weighted:
                    w[pos] = old_w[k]
                pos += 1
        while a < add_row.size and add_row[a] == r:
            tgt[pos] = add_tgt[a]
            edge[pos] = add_edge[a]
            if weighted:
                w[pos] = add_w[a]
            pos += 1
            a += 1
        cur = r + 1
    pos = _move_rows(old_off, old_tgt, old_w, old_edge, weighted, cur, n, off, tgt, w, edge,
                     pos)
    off[n] = pos
    return pos


@KERNELS.kernel(parallel=True)
def merge_rows(offsets, nbase, base_off, base_vals, tomb, doff, dvals, out):
    """See :meth:`HostOps.merge`; returns the number of rows whose length was not
    ``offsets``'."""
    bad = 0
    for r in prange(offsets.size - 1):
        pos = offsets[r]
        if r < nbase:
            for e in range(base_off[r], base_off[r + 1]):
                bit = np.uint64(e)
                if tomb.size > 0 and ((tomb[bit >> _SIX] >> (bit & _LOW6)) & _ONE) == _ONE:
                    continue
                if pos < offsets[r + 1]:
                    out[pos] = base_vals[e]
                pos += 1
        for k in range(doff[r], doff[r + 1]):
            if pos < offsets[r + 1]:
                out[pos] = dvals[k]
            pos += 1
        if pos != offsets[r + 1]:
            bad += 1
    return bad
