"""Table versions: a stored base generation plus the delta records committed since.

A write to a table becomes records on its generation (:mod:`graphdb.storage.delta` stores
them, in the transaction that raises the table's version in its entry):

============  =================================================================================
``append``    rows, in the table's Arrow schema; they get the next *row ids* (the base's rows
              are 0 .. B-1, appended rows B, B+1, ... in the order they came)
``delete``    ``row``: the row ids deleted
============  =================================================================================

An UPDATE deletes the rows it changes and appends them changed. A version is the lengths of
these logs after its last record, so :class:`TableLog` (one per generation, in memory, synced
from the records a version needs) shows any version it holds: :meth:`TableLog.view` is the
live rows as one Arrow table (the base memory-mapped, appended rows as chunks after it, handed
over without a copy while nothing is deleted) and their row ids.

The log also answers key lookups at any version (:meth:`TableLog.positions`): the base's keys
sorted once per generation (numbers and strings as numpy arrays, binary search; other key
types in a dict), the appended rows' keys in a dict, deleted rows filtered out. Primary keys
are enforced and point lookups (``WHERE id = 42``) answered through it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from graphdb.storage.lazy import pc

from ..errors import CorruptGraph
from ..records import decode_table, encode_table

__all__ = ["Record", "TableLog", "TableView", "decode_record", "encode_record"]

KINDS = ("append", "delete")
#: Versions a log keeps materialized.
VIEWS_KEPT = 3
#: Appended pieces kept apart before they are combined into one (a scan of many tiny chunks
#: is slow; combining is a copy of the appended rows only).
MAX_PIECES = 32


@dataclass
class Record:
    kind: str
    table: pa.Table

    @property
    def rows(self) -> int:
        return self.table.num_rows


def encode_record(record: Record) -> bytes:
    """A record as stored: an Arrow IPC stream whose schema metadata names its kind."""
    return encode_table(record.table, "table_op", record.kind)


def decode_record(payload: bytes, where: str) -> Record:
    return Record(*decode_table(payload, where, "table_op", KINDS))


@dataclass(frozen=True)
class _Lengths:
    appended: int = 0  # rows appended
    deleted: int = 0  # row ids deleted


class _Pieces:
    """Appended tables; ``prefix(n)`` the first ``n`` rows as a list of tables (no copy)."""

    def __init__(self):
        self.tables: list[pa.Table] = []
        self.ends: list[int] = []

    @property
    def rows(self) -> int:
        return self.ends[-1] if self.ends else 0

    def add(self, table: pa.Table) -> None:
        if table.num_rows:
            self.tables.append(table)
            self.ends.append(self.rows + table.num_rows)

    def combine_tail(self, keep: int) -> None:
        """Combine the pieces after the first ``keep`` into one (the scan then reads few)."""
        if len(self.tables) - keep > 1:
            tail = pa.concat_tables(self.tables[keep:]).combine_chunks()
            self.tables[keep:] = [tail]
            self.ends[keep:] = [self.ends[-1]]

    def truncate(self, n: int) -> None:
        while self.ends and self.ends[-1] > n:
            table, end = self.tables.pop(), self.ends.pop()
            keep = table.num_rows - (end - n)
            if keep > 0:
                self.tables.append(table.slice(0, keep))
                self.ends.append(n)
                break

    def prefix(self, n: int) -> list[pa.Table]:
        out, start = [], 0
        for table, end in zip(self.tables, self.ends):
            if start >= n:
                break
            out.append(table if end <= n else table.slice(0, n - start))
            start = end
        return out


class TableView:
    """One version's live rows: ``table`` (the base, then the appended rows; deleted rows
    left out) and ``rowids`` (their row ids, ascending; None when they are 0 .. rows-1)."""

    def __init__(self, table: pa.Table, rowids: np.ndarray | None, version: int):
        self.table = table
        self.rowids = rowids
        self.version = version

    @property
    def num_rows(self) -> int:
        return self.table.num_rows

    def row_ids(self) -> np.ndarray:
        return np.arange(self.num_rows, dtype=np.int64) if self.rowids is None else self.rowids

    def positions_of(self, rowids: np.ndarray) -> np.ndarray:
        """Positions in :attr:`table` of live row ids."""
        if self.rowids is None:
            return np.asarray(rowids, dtype=np.int64)
        return np.searchsorted(self.rowids, rowids).astype(np.int64)


class TableLog:
    """The records of one generation, in memory (see the module docstring).

    ``base`` gives the base generation's rows (memory-mapped, read when first needed);
    ``key`` the key columns (primary key or first UNIQUE; () for none)."""

    def __init__(self, table_id: str, schema: pa.Schema, base_rows: int,
                 base: Callable[[], tuple[pa.Table, np.ndarray | None]], key: tuple[str, ...],
                 appended_from: int | None = None):
        self.table_id = table_id
        self.schema = schema
        self.base_rows = base_rows
        #: the row id of the first appended row (row ids go on from an older generation's)
        self.appended_from = base_rows if appended_from is None else appended_from
        self._base_loader = base
        self._base: pa.Table | None = None
        self._base_rowids: np.ndarray | None = None
        self.key = key
        self.lock = threading.RLock()
        self._pieces = _Pieces()
        self._deletes = np.empty(16, dtype=np.int64)
        self.lengths: list[_Lengths] = [_Lengths()]
        self._views: OrderedDict[int, TableView] = OrderedDict()
        self._base_index: _SortedKeys | None = None
        #: key -> row ids of appended rows (every version; a row id past a version's appends,
        #: or deleted in it, is not that version's)
        self._appended_keys: dict | None = None
        self._indexed = 0  # appended rows in _appended_keys
        self._deleted_at: dict[int, int] = {}  # row id -> its place among the deletes

    # -- the base -------------------------------------------------------------------------------
    @property
    def base(self) -> pa.Table:
        if self._base is None:
            if self.base_rows:
                self._base, self._base_rowids = self._base_loader()
            else:
                self._base = self.schema.empty_table()
        return self._base

    @property
    def base_rowids(self) -> np.ndarray | None:
        """The base rows' ids (None: 0 .. base_rows - 1)."""
        self.base  # noqa: B018  (loaded with the rows)
        return self._base_rowids

    def _base_ids(self, positions: np.ndarray) -> np.ndarray:
        """Row ids of base rows by position."""
        ids = self.base_rowids
        return positions if ids is None else ids[positions]

    @property
    def version(self) -> int:
        return len(self.lengths) - 1

    @property
    def head(self) -> _Lengths:
        return self.lengths[-1]

    @property
    def next_rowid(self) -> int:
        return self.appended_from + self.head.appended

    # -- records --------------------------------------------------------------------------------
    def append(self, record: Record, where: str = "a write") -> None:
        """Apply one record on top of the newest version."""
        with self.lock:
            head = self.head
            if record.kind == "append":
                table = record.table
                if table.schema.remove_metadata() != self.schema.remove_metadata():
                    raise CorruptGraph(f"{where} appends rows whose columns are not the "
                                       "table's", file="meta.lmdb/data.mdb")
                self._pieces.add(table)
                if len(self._pieces.tables) > MAX_PIECES:
                    self._pieces.combine_tail(1 if self._pieces.tables[0].num_rows > 4096
                                              else 0)
                self.lengths.append(_Lengths(head.appended + table.num_rows, head.deleted))
            else:
                column = record.table.column("row") if "row" in record.table.column_names \
                    else None
                if column is None or column.type != pa.int64() or column.null_count:
                    raise CorruptGraph(f"{where} deletes rows without row ids",
                                       file="meta.lmdb/data.mdb")
                rows = np.asarray(column.to_numpy(), dtype=np.int64)
                if rows.size and (rows.min() < 0 or rows.max() >= self.next_rowid):
                    raise CorruptGraph(f"{where} deletes a row that does not exist",
                                       file="meta.lmdb/data.mdb")
                need = head.deleted + rows.size
                if need > len(self._deletes):
                    grown = np.empty(max(need, 2 * len(self._deletes)), dtype=np.int64)
                    grown[:head.deleted] = self._deletes[:head.deleted]
                    self._deletes = grown
                self._deletes[head.deleted:need] = rows
                for i, r in enumerate(rows.tolist()):
                    if r in self._deleted_at:
                        raise CorruptGraph(f"{where} deletes row {r} twice",
                                           file="meta.lmdb/data.mdb")
                    self._deleted_at[r] = head.deleted + i
                self.lengths.append(_Lengths(head.appended, need))

    def truncate(self, version: int) -> None:
        """Forget the records after ``version`` (a rolled back transaction's)."""
        with self.lock:
            if version >= self.version:
                return
            keep, old = self.lengths[version], self.head
            for r in self._deletes[keep.deleted:old.deleted].tolist():
                self._deleted_at.pop(r, None)
            del self.lengths[version + 1:]
            self._pieces.truncate(keep.appended)
            if self._appended_keys is not None and self._indexed > keep.appended:
                self._appended_keys, self._indexed = None, 0
            for v in [v for v in self._views if v > version]:
                del self._views[v]

    # -- versions -------------------------------------------------------------------------------
    def view(self, version: int) -> TableView:
        """Version ``version``'s live rows (cached for the last few asked for)."""
        with self.lock:
            if not 0 <= version <= self.version:
                raise ValueError(f"version {version} is not in this log (0..{self.version})")
            view = self._views.get(version)
            if view is None:
                view = self._views[version] = self._materialize(version)
                while len(self._views) > VIEWS_KEPT:
                    self._views.popitem(last=False)
            self._views.move_to_end(version)
            return view

    def _materialize(self, version: int) -> TableView:
        lengths = self.lengths[version]
        parts = [self.base] if self.base_rows else []
        parts += self._pieces.prefix(lengths.appended)
        table = pa.concat_tables(parts) if parts else self.schema.empty_table()
        identity = self.base_rowids is None and self.appended_from == self.base_rows
        if not lengths.deleted and identity:
            return TableView(table, None, version)
        rowids = np.concatenate([
            self._base_ids(np.arange(self.base_rows, dtype=np.int64)),
            self.appended_from + np.arange(lengths.appended, dtype=np.int64)])
        if not lengths.deleted:
            return TableView(table, rowids, version)
        live = np.ones(len(rowids), dtype=bool)
        live[np.searchsorted(rowids, self._deletes[:lengths.deleted])] = False
        return TableView(table.filter(pa.array(live)), rowids[live], version)

    # -- keys -----------------------------------------------------------------------------------
    def _deleted_in(self, rowids: np.ndarray, version: int) -> np.ndarray:
        """Which of ``rowids`` are deleted at ``version``."""
        n = self.lengths[version].deleted
        if not n:
            return np.zeros(len(rowids), dtype=bool)
        at = self._deleted_at
        return np.array([at.get(r, n) < n for r in rowids.tolist()], dtype=bool)

    def _appended_index(self) -> dict:
        if self._appended_keys is None:
            self._appended_keys, self._indexed = {}, 0
        total = self.head.appended
        if self._indexed < total:
            rows = self._pieces.prefix(total)
            start = 0
            for table in rows:
                end = start + table.num_rows
                if end > self._indexed:
                    part = table.slice(max(0, self._indexed - start))
                    first = self.appended_from + max(start, self._indexed)
                    for i, key in enumerate(_key_values(part, self.key)):
                        self._appended_keys.setdefault(key, []).append(first + i)
                start = end
            self._indexed = total
        return self._appended_keys

    def rowids_of(self, keys: list, version: int) -> list[int]:
        """For each key (a value, or a tuple for several key columns), the row id of the live
        row at ``version`` that has it, else -1."""
        with self.lock:
            if self._base_index is None:
                self._base_index = _SortedKeys(self.base, self.key)
            found = self._base_index.find(keys)
            found = [int(self._base_ids(np.array([f]))[0]) if f >= 0 else -1 for f in found] \
                if self.base_rowids is not None else found
            limit = self.appended_from + self.lengths[version].appended
            appended = self._appended_index() if self.head.appended else {}
            out = []
            for key, base_row in zip(keys, found):
                candidates = ([base_row] if base_row >= 0 else []) + [
                    r for r in appended.get(key, ()) if r < limit]
                row = -1
                if candidates:
                    dead = self._deleted_in(np.array(candidates, dtype=np.int64), version)
                    alive = [r for r, d in zip(candidates, dead) if not d]
                    row = alive[-1] if alive else -1
                out.append(row)
            return out

    def find_rows(self, values: pa.Array, version: int) -> np.ndarray:
        """The row id of the live row at ``version`` with each value of the (one) key column,
        -1 where there is none: :meth:`rowids_of` for a few values, hashed for many (the
        base's keys, and the live appended rows' keys)."""
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        with self.lock:
            if len(values) <= 256 or len(self.key) != 1:
                return np.array(self.rowids_of(values.to_pylist(), version), dtype=np.int64)
            lengths = self.lengths[version]
            deleted = self._deletes[:lengths.deleted]
            out = np.full(len(values), -1, dtype=np.int64)
            if self.base_rows:  # the base's keys (distinct: it was written from live rows)
                if self._base_index is None:
                    self._base_index = _SortedKeys(self.base, self.key)
                at = self._base_index.positions(values)  # integers: binary search, no hash
                if at is None:  # of the whole base per statement
                    at = _index_in(values, self.base.column(self.key[0]).combine_chunks())
                rows = np.where(at >= 0, self._base_ids(np.maximum(at, 0)), -1)
                if deleted.size:
                    rows[(rows >= 0) & np.isin(rows, deleted)] = -1
                out = rows
            if lengths.appended:  # the live appended rows' keys (distinct among live rows)
                keys = pa.concat_tables(self._pieces.prefix(lengths.appended)).column(
                    self.key[0]).combine_chunks()
                rowids = self.appended_from + np.arange(len(keys), dtype=np.int64)
                if deleted.size:
                    live = ~np.isin(rowids, deleted)
                    keys, rowids = keys.filter(pa.array(live)), rowids[live]
                at = _index_in(values, keys)
                found = (at >= 0) & (out < 0)
                out[found] = rowids[at[found]]
            return out

    def positions(self, keys: list, version: int) -> np.ndarray:
        """Positions in :meth:`view` ``(version)``'s table of the rows with these keys (rows
        without one left out), in the order of ``keys``."""
        rowids = np.array(self.rowids_of(keys, version), dtype=np.int64)
        rowids = rowids[rowids >= 0]
        return self.view(version).positions_of(rowids)

    def existing(self, keys: list) -> list:
        """The keys of ``keys`` that a live row has at the head."""
        found = self.rowids_of(keys, self.version)
        return [k for k, r in zip(keys, found) if r >= 0]


def _index_in(values: pa.Array, keys: pa.Array) -> np.ndarray:
    """The position in ``keys`` of each of ``values`` (-1: none, NULL, or another kind)."""
    if values.type != keys.type:
        try:
            values = values.cast(keys.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            return np.full(len(values), -1, dtype=np.int64)
    found = pc.index_in(values, value_set=keys)
    return np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)


def _key_values(table: pa.Table, key: tuple[str, ...]) -> list:
    """The key of each row: its value for one key column, a tuple for several."""
    if len(key) == 1:
        return table.column(key[0]).to_pylist()
    return list(zip(*(table.column(k).to_pylist() for k in key)))


class _SortedKeys:
    """The base generation's keys, for lookups of a few: integers as a sorted numpy array,
    strings as a sorted Arrow array (binary search: no Python object per key), other key
    types in a dict. Many keys at once are looked up by :meth:`TableLog.find_rows`."""

    def __init__(self, base: pa.Table, key: tuple[str, ...]):
        self.kind = "none"
        if not key or not base.num_rows:
            return
        if len(key) == 1:
            column = base.column(key[0]).combine_chunks()
            if pa.types.is_integer(column.type) and not column.null_count:
                values = np.asarray(column.to_numpy(), dtype=np.int64)
                self.order = np.argsort(values, kind="stable")
                self.sorted = values[self.order]
                self.kind = "int"
                return
            if (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)) \
                    and not column.null_count:
                self.order = np.asarray(pc.sort_indices(column), dtype=np.int64)
                self.sorted = column.take(pa.array(self.order))
                self.kind = "str"
                return
        self.kind = "dict"
        self.dict = {k: i for i, k in enumerate(_key_values(base, key))}

    def find(self, keys: list) -> list[int]:
        """The base position of each key, -1 where no base row has it."""
        if self.kind == "none":
            return [-1] * len(keys)
        if self.kind == "dict":
            return [self.dict.get(k, -1) for k in keys]
        if self.kind == "str":
            return [self._find_text(k) if isinstance(k, str) else -1 for k in keys]
        out = [-1] * len(keys)
        wanted, where = [], []
        for i, k in enumerate(keys):
            if isinstance(k, (int, np.integer)) and not isinstance(k, bool) and \
                    -(1 << 63) <= k < (1 << 63):
                wanted.append(k)
                where.append(i)
        if not wanted:
            return out
        at = np.searchsorted(self.sorted, np.array(wanted, dtype=np.int64))
        n = len(self.sorted)
        for i, a, v in zip(where, at.tolist(), wanted):
            if a < n and self.sorted[a] == v:
                out[i] = int(self.order[a])
        return out

    def positions(self, values: pa.Array) -> np.ndarray | None:
        """:meth:`find` of many integer values at once (-1 where none); None for other keys."""
        if self.kind != "int" or not pa.types.is_integer(values.type) or values.null_count:
            return None
        wanted = np.asarray(values.to_numpy(), dtype=np.int64)
        at = np.searchsorted(self.sorted, wanted)
        inside = at < len(self.sorted)
        hit = np.zeros(len(wanted), dtype=bool)
        hit[inside] = self.sorted[at[inside]] == wanted[inside]
        return np.where(hit, self.order[np.minimum(at, len(self.sorted) - 1)], -1)

    def _find_text(self, key: str) -> int:
        sorted_, lo, hi = self.sorted, 0, len(self.sorted)
        while lo < hi:
            mid = (lo + hi) // 2
            if sorted_[mid].as_py() < key:
                lo = mid + 1
            else:
                hi = mid
        return int(self.order[lo]) if lo < len(sorted_) and sorted_[lo].as_py() == key else -1
