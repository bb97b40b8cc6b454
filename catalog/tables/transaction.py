"""One connection's writes to tables, inside its write transaction (:mod:`..writer`).

A table changed by the open transaction has a *current* entry that this connection's
statements see (``Tables.pending``) and that the commit stores: its records (appended rows,
deleted row ids) go to the generation's log at once, numbered after the version the
transaction started from, and are written with the entry in the writer's one LMDB commit,
together with the graphs' records (a property graph over the table changes in the same
commit). DDL is part of the transaction too: CREATE TABLE makes a new generation (its base file,
if it has rows, written and synced before the commit that names it, in a directory a pending
record names until then, :mod:`..cleanup`), DROP TABLE sets the current entry to None, and a
generation replaced or dropped is retired by the commit (freed once no statement reads it).

Writes are checked at commit against what was committed when the transaction first read the
table (another connection cannot have changed it meanwhile: the writer lock is held from the
first write to the end, but a damaged or replaced entry is refused, never overwritten).
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow as pa

from graphdb.storage.delta import put_record

from ..cleanup import begin_graph_dir, settle
from ..errors import CatalogError, GraphChanged
from ..leases import retire_version
from .entries import TableEntry
from .log import Record, encode_record
from .store import TABLES_DB, TableNotFound, table_key, write_rows_file

if TYPE_CHECKING:
    from ..catalog import Catalog

__all__ = ["TableExists", "TableWrites", "new_generation", "rebased"]


class TableExists(CatalogError):
    def __init__(self, name: str):
        self.name = name
        super().__init__(f"table '{name}' already exists")


@dataclass
class _Change:
    committed: TableEntry | None  # as committed when the transaction first touched it
    raw: bytes | None  # its stored bytes (checked unchanged at commit)
    entry: TableEntry | None  # current (None: dropped)
    start: int = 0  # the version of the current generation the records follow
    records: list[Record] = field(default_factory=list)
    created: list[str] = field(default_factory=list)  # generations made by the transaction


def new_generation(catalog: "Catalog", rows: pa.Table | None, rowids=None
                   ) -> tuple[str, dict]:
    """A new generation's id and file records: its directory (named by a pending record until a
    commit settles it) and, when ``rows`` has any, its base file (with ``rowids``, the rows'
    ids, where they are not 0, 1, 2, ...)."""
    env = catalog.env
    table_id = uuid.uuid4().hex
    if rows is None or not rows.num_rows:
        return table_id, {}
    begin_graph_dir(env, table_id)
    return table_id, write_rows_file(env, table_id, rows, rowids)


def rebased(catalog: "Catalog", entry: TableEntry, rows: pa.Table | None = None,
            **changes) -> TableEntry:
    """``entry`` as a new generation holding its live rows (or ``rows``: them changed, in the
    same order), their row ids kept (a property graph over the table names its edges' rows
    by them), later rows numbered on from the old ones."""
    tables = catalog.tables
    view = tables.view(entry)
    log = tables.log(entry)
    rows = view.table if rows is None else rows
    rowids = view.rowids
    table_id, files = new_generation(catalog, rows, rowids)
    return dataclasses.replace(
        entry, table_id=table_id, files=files, base_rows=rows.num_rows, rows=rows.num_rows,
        version=0, delta={}, appended_from=log.next_rowid,
        base_rowids=rowids is not None and rows.num_rows > 0, **changes)


class TableWrites:
    """The table changes of one write transaction (see the module docstring)."""

    def __init__(self, catalog: "Catalog", acquire: Callable[[], None]):
        self.catalog = catalog
        self._lock = acquire
        self._tidied = False
        self._changes: dict[str, _Change] = {}
        #: committed (key, entry, raw) read by :meth:`find` since the writer lock was taken
        self._read: dict[str, tuple] = {}
        #: the entries the last commit stored (None for a drop), by name
        self.committed: dict[str, TableEntry | None] = {}

    @property
    def changed(self) -> bool:
        return bool(self._changes)

    def _acquire(self) -> None:
        """The writer lock; the first time in a transaction, what killed writes left and what
        no statement reads any more is freed (the lock makes that safe)."""
        self._lock()
        if not self._tidied:
            self._tidied = True
            self.catalog.free_unused()

    @property
    def tables(self):
        return self.catalog.tables

    # -- reading --------------------------------------------------------------------------------
    def _committed(self, name: str) -> tuple[str, TableEntry | None, bytes | None]:
        """(stored name, entry, raw) of ``name`` as committed (None, None: no such table)."""
        env = self.catalog.env
        db = env.db(TABLES_DB)
        if db is not None:  # the name as stored (the usual case): one key read
            with env.read_txn() as txn:
                raw = txn.get(table_key(name), db=db)
                raw = None if raw is None else bytes(raw)
            if raw is not None:
                return name, self.tables.parse(raw, name), raw
        snap = self.tables.committed()
        key = snap.key_of(name)
        if key is None:
            return name, None, None
        return key, snap.get(key), snap.raw(key)

    def find(self, name: str) -> TableEntry | None:
        """Table ``name`` as this transaction sees it (None: there is none)."""
        self._acquire()
        lower = name.lower()
        for key, change in self._changes.items():
            if key.lower() == lower:
                return change.entry
        found = self._committed(name)
        self._read[lower] = found  # (the lock is held: it stays the newest until the end)
        return found[1]

    def entry(self, name: str) -> TableEntry:
        found = self.find(name)
        if found is None:
            raise TableNotFound(name, self.names())
        return found

    def names(self) -> list[str]:
        names = set(self.tables.committed().names())
        for key, change in self._changes.items():
            (names.add if change.entry is not None else names.discard)(key)
        return sorted(names)

    def _change(self, name: str) -> _Change:
        lower = name.lower()
        for key, change in self._changes.items():
            if key.lower() == lower:
                return change
        key, entry, raw = self._read.pop(lower, None) or self._committed(name)
        change = self._changes[key] = _Change(entry, raw, entry,
                                              entry.version if entry is not None else 0)
        return change

    def _set(self, change: _Change, entry: TableEntry | None) -> None:
        change.entry = entry
        name = next(k for k, c in self._changes.items() if c is change)
        self.tables.pending[name] = entry

    # -- DDL ------------------------------------------------------------------------------------
    def create(self, entry: TableEntry, *, replace: bool = False, fresh: bool = True
               ) -> TableEntry:
        """Add table ``entry``: a generation :func:`new_generation` made (``fresh``), or one
        that exists (a table renamed keeps its generation)."""
        self._acquire()
        change = self._change(entry.name)
        if change.entry is not None and not replace:
            raise TableExists(change.entry.name)
        key = next(k for k, c in self._changes.items() if c is change)
        entry = dataclasses.replace(entry, name=key if key.lower() == entry.name.lower()
                                    else entry.name)
        change.records = []
        change.start = entry.version
        if fresh:
            change.created.append(entry.table_id)
        self._set(change, self._pending(entry))
        return change.entry

    def drop(self, name: str) -> TableEntry:
        """Drop table ``name``; returns the entry dropped."""
        self._acquire()
        change = self._change(name)
        if change.entry is None:
            raise TableNotFound(name, self.names())
        old = change.entry
        change.records = []
        self._set(change, None)
        return old

    # -- rows -----------------------------------------------------------------------------------
    def write(self, entry: TableEntry, records: list[Record]) -> TableEntry:
        """Apply ``records`` to the current version of ``entry``'s table; returns its entry."""
        change = self._change(entry.name)
        if change.entry is None or change.entry.table_id != entry.table_id or \
                change.entry.version != entry.version:
            raise GraphChanged(entry.name)
        log = self.tables.log(entry)
        if log.version > entry.version:  # records of a statement that did not finish
            log.truncate(entry.version)
        rows, appended, deleted, size = entry.rows, 0, 0, 0
        try:
            for record in records:
                log.append(record)
                if record.kind == "append":
                    rows += record.rows
                    appended += record.rows
                else:
                    rows -= record.rows
                    deleted += record.rows
                size += record.table.nbytes
        except BaseException:
            log.truncate(entry.version)
            raise
        change.records.extend(records)
        delta = dict(entry.delta)
        delta["appended"] = delta.get("appended", 0) + appended
        delta["deleted"] = delta.get("deleted", 0) + deleted
        delta["bytes"] = delta.get("bytes", 0) + size
        delta["pending"] = uuid.uuid4().hex
        updated = dataclasses.replace(entry, rows=rows, version=log.version, delta=delta)
        self._set(change, updated)
        return updated

    @staticmethod
    def _pending(entry: TableEntry) -> TableEntry:
        delta = dict(entry.delta)
        delta["pending"] = uuid.uuid4().hex
        return dataclasses.replace(entry, delta=delta)

    # -- savepoints -----------------------------------------------------------------------------
    def mark(self) -> dict:
        """What :meth:`restore` needs to undo the statement that follows."""
        return {name: (c.entry, len(c.records), c.start, list(c.created))
                for name, c in self._changes.items()}

    def restore(self, saved: dict) -> None:
        for name, change in list(self._changes.items()):
            if name not in saved:
                self._discard_created(change.created)
                self._truncate(change, change.committed)
                del self._changes[name]
                self.tables.pending.pop(name, None)
                continue
            entry, records, start, created = saved[name]
            self._discard_created([g for g in change.created if g not in created])
            self._truncate(change, entry)
            change.entry, change.start, change.created = entry, start, created
            del change.records[records:]
            self.tables.pending[name] = entry

    def _truncate(self, change: _Change, to: TableEntry | None) -> None:
        """Forget the log records after version ``to`` of the current generation."""
        current = change.entry
        if current is None:
            return
        known = self.tables.kept_log(current.table_id)
        if known is None:
            return
        if to is not None and to.table_id == current.table_id:
            known.truncate(to.version)
        else:
            self.tables.forget(current.table_id)

    def _discard_created(self, generations: list[str]) -> None:
        """Generations a statement or transaction made and undid: their directories go now."""
        env = self.catalog.env
        for table_id in generations:
            self.tables.forget(table_id)
            if not env.graph_dir(table_id).exists():
                continue  # a generation without rows has no directory
            env.remove_graph_dir(table_id)

            def commit(txn, table_id=table_id):
                settle(env, txn, table_id)

            env.write(commit)

    # -- the commit -----------------------------------------------------------------------------
    def estimate(self) -> int:
        return sum(r.table.nbytes for c in self._changes.values() for r in c.records)

    def store(self, txn) -> dict[bytes, bytes | None]:
        """Write every change in ``txn`` (the writer's commit); returns the entries written
        (stored key -> bytes, None where one was deleted)."""
        env = self.catalog.env
        db = env.db(TABLES_DB)
        written: dict[bytes, bytes | None] = {}
        live = {c.entry.table_id for c in self._changes.values() if c.entry is not None}
        for name, change in self._changes.items():
            stored = txn.get(table_key(name), db=db)
            if (None if stored is None else bytes(stored)) != change.raw:
                raise GraphChanged(name)
            current = change.entry
            if current is None:
                if stored is not None:
                    txn.delete(table_key(name), db=db)
                    written[table_key(name)] = None
            else:
                for i, record in enumerate(change.records):
                    put_record(env, txn, current.table_id, change.start + 1 + i,
                               encode_record(record))
                committed = dataclasses.replace(current, delta={
                    k: v for k, v in current.delta.items() if k != "pending"})
                raw = committed.to_json()
                txn.put(table_key(name), raw, db=db)
                written[table_key(name)] = raw
                self.tables.remember(name, raw, committed)  # the next statement's read of it
                if current.table_id in change.created:
                    settle(env, txn, current.table_id)
            old = change.committed
            if old is not None and old.table_id not in live:
                retire_version(env, txn, _Version(old.name, old.table_id))
        return written

    def forget(self, committed: bool) -> None:
        """The transaction ended: committed (records stay in the logs) or rolled back."""
        done = {}
        for name, change in self._changes.items():
            if committed:
                current = change.entry
                done[name] = None if current is None else dataclasses.replace(current, delta={
                    k: v for k, v in current.delta.items() if k != "pending"})
                live = {c.entry.table_id for c in self._changes.values()
                        if c.entry is not None}
                superseded = [g for g in change.created if g not in live]
                self._discard_created(superseded)
            else:
                self._truncate(change, change.committed)
                self._discard_created(change.created)
            self.tables.pending.pop(name, None)
        self._changes = {}
        self._read = {}
        self._tidied = False
        self.committed = done if committed else {}


@dataclass(frozen=True)
class _Version:
    """What retiring a generation needs (:func:`..snapshot.retire_version`)."""

    name: str
    graph_id: str


def created_now() -> float:
    return time.time()
