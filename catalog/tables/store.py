"""Reading tables: entries in one statement's snapshot, their generations' files, their logs.

:class:`Tables` belongs to one :class:`~graphdb.catalog.Catalog` (one connection), as its
:class:`~graphdb.catalog.versions.Versions` does for graphs: it parses entries (once per
stored bytes), keeps a :class:`~.log.TableLog` per generation it has read (synced from the
records a version needs, in one read transaction never held), and opens base files checked
against their entry (size and checksum once per process, Arrow's validation).

:class:`TableSnapshot` is the tables, views and schemas as one statement sees them, read in
the same LMDB read transaction as the graphs' entries (:meth:`Catalog.snapshot`), with the
changes of this connection's open transaction on top.
"""

from __future__ import annotations

import copy
import difflib
import os
import threading
import weakref
from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from graphdb.storage.checksum import default_algorithm, file_checksum
from graphdb.storage.delta import read_records

from ..errors import CatalogError, CorruptGraph
from .entries import ROWID, ROWS_FILE, TableEntry, ViewEntry, split_name
from .log import TableLog, TableView, decode_record

if TYPE_CHECKING:
    from ..catalog import Catalog

__all__ = ["TABLES_DB", "TableNotFound", "TableSnapshot", "Tables", "table_key",
           "write_rows_file"]

#: The sub-database of table, view and schema entries.
TABLES_DB = "tables"
_TABLE, _VIEW, _SCHEMA = b"t/", b"v/", b"s/"
#: Generations whose logs a catalog keeps.
LOGS_KEPT = 32
_VERIFIED: OrderedDict = OrderedDict()
_VERIFIED_LOCK = threading.Lock()


class TableNotFound(CatalogError):
    def __init__(self, name: str, known: list[str]):
        self.name, self.known = name, known
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else (
            f" (tables: {', '.join(known)})" if known else "")
        super().__init__(f"table '{name}' does not exist{hint}")


def table_key(name: str, kind: bytes = _TABLE) -> bytes:
    return kind + name.encode()


def write_rows_file(env, table_id: str, table: pa.Table, rowids=None) -> dict:
    """Write ``table`` (with its rows' ids ``rowids``, where they are not 0, 1, 2, ...) as the
    base file of generation ``table_id`` (its directory exists), durably (fsynced before any
    commit names it); returns its record for the entry."""
    if rowids is not None:
        table = table.append_column(ROWID, pa.array(rowids, pa.int64()))
    path = env.graph_dir(table_id) / ROWS_FILE
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=1 << 20)
    env.seal_file(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    algorithm = default_algorithm()
    return {ROWS_FILE: {"bytes": int(path.stat().st_size),
                        "checksum": file_checksum(path, algorithm), "algorithm": algorithm}}


class Tables:
    """The tables of one catalog (see the module docstring)."""

    def __init__(self, catalog: "Catalog"):
        self._catalog = weakref.ref(catalog)
        self._parsed: OrderedDict[tuple[str, bytes], TableEntry] = OrderedDict()
        self._logs: OrderedDict[str, TableLog] = OrderedDict()
        self._lock = threading.RLock()
        #: entries this connection's open transaction changed (None: dropped in it)
        self.pending: dict[str, TableEntry | None] = {}

    @property
    def catalog(self) -> "Catalog":
        return self._catalog()

    # -- entries --------------------------------------------------------------------------------
    def read_raw(self, txn) -> dict[bytes, bytes]:
        """Every stored table, view and schema entry (key -> bytes) in ``txn``."""
        db = self.catalog.env.db(TABLES_DB)
        if db is None:
            return {}
        return {bytes(k): bytes(v) for k, v in txn.cursor(db=db)}

    def parse(self, raw: bytes, name: str) -> TableEntry:
        key = (name, raw)
        with self._lock:
            entry = self._parsed.get(key)
            if entry is None:
                entry = self._parsed[key] = TableEntry.from_json(raw, name)
                while len(self._parsed) > 1024:
                    self._parsed.popitem(last=False)
            return entry

    def remember(self, name: str, raw: bytes, entry: TableEntry) -> None:
        """``entry`` is what ``raw`` parses to (a commit of this connection wrote it)."""
        with self._lock:
            self._parsed[(name, bytes(raw))] = entry

    def committed(self) -> "TableSnapshot":
        """The committed tables, read now (no pending changes)."""
        env = self.catalog.env
        with env.read_txn() as txn:
            raw = self.read_raw(txn)
        return TableSnapshot(self, raw, {})

    def put_namespace(self, changes: "dict[tuple[str, str], bytes | None]") -> None:
        """Store (bytes) or remove (None) view and schema entries, keyed by ``('view' |
        'schema', name)``, in one commit of their own under the writer lock (views and schemas
        change outside transactions)."""
        env = self.catalog.env
        db = env.db(TABLES_DB)
        kinds = {"view": _VIEW, "schema": _SCHEMA}

        def commit(txn):
            for (kind, name), value in changes.items():
                key = table_key(name, kinds[kind])
                if value is None:
                    txn.delete(key, db=db)
                else:
                    txn.put(key, value, db=db)

        with env.writer_lock(timeout=self.catalog.lock_timeout):
            env.write(commit)

    # -- data -----------------------------------------------------------------------------------
    def base_table(self, entry: TableEntry) -> tuple[pa.Table, np.ndarray | None]:
        """The base generation's rows (memory-mapped), checked against the entry, and their
        row ids (None: 0 .. base_rows - 1)."""
        if not entry.base_rows:
            return entry.schema.empty_table(), None
        env = self.catalog.env
        where = f"graphs/{entry.table_id}/{ROWS_FILE}"
        path = env.graph_dir(entry.table_id) / ROWS_FILE
        record = entry.files[ROWS_FILE]

        def bad(problem: str) -> CorruptGraph:
            return CorruptGraph(f"table '{entry.name}': {where} {problem}",
                                file=where)

        try:
            stat = path.stat()
        except FileNotFoundError:
            raise bad("is missing") from None
        stamp = (str(path), stat.st_ino, stat.st_size, stat.st_mtime_ns)
        verified = stamp in _VERIFIED
        if not verified:
            if stat.st_size != record["bytes"]:
                raise bad(f"has {stat.st_size} bytes; the catalog entry records "
                          f"{record['bytes']}")
            if file_checksum(path, record["algorithm"]) != record["checksum"]:
                raise bad("fails its checksum (its bytes changed after it was written)")
        try:
            with pa.memory_map(str(path)) as source:
                table = pa.ipc.open_file(source).read_all()
            if not verified:
                table.validate(full=True)
        except (pa.ArrowException, OSError) as exc:
            raise bad(f"is unreadable ({str(exc).splitlines()[0][:120]})") from None
        rowids = None
        if entry.base_rowids:
            if ROWID not in table.column_names:
                raise bad("lacks its rows' ids")
            rowids = np.asarray(table.column(ROWID).to_numpy(), dtype=np.int64)
            table = table.drop_columns([ROWID])
            if rowids.size and (np.any(np.diff(rowids) <= 0) or rowids[0] < 0
                                or rowids[-1] >= entry.first_appended):
                raise bad("holds row ids out of order")
        if table.num_rows != entry.base_rows or not table.schema.equals(entry.schema):
            raise bad(f"holds {table.num_rows} rows of ({table.schema.to_string()[:120]}); "
                      f"the entry says {entry.base_rows}")
        with _VERIFIED_LOCK:
            _VERIFIED[stamp] = True
            while len(_VERIFIED) > 4096:
                _VERIFIED.popitem(last=False)
        return table, rowids

    def log(self, entry: TableEntry) -> TableLog:
        """The log of ``entry``'s generation, holding at least its version's records."""
        with self._lock:
            log = self._logs.get(entry.table_id)
            if log is None:
                base = entry.with_changes(version=0, delta={}, rows=entry.base_rows)
                log = TableLog(entry.table_id, entry.schema, entry.base_rows,
                               lambda: self.base_table(base), entry.key_columns,
                               entry.first_appended)
                self._logs[entry.table_id] = log
                busy = {e.table_id for e in self.pending.values() if e is not None}
                for table_id in list(self._logs)[:max(0, len(self._logs) - LOGS_KEPT)]:
                    if table_id not in busy:  # an open transaction's records live only here
                        del self._logs[table_id]
            self._logs.move_to_end(entry.table_id)
        if log.version < entry.version:
            self._sync(log, entry)
        return log

    def _sync(self, log: TableLog, entry: TableEntry) -> None:
        env = self.catalog.env
        with log.lock:
            first = log.version + 1
            if first > entry.version:
                return
            with env.read_txn() as txn:
                payloads = read_records(env, txn, entry.table_id, first, entry.version)
            for sequence, payload in enumerate(payloads, start=first):
                where = f"delta record {sequence} of table '{entry.name}'"
                log.append(decode_record(payload, where), where)

    def view(self, entry: TableEntry) -> TableView:
        """The live rows of version ``entry``."""
        view = self.log(entry).view(entry.version)
        if view.num_rows != entry.rows:
            raise CorruptGraph(f"table '{entry.name}' version {entry.version}: its records give "
                               f"{view.num_rows} rows, its catalog entry {entry.rows}",
                               file="meta.lmdb/data.mdb")
        return view

    def forget(self, table_id: str) -> None:
        with self._lock:
            self._logs.pop(table_id, None)

    def kept_log(self, table_id: str) -> "TableLog | None":
        """The log of generation ``table_id`` this process keeps, if any."""
        with self._lock:
            return self._logs.get(table_id)


class TableSnapshot:
    """Tables, views and schemas as one statement sees them."""

    def __init__(self, tables: Tables, raw: dict[bytes, bytes],
                 overlay: dict[str, TableEntry | None]):
        self._tables = tables
        self._raw = raw
        self._names = {k[len(_TABLE):].decode(): k for k in raw if k.startswith(_TABLE)}
        self._overlay = dict(overlay)
        for name, entry in self._overlay.items():
            if entry is None:
                self._names.pop(name, None)
            else:
                self._names[name] = None

    def names(self) -> list[str]:
        return sorted(self._names)

    #: Schemas an unqualified name no table of main has is looked up in (SET search_path).
    search_path: tuple[str, ...] = ()

    def searching(self, path: tuple[str, ...]) -> "TableSnapshot":
        """This snapshot, looking unqualified names up in ``path`` too (a copy: a snapshot
        may be shared by the process's connections, each with its own search path)."""
        found = copy.copy(self)
        found.search_path = tuple(path)
        return found

    def key_of(self, name: str) -> str | None:
        """The stored name of table ``name`` (case-insensitive, a unique match), or None. An
        unqualified name is main's table, else one of :attr:`search_path`'s schemas', in
        order: a stored name always finds its own table (CREATE TABLE refuses a table that
        main's would hide)."""
        key = self.exact_key(name)
        if key is None and "." not in name:
            for schema in self.search_path:
                if schema.lower() != "main" and (key := self.exact_key(f"{schema}.{name}")):
                    return key
        return key

    def exact_key(self, name: str) -> str | None:
        """The stored name of ``name`` as written (``main.`` optional), without the search
        path."""
        if name in self._names:
            return name
        folded = [n for n in self._names if n.lower() == name.lower()]
        if len(folded) == 1:
            return folded[0]
        if not folded and "." in name and split_name(name)[0].lower() == "main":
            return self.exact_key(split_name(name)[1])
        return None

    def raw(self, key: str) -> bytes | None:
        """The stored bytes of table ``key`` (a name as :meth:`key_of` gives it), or None."""
        return self._raw.get(table_key(key))

    def find(self, name: str) -> TableEntry | None:
        key = self.key_of(name)
        if key is None:
            return None
        overlay = self._overlay.get(key)
        if overlay is not None:
            return overlay
        return self._tables.parse(self._raw[table_key(key)], key)

    def get(self, name: str) -> TableEntry:
        entry = self.find(name)
        if entry is None:
            raise TableNotFound(name, self.names())
        return entry

    def entries(self) -> list[TableEntry]:
        return [self.find(name) for name in self.names()]

    # -- views and schemas ----------------------------------------------------------------------
    def view_names(self) -> list[str]:
        return sorted(k[len(_VIEW):].decode() for k in self._raw if k.startswith(_VIEW))

    def find_view(self, name: str) -> ViewEntry | None:
        found = [n for n in self.view_names() if n == name] or [
            n for n in self.view_names() if n.lower() == name.lower()]
        if len(found) != 1:
            return None
        return ViewEntry.from_json(self._raw[table_key(found[0], _VIEW)], found[0])

    def schemas(self) -> list[str]:
        return sorted(k[len(_SCHEMA):].decode() for k in self._raw if k.startswith(_SCHEMA))
