"""The catalog: which graphs exist, their metadata, and creating and dropping them."""

from __future__ import annotations

import contextlib
import mmap
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pyarrow as pa

from graphdb.storage import BufferManager, Environment
from graphdb.storage.compact import COMPACT_WHEN_FREE, Space
from graphdb.storage.disk import disk_full
from graphdb.storage.env import LOCK_TIMEOUT
from graphdb.storage.errors import CorruptData, DatabaseLocked, StorageError
from graphdb.storage.files import open_file

from . import ledger
from .cleanup import remove_abandoned, remove_killed_writes
from .entries import GraphEntry, valid_graph_name
from .errors import CatalogError, CorruptGraph, GraphChanged, GraphExists, GraphNotFound
from .leases import free_retired, read_sequence, retire_version, retired_versions
from .pages import PageStatus, ensure_pages, page_status
from .snapshot import Snapshot
from .tables.store import Tables, TableSnapshot
from .validation import (
    array_problem,
    arrow_file_problem,
    offsets_problem,
    table_problem,
    targets_problem,
)
from .versions import Versions

if TYPE_CHECKING:
    from .ingest import IngestOptions

__all__ = ["Catalog", "StoredCSR", "edge_rows", "valid_graph_name"]

#: Arrow files verified (size, checksum, table checks) in this process: (path, inode, size,
#: mtime) -> True. A version never changes, so a file is checked once per process, not per
#: query or connection.
_VERIFIED: OrderedDict = OrderedDict()
_VERIFIED_MAX = 4096
_VERIFIED_LOCK = threading.Lock()


#: Parsed entries a connection keeps (one per graph version it has looked up, at most).
_PARSED_MAX = 1024


class StoredCSR(NamedTuple):
    """One direction of a stored graph, validated: offsets int64 (|V|+1, 0..|E|, never
    decreasing), targets in [0, |V|), weights float64 when asked for."""

    offsets: np.ndarray
    targets: np.ndarray
    weights: np.ndarray | None


def edge_rows(entry: GraphEntry, src: pa.Array, dst: pa.Array, weights: np.ndarray | None,
              properties: pa.Table | None) -> pa.Table:
    """Rows of ``g.edges`` from their parts (each aligned with the rows): the weight under the
    column name it was loaded with (and as an integer where it was loaded from integers: float64
    holds those exactly), then the edge properties."""
    columns = {"src": src, "dst": dst}
    if weights is not None:
        values = np.ascontiguousarray(weights, dtype=np.float64)  # (pa.array imports pandas)
        array = pa.Array.from_buffers(pa.float64(), len(values), [None, pa.py_buffer(values)])
        if entry.stats.get("weight_type", "").startswith(("int", "uint")):
            array = array.cast(pa.int64())
        columns[entry.stats.get("weight_column") or "weight"] = array
    table = pa.table(columns)
    if properties is not None:
        for field, column in zip(properties.schema, properties.columns):
            table = table.append_column(field, column)
    return table


class Catalog:
    """Graph entries in the ``catalog`` sub-database; data through ``storage``.

    **One snapshot per statement.** A statement reads the catalog once and sees the graph
    versions of that moment until it ends, whatever other processes drop, replace or write::

        with catalog.snapshot() as snap:
            entry = snap.get("g")                       # GraphNotFound, with suggestions
            csr = snap.read_csr(entry, "out", weights=entry.weighted)
            ids = snap.vertex_ids(entry)                # also vertex_table, edge_table, ...

    ``snapshot()`` nests: inside an open snapshot of this thread it returns that one, and
    :meth:`get`, :meth:`entries` and :meth:`names` look through it (outside one they read the
    catalog afresh). DROP GRAPH and ``--replace`` flip the catalog at once; the old version's
    blocks and files are freed by the next writer, or a connection closing, once no statement
    of any process can read them (:mod:`graphdb.catalog.snapshot` says how).

    **Nothing read is trusted.** Entries are parsed into validated records (catalog.entries);
    :meth:`read_csr` checks array records against the entry and the CSR invariants before
    returning; Arrow files are checked against their recorded size and checksum when first
    opened. Every failure is :class:`CorruptGraph` naming the graph, the file and the problem.
    """

    #: Schemas an unqualified table name is looked up in before main (SET search_path).
    search_path: tuple[str, ...] = ()

    def __init__(self, env: Environment, buffers: BufferManager | None = None, *,
                 cleanup: bool = True):
        self.env = env
        #: every read of stored topology goes through this pool (never LMDB directly)
        self.buffers = buffers if buffers is not None else BufferManager(env)
        self._local = threading.local()
        self._layouts_checked: set[str] = set()
        #: entries parsed and checked, by their stored bytes (a version's entry never changes)
        self._parsed: OrderedDict[tuple[str, bytes], GraphEntry] = OrderedDict()
        #: seconds a load, drop or VACUUM waits for another writer (as SQL writes do)
        self.lock_timeout = LOCK_TIMEOUT
        #: entry bytes whose ledger checksum matched (catalog.ledger.audit's memo)
        self._ledger_checked: dict = {}
        #: the last committed state read: (generation, raw entries, audit, tables' raw)
        self._read: tuple | None = None
        #: the delta logs of the graph versions this connection reads (catalog.versions)
        self.versions = Versions(self)
        #: entries of graphs this connection's open write transaction changed, which its own
        #: statements see instead of the committed ones (catalog.writer)
        self.pending: dict[str, GraphEntry] = {}
        #: the tables, views and schemas (catalog.tables)
        self.tables = Tables(self)
        if not env.read_only and not env.has_feature(ledger.FEATURE):
            self._build_ledger()
        if not env.read_only and cleanup:  # spill files of killed ingests (catalog.cleanup)
            remove_killed_writes(env)
            from .compaction import killed_compactions, tidy_compactions

            # and killed compactions; the writer lock only when there are some, so that an
            # open does not make another process's write fail ("another process is writing")
            with contextlib.suppress(DatabaseLocked, StorageError):
                if killed_compactions(env):
                    with env.writer_lock():
                        tidy_compactions(self)

    def _build_ledger(self) -> None:
        """A database made before the catalog's ledger gets one (catalog.ledger), from its
        entries as they are, at its first read-write open that finds no other writer."""
        with contextlib.suppress(DatabaseLocked), self.env.writer_lock():
            ledger.build(self.env)
            self.env.add_feature(ledger.FEATURE)

    # -- snapshots ------------------------------------------------------------------------------
    @contextlib.contextmanager
    def snapshot(self, *, committed: bool = False) -> Iterator[Snapshot]:
        """The catalog for one statement (see the class docstring); nests within a thread.
        Graphs this connection's open write transaction changed show its changes, unless
        ``committed`` (a compaction in the background reads what is committed)."""
        active = getattr(self._local, "snapshot", None)
        if active is not None:
            yield active
            return
        leases = self.env.leases
        with self.env.read_txn() as txn:
            sequence = read_sequence(txn, self.env.db("meta"))
        leases.hold(sequence)  # before the entries are read: see catalog.leases
        try:
            snap = self.committed(sequence=sequence, pending=not committed)
            self._local.snapshot = snap
            try:
                yield snap
            finally:
                self._local.snapshot = None
        finally:
            leases.release(sequence)

    def committed(self, *, pending: bool = False, sequence: int = -1) -> Snapshot:
        """The committed entries, read now in one LMDB read transaction and compared with the
        catalog's ledger (catalog.ledger) in it: the one reader of the catalog's entries
        (statement snapshots, lookups outside one, the writer's and a compaction's reads of the
        newest version). No lease is taken: the caller holds one for ``sequence`` when it reads
        data through the snapshot. ``pending``: this connection's open write transaction's
        entries are seen instead of the committed ones."""
        with self.env.read_txn() as txn:
            generation = self.env.generation(txn)
            read = self._read
            if read is None or read[0] != generation:  # (else: the same committed state)
                read = self._read = (generation, *self._read_entries(txn))
        _generation, raw, found, tables = read
        return Snapshot(self, raw, sequence, dict(self.pending) if pending else None,
                        generation,
                        tables=TableSnapshot(self.tables, tables,
                                             self.tables.pending if pending else {}),
                        audit=found)

    def tables_committed(self, generation: tuple[int, int],
                         written: dict[bytes, bytes | None]) -> None:
        """This connection's commit made state ``generation`` (a write transaction's) by
        writing only the table entries ``written`` (stored key -> bytes, None: deleted): the
        entries kept from the state before it, if those are kept, become this state's
        without reading the catalog again (a single-row INSERT would read every entry of
        every graph and table once per statement)."""
        read = self._read
        epoch, txnid = generation
        if read is None or read[0] != (epoch, txnid - 1):
            return  # (another commit came between: the next statement reads them)
        _before, raw, found, tables = read
        tables = dict(tables)  # (snapshots made from the old dict keep it as it was)
        for key, value in written.items():
            if value is None:
                tables.pop(key, None)
            else:
                tables[key] = bytes(value)
        self._read = (generation, raw, found, tables)

    def _read_entries(self, txn) -> tuple[dict[str, bytes], ledger.Audit, dict]:
        """(raw entries, the ledger's audit of them, the tables' raw entries) of ``txn``'s
        committed state: read once per state (a generation) and kept, as what statement after
        statement reads again (the snapshots made from them share them and never change
        them)."""
        raw = {}
        found = ledger.Audit()
        db = self.env.db("catalog")
        for key, value in (txn.cursor(db=db) if db is not None else ()):
            try:
                name = bytes(key).decode("utf-8")
            except UnicodeDecodeError:  # a damaged key: the ledger names it
                name = bytes(key).decode("utf-8", "backslashreplace")
            raw[name] = bytes(value)
        if self.env.has_feature(ledger.FEATURE):
            found = ledger.audit(txn, self.env, raw, self._ledger_checked)
        return raw, found, self.tables.read_raw(txn)  # the tables of the same moment

    def _lookup(self) -> Snapshot:
        """The thread's snapshot, or a fresh read of the catalog (no lease: it reads no data)."""
        active = getattr(self._local, "snapshot", None)
        if active is not None:
            return active
        return self.committed(pending=True)

    # -- reading --------------------------------------------------------------------------------
    def entries(self) -> list[GraphEntry]:
        return self._lookup().entries()

    def names(self) -> list[str]:
        return self._lookup().names()

    def get(self, name: str, *, exact: bool = False) -> GraphEntry:
        return self._lookup().get(name, exact=exact)

    def tables_now(self) -> TableSnapshot:
        """The tables, views and schemas as the thread's statement snapshot has them (or as
        committed now, with this connection's open transaction on top)."""
        tables = self._lookup().tables
        return tables.searching(self.search_path) if self.search_path else tables

    def table(self, name: str):
        """The entry of stored table ``name`` (TableNotFound, with suggestions, if none)."""
        return self.tables_now().get(name)

    def read_csr(self, entry: GraphEntry, direction: str = "out",
                 weights: bool = False) -> StoredCSR:
        """One direction's CSR of ``entry``, validated before anything computes with it.

        ``direction`` is ``out`` or ``in`` (an undirected graph's in-CSR is its out-CSR);
        ``weights`` reads the weights too (the graph must be weighted)."""
        if direction not in ("out", "in"):
            raise CatalogError(f"direction must be 'out' or 'in', not {direction!r}")
        if weights and not entry.weighted:
            raise CatalogError(f"graph '{entry.name}' has no weights")
        d = "out" if direction == "in" and not entry.directed else direction
        names = [f"{d}_offsets", f"{d}_targets"] + ([f"{d}_weights"] if weights else [])
        arrays = [self.read_array(entry, name) for name in names]
        return StoredCSR(arrays[0], arrays[1], arrays[2] if weights else None)

    def read_array(self, entry: GraphEntry, array: str) -> np.ndarray:
        """A stored array of ``entry``. A CSR array (``<dir>_offsets``, ``_targets``,
        ``_weights``) is checked before it is returned: its record against the entry (dtype,
        length), then its invariant (offsets never decreasing from 0 to |E|, targets in
        [0, |V|)); each invariant concerns one array, so an operator that reads only some of a
        CSR's arrays gets them checked too."""
        if entry.changed and array.split("_", 1)[-1] in ("offsets", "targets", "weights"):
            with self.reading(entry, "meta.lmdb/data.mdb"):
                return self.versions.read_array(entry, array)  # the base merged with its delta
        with self.reading(entry, "meta.lmdb/data.mdb"):
            kind = array.split("_", 1)[-1]
            info = self.buffers.array_info(entry.graph_id, array)
            if kind in ("offsets", "targets", "weights"):
                self._fail(array_problem(entry, array, info.dtype, info.length), entry)
            values = self.buffers.read_array(entry.graph_id, array)
            if kind == "offsets":
                self._fail(offsets_problem(values, entry.num_edges, array), entry)
            elif kind == "targets":
                self._fail(targets_problem(values, entry.num_vertices, array), entry)
            return values

    @staticmethod
    def _fail(problem: str | None, entry: GraphEntry) -> None:
        if problem is not None:
            raise CorruptGraph(problem, graph=entry.name, file="meta.lmdb/data.mdb")

    def parse_entry(self, raw: bytes, key: str) -> GraphEntry:
        """The validated entry stored as ``raw`` under ``key`` (parsed once per connection:
        statements look the same bytes up again and again)."""
        entry = self._parsed.get((key, raw))
        if entry is None:
            entry = GraphEntry.from_json(raw, key)
            self.check_stored_arrays(entry)
            self._parsed[(key, raw)] = entry
            while len(self._parsed) > _PARSED_MAX:
                self._parsed.popitem(last=False)
        return entry

    def check_stored_arrays(self, entry: GraphEntry) -> None:
        """The stored arrays are those the entry implies: ``in_*`` exactly when it is directed,
        ``*_weights`` exactly when weighted (a flipped flag in an entry shows here). Checked
        when a snapshot first parses the entry, once per version and connection."""
        if entry.graph_id in self._layouts_checked:
            return
        with self.reading(entry, "meta.lmdb/data.mdb"):
            self._check_arrays_present(entry)
        self._layouts_checked.add(entry.graph_id)

    def _check_arrays_present(self, entry: GraphEntry) -> None:
        for d in ("out", "in"):
            for kind in ("offsets", "targets", "weights"):
                name = f"{d}_{kind}"
                wanted = (d == "out" or entry.directed) and (kind != "weights" or entry.weighted)
                try:
                    self.buffers.array_info(entry.graph_id, name)
                    present = True
                except CorruptData as exc:
                    if not exc.missing:
                        raise
                    present = False
                if present != wanted:
                    flag = "directed" if d == "in" else "weighted"
                    state = "stored" if present else "missing"
                    raise CorruptGraph(
                        f"array {name!r} is {state}, but the catalog entry says "
                        f"{flag} = {str(getattr(entry, flag)).lower()}", graph=entry.name,
                        file="meta.lmdb/data.mdb")

    def vertex_ids(self, entry: GraphEntry) -> pa.Array:
        """The user's vertex ids, indexed by internal id (memory-mapped Arrow file)."""
        if entry.changed:
            with self.reading(entry):
                return self.versions.vertex_ids(entry)
        return self.vertex_table(entry).column("id").combine_chunks()

    def vertex_table(self, entry: GraphEntry) -> pa.Table:
        """``g.vertices``: the user's id (column ``id``) and vertex properties, internal order."""
        if entry.changed:
            with self.reading(entry):
                return self.versions.vertex_table(entry)
        return self._arrow(entry, "vertices.arrow")

    def vertex_schema(self, entry: GraphEntry) -> pa.Schema:
        """The columns of ``g.vertices`` (no topology is read; the file is checked once)."""
        return self._arrow(entry, "vertices.arrow").schema

    def edge_table(self, entry: GraphEntry) -> pa.Table:
        """Every stored edge in out-CSR order: ``src``, ``dst`` (user ids), the weight under
        its own name if weighted, the edge properties. An undirected edge appears in both
        directions (with the same properties); ``g.edges`` lists it once (the executor's
        :mod:`~graphdb.executor.graph_tables`)."""
        ids = self.vertex_ids(entry)
        csr = self.read_csr(entry, "out", weights=entry.weighted)
        sources = np.repeat(np.arange(entry.num_vertices, dtype=np.int64), np.diff(csr.offsets))
        return edge_rows(entry, ids.take(pa.array(sources)),
                         ids.take(pa.array(csr.targets.astype(np.int64))), csr.weights,
                         self.edge_properties(entry))

    def edge_properties(self, entry: GraphEntry) -> pa.Table | None:
        """The edge property columns (memory-mapped, checked), one row per stored edge in
        out-CSR order (an undirected edge's two stored copies have the same values); None
        without any. Of a changed version: merged with its delta."""
        if entry.changed:
            with self.reading(entry):
                return self.versions.edge_properties(entry)
        return self._arrow(entry, "edges.arrow")

    def edge_schema_of_base(self, entry: GraphEntry) -> pa.Schema | None:
        """The schema of the stored edge properties (None without any)."""
        props = self._arrow(entry.base, "edges.arrow")
        return None if props is None else props.schema

    def edge_schema(self, entry: GraphEntry) -> pa.Schema:
        """The columns of ``g.edges`` without building the table (binding needs only names):
        ``src``, ``dst``, the weight under its own name (float64, or int64 where it was loaded
        from integers) and the edge properties."""
        id_type = pa.string() if entry.id_type == "string" else pa.int64()
        fields = [pa.field("src", id_type), pa.field("dst", id_type)]
        if entry.weighted:
            integer = entry.stats.get("weight_type", "").startswith(("int", "uint"))
            fields.append(pa.field(entry.stats.get("weight_column") or "weight",
                                   pa.int64() if integer else pa.float64()))
        props = self._arrow(entry, "edges.arrow")
        if props is not None:  # (a property graph's __row, its edges' table rows, is not shown)
            fields.extend(f for f in props.schema if f.name != "__row")
        return pa.schema(fields)

    def _arrow(self, entry: GraphEntry, name: str) -> pa.Table | None:
        """An Arrow file of ``entry`` (None when it has none), checked against the entry."""
        where = f"graphs/{entry.graph_id}/{name}"
        entry = entry.base  # the stored generation's files (a version's changes are merged)
        with self.reading(entry, where):
            path = self.env.graph_dir(entry.graph_id) / name
            record = entry.files.get(name)
            if record is None:
                if os.path.lexists(path):
                    raise CorruptGraph("is not recorded in the catalog entry", graph=entry.name,
                                       file=where)
                return None
            # opened without following a link on the way (storage.files), then read through
            # that descriptor only: the file checked is the file mapped
            fd = open_file(self.env.path, where)
            try:
                stat = os.fstat(fd)
                if not S_ISREG(stat.st_mode):
                    raise CorruptGraph("is not a regular file", graph=entry.name, file=where)
                key = (str(path), stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
                verified = key in _VERIFIED
                if not verified:
                    problem = arrow_file_problem(fd, record)
                    if problem is not None:
                        raise CorruptGraph(problem, graph=entry.name, file=where)
                mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
            finally:
                os.close(fd)
            table = pa.ipc.open_file(pa.BufferReader(pa.py_buffer(mapped))).read_all()
            if not verified:
                problem = table_problem(entry, name, table)
                if problem is not None:
                    raise CorruptGraph(problem, graph=entry.name, file=where)
                with _VERIFIED_LOCK:
                    _VERIFIED[key] = True
                    while len(_VERIFIED) > _VERIFIED_MAX:
                        _VERIFIED.popitem(last=False)
            return table

    @contextlib.contextmanager
    def reading(self, entry: GraphEntry, file: str = "meta.lmdb/data.mdb") -> Iterator[None]:
        """Errors of reading ``entry``'s data as the catalog's: CorruptGraph naming the graph
        and file, or GraphChanged when the version went away under a statement without a lease
        (a reader that cannot take leases, see storage.locks)."""
        try:
            yield
        except CorruptGraph:
            raise
        except CorruptData as exc:
            if exc.missing and self._gone(entry):
                raise GraphChanged(entry.name) from None
            raise CorruptGraph(str(exc), graph=entry.name, file=exc.file or file) from None
        except FileNotFoundError:
            if self._gone(entry):
                raise GraphChanged(entry.name) from None
            raise CorruptGraph("is missing", graph=entry.name, file=file) from None
        except PermissionError as exc:
            raise StorageError(f"cannot read {file} of graph '{entry.name}': "
                               f"{exc.strerror}") from None
        except (OSError, pa.ArrowException) as exc:
            text = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            raise CorruptGraph(f"is unreadable ({text})", graph=entry.name, file=file) from None

    def _gone(self, entry: GraphEntry) -> bool:
        """Whether ``entry``'s version is no longer the catalog's version of its graph."""
        db = self.env.db("catalog")
        with self.env.read_txn() as txn:
            raw = txn.get(entry.name.encode(), db=db) if db is not None else None
            raw = None if raw is None else bytes(raw)
        return raw is None or _salvage_graph_id(raw) != entry.graph_id


    def page_status(self, entry: GraphEntry) -> PageStatus:
        """Whether ``entry``'s slotted pages exist, or what building them first costs."""
        return page_status(self.env, entry)

    def ensure_pages(self, entry: GraphEntry) -> PageStatus:
        """Build ``entry``'s slotted pages from its CSR blocks unless they exist (the one call
        a page-streamed operator makes before it reads pages)."""
        return ensure_pages(self.env, entry)

    # -- writing --------------------------------------------------------------------------------
    def ingest(self, name: str, edges: str, options: "IngestOptions | None" = None, *,
               replace: bool = False, progress=None, prepare=None) -> GraphEntry:
        """Load an edge file (or a glob of files) as graph ``name``; visible only once committed.

        ``progress``: a :class:`graphdb.catalog.progress.Progress` to report to (default: silent).
        ``prepare()``: run under the writer lock before the load (a property graph over tables
        checks they did not change since it read them)."""
        # here, not at the top: a process that only queries never imports the ingest pipeline
        from .ingest import IngestOptions, run_ingest

        options = options if options is not None else IngestOptions()
        if not valid_graph_name(name):  # before any work: a name is checked, not a file read
            raise CatalogError(
                f"invalid graph name '{str(name)[:80]}': use letters, digits and underscores, "
                "starting with a letter or underscore (at most 255)"
            )
        with self.env.writer_lock(timeout=self.lock_timeout):
            self.tidy()
            if prepare is not None:
                prepare()
            try:
                old = self._existing(name)
            except CorruptGraph:
                if not replace:
                    raise
                self._drop_locked(name)  # a damaged entry is replaced: drop it first
                old = None
            if old is not None and not replace:
                raise GraphExists(name)
            try:
                entry = run_ingest(self.env, name, str(edges), options, replace_entry=old,
                                   progress=progress)
            except OSError as exc:
                self.remove_orphans()
                places = {"database": self.env.path}
                if options.temp_dir:  # sorted runs spill there (else inside the database)
                    places = {"temp folder": Path(options.temp_dir), **places}
                full = disk_full(exc, places)
                if full is not None:
                    raise full from None
                raise
            except BaseException:
                self.remove_orphans()
                raise
            self._space_back()
            if options.pages:
                self.ensure_pages(entry)
            return entry

    def drop(self, name: str) -> str:
        """Drop graph ``name``; returns its name as stored. The version's data is freed now if
        no statement reads it, else by a later writer (see :meth:`snapshot`). A damaged entry
        can be dropped too: its key goes, and only data under a generated id is ever freed."""
        with self.env.writer_lock(timeout=self.lock_timeout):
            dropped = self._drop_locked(name)
            self._space_back()
            return dropped

    def _drop_locked(self, name: str) -> str:
        snap = self._lookup()
        key = snap.key_of(name)
        graph_id = snap.graph_id_of(key)
        # keys that hold this version's entry under a damaged name go with it
        strays = [k for k in snap.stray_keys(graph_id) if k != key] if graph_id else []

        def commit(txn):
            for stale in [key] + strays:
                ledger.delete_entry(self.env, txn, stale)
            if graph_id is not None:
                retire_version(self.env, txn, _Version(key, graph_id))

        self.env.write(commit)
        return key

    def close(self) -> None:
        """Free what this connection can of retired versions (never waits for a writer)."""
        if self.env.read_only:
            return
        try:
            if not retired_versions(self.env):
                return
            with self.env.writer_lock():
                self._space_back()
        except (DatabaseLocked, StorageError, CorruptGraph):
            pass  # best effort: the next writer frees them

    def free_unused(self) -> None:
        """Free the retired versions no statement reads and the directories of writes that
        never committed. The caller holds the writer lock (a write transaction's start)."""
        self.free_retired()
        self.remove_orphans()

    def free_retired(self) -> list[str]:
        """Free the retired versions no statement reads any more (:mod:`.leases`); the caller
        holds the writer lock. Returns their graph ids."""
        return free_retired(self.env, self.env.leases.leased_below, self._forget)

    def _forget(self, graph_id: str) -> None:
        self.tables.forget(graph_id)
        self.buffers.forget(graph_id)
        self.versions.forget(graph_id)
        self._layouts_checked.discard(graph_id)

    def tidy(self) -> None:
        """Before a write (the writer lock held): free retired versions, finish or remove
        killed compactions, remove what killed writes left."""
        from .compaction import tidy_compactions

        self.free_retired()
        tidy_compactions(self)
        self.remove_orphans()

    def _existing(self, name: str) -> GraphEntry | None:
        try:
            return self.get(name, exact=True)
        except GraphNotFound:
            return None

    def _space_back(self) -> None:
        """Free the retired versions no statement reads any more, then give the file's space
        back when more than half of it is free (storage.compact): after a drop, a replace, or
        the last reader of a retired version closing. The caller holds the writer lock.

        Best effort: the statement that called it has committed, so a full disk (or anything
        else in the way) leaves the freed versions and pages for the next writer to take."""
        try:
            self.free_retired()
            self.env.compact(COMPACT_WHEN_FREE)
        except (StorageError, CorruptGraph):
            pass

    def vacuum(self) -> Space:
        """Give the free space of the database file back (VACUUM): free what no statement
        reads any more, then copy-compact the file, whatever share is free. CatalogError when
        it cannot (another process, or another connection of this one, has it open)."""
        with self.env.writer_lock(timeout=self.lock_timeout):
            self.free_retired()
            after = self.env.compact()
            if after is None:
                if self.env.space().free_bytes == 0:
                    return self.env.space()
                raise CatalogError(
                    f"cannot compact '{self.env.path}' while another process (or another "
                    "connection of this one) has it open; close them and run VACUUM again")
            return after

    def remove_orphans(self) -> list[str]:
        """Remove the directories of killed or failed writes: only those a committed pending
        record names (:mod:`.cleanup`), never what the catalog merely does not list."""
        return remove_abandoned(self.env)

    @property
    def path(self) -> Path:
        return self.env.path


class _Version(NamedTuple):
    """What retiring a version needs of its entry (a damaged entry has no GraphEntry)."""

    name: str
    graph_id: str


_salvage_graph_id = ledger.salvage_graph_id
