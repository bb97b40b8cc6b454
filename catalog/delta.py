"""Graph versions: a stored base generation plus the delta records committed since.

A write (INSERT, DELETE, UPDATE; the SQL is :mod:`graphdb.query.writes`) is turned into a few
*operations* on internal ids, each stored as one record (:mod:`graphdb.storage.delta`), in the
transaction that raises the graph's version in its catalog entry:

==================  ===========================================================================
``add_vertices``    ``id`` (the user's ids), then every vertex property column; the new
                    vertices get the next *dense* ids: V_base, V_base + 1, ...
``add_edges``       ``src``, ``dst`` (dense ids), ``weight`` on a weighted graph, then every
                    edge property column; the edges get the next *delta edge* ids 0, 1, ...
``delete_edges``    ``edge``: a base edge by its out-CSR position (>= 0), or a delta edge ``d``
                    as ``-(d + 1)``. An undirected base edge is stored twice: both positions.
``delete_vertices`` ``vertex`` (dense ids), whose edges a preceding record deleted
``update_vertices`` ``vertex`` (dense ids), then the changed property columns
==================  ===========================================================================

Two id spaces: *dense* ids (the base's internal ids, then new vertices in the order they were
added; what records name, stable for the generation) and the *view* ids of a version: the live
vertices numbered in ascending order of the user's ids, exactly as a fresh ingest of the same
graph numbers them (operators, the id lookup and the Graphalytics tie rules rely on that order).
When no vertex was deleted and new ids come after the base's, the two coincide.

:class:`DeltaLog` holds the records of one generation in memory (append-only arrays, so a
version is just the lengths after its last record); :meth:`DeltaLog.view` materializes a
version as a :class:`DeltaView`: the view order, the base edges deleted (tombstones, sorted),
the live delta edges. :mod:`graphdb.catalog.merge` merges a view with the base CSR.
"""

from __future__ import annotations

import bisect
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from graphdb.storage import interrupt
from graphdb.storage.lazy import pc

from .entries import GraphEntry
from .errors import CorruptGraph
from .records import decode_table, encode_table

__all__ = ["DeltaLog", "DeltaView", "LogChanges", "Op", "decode_op", "encode_op"]

#: Ids a Python loop over ids handles between two interruption points (storage.interrupt).
_CHUNK = 1 << 16

OPS = ("add_vertices", "add_edges", "delete_edges", "delete_vertices", "update_vertices")
#: Versions a log keeps materialized (the newest, and what readers of older ones ask for).
VIEWS_KEPT = 4


@dataclass
class Op:
    """One operation of a write, on dense ids (see the module docstring for each kind)."""

    kind: str
    table: pa.Table

    @property
    def rows(self) -> int:
        return self.table.num_rows


def encode_op(op: Op) -> bytes:
    """The record of ``op``: an Arrow IPC stream whose schema metadata names the kind."""
    return encode_table(op.table, "op", op.kind)


def decode_op(payload: bytes, where: str) -> Op:
    """The operation a record holds, its kind and columns checked; CorruptGraph if not."""
    return Op(*decode_table(payload, where, "op", OPS))


class _Grow:
    """A growable 1-D numpy array; ``view(n)`` is its first ``n`` values (never changed by
    later appends: an append past a view writes beyond it, or into a new buffer)."""

    def __init__(self, dtype):
        self.a = np.empty(16, dtype=dtype)
        self.n = 0

    def extend(self, values: np.ndarray) -> None:
        values = np.asarray(values, dtype=self.a.dtype)
        need = self.n + len(values)
        if need > len(self.a):
            grown = np.empty(max(need, 2 * len(self.a)), dtype=self.a.dtype)
            grown[: self.n] = self.a[: self.n]
            self.a = grown
        self.a[self.n:need] = values
        self.n = need

    def view(self, n: int) -> np.ndarray:
        return self.a[:n]


class _Chunks:
    """Arrow arrays or tables appended in pieces; ``prefix(n)`` the first ``n`` rows."""

    def __init__(self, empty):
        self.empty = empty
        self.parts: list = []
        self.ends: list[int] = []

    def extend(self, part) -> None:
        if len(part):
            self.parts.append(part)
            self.ends.append((self.ends[-1] if self.ends else 0) + len(part))
        if len(self.parts) > 64:  # keep the list short: one piece for what is there
            self.parts = [_concat([*self.parts])]
            self.ends = [self.ends[-1]]

    def truncate(self, n: int) -> None:
        while self.ends and self.ends[-1] > n:
            part, end = self.parts.pop(), self.ends.pop()
            keep = len(part) - (end - n)
            if keep > 0:
                self.parts.append(part.slice(0, keep))
                self.ends.append(n)
                break

    def prefix(self, n: int):
        if n == 0 or not self.parts:
            return self.empty
        i = bisect.bisect_left(self.ends, n)
        parts = self.parts[: i + 1]
        whole = _concat(parts)
        return whole.slice(0, n)


def _concat(parts):
    if isinstance(parts[0], pa.Table):
        return pa.concat_tables(parts).combine_chunks()
    return pa.concat_arrays([p.combine_chunks() if isinstance(p, pa.ChunkedArray) else p
                             for p in parts])


@dataclass(frozen=True)
class LogChanges:
    """The topology changes of a run of records (:meth:`DeltaLog.changes`), on dense ids.

    ``vertex_ranks[i]``: how many base ids are smaller than new vertex ``i``'s id
    (``vertex_ids[i]``); delta edges ``first_edge + i`` join ``src[i]`` to ``dst[i]``;
    ``edge_deletes``: base out-CSR positions (>= 0) and delta edges ``d`` as ``-(d + 1)``,
    the ends of those delta edges in ``deleted_src``, ``deleted_dst`` (in the same order).
    Property changes are not topology and are left out.
    """

    vertex_ranks: np.ndarray
    vertex_ids: pa.Array
    first_edge: int
    src: np.ndarray
    dst: np.ndarray
    weights: np.ndarray | None
    edge_deletes: np.ndarray
    deleted_src: np.ndarray
    deleted_dst: np.ndarray
    vertex_deletes: np.ndarray


@dataclass(frozen=True)
class _Lengths:
    vertices: int = 0  # new vertices
    edges: int = 0  # delta edges ever added
    edge_deletes: int = 0
    vertex_deletes: int = 0
    updates: int = 0
    # no vertex deleted, and every new id sorts after the base's and the new ones before it
    ordered: bool = True


class DeltaLog:
    """The delta records of one base generation, in memory (see the module docstring).

    ``base`` is the entry of the stored base (``GraphEntry.base``); ``base_ids()`` gives its
    vertex ids (ascending), ``vertex_schema`` / ``edge_schema`` its property columns (the
    schemas new rows are cast to). Appends are validated against the state they extend; a
    record that does not fit (an id out of range) is :class:`CorruptGraph`.
    """

    def __init__(self, base: GraphEntry, base_ids: Callable[[], pa.Array],
                 vertex_schema: pa.Schema, edge_schema: pa.Schema | None):
        self.base = base
        self.graph_id = base.graph_id
        self._base_ids_loader = base_ids
        self._base_ids: pa.Array | None = None
        self._base_numeric: np.ndarray | None = None
        self.vertex_schema = vertex_schema  # id, then properties
        self.edge_schema = edge_schema  # edge properties (no src/dst/weight), or None
        self.id_type = pa.string() if base.id_type == "string" else pa.int64()
        self.lock = threading.RLock()
        self._vpos = _Grow(np.int64)  # per new vertex: how many base ids are smaller
        self._vids = _Chunks(pa.array([], self.id_type))
        props = pa.schema([f for f in vertex_schema if f.name != "id"])
        # (not Schema.empty_table(): it imports pandas, 1-2 s, in the first write)
        self._vprops = _Chunks(pa.Table.from_batches([], schema=props)) if len(props) \
            else None
        self._esrc, self._edst = _Grow(np.int64), _Grow(np.int64)
        self._ew = _Grow(np.float64) if base.weighted else None
        self._eprops = _Chunks(pa.Table.from_batches([], schema=edge_schema)) \
            if edge_schema else None
        self._edel = _Grow(np.int64)
        self._vdel = _Grow(np.int64)
        self._updates: list[tuple[np.ndarray, pa.Table]] = []
        self.lengths: list[_Lengths] = [_Lengths()]
        self._views: OrderedDict[int, DeltaView] = OrderedDict()
        # the writer's lookups at the head: new vertices by user id, deleted dense ids
        self._index: dict | None = None
        self._dead: set | None = None

    # -- the base -------------------------------------------------------------------------------
    @property
    def base_ids(self) -> pa.Array:
        if self._base_ids is None:
            ids = self._base_ids_loader()
            self._base_ids = ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids
        return self._base_ids

    @property
    def base_numeric(self) -> np.ndarray:
        """Integer base ids as numpy (zero copy)."""
        if self._base_numeric is None:
            ids = self.base_ids
            self._base_numeric = np.frombuffer(ids.buffers()[1], dtype=np.int64, count=len(ids),
                                               offset=ids.offset * 8)
        return self._base_numeric

    def base_rank(self, values: pa.Array) -> np.ndarray:
        """For each user id, how many base ids are smaller (its place among them)."""
        if self.base.id_type != "string":
            return np.searchsorted(self.base_numeric, _numeric(values)).astype(np.int64)
        ids = self.base_ids
        seq = _ArrowSequence(ids)
        return np.array([bisect.bisect_left(seq, v) for v in values.to_pylist()],
                        dtype=np.int64)

    @property
    def next_vertex(self) -> int:
        """The dense id the next new vertex gets."""
        return self.base.num_vertices + self.lengths[-1].vertices

    # -- versions -------------------------------------------------------------------------------
    @property
    def version(self) -> int:
        """The number of records held (the newest version this log can show)."""
        return len(self.lengths) - 1

    def append(self, op: Op, where: str = "a write") -> None:
        """Apply one record on top of the newest version."""
        with self.lock:
            head = self.lengths[-1]
            next_vertex = self.base.num_vertices + head.vertices
            table = op.table
            if op.kind == "add_vertices":
                ids = _column(table, "id", self.id_type, where)
                if ids.null_count:
                    raise CorruptGraph(f"{where} adds a vertex without an id",
                                       file="meta.lmdb/data.mdb")
                ranks = self.base_rank(ids)
                ordered = head.ordered and bool((ranks == self.base.num_vertices).all()) and \
                    self._ascending_after(ids)
                self._vpos.extend(ranks)
                self._vids.extend(ids)
                if self._vprops is not None:
                    self._vprops.extend(_conform(table.drop_columns(["id"]),
                                                 self._vprops.empty.schema, where))
                head = _replace(head, vertices=head.vertices + len(ids), ordered=ordered)
                if self._index is not None:
                    if len(ids) > _CHUNK:  # rebuilt when next asked for: cheaper than this
                        self._index = None
                    else:
                        for i, value in enumerate(ids.to_pylist()):
                            self._index[value] = next_vertex + i
            elif op.kind == "add_edges":
                src = _ints(table, "src", where)
                dst = _ints(table, "dst", where)
                _in_range(np.concatenate([src, dst]), next_vertex, "vertex", where)
                self._esrc.extend(src)
                self._edst.extend(dst)
                if self._ew is not None:
                    weights = _floats(table, "weight", where)
                    if weights.size and not (np.isfinite(weights).all() and weights.min() >= 0):
                        raise CorruptGraph(f"{where} adds an edge of weight NaN, infinite or "
                                           "negative", file="meta.lmdb/data.mdb")
                    self._ew.extend(weights)
                if self._eprops is not None:
                    rest = table.drop_columns([c for c in ("src", "dst", "weight")
                                               if c in table.column_names])
                    self._eprops.extend(_conform(rest, self._eprops.empty.schema, where))
                head = _replace(head, edges=head.edges + len(src))
            elif op.kind == "delete_edges":
                edges = _ints(table, "edge", where)
                if edges.size and (edges.max() >= self.base.num_edges
                                   or (-edges[edges < 0] - 1).max(initial=-1) >= head.edges):
                    raise CorruptGraph(f"{where} deletes an edge that does not exist",
                                       file="meta.lmdb/data.mdb")
                self._edel.extend(edges)
                head = _replace(head, edge_deletes=head.edge_deletes + len(edges))
            elif op.kind == "delete_vertices":
                vertices = _ints(table, "vertex", where)
                _in_range(vertices, next_vertex, "vertex", where)
                self._vdel.extend(vertices)
                head = _replace(head, vertex_deletes=head.vertex_deletes + len(vertices),
                                ordered=head.ordered and not len(vertices))
                if self._dead is not None:
                    self._dead.update(vertices.tolist())
                if self._index is not None:
                    self._index = None  # rebuilt on the next lookup
            else:  # update_vertices
                vertices = _ints(table, "vertex", where)
                _in_range(vertices, next_vertex, "vertex", where)
                columns = table.drop_columns(["vertex"])
                props = pa.schema([f for f in self.vertex_schema if f.name != "id"])
                for name in columns.column_names:
                    if name not in props.names:
                        raise CorruptGraph(f"{where} changes an unknown vertex column {name!r}",
                                           file="meta.lmdb/data.mdb")
                wanted = pa.schema([props.field(n) for n in columns.column_names])
                self._updates.append((vertices, _conform(columns, wanted, where)))
                head = _replace(head, updates=head.updates + 1)
            self.lengths.append(head)

    def _ascending_after(self, ids: pa.Array) -> bool:
        """Whether ``ids`` ascend strictly, after every new id added before them."""
        values = ids.to_pylist()
        if self._vids.parts:
            values.insert(0, self._vids.parts[-1][-1].as_py())
        return all(a < b for a, b in zip(values, values[1:]))

    def keeps_order(self, version: int) -> bool:
        """Whether ``version``'s vertices are the base's, then the new ones in the order they
        were added (none deleted, each new id sorting after the base's and the earlier new
        ones): its dense ids are its view ids, and readers may leave it unmerged."""
        with self.lock:
            return self.lengths[version].ordered

    def edge_ends(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        """(sources, destinations) of the first ``count`` delta edges ever added (dense ids)."""
        return self._esrc.view(count), self._edst.view(count)

    def edge_deletes(self) -> np.ndarray:
        """Every edge deletion recorded (base positions >= 0, delta edges as -1 - index)."""
        return self._edel.view(self._edel.n)

    def changes(self, first: int, last: int) -> "LogChanges":
        """What records ``first + 1 .. last`` did, as copies of the log's arrays (O(records)):
        how a reader carries what it built for version ``first`` over to version ``last``
        without materializing the whole view (:mod:`graphdb.executor.overlay`)."""
        with self.lock:
            if not 0 <= first <= last <= self.version:
                raise ValueError(f"versions {first}..{last} are not in this log "
                                 f"(0..{self.version})")
            a, b = self.lengths[first], self.lengths[last]
            ew = self._ew
            deletes = self._edel.view(b.edge_deletes)[a.edge_deletes:].copy()
            gone = -deletes[deletes < 0] - 1
            return LogChanges(
                vertex_ranks=self._vpos.view(b.vertices)[a.vertices:].copy(),
                vertex_ids=_plain(self._vids.prefix(b.vertices), self.id_type)
                .slice(a.vertices),
                first_edge=a.edges,
                src=self._esrc.view(b.edges)[a.edges:].copy(),
                dst=self._edst.view(b.edges)[a.edges:].copy(),
                weights=None if ew is None else ew.view(b.edges)[a.edges:].copy(),
                edge_deletes=deletes,
                deleted_src=self._esrc.view(b.edges)[gone],
                deleted_dst=self._edst.view(b.edges)[gone],
                vertex_deletes=self._vdel.view(b.vertex_deletes)[a.vertex_deletes:].copy())

    def new_ids(self, version: int) -> pa.Array:
        """The ids of the vertices added up to ``version``, in the order they were added."""
        with self.lock:
            return _plain(self._vids.prefix(self.lengths[version].vertices), self.id_type)

    def truncate(self, version: int) -> None:
        """Forget the records after ``version`` (a rolled back transaction's)."""
        with self.lock:
            if version >= self.version:
                return
            keep = self.lengths[version]
            del self.lengths[version + 1:]
            self._vpos.n = keep.vertices
            self._vids.truncate(keep.vertices)
            if self._vprops is not None:
                self._vprops.truncate(keep.vertices)
            for grow in (self._esrc, self._edst, self._ew):
                if grow is not None:
                    grow.n = keep.edges
            if self._eprops is not None:
                self._eprops.truncate(keep.edges)
            self._edel.n = keep.edge_deletes
            self._vdel.n = keep.vertex_deletes
            del self._updates[keep.updates:]
            for v in [v for v in self._views if v > version]:
                del self._views[v]
            self._index = self._dead = None

    def view(self, version: int) -> "DeltaView":
        """Version ``version`` materialized (cached for the last few asked for)."""
        with self.lock:
            if not 0 <= version <= self.version:
                raise ValueError(f"version {version} is not in this log (0..{self.version})")
            view = self._views.get(version)
            if view is None:
                view = self._views[version] = DeltaView(self, version)
                while len(self._views) > VIEWS_KEPT:
                    self._views.popitem(last=False)
            self._views.move_to_end(version)
            return view

    # -- the writer's lookups at the head -------------------------------------------------------
    def dead_vertices(self) -> set:
        with self.lock:
            if self._dead is None:
                self._dead = set(self._vdel.view(self._vdel.n).tolist())
            return self._dead

    def new_vertex_index(self) -> dict:
        """User id -> dense id of every live new vertex at the head."""
        with self.lock:
            if self._index is None:
                head = self.lengths[-1]
                dead = self.dead_vertices()
                start = self.base.num_vertices
                ids = self._vids.prefix(head.vertices).to_pylist()
                index = {}
                for at in range(0, len(ids), _CHUNK):  # interruptible: kept only when whole
                    interrupt.check()
                    index.update((value, start + i) for i, value in
                                 enumerate(ids[at:at + _CHUNK], at) if start + i not in dead)
                self._index = index
            return self._index

    def resolve(self, values: pa.Array) -> np.ndarray:
        """Dense ids of the user's ids ``values`` at the head; -1 where there is no such live
        vertex."""
        with self.lock:
            n = self.base.num_vertices
            out = np.full(len(values), -1, dtype=np.int64)
            if n:
                if self.base.id_type != "string":
                    numeric = _numeric(values)
                    ids = self.base_numeric  # sorted, distinct
                    first = int(ids[0])
                    if int(ids[-1]) - first == n - 1:  # a range of ids (0..V-1 most often)
                        pos = numeric - first
                        hit = (pos >= 0) & (pos < n)
                    else:
                        pos = np.searchsorted(ids, numeric)
                        hit = pos < n
                        hit[hit] = ids[pos[hit]] == numeric[hit]
                elif len(values) * 16 > n:  # many: one hash lookup over the base ids
                    found = pc.index_in(values, value_set=self.base_ids)
                    pos = found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
                    hit = pos >= 0
                else:
                    pos = self.base_rank(values)
                    seq = _ArrowSequence(self.base_ids)
                    wanted = values.to_pylist()
                    hit = np.array([p < n and seq[p] == w for p, w in zip(pos, wanted)],
                                   dtype=bool)
                out[hit] = pos[hit]
                dead = self.dead_vertices()
                if dead:
                    out[np.isin(out, np.fromiter(dead, np.int64, len(dead)))] = -1
            missing = np.flatnonzero(out < 0)
            if missing.size:
                index = self.new_vertex_index()
                if index:
                    picked = values.take(pa.array(missing)).to_pylist()
                    for at in range(0, len(picked), _CHUNK):  # reads only: interruptible
                        interrupt.check()
                        out[missing[at:at + _CHUNK]] = [index.get(v, -1) for v in
                                                        picked[at:at + _CHUNK]]
            return out


def _replace(lengths: _Lengths, **changes) -> _Lengths:
    from dataclasses import replace

    return replace(lengths, **changes)


class _ArrowSequence:
    """An Arrow array indexed as a Python sequence (for bisect over string ids)."""

    def __init__(self, array: pa.Array):
        self.array = array

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, i: int):
        return self.array[i].as_py()


def _numeric(values) -> np.ndarray:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array):
        values = values.cast(pa.int64()).to_numpy(zero_copy_only=False)
    return np.asarray(values, dtype=np.int64)


def _column(table: pa.Table, name: str, type_: pa.DataType, where: str) -> pa.Array:
    if name not in table.column_names or table.schema.field(name).type != type_:
        raise CorruptGraph(f"{where} has no column {name!r} of type {type_}",
                           file="meta.lmdb/data.mdb")
    return table.column(name).combine_chunks()


def _ints(table: pa.Table, name: str, where: str) -> np.ndarray:
    column = _column(table, name, pa.int64(), where)
    if column.null_count:
        raise CorruptGraph(f"{where}: column {name!r} holds NULLs", file="meta.lmdb/data.mdb")
    return _numeric(column)


def _floats(table: pa.Table, name: str, where: str) -> np.ndarray:
    column = _column(table, name, pa.float64(), where)
    if column.null_count:
        raise CorruptGraph(f"{where}: column {name!r} holds NULLs", file="meta.lmdb/data.mdb")
    return column.to_numpy(zero_copy_only=False)


def _in_range(ids: np.ndarray, limit: int, what: str, where: str) -> None:
    if ids.size and (ids.min() < 0 or ids.max() >= limit):
        raise CorruptGraph(f"{where} names a {what} outside 0..{limit - 1}",
                           file="meta.lmdb/data.mdb")


def _conform(table: pa.Table, schema: pa.Schema, where: str) -> pa.Table:
    if table.schema.remove_metadata() != schema.remove_metadata():
        raise CorruptGraph(f"{where} has columns ({table.schema.to_string()[:200]}) that are "
                           "not the graph's", file="meta.lmdb/data.mdb")
    return table


class DeltaView:
    """One version materialized: the view order of the live vertices and the edge changes.

    ``lut[dense]`` is the view id of a dense id (-1: deleted) and ``inv[view]`` its dense id;
    ``identity`` when the two coincide for every live vertex (no deletion, new ids after the
    base's). ``tombstones``: base out-CSR positions deleted, sorted. ``edge_ids``, ``src``,
    ``dst``, ``weights``: the live delta edges (dense endpoints), in the order they were added.
    """

    def __init__(self, log: DeltaLog, version: int):
        self.log = log
        self.version = version
        base = self.base = log.base
        lengths = log.lengths[version]
        vb = base.num_vertices
        self.next_vertex = vb + lengths.vertices
        where = f"the delta records of graph '{base.name}' (up to {version})"

        deletes = log._edel.view(lengths.edge_deletes)
        self.tombstones = np.unique(deletes[deletes >= 0])
        dead_edges = np.unique(-deletes[deletes < 0] - 1)
        if len(self.tombstones) + len(dead_edges) != len(deletes):
            raise CorruptGraph(f"{where} delete an edge twice", file="meta.lmdb/data.mdb")
        alive = np.ones(lengths.edges, dtype=bool)
        alive[dead_edges] = False
        self.edge_ids = np.flatnonzero(alive)
        self.src = log._esrc.view(lengths.edges)[self.edge_ids]
        self.dst = log._edst.view(lengths.edges)[self.edge_ids]
        self.weights = (None if log._ew is None
                        else log._ew.view(lengths.edges)[self.edge_ids])
        self.edges_added = lengths.edges

        dead = np.unique(log._vdel.view(lengths.vertex_deletes))
        if len(dead) != lengths.vertex_deletes:
            raise CorruptGraph(f"{where} delete a vertex twice", file="meta.lmdb/data.mdb")
        self.dead_vertices = dead
        if dead.size and (np.isin(self.src, dead).any() or np.isin(self.dst, dead).any()):
            raise CorruptGraph(f"{where} keep an edge of a deleted vertex",
                               file="meta.lmdb/data.mdb")
        self.new_ids = log._vids.prefix(lengths.vertices)
        self._order(vb, log._vpos.view(lengths.vertices), dead)
        self._updates = log._updates[: lengths.updates]
        self._edge_props_rows = lengths.edges

    # -- vertices -------------------------------------------------------------------------------
    def _order(self, vb: int, vpos: np.ndarray, dead: np.ndarray) -> None:
        """lut and inv: live vertices numbered in ascending order of the user's ids."""
        k = len(vpos)
        total = vb + k
        dead_base = dead[dead < vb]
        new_live = np.ones(k, dtype=bool)
        new_live[dead[dead >= vb] - vb] = False
        live_new = np.flatnonzero(new_live)
        if k:
            ids = self.new_ids
            # the order of the new ids among themselves (ids are distinct among live ones)
            if isinstance(ids, pa.ChunkedArray):
                ids = ids.combine_chunks()
            order = np.asarray(pc.sort_indices(ids.take(pa.array(live_new))), dtype=np.int64)
            ranked = live_new[order]  # new vertices (index into new) in id order
        else:
            ranked = live_new
        in_order = bool(ranked.size == 0 or (np.all(np.diff(ranked) > 0)
                                            and vpos[ranked[0]] == vb))
        self.identity = dead.size == 0 and in_order
        self.num_vertices = total - len(dead)
        if self.identity:
            self.lut = np.arange(total, dtype=np.int64)
            self.inv = self.lut
            return
        lut = np.full(total, -1, dtype=np.int64)
        pos = vpos[ranked]  # base ids smaller than each new id, in id order
        # base vertex b: b - (dead base ids before b) + (new ids smaller than id_b)
        bump = np.zeros(vb + 1, dtype=np.int64)
        np.add.at(bump, pos, 1)
        smaller_new = np.cumsum(bump)[:vb]
        base = np.arange(vb, dtype=np.int64)
        dead_before = np.searchsorted(dead_base, base)
        lut[:vb] = base - dead_before + smaller_new
        if dead_base.size:
            lut[dead_base] = -1
        lut[vb + ranked] = pos - np.searchsorted(dead_base, pos) + np.arange(len(ranked))
        inv = np.empty(self.num_vertices, dtype=np.int64)
        live = np.flatnonzero(lut >= 0)
        inv[lut[live]] = live
        self.lut, self.inv = lut, inv

    def view_ids(self, dense: np.ndarray) -> np.ndarray:
        return self.lut[dense]

    def user_ids(self) -> pa.Array:
        """The user's ids of the live vertices, in view order (ascending)."""
        whole = pa.concat_arrays([self.log.base_ids, _plain(self.new_ids, self.log.id_type)])
        if self.identity:
            return whole
        return whole.take(pa.array(self.inv))

    def vertex_table(self, base_table: pa.Table) -> pa.Table:
        """``g.vertices`` of this version from the base's vertex table: live vertices in view
        order, property changes applied."""
        log = self.log
        new = pa.table({"id": _plain(self.new_ids, log.id_type)})
        if log._vprops is not None:
            props = log._vprops.prefix(len(new))
            for field, column in zip(props.schema, props.columns):
                new = new.append_column(field, column)
        new = new.select(base_table.column_names).cast(base_table.schema)
        table = pa.concat_tables([base_table, new]).combine_chunks()
        for dense, changed in self._updates:  # in record order: the last change wins
            # the table is in dense order here (base, then new vertices): a dense id is its row
            for name in changed.column_names:
                index = table.column_names.index(name)
                column = table.column(index).combine_chunks()
                table = table.set_column(index, table.schema.field(index), _scatter(
                    column, dense, changed.column(name).combine_chunks()))
        if not self.identity:
            table = table.take(pa.array(self.inv))
        return table

    # -- edges ----------------------------------------------------------------------------------
    def edge_properties(self, base_props: pa.Table | None, origin: np.ndarray) -> pa.Table | None:
        """Edge properties aligned with a merged out-CSR whose positions came from ``origin``
        (a base position, or ``-(d + 1)`` for delta edge ``d``)."""
        log = self.log
        if log._eprops is None or base_props is None:
            return None
        delta = log._eprops.prefix(self._edge_props_rows).cast(base_props.schema)
        combined = pa.concat_tables([base_props, delta])
        index = np.where(origin >= 0, origin, self.base.num_edges + (-origin - 1))
        return combined.take(pa.array(index, pa.int64()))

    def delta_edge_properties(self) -> pa.Table | None:
        """The properties of every delta edge ever added (row ``d`` for delta edge ``d``)."""
        return None if self.log._eprops is None else self.log._eprops.prefix(self.edges_added)

    @property
    def stored_delta_edges(self) -> int:
        """Delta edges as stored (an undirected one twice, a self loop once)."""
        if self.base.directed:
            return len(self.src)
        return 2 * len(self.src) - int(np.count_nonzero(self.src == self.dst))

    @property
    def num_edges(self) -> int:
        """Stored edges of this version."""
        return self.base.num_edges - len(self.tombstones) + self.stored_delta_edges

    @property
    def changed_edges(self) -> int:
        """Stored edge entries an operator merges: base ones deleted plus delta ones."""
        return len(self.tombstones) + self.stored_delta_edges


def _plain(values, type_: pa.DataType) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return values.cast(type_)


def _scatter(column: pa.Array, at: np.ndarray, values: pa.Array) -> pa.Array:
    """``column`` with ``column[at[i]] = values[i]`` (the last value of a repeated position
    wins)."""
    if not len(at):
        return column
    # last occurrence of each position
    order = np.argsort(at, kind="stable")
    positions = at[order]
    last = np.ones(len(positions), dtype=bool)
    last[:-1] = positions[1:] != positions[:-1]
    positions, picked = positions[last], order[last]
    mask = np.zeros(len(column), dtype=bool)
    mask[positions] = True
    replacement = values.take(pa.array(picked)).cast(column.type)
    return pc.replace_with_mask(column, pa.array(mask), replacement)
