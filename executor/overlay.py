"""A changed graph version as operators read it: its stored base and its delta, not merged.

A write makes a new version of a graph (:mod:`graphdb.catalog.delta`). Merging the delta into
the base's CSR costs a pass over every edge, and doing it for each version made the first query
after a write 160-380 times a warm BFS on R-MAT 20. Instead, a version is kept here as what it
changes (:class:`VersionDelta`), in the arrays of the device that reads it (numpy or CuPy):

- ``tomb``: a bitmap over the base's out-CSR positions, set where a stored edge was deleted
  (``positions`` lists them); ``in_tomb`` the same over the base's stored in-CSR;
- the live delta edges as a small CSR per direction (:class:`DeltaRows`), each row's entries in
  the order their edges were added;
- the merged out- and in-degree of every vertex.

The operators that read a version often (BFS, PageRank, WCC: :mod:`.operators.adjacency`) walk
each row as the base's row without its deleted positions, then the row's delta entries. A
directed graph's in-edges are the base's stored in-CSR: a deleted out-edge ``u -> v`` deletes
an entry ``u`` of the same weight in in-row ``v``, found by a pass over the in-rows that lose
entries only, in parallel (:func:`graphdb.catalog.merge.match_in_entries`; on a GPU a warp per
row), among the entries not deleted before; nothing in proportion to the graph's edges. The
weights are read for it only where a deleted edge keeps a live parallel edge in its in-row
(otherwise its source alone decides the entries), so an unweighted query after a write never
reads a weight. The
merged CSR that every other operator reads is built from the same pieces in one compiled pass
(on a GPU, on the device, from the resident base and the uploaded delta).

A version's state is carried over from the newest state held of an earlier version of the same
base (:class:`Chain`) by the records between them (:meth:`DeltaLog.changes`): the bitmaps and
degrees are copied and patched, the delta rows spliced (old rows copied around the entries
removed, the new entries put in), so the first query after a write of a few rows costs a few
memory copies of the version's per-vertex arrays, nothing in proportion to the graph's edges or
sorted over the whole delta. A version whose vertices are no longer the base's followed by the
new ones in id order (a vertex was deleted, or a new id sorts before an older one) has no state
(``None``): it is merged whole (:mod:`graphdb.executor.delta`).

The operations a state is carried over with are one interface per device: :class:`HostOps`
(numpy and compiled loops, :mod:`.overlay_host`) and the GPU's (CuPy and raw kernels,
:mod:`.overlay_gpu`); the logic here is written once over them.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphdb.catalog import CorruptGraph
from graphdb.catalog.delta import LogChanges

from .overlay_host import HostOps

__all__ = ["BaseArrays", "Chain", "DeltaRows", "HostOps", "VersionDelta", "advance",
           "empty_delta", "in_tombstones", "match_in", "splice_xp"]


@dataclass(frozen=True)
class DeltaRows:
    """The delta entries of one direction as a CSR over the version's vertices: row ``v``'s
    entries ``targets[offsets[v]:offsets[v + 1]]``, in the order their edges were added
    (``edges``: the delta edge ids, ascending within a row)."""

    offsets: Any  # int64, V + 1
    targets: Any  # the base's id dtype
    weights: Any  # float64 or None
    edges: Any  # int64

    @property
    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in (self.offsets, self.targets, self.weights, self.edges)
                   if a is not None)


@dataclass(frozen=True, eq=False)
class VersionDelta:
    """One version's delta over its base, in one device's arrays (see the module docstring)."""

    version: int
    num_vertices: int
    num_edges: int  # stored edges of the version (an undirected edge twice)
    last_id: Any  # the largest vertex id added since the base (a Python value), or None
    tomb: Any  # uint64 bitmap over the base's out-CSR positions; None while none is deleted
    positions: Any  # int64: the deleted base positions, in the order they were deleted
    in_tomb: Any  # bitmap over the stored in-CSR's positions (None: none, or not matched yet:
    # filled in once by :func:`in_tombstones`)
    out_degree: Any  # int64 per vertex, merged
    in_degree: Any  # int64 per vertex, merged (None on an undirected graph: the out-degree)
    out_rows: DeltaRows
    in_rows: DeltaRows | None  # None on an undirected graph: the out-rows

    @property
    def nbytes(self) -> int:
        arrays = (self.tomb, self.positions, self.in_tomb, self.out_degree, self.in_degree)
        return sum(int(a.nbytes) for a in arrays if a is not None) + self.out_rows.nbytes + \
            (self.in_rows.nbytes if self.in_rows is not None else 0)

    def rows(self, direction: str) -> DeltaRows:
        return self.out_rows if direction == "out" or self.in_rows is None else self.in_rows

    def degrees(self, direction: str):
        return self.out_degree if direction == "out" or self.in_degree is None \
            else self.in_degree


@dataclass(frozen=True)
class BaseArrays:
    """What carrying a state over reads of the base: its sizes and its CSR offsets and
    out-targets, on the device of the state; the stored in-CSR's sources where they are held
    (the state's in-bitmap is then carried too), and how to read the edge weights (a weighted
    graph's match needs them only where a deleted edge's parallel edges were not all deleted:
    :func:`match_in`)."""

    num_vertices: int
    num_edges: int
    directed: bool
    weighted: bool
    id_dtype: np.dtype
    out_offsets: Any
    out_targets: Any
    in_offsets: Any  # the stored in-offsets (in-degrees), None on an undirected graph
    in_targets: Any = None  # the stored in-CSR's sources, where held (directed graphs)
    weights: Callable[[], tuple[Any, Any]] | None = None  # () -> (in-weights, out-weights)

    @property
    def in_held(self) -> bool:
        return self.in_targets is not None


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


def _words(bits: int) -> int:
    return (int(bits) + 63) // 64


def empty_delta(base: BaseArrays, ops) -> VersionDelta:
    """The state of version 0: the base itself."""
    xp = ops.xp
    out_degree = xp.diff(ops.asarray(base.out_offsets, np.int64))
    in_degree = xp.diff(ops.asarray(base.in_offsets, np.int64)) if base.directed else None
    none = xp.zeros(0, dtype=np.int64)

    def rows() -> DeltaRows:
        return DeltaRows(xp.zeros(base.num_vertices + 1, dtype=np.int64),
                         xp.zeros(0, dtype=base.id_dtype),
                         xp.zeros(0, dtype=np.float64) if base.weighted else None, none)

    return VersionDelta(version=0, num_vertices=base.num_vertices, num_edges=base.num_edges,
                        last_id=None, tomb=None, positions=none, in_tomb=None,
                        out_degree=out_degree, in_degree=in_degree, out_rows=rows(),
                        in_rows=rows() if base.directed else None)


def _corrupt(where: str, what: str) -> CorruptGraph:
    return CorruptGraph(f"{where} {what}", file="meta.lmdb/data.mdb")


def advance(prev: VersionDelta, changes: LogChanges, version: int, base: BaseArrays, ops,
            where: str) -> VersionDelta | None:
    """``prev`` carried over by ``changes`` to ``version``; None when the version's vertices
    are no longer the base's followed by the new ones in id order (see the module docstring).
    The in-bitmap is carried where ``base`` holds the stored in-CSR. ``where`` names the
    records in errors."""
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
    directed = base.directed
    grow = xp.zeros(added, dtype=np.int64)
    out_degree = xp.concatenate([prev.out_degree, grow])
    in_degree = None if prev.in_degree is None else xp.concatenate([prev.in_degree, grow])

    def count(src, dst, amount: int) -> None:
        if directed:
            ops.add_at(out_degree, src, amount)
            ops.add_at(in_degree, dst, amount)
        else:  # stored in both rows, a self loop once
            ops.add_at(out_degree, src, amount)
            ops.add_at(out_degree, dst[dst != src], amount)

    def stored(src: np.ndarray, dst: np.ndarray) -> int:
        return len(src) if directed else 2 * len(src) - int(np.count_nonzero(src == dst))

    total = prev.num_edges
    src, dst = changes.src, changes.dst
    if len(src):
        if min(int(src.min()), int(dst.min())) < 0 or max(int(src.max()), int(dst.max())) >= n:
            raise _corrupt(where, "add an edge to a vertex that does not exist")
        count(ops.asarray(src, np.int64), ops.asarray(dst, np.int64), 1)
        total += stored(src, dst)
    deletes = changes.edge_deletes
    gone = -deletes[deletes < 0] - 1
    if gone.size:
        if np.unique(gone).size != gone.size:
            raise _corrupt(where, "delete a delta edge twice")
        if int(gone.max()) >= changes.first_edge + len(src):
            raise _corrupt(where, "delete a delta edge that is not there")
        count(ops.asarray(changes.deleted_src, np.int64),
              ops.asarray(changes.deleted_dst, np.int64), -1)
        total -= stored(changes.deleted_src, changes.deleted_dst)

    tomb, positions, in_tomb = prev.tomb, prev.positions, prev.in_tomb
    carry_in = directed and base.in_held
    if carry_in and in_tomb is None and len(positions):
        in_tomb = match_in(base, ops, positions, None, where)
    new = deletes[deletes >= 0]
    if new.size:
        if int(new.max()) >= base.num_edges:
            raise _corrupt(where, "delete an edge that does not exist")
        tomb = (xp.zeros(_words(base.num_edges), dtype=np.uint64) if tomb is None
                else tomb.copy())
        new = ops.asarray(new, np.int64)
        if ops.set_bits(tomb, new):
            raise _corrupt(where, "delete an edge twice")
        positions = xp.concatenate([positions, new])
        total -= int(new.size)
        rows = ops.rows_of(base.out_offsets, new)
        ops.add_at(out_degree, rows, -1)
        if directed:
            ops.add_at(in_degree, base.out_targets[new].astype(np.int64), -1)
        in_tomb = match_in(base, ops, new, in_tomb, where, rows) if carry_in else None

    # the delta rows: the new edges in, the deleted delta edges (added before or now) out
    first = changes.first_edge
    edge_ids = np.arange(first, first + len(src), dtype=np.int64)
    keep = ~np.isin(edge_ids, gone) if gone.size else slice(None)
    removed = np.sort(gone[gone < first])
    weights = changes.weights

    old = gone < first
    gone_src, gone_dst = changes.deleted_src[old], changes.deleted_dst[old]

    def splice(rows: DeltaRows, from_: np.ndarray, to: np.ndarray, removed_rows: np.ndarray,
               expected: int) -> DeltaRows:
        ids, w = edge_ids[keep], None if weights is None else weights[keep]
        from_, to = from_[keep], to[keep]
        if not directed:  # both rows, a self loop once
            back = from_ != to
            from_, to = np.concatenate([from_, to[back]]), np.concatenate([to, from_[back]])
            ids = np.concatenate([ids, ids[back]])
            w = None if w is None else np.concatenate([w, w[back]])
        # by row, then in the order added: sorted on the state's device (on a GPU a host sort
        # of a 10% delta's edges was most of the first query after its write)
        from_, ids = ops.asarray(from_, np.int64), ops.asarray(ids, np.int64)
        to = ops.asarray(to.astype(base.id_dtype, copy=False))
        w = None if w is None else ops.asarray(w, np.float64)
        if len(ids) > 1:
            order = xp.lexsort(xp.stack([ids, from_]))
            from_, to, ids = from_[order], to[order], ids[order]
            w = None if w is None else w[order]
        out, dropped = ops.splice(rows, n, removed, removed_rows, from_, to, w, ids)
        if dropped != expected:
            raise _corrupt(where, "delete a delta edge that is not there")
        return out

    if directed:
        out_rows = splice(prev.out_rows, src, dst, gone_src, len(gone_src))
        in_rows = None if prev.in_rows is None else \
            splice(prev.in_rows, dst, src, gone_dst, len(gone_src))
    else:
        out_rows = splice(prev.out_rows, src, dst, np.concatenate([gone_src, gone_dst]),
                          stored(gone_src, gone_dst))
        in_rows = None
    if int(out_rows.offsets[-1]) + base.num_edges - len(positions) != total:
        raise _corrupt(where, f"leave {total} stored edges where the rows hold another number")
    return VersionDelta(version=version, num_vertices=n, num_edges=total, last_id=last_id,
                        tomb=tomb, positions=positions, in_tomb=in_tomb,
                        out_degree=out_degree, in_degree=in_degree, out_rows=out_rows,
                        in_rows=in_rows)


def splice_xp(xp, rows: DeltaRows, n: int, removed, add_rows, add_targets, add_weights,
              add_edges) -> tuple[DeltaRows, int]:
    """:meth:`HostOps.splice` in vectorized form for any array module (the GPU's; the tests
    run it with numpy beside the compiled one): the entries of ``removed`` edges found by a
    search among them, each added entry put after its row's old ones, the old entries kept
    filling the other slots in order."""
    old = rows.offsets
    if not len(removed) and not len(add_rows):
        if len(old) == n + 1:
            return rows, 0
        return DeltaRows(xp.concatenate([old, xp.full(n + 1 - len(old), old[-1])]),
                         rows.targets, rows.weights, rows.edges), 0
    degree = xp.zeros(n, dtype=np.int64)
    degree[:len(old) - 1] = xp.diff(old)
    keep, dropped = None, 0
    if len(removed):
        removed = xp.asarray(removed, dtype=np.int64)
        at = xp.minimum(xp.searchsorted(removed, rows.edges), len(removed) - 1)
        drop = removed[at] == rows.edges
        dropped = int(drop.sum())
        if dropped:
            keep = ~drop
            rows_of = xp.searchsorted(old, xp.flatnonzero(drop), side="right") - 1
            degree -= xp.bincount(rows_of, minlength=n)[:n]
    k = len(add_rows)
    if k:
        add_rows = xp.asarray(add_rows, dtype=np.int64)
        degree += xp.bincount(add_rows, minlength=n)[:n]
    offsets = xp.zeros(n + 1, dtype=np.int64)
    xp.cumsum(degree, out=offsets[1:])
    size = len(rows.targets) - dropped + k
    pos = None
    if k:
        first = xp.searchsorted(add_rows, add_rows, side="left")
        count = xp.searchsorted(add_rows, add_rows, side="right") - first
        pos = offsets[add_rows + 1] - count + (xp.arange(k) - first)
        free = xp.ones(size, dtype=bool)
        free[pos] = False
        slots = xp.flatnonzero(free)  # where the old entries kept go, in order
    else:
        slots = None
    kept = None if keep is None else xp.flatnonzero(keep)

    def place(old_values, new_values, dtype):
        old_values = old_values if kept is None else old_values[kept]
        if slots is None:
            return old_values.astype(dtype, copy=True)
        out = xp.empty(size, dtype=dtype)
        out[slots] = old_values
        out[pos] = xp.asarray(new_values, dtype=dtype)
        return out

    weights = None if rows.weights is None else place(rows.weights, add_weights, np.float64)
    return DeltaRows(offsets, place(rows.targets, add_targets, rows.targets.dtype), weights,
                     place(rows.edges, add_edges, np.int64)), dropped


def match_in(base: BaseArrays, ops, positions, in_tomb, where: str, rows=None):
    """``in_tomb`` (a copy; a new bitmap for None) with the stored in-CSR entries of the
    deleted base out-positions ``positions`` set (``rows``: their out-rows, where known),
    each found among the entries ``in_tomb`` does not hold yet. A weighted graph's are matched
    by source alone where that decides them (:func:`graphdb.catalog.merge.match_in_sources`),
    so its weights are read only where a deleted edge keeps a live parallel edge."""
    xp = ops.xp
    positions = ops.asarray(positions, np.int64)
    u = ops.rows_of(base.out_offsets, positions) if rows is None else rows
    v = base.out_targets[positions]
    if base.weighted:
        found, exact = ops.match_in_sources(base.in_offsets, base.in_targets, u, v, in_tomb)
        if not exact:
            in_weights, out_weights = base.weights()
            found = ops.match_in(base.in_offsets, base.in_targets, in_weights, u, v,
                                 out_weights[positions], in_tomb)
    else:
        found = ops.match_in(base.in_offsets, base.in_targets, None, u, v, None, in_tomb)
    if found is None:
        raise _corrupt(where, "delete an edge that has no entry in the stored in-CSR")
    out = xp.zeros(_words(base.num_edges), dtype=np.uint64) if in_tomb is None \
        else in_tomb.copy()
    if ops.set_bits(out, found):
        raise _corrupt(where, "delete an in-CSR entry twice")
    return out


def in_tombstones(state: VersionDelta, base: Callable[[], BaseArrays], ops, where: str):
    """The bitmap over the stored in-CSR's positions of the version's deleted edges (None
    while none is deleted). A state carried over without the in-CSR at hand has none yet: it
    is matched from every deleted position (``base()`` holding the in-CSR) and kept in the
    state, so that the versions carried over from it carry it on. (The bitmap is a function
    of the state's positions: filling it in changes nothing a reader sees.)"""
    if state.in_tomb is not None or not len(state.positions):
        return state.in_tomb
    with _FILL:
        if state.in_tomb is None:
            object.__setattr__(state, "in_tomb", match_in(base(), ops, state.positions, None,
                                                          where))
    return state.in_tomb


_FILL = threading.Lock()
