"""A changed graph version as operators read it: its stored base and its delta, not merged.

A write makes a new version of a graph (:mod:`graphdb.catalog.delta`). Merging the delta into
the base's CSR costs a pass over every edge, and doing it for each version made the first query
after a write 160-380 times a warm BFS on R-MAT 20. Instead, a version is kept here as what it
changes, in the arrays of the device that reads it (numpy or CuPy):

- ``tomb``: a bitmap over the base's out-CSR positions, set where a stored edge was deleted;
- the live delta edges (``edge`` ids, ``src``, ``dst``, ``weight``), in the order they were added;
- the merged out- and in-degree of every vertex.

The operators that read a version often (BFS, PageRank, WCC: :mod:`.operators.adjacency`) walk
each row as the base's row without its deleted positions, then the row's delta entries
(:func:`delta_rows`, a small CSR built per version and direction). A directed graph's in-edges
are read through the *transposition* of the base's out-CSR (:func:`transpose`, once per base
generation and device): its position of every out-edge is known, so deleting an out-edge
deletes exactly one in-entry (:func:`in_tombstones`), with no search. What every other operator
reads, the merged CSR, is built from the same pieces in one compiled pass (on a GPU, on the
device, from the resident base and the uploaded delta).

A version's state is carried over from the newest state of an earlier version of the same base
that is still held (:class:`Chain`) by the records between them (:meth:`DeltaLog.changes`):
a write of a few rows costs the next query a few array copies, not a pass over the delta, and
nothing in proportion to the graph's edges. A version whose vertices are no longer the base's
followed by the new ones in id order (a vertex was deleted, or a new id sorts before an older
one) has no state (``None``): its readers merge it as a whole
(:mod:`graphdb.executor.delta`).
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphdb.catalog import CorruptGraph
from graphdb.catalog.delta import LogChanges
from graphdb.storage.compiled import KernelSet

__all__ = ["KERNELS", "BaseArrays", "Chain", "DeltaRows", "HostOps", "VersionDelta", "advance",
           "delta_rows", "empty_delta", "in_tombstones", "transpose"]

KERNELS = KernelSet(__name__)
prange = range  # numba.prange once compiled

_ONE = np.uint64(1)
_SIX = np.uint64(6)
_LOW6 = np.uint64(63)


@dataclass(frozen=True, eq=False)
class VersionDelta:
    """One version's delta over its base, in one device's arrays (see the module docstring)."""

    version: int
    num_vertices: int
    num_edges: int  # stored edges of the version (an undirected edge twice)
    last_id: Any  # the largest vertex id added since the base (a Python value), or None
    tomb: Any  # uint64 bitmap over the base's out-CSR positions; None while none is deleted
    deleted: int  # base positions deleted
    edge: Any  # int64: the live delta edges' ids (ascending: the order they were added)
    src: Any  # int64 dense ids
    dst: Any
    weight: Any  # float64, or None on an unweighted graph
    out_degree: Any  # int64 per vertex, merged
    in_degree: Any  # int64 per vertex, merged (None on an undirected graph: the out-degree)

    @property
    def nbytes(self) -> int:
        arrays = (self.tomb, self.edge, self.src, self.dst, self.weight, self.out_degree,
                  self.in_degree)
        return sum(int(a.nbytes) for a in arrays if a is not None)


@dataclass(frozen=True)
class BaseArrays:
    """What carrying a state over reads of the base: its sizes and its out-CSR, on the device of
    the state."""

    num_vertices: int
    num_edges: int
    directed: bool
    weighted: bool
    out_offsets: Any
    out_targets: Any
    in_offsets: Any  # the stored in-offsets (in-degrees), None on an undirected graph


@dataclass(frozen=True)
class DeltaRows:
    """The delta entries of one direction as a CSR over the version's vertices: row ``v``'s
    entries ``targets[offsets[v]:offsets[v + 1]]``, in the order they were added."""

    offsets: Any  # int64, V + 1
    targets: Any  # the base's id dtype
    weights: Any  # float64 or None

    @property
    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in (self.offsets, self.targets, self.weights)
                   if a is not None)


class Chain:
    """The committed states of one base generation on one device, by version, weakly held: the
    residency owner holds the states themselves (and may evict them), this only finds the newest
    one at or below a version to carry over."""

    nbytes = 0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[int, weakref.ref] = {}

    def nearest(self, version: int) -> VersionDelta | None:
        with self._lock:
            best = None
            for v, ref in list(self._states.items()):
                state = ref()
                if state is None:
                    del self._states[v]
                elif v <= version and (best is None or v > best.version):
                    best = state
            return best

    def add(self, state: VersionDelta) -> None:
        with self._lock:
            self._states[state.version] = weakref.ref(state)


# -- the operations a state is carried over with, per device ----------------------------------
class HostOps:
    """The host's: numpy, with compiled loops where numpy would sort or scatter slowly."""

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
        kernels = KERNELS.for_work(len(positions))
        return int(kernels.set_bits(bits, positions))

    @staticmethod
    def add_at(values, index, amount: int) -> None:
        """``values[index] += amount``, repeated indices counted each time."""
        kernels = KERNELS.for_work(len(index))
        kernels.add_at(values, index, amount)

    @staticmethod
    def group(rows, n: int):
        """(offsets, order): a stable counting sort of ``rows`` (values < n)."""
        offsets = np.zeros(n + 1, dtype=np.int64)
        order = np.empty(len(rows), dtype=np.int64)
        kernels = KERNELS.for_work(n + len(rows))
        kernels.group_rows(rows, offsets, order)
        return offsets, order

    @staticmethod
    def transpose(out_offsets, out_targets, in_offsets):
        """(sources, where): the base's in-CSR as the out-CSR transposed (sources ascending in
        each row) and the position each out-edge has there."""
        sources = np.empty(len(out_targets), dtype=out_targets.dtype)
        where = np.empty(len(out_targets), dtype=np.int64)
        kernels = KERNELS.for_work(len(out_offsets) + len(out_targets))
        ok = kernels.transpose_csr(np.asarray(out_offsets, dtype=np.int64), out_targets,
                                   np.asarray(in_offsets, dtype=np.int64), sources, where)
        return (sources, where) if ok else None

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

    @staticmethod
    def in_tombstones(tomb, where, in_edges: int):
        """The bitmap over in-CSR positions of the out-positions set in ``tomb``."""
        bits = np.zeros(_words(in_edges), dtype=np.uint64)
        kernels = KERNELS.for_work(len(tomb) + len(where))
        kernels.map_bits(tomb, where, bits)
        return bits


_NO_BITS = np.zeros(0, dtype=np.uint64)


def _words(bits: int) -> int:
    return (int(bits) + 63) // 64


@KERNELS.kernel(parallel=True)
def rows_of(offsets, positions, rows):
    """``rows[i]``: the row whose span holds ``positions[i]`` (binary search, rows in
    parallel)."""
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
def add_at(values, index, amount):
    for i in range(index.size):
        values[index[i]] += amount


@KERNELS.kernel()
def group_rows(rows, offsets, order):
    """Counting sort: ``offsets`` (zeroed, n + 1) receives the row offsets and ``order`` the
    positions of ``rows`` row by row, each row's in their first order."""
    n = offsets.size - 1
    for i in range(rows.size):
        offsets[rows[i] + 1] += 1
    for r in range(n):
        offsets[r + 1] += offsets[r]
    cursor = offsets[:n].copy()
    for i in range(rows.size):
        r = rows[i]
        order[cursor[r]] = i
        cursor[r] += 1


@KERNELS.kernel()
def transpose_csr(out_off, out_tgt, in_off, sources, where):
    """Counting sort of the out-edges by target into the stored in-offsets; False when the
    offsets do not fit the targets (a damaged base: nothing is written out of bounds)."""
    n = in_off.size - 1
    cursor = in_off[:n].copy()
    for u in range(out_off.size - 1):
        for e in range(out_off[u], out_off[u + 1]):
            v = out_tgt[e]
            if v < 0 or v >= n:
                return False
            p = cursor[v]
            if p >= in_off[v + 1]:
                return False
            cursor[v] = p + 1
            sources[p] = u
            where[e] = p
    for v in range(n):
        if cursor[v] != in_off[v + 1]:
            return False
    return True


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


@KERNELS.kernel()
def map_bits(tomb, where, bits):
    """Set ``bits[where[p]]`` for every bit ``p`` set in ``tomb``."""
    for word in range(tomb.size):
        value = tomb[word]
        if value == 0:
            continue
        first = np.uint64(word) << _SIX
        for b in range(64):
            if (value >> np.uint64(b)) & _ONE:
                q = np.uint64(where[first + np.uint64(b)])
                bits[q >> _SIX] |= _ONE << (q & _LOW6)


# -- carrying a state over ----------------------------------------------------------------------
def empty_delta(base: BaseArrays, ops) -> VersionDelta:
    """The state of version 0: the base itself."""
    xp = ops.xp
    out_degree = xp.diff(ops.asarray(base.out_offsets, np.int64))
    in_degree = xp.diff(ops.asarray(base.in_offsets, np.int64)) if base.directed else None
    none = xp.zeros(0, dtype=np.int64)
    return VersionDelta(version=0, num_vertices=base.num_vertices, num_edges=base.num_edges,
                        last_id=None, tomb=None, deleted=0, edge=none, src=none, dst=none,
                        weight=xp.zeros(0, dtype=np.float64) if base.weighted else None,
                        out_degree=out_degree, in_degree=in_degree)


def advance(prev: VersionDelta, changes: LogChanges, version: int, base: BaseArrays, ops,
            where: str) -> VersionDelta | None:
    """``prev`` carried over by ``changes`` to ``version``; None when the version's vertices
    are no longer the base's followed by the new ones in id order (see the module docstring).
    ``where`` names the records in errors."""
    xp = ops.xp
    if len(changes.vertex_deletes):
        return None
    last_id = prev.last_id
    added = len(changes.vertex_ids)
    if added:
        if np.any(changes.vertex_ranks != base.num_vertices):
            return None  # a new id sorts among the base's
        ids = changes.vertex_ids.to_pylist()
        run = ids if last_id is None else [last_id, *ids]
        if any(b <= a for a, b in zip(run, run[1:])):
            return None  # a new id sorts before an older new one
        last_id = ids[-1]
    n = prev.num_vertices + added
    grow = xp.zeros(added, dtype=np.int64)
    out_degree = xp.concatenate([prev.out_degree, grow])
    in_degree = None if prev.in_degree is None else xp.concatenate([prev.in_degree, grow])
    directed = base.directed

    def count(src, dst, amount: int) -> None:
        if directed:
            ops.add_at(out_degree, src, amount)
            ops.add_at(in_degree, dst, amount)
        else:  # stored in both rows, a self loop once
            ops.add_at(out_degree, src, amount)
            ops.add_at(out_degree, dst[dst != src], amount)

    edge, src, dst, weight = prev.edge, prev.src, prev.dst, prev.weight
    total = prev.num_edges
    if len(changes.src):
        new_src = ops.asarray(changes.src, np.int64)
        new_dst = ops.asarray(changes.dst, np.int64)
        if min(int(changes.src.min()), int(changes.dst.min())) < 0 or \
                max(int(changes.src.max()), int(changes.dst.max())) >= n:
            raise CorruptGraph(f"{where} add an edge to a vertex that does not exist",
                               file="meta.lmdb/data.mdb")
        ids = xp.arange(changes.first_edge, changes.first_edge + len(changes.src),
                        dtype=np.int64)
        edge = xp.concatenate([edge, ids])
        src = xp.concatenate([src, new_src])
        dst = xp.concatenate([dst, new_dst])
        if weight is not None:
            weight = xp.concatenate([weight, ops.asarray(changes.weights, np.float64)])
        count(new_src, new_dst, 1)
        total += len(changes.src) if directed else \
            2 * len(changes.src) - int(np.count_nonzero(changes.src == changes.dst))

    deletes = changes.edge_deletes
    tomb, deleted = prev.tomb, prev.deleted
    positions = deletes[deletes >= 0]
    if positions.size:
        if int(positions.max()) >= base.num_edges:
            raise CorruptGraph(f"{where} delete an edge that does not exist",
                               file="meta.lmdb/data.mdb")
        tomb = (xp.zeros(_words(base.num_edges), dtype=np.uint64) if tomb is None
                else tomb.copy())
        on_device = ops.asarray(positions, np.int64)
        if ops.set_bits(tomb, on_device):
            raise CorruptGraph(f"{where} delete an edge twice", file="meta.lmdb/data.mdb")
        deleted += int(positions.size)
        total -= int(positions.size)
        ops.add_at(out_degree, ops.rows_of(base.out_offsets, on_device), -1)
        if directed:
            ops.add_at(in_degree, base.out_targets[on_device].astype(np.int64), -1)
    gone = -deletes[deletes < 0] - 1
    if gone.size:
        gone = ops.asarray(np.sort(gone), np.int64)
        at = xp.searchsorted(edge, gone)
        hit = at < len(edge)
        if not bool(hit.all()) or not bool((edge[at[hit]] == gone).all()) or \
                bool((gone[1:] == gone[:-1]).any()):
            raise CorruptGraph(f"{where} delete a delta edge that is not there",
                               file="meta.lmdb/data.mdb")
        count(src[at], dst[at], -1)
        total -= len(gone) if directed else \
            2 * len(gone) - int((src[at] == dst[at]).sum())
        keep = xp.ones(len(edge), dtype=bool)
        keep[at] = False
        edge, src, dst = edge[keep], src[keep], dst[keep]
        weight = None if weight is None else weight[keep]
    return VersionDelta(version=version, num_vertices=n, num_edges=total, last_id=last_id,
                        tomb=tomb, deleted=deleted, edge=edge, src=src, dst=dst,
                        weight=weight, out_degree=out_degree, in_degree=in_degree)


def delta_rows(state: VersionDelta, direction: str, directed: bool, id_dtype, ops) -> DeltaRows:
    """The delta entries of ``direction`` ('out', or 'in' of a directed graph) by row. An
    undirected edge is entered in both rows (a self loop once): its own row's entries first,
    as the merged CSR has them (:mod:`graphdb.catalog.merge`)."""
    xp = ops.xp
    if directed:
        rows, targets = (state.src, state.dst) if direction == "out" else (state.dst, state.src)
        weights = state.weight
    else:
        back = state.src != state.dst
        rows = xp.concatenate([state.src, state.dst[back]])
        targets = xp.concatenate([state.dst, state.src[back]])
        weights = None if state.weight is None else \
            xp.concatenate([state.weight, state.weight[back]])
    offsets, order = ops.group(rows, state.num_vertices)
    return DeltaRows(offsets, targets[order].astype(id_dtype),
                     None if weights is None else weights[order])


def transpose(ops, out_offsets, out_targets, in_offsets, name: str):
    """:meth:`HostOps.transpose` (or the device's), CorruptGraph where the stored in-offsets do
    not count the out-edges' targets."""
    found = ops.transpose(out_offsets, out_targets, in_offsets)
    if found is None:
        raise CorruptGraph(f"graph '{name}': the stored in-offsets do not count the out-edges' "
                           "targets", file="meta.lmdb/data.mdb")
    return found


def in_tombstones(state: VersionDelta, where, in_edges: int, ops):
    """The bitmap over the transposed in-CSR's positions of the version's deleted edges, or
    None while none is deleted."""
    if state.tomb is None:
        return None
    return ops.in_tombstones(state.tomb, where, in_edges)

