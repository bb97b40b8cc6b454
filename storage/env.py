"""The LMDB environment of one database directory.

A database is a directory::

    DB/
      graphdb.db        marker: this is a graphdb database, and its format version
      meta.lmdb/        LMDB environment: sub-databases 'catalog' (graph entries),
                        'blocks' (CSR arrays cut into fixed-size blocks), 'pages' (slotted
                        topology pages), 'meta' (the page layout, the catalog's sequence
                        number, per-graph topology info, retired graph versions) and
                        'deltas' (writes committed after a load: storage.delta),
                        'tables' (table, view and schema entries: catalog.tables)
      graphs/<id>/      Arrow IPC files of one graph version (vertex ids, properties); ``<id>``
                        is a generated 32-digit hex id, never a name taken from elsewhere
      leases.lock       byte-range locks: reader leases and the map lock (storage.locks)
      writer.lock       held by a long write (an ingest, a drop) across processes

LMDB gives one writer and many readers with ACID commits: a write transaction either commits
whole or leaves no trace, also when the process is killed in the middle. Files under ``graphs/``
are written *before* the transaction that references them commits; a directory that no committed
catalog entry references is an unfinished ingest and is removed by the next writer.

The page layout (page size, record-id widths) is chosen when the database is created and kept
in 'meta'; CSR blocks use the page size too, so one frame size in the buffer manager fits both.

The map, several processes, and a full disk
-------------------------------------------
The environment is opened with ``writemap``: a write transaction's dirty pages go straight into
the shared file mapping instead of malloc'ed copies held until commit (an ingest's commit of a
16 M edge graph peaked at 486 MB of anonymous memory without it and 155 MB with it, and ran
faster). With ``writemap`` LMDB sets the file's length to the map size on every open and every
``set_mapsize`` (an ``ftruncate``), so the map size is shared state between processes: if any
process opened or remapped with a smaller map than another's, it would cut the file under that
process, whose next touch of the cut pages is a SIGBUS. Hence three rules, kept here:

- every read-write open and every map change takes the *map lock* (an exclusive byte-range lock,
  storage.locks) and uses at least the data file's current length: no process ever shrinks it;
- a process adopts another's growth (``MapResizedError``) the same way, never with LMDB's
  ``set_mapsize(0)`` (which would take the size of the last *commit*, possibly smaller than a
  writer's grown map);
- LMDB requires that no transaction of the process is active while its map changes; connections
  of one process share the environment, so transactions enter a gate that a map change closes.

Writing into a sparse mapping on a full disk is a SIGBUS too. So before a write transaction the
file's blocks beyond the committed data are allocated (``posix_fallocate``) for what it will
write: 4 MiB for a small transaction, the estimate for a large one (:meth:`allocate`, which
write_topology calls with its estimate). Without the space the write is refused before it
starts, with :class:`DiskFull` naming the bytes needed and free, and the database stays as it
was. Read-only opens never change the file (LMDB ignores ``writemap`` without write access).

Files and directories are created with mode 0600/0700 (or the ``mode`` given when the database is
created; later opens follow the database directory's mode). A user who may only read the files
can open the database read-only: where LMDB's lock file is not writable for them, LMDB runs
without its reader table (``lock=False``).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import itertools
import json
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import lmdb

from .compact import (
    COPY_DIR,
    OPEN_LOCK,
    OpenLock,
    Space,
    copy_compacted,
    remove_copy,
    space_of,
    swap_in,
)
from .disk import disk_full, free_bytes
from .durability import SYNC_FILE, GroupSync, check_synchronous
from .errors import (
    CorruptData,
    DatabaseLocked,
    DiskFull,
    MapTooSmall,
    NeedsCarefulWrites,
    StorageError,
    size_text,
)
from .files import LinkInDatabase, open_file, refuse_links
from .lmdb_verify import verify_file
from .locks import LEASE_FILE, LockFile
from .mapped import advise_file, release_file, start_writeback, trim_heap
from .pages import PageLayout

__all__ = ["DEFAULT_MODE", "SUBDATABASES", "Environment", "valid_graph_id"]

T = TypeVar("T")

SUBDATABASES = ("catalog", "blocks", "pages", "meta", "deltas", "tables")
_LAYOUT_KEY = b"storage/layout"
_FORMAT_KEY = b"storage/format"

#: Initial LMDB map size; it doubles whenever a write transaction fills it. The environment
#: variable lets tests start small so that growth (and other processes adopting it) is exercised.
INITIAL_MAP_SIZE = 1 << 30
#: Disk allocated ahead of a write transaction that gives no estimate of its size (a catalog
#: entry, a retirement); larger writes pass their estimate.
WRITE_HEADROOM = 4 << 20
#: Disk allocated beyond what a write asks for (a few hundred small commits' worth).
ALLOCATE_AHEAD = 256 << 10
#: Marker file that identifies a directory as a graphdb database.
MARKER = "graphdb.db"
#: 2: block metadata, catalog entries and Arrow files carry checksums.
FORMAT_VERSION = 2
#: Mode of the files a new database creates (directories get 0700).
DEFAULT_MODE = 0o600
_GRAPH_ID = re.compile(r"[0-9a-f]{32}")
#: What a database directory may hold before its marker is written (an interrupted creation).
_OWN_NAMES = {"meta.lmdb", "graphs", "writer.lock", LEASE_FILE, OPEN_LOCK, SYNC_FILE,
              MARKER + ".tmp"}
#: The files LMDB opens and writes itself (checked for links before every open of LMDB).
LMDB_FILES = ("meta.lmdb/data.mdb", "meta.lmdb/lock.mdb")
#: Every fixed name of a database directory, checked for links when it is opened.
OWN_FILES = (MARKER, MARKER + ".tmp", "meta.lmdb", *LMDB_FILES, "graphs", "writer.lock",
             LEASE_FILE, OPEN_LOCK, SYNC_FILE, COPY_DIR, COPY_DIR + "/data.mdb")
#: The catalog keeps a ledger of its entries (catalog.ledger).
LEDGER_FEATURE = "catalog ledger"
#: Features a new database has (named in its marker file; see Environment.has_feature).
FEATURES = (LEDGER_FEATURE,)


def valid_graph_id(graph_id: object) -> bool:
    """Graph ids are generated (``uuid4().hex``); nothing else may name a graph directory."""
    return isinstance(graph_id, str) and _GRAPH_ID.fullmatch(graph_id) is not None


def directory_mode(file_mode: int) -> int:
    """The mode of directories beside files of ``file_mode``: x wherever r is set."""
    return file_mode | ((file_mode & 0o444) >> 2)


class Environment:
    """An open database directory (LMDB environment + the Arrow file area).

    ``mode``: permission bits of the files created (default 0600, directories 0700); a new
    database's directory gets the matching directory mode, and later opens derive the file
    mode from it, so every file of a database follows what its creator chose.
    """

    def __init__(self, path: str | os.PathLike, *, create: bool = True, read_only: bool = False,
                 page_size: int | None = None, layout: PageLayout | None = None,
                 mode: int | None = None):
        self.path = Path(path)
        self.read_only = read_only
        self._synchronous = "full"
        self._last_commit = 0
        creating = self._check_directory(create, read_only, mode)
        self._shared = None
        self._shared = _acquire(self.path, read_only, self.mode, existing=not creating)
        try:
            self._open_subdatabases(page_size, layout, creating)
            if creating:
                self._write_marker()
        except BaseException:
            self.close()
            raise

    # -- opening --------------------------------------------------------------------------------
    def _check_directory(self, create: bool, read_only: bool, mode: int | None) -> bool:
        """Check what is at ``path``; True when a new database is to be created there."""
        path = self.path
        if mode is not None and not 0 <= mode <= 0o777:
            raise StorageError(f"mode must be permission bits such as 0o640, got {mode!r}")
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            raise StorageError(f"'{path}' exists and is not a database directory")
        if path.exists():  # nothing inside is opened through a link (storage.files)
            refuse_links(path, OWN_FILES, LMDB_FILES)
        if not path.exists():
            if not create or read_only:
                raise StorageError(f"database '{path}' does not exist")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.mkdir()
        marker = path / MARKER
        if marker.exists():
            self.mode = mode if mode is not None else path.stat().st_mode & 0o666
            self.features = _check_format(path)
            return False
        graphs = path / "graphs"
        foreign = {p.name for p in path.iterdir()} - _OWN_NAMES
        if foreign or (graphs.is_dir() and any(graphs.iterdir())):
            raise StorageError(
                f"'{path}' is not a graphdb database (a non-empty directory without {MARKER}); "
                "choose a new or empty directory")
        if read_only or not create:
            raise StorageError(f"database '{path}' does not exist")
        self.mode = DEFAULT_MODE if mode is None else mode
        self.features = frozenset(FEATURES)
        _chmod(path, directory_mode(self.mode))
        return True

    def _open_subdatabases(self, page_size, layout, creating: bool) -> None:
        self._dbs = {}
        if not self.read_only:
            self._make_dir(self.path / "graphs", exist_ok=True)
            # py-lmdb opens named sub-databases of a writable environment in a write
            # transaction, so a read-write open waits while another process commits (an
            # ingest's final transaction). A read-only open never waits.
            try:
                self.allocate(WRITE_HEADROOM)
            except NeedsCarefulWrites:  # a full disk: still open, to read and to drop
                self._become_careful()
            txn = self._begin(write=True)
            try:
                with txn:
                    for name in SUBDATABASES:
                        self._dbs[name] = self._env.open_db(name.encode(), txn=txn)
                    self._check_stored_format(txn, creating)
                    self.layout = self._layout(txn, page_size, layout)
            except lmdb.Error as exc:
                raise _storage_error(exc, f"cannot open database '{self.path}'") from exc
            finally:
                self._gate.exit()
            return
        self._gate.enter()
        try:
            for name in SUBDATABASES:
                try:  # its own transaction: handles opened in a read transaction end with it
                    self._dbs[name] = self._env.open_db(name.encode(), create=False)
                except lmdb.NotFoundError:
                    self._dbs[name] = None
        finally:
            self._gate.exit()
        with self.read_txn() as txn:
            self._check_stored_format(txn, creating)
            self.layout = self._layout(txn, page_size, layout)

    def _check_stored_format(self, txn, creating: bool) -> None:
        raw = txn.get(_FORMAT_KEY, db=self._dbs["meta"]) if self._dbs["meta"] else None
        if raw is None and creating and not self.read_only:
            txn.put(_FORMAT_KEY, str(FORMAT_VERSION).encode(), db=self._dbs["meta"])
        elif raw is None or bytes(raw) != str(FORMAT_VERSION).encode():
            raise CorruptData(f"database '{self.path}': meta.lmdb/data.mdb does not record "
                              f"format {FORMAT_VERSION} (found {raw and bytes(raw)!r})")

    def _write_marker(self) -> None:
        """Write ``graphdb.db`` (last: a database without it was never finished), naming the
        format and the features the database has."""
        text = f"graphdb database, format {FORMAT_VERSION}\n"
        if self.features:
            text += f"features: {', '.join(sorted(self.features))}\n"
        tmp = MARKER + ".tmp"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path / tmp)  # a killed write's (unlink never follows a link)
        fd = open_file(self.path, tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, self.mode)
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(self.path / tmp, self.path / MARKER)

    def has_feature(self, name: str) -> bool:
        """Whether the database has ``name`` (recorded in its marker file, so that no damage
        to the LMDB file can make it look older than it is)."""
        return name in self.features

    def add_feature(self, name: str) -> None:
        """Record ``name`` among the database's features (a database made before it, once it
        has what the feature promises); the caller holds the writer lock."""
        if self.read_only or name in self.features:
            return
        # another process may have added one meanwhile: keep what the marker says now
        self.features = frozenset(_check_format(self.path) | self.features | {name})
        self._write_marker()

    def _layout(self, txn, page_size: int | None, wanted: PageLayout | None) -> PageLayout:
        """The database's page layout; a new database stores the one asked for (or the default).

        ``page_size`` alone keeps the default record-id widths; ``wanted`` sets all of it."""
        if wanted is not None and page_size is not None and wanted.page_size != page_size:
            raise StorageError("page_size and layout.page_size disagree")
        raw = txn.get(_LAYOUT_KEY, db=self._dbs["meta"]) if self._dbs["meta"] else None
        if raw is not None:
            try:
                layout = PageLayout(**json.loads(bytes(raw)))
            except (ValueError, TypeError, StorageError) as exc:
                raise CorruptData(f"database '{self.path}': meta.lmdb/data.mdb: the page layout "
                                  f"record is unreadable ({exc})") from None
            if (page_size is not None and page_size != layout.page_size) or (
                    wanted is not None and wanted != layout):
                raise StorageError(
                    f"database '{self.path}' was created with page_size {layout.page_size} "
                    f"(record ids {layout.pid_bytes}+{layout.slot_bytes} bytes); the layout is "
                    "chosen once, when a database is created")
            return layout
        layout = wanted or (PageLayout() if page_size is None else PageLayout(int(page_size)))
        if not self.read_only:
            txn.put(_LAYOUT_KEY, json.dumps(layout.__dict__).encode(), db=self._dbs["meta"])
        return layout

    def reopen_writable(self) -> None:
        """Turn a read-only open into a read-write one (the shell's first write statement)."""
        if not self.read_only:
            return
        _release(self.path)
        self._shared = None
        try:
            self._shared = _acquire(self.path, False, self.mode, existing=True)
        except BaseException:
            self._shared = _acquire(self.path, True, self.mode, existing=True)
            raise
        self.read_only = False
        self._open_subdatabases(None, self.layout, creating=False)

    # -- transactions ---------------------------------------------------------------------------
    @property
    def _env(self) -> lmdb.Environment:
        if self._shared is None:
            raise StorageError(f"database '{self.path}' is closed")
        return self._shared.env

    @property
    def _gate(self) -> _TxnGate:
        return self._shared.gate

    @property
    def connections(self) -> int:
        """How many opens of this process share the environment (connections to the database)."""
        return self._shared.references if self._shared is not None else 0

    @property
    def leases(self) -> LockFile:
        """Reader leases of this database (see storage.locks), shared by the process."""
        return self._shared.locks

    def db(self, name: str):
        return self._dbs[name]

    def _begin(self, write: bool) -> lmdb.Transaction:
        """A new transaction inside the gate; the caller calls ``self._gate.exit()`` after it."""
        while True:
            self._gate.enter()
            try:
                return self._env.begin(write=write, buffers=not write)
            except lmdb.MapResizedError:  # another process grew the map: adopt its size
                self._gate.exit()
                self._grow_map(0)
            except lmdb.Error as exc:
                self._gate.exit()
                raise _storage_error(exc, f"cannot read '{self.path}'") from exc
            except BaseException:
                self._gate.exit()
                raise

    @contextlib.contextmanager
    def read_txn(self) -> Iterator[lmdb.Transaction]:
        """A read snapshot; values are memoryviews valid only inside the ``with`` block."""
        txn = self._begin(write=False)
        try:
            with txn:
                yield txn
        except lmdb.Error as exc:  # LMDB's own checks of its pages: never a raw lmdb error
            raise _storage_error(exc, f"cannot read '{self.path}'") from None
        finally:
            self._gate.exit()

    def _info(self) -> tuple[dict, int]:
        """(LMDB's env info, page size), read inside the gate (the map may be changing)."""
        self._gate.enter()
        try:
            return self._env.info(), self._env.stat()["psize"]
        finally:
            self._gate.exit()

    def _used_bytes(self, info: dict, psize: int) -> int:
        return (info["last_pgno"] + 1) * psize

    @property
    def lmdb_page_bytes(self) -> int:
        """LMDB's own page size (the OS page size): the unit values are stored in."""
        return self._info()[1]

    def map_headroom(self) -> int:
        """Bytes the map has beyond the pages in use (a lower bound: freed pages are reused)."""
        info, psize = self._info()
        return info["map_size"] - self._used_bytes(info, psize)

    def reserve(self, nbytes: int) -> None:
        """Grow the map ahead of a big write so it is not redone after MapFull, after checking
        that the disk has room for it.

        Call it outside any transaction of this process (LMDB's rule for resizing)."""
        info, psize = self._info()
        used = self._used_bytes(info, psize)
        self._check_free_disk(used, int(nbytes))
        wanted = used + 2 * int(nbytes)
        if wanted > info["map_size"]:
            size = info["map_size"]
            while size < wanted:
                size *= 2
            self._grow_map(size)

    def allocate(self, nbytes: int) -> None:
        """Make sure the next ``nbytes`` beyond the committed data (within the map) have disk
        blocks, so that writing them through the mapping cannot fault; :class:`DiskFull` when the
        disk has no room. Allowed inside a write transaction (it does not touch the map)."""
        if self.read_only or self._shared.careful:
            return  # without writemap a full disk fails the commit, never faults (see write)
        info, psize = self._info()
        used = self._used_bytes(info, psize)
        end = min(used + int(nbytes), info["map_size"])
        if end <= max(used, self._shared.allocated):
            return  # allocated already (by this process: only its compaction shrinks the file)
        # a little more than this write needs, where the disk has the room, so that the small
        # writes after it need no system call each; what this one needs, in any case
        ahead = min(end + ALLOCATE_AHEAD, info["map_size"])
        fd = open_file(self.path, "meta.lmdb/data.mdb", os.O_RDWR)
        try:
            for stop in dict.fromkeys((ahead, end)):
                try:
                    os.posix_fallocate(fd, used, stop - used)
                except OSError as exc:
                    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
                        if stop > end:
                            continue
                        if self._shared.references == 1:  # alone: write carefully (see write)
                            raise NeedsCarefulWrites(end - used) from None
                        raise self._disk_full(end - used) from None
                    if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
                        raise StorageError(f"cannot allocate space in '{self._data_file}': "
                                           f"{exc.strerror}") from None
                    return
                self._shared.allocated = max(self._shared.allocated, stop)
                return
        finally:
            os.close(fd)

    def _check_free_disk(self, used: int, nbytes: int) -> None:
        try:
            allocated = os.stat(self._data_file).st_blocks * 512
            vfs = os.statvfs(self._data_file)
        except OSError:
            return
        ahead = max(0, allocated - used)  # blocks already allocated beyond the committed data
        if vfs.f_bavail * vfs.f_frsize + ahead + self.space().free_bytes < nbytes:
            raise self._disk_full(nbytes)  # (pages freed inside the file are reused first)

    def _disk_full(self, nbytes: int) -> DiskFull:
        try:
            vfs = os.statvfs(self._data_file)
            free = vfs.f_bavail * vfs.f_frsize
        except OSError:
            free = None
        return DiskFull(self.path, nbytes, free)

    def _grow_map(self, wanted: int) -> None:
        """Set the map to at least ``wanted`` bytes, the file's length and the current map (0:
        adopt another process's growth). Never shrinks the file under another process."""
        with self._gate.resize():
            locked = self._shared.locks.map_lock() if not self.read_only else \
                contextlib.nullcontext()
            with locked:
                current = self._env.info()["map_size"]
                length = _file_size(self._data_file)
                size = max(int(wanted), current, length)
                if size > length and not self.read_only:
                    # Lengthen the file first: LMDB's own ftruncate failing inside set_mapsize
                    # (a file size limit, a quota) would leave the environment unmapped.
                    try:
                        os.truncate(self._data_file, size)
                    except OSError as exc:
                        raise self._disk_full(size - length) from exc
                if size != current or wanted == 0:
                    try:
                        self._env.set_mapsize(size)
                    except lmdb.Error as exc:
                        raise _storage_error(exc, f"cannot grow the map of '{self.path}'") \
                            from exc

    def write(self, fn: Callable[[lmdb.Transaction], T], nbytes: int = WRITE_HEADROOM, *,
              durable: bool = True) -> T:
        """Run ``fn(txn)`` in one write transaction, growing the map and retrying when full.

        ``fn`` must be repeatable: it is called again from the start after a map resize.
        ``nbytes``: disk allocated ahead of it (a large write calls :meth:`allocate` itself).
        ``durable``: wait until the commit is durable (:meth:`wait_durable`) before returning;
        a writer holding a lock others wait for passes False and waits after releasing it.
        """
        if self.read_only:
            raise StorageError("database is open read-only")
        while True:
            try:
                self.allocate(nbytes)
            except NeedsCarefulWrites:
                self._write_carefully()
                continue
            txn = self._begin(write=True)
            grow, txnid, committed = 0, 0, False
            try:
                with txn:
                    result = fn(txn)
                    txnid = txn.id()
                committed = True
            except MapTooSmall as short:  # said before writing: grow once, to what is needed
                grow = short.nbytes
            except NeedsCarefulWrites:  # said before writing too (a large write's allocate)
                grow = None
            except lmdb.MapFullError:
                grow = -1
            except lmdb.Error as exc:
                raise _commit_error(exc, self.path) from None
            finally:
                self._gate.exit()
            if committed:  # (outside the gate: waiting in it would hold up map changes)
                self._last_commit = txnid
                self._shared.durability.committed(txnid)
                if durable:
                    self.wait_durable(txnid)
                return result
            if grow is None:
                self._write_carefully()
            elif grow > 0:
                self.reserve(grow)
            else:
                self._grow_map(self._info()[0]["map_size"] * 2)

    def generation(self, txn) -> tuple[int, int]:
        """Which committed state of the database ``txn`` reads: (the environment's epoch in
        this process, LMDB's transaction id). Every commit, of any process, raises the id; a
        copy-compaction starts the ids again in a new file, which this process opens as a new
        epoch (another process can compact only while no other has the database open). Two
        reads with the same generation read the same state."""
        return self._shared.epoch, txn.id()

    @property
    def synchronous(self) -> str:
        """When a write returns (storage.durability): 'full' once durable, 'normal' once its
        data pages are; this connection's, as SQLite's ``PRAGMA synchronous``."""
        return self._synchronous

    @synchronous.setter
    def synchronous(self, level: str) -> None:
        self._synchronous = check_synchronous(level)

    def wait_durable(self, txnid: int | None = None) -> None:
        """Under ``synchronous = 'full'``: return once transaction ``txnid`` (this connection's
        last commit by default) is on disk, by a sync shared with every writer waiting
        (storage.durability). Nothing to wait for under 'normal'."""
        if self.read_only or self._synchronous != "full":
            return
        txnid = self._last_commit if txnid is None else txnid
        if not txnid:
            return

        def newest() -> int:
            return int(self._info()[0]["last_txnid"])

        def sync() -> None:
            self._gate.enter()
            try:
                self._env.sync(True)
            except lmdb.Error as exc:
                raise _storage_error(exc, f"cannot sync '{self.path}'") from exc
            finally:
                self._gate.exit()

        shared = self._shared
        self._shared.durability.wait(txnid, newest, sync, lambda: shared.writers > 0)

    def _write_carefully(self) -> None:
        """After the disk had no room to allocate ahead of a write: reopen the environment
        without writemap. LMDB then keeps a transaction's pages in memory and writes them with
        ``pwrite`` at its commit, so a full disk fails the commit (DiskFull, nothing written)
        instead of faulting on a page of the map that has no block, and the pages a drop freed
        inside the file are reused without allocating anything. Only a connection alone in its
        process does this (the others hold handles of the environment); it stays so until the
        database is closed."""
        shared = self._shared
        self._become_careful()
        if shared.careful:
            self._open_subdatabases(None, self.layout, creating=False)

    def _become_careful(self) -> None:
        shared = self._shared
        with _OPEN_LOCK:
            if shared.careful:
                return
            if shared.references != 1:
                raise self._disk_full(WRITE_HEADROOM)
            with self._gate.resize(), shared.locks.map_lock():
                shared.env.close()
                try:
                    shared.env = _lmdb_open(self.path / "meta.lmdb", self.mode, writemap=False)
                    shared.careful = True
                except BaseException:
                    shared.env = _lmdb_open(self.path / "meta.lmdb", self.mode)
                    raise

    def release_resident(self) -> int:
        """Unmap this process's pages of the data file (see :mod:`graphdb.storage.mapped`): after a
        large write they are page cache, not memory the process needs. Returns the bytes of
        address space advised (0 off Linux). The C heap's free memory goes back too."""
        trim_heap()
        return release_file(self._data_file)

    def start_writeback(self) -> None:
        """Start writing what a long write transaction has put so far to disk (its commit then
        waits only for the rest); see :func:`graphdb.storage.mapped.start_writeback`."""
        start_writeback(self._data_file)

    def advise_bulk_write(self, on: bool) -> None:
        """Advise the map for a large write transaction (on) or for reads (off); see
        :func:`graphdb.storage.mapped.advise_file`."""
        advise_file(self._data_file, on)

    @property
    def _data_file(self) -> Path:
        return self.path / "meta.lmdb" / "data.mdb"

    # -- the Arrow file area ----------------------------------------------------------------------
    def graph_dir(self, graph_id: str) -> Path:
        """``graphs/<graph_id>``: only for a generated id, never a link out of the database."""
        if not valid_graph_id(graph_id):
            raise CorruptData(f"graph id {str(graph_id)[:80]!r} is not a generated id; no file "
                              "is read or removed for it", file="meta.lmdb/data.mdb")
        graphs = self.path / "graphs"
        for path in (graphs, graphs / graph_id):
            if path.is_symlink():
                raise CorruptData(f"'{path}' is a symbolic link; graph files are only read and "
                                  "removed inside the database directory",
                                  file=str(path.relative_to(self.path)))
        return graphs / graph_id

    def new_graph_dir(self, graph_id: str) -> Path:
        d = self.graph_dir(graph_id)
        self._make_dir(d)
        return d

    def _make_dir(self, path: Path, exist_ok: bool = False) -> None:
        if path.is_dir() and exist_ok:
            return
        path.mkdir(exist_ok=exist_ok)
        _chmod(path, directory_mode(self.mode))

    def seal_file(self, path: Path) -> None:
        """Give a file this database wrote the database's mode (pyarrow follows the umask)."""
        _chmod(path, self.mode)

    def remove_graph_dir(self, graph_id: str) -> None:
        """Delete one graph version's directory (a real directory under ``graphs/`` only)."""
        d = self.graph_dir(graph_id)
        if d.is_dir() and not d.is_symlink():
            shutil.rmtree(d, ignore_errors=True)

    @contextlib.contextmanager
    def writer_lock(self, wait: bool = False, timeout: float = 0.0) -> Iterator[None]:
        """The exclusive lock of every write that is more than one LMDB transaction (a load,
        a drop, a write transaction, a compaction's flip), across processes and connections.

        Taken at once or :class:`DatabaseLocked`, unless ``wait`` (block until free) or
        ``timeout`` (try for that many seconds, as SQL writes do: see ``LOCK_TIMEOUT``). The
        error says whether the holder is another process or this one (another connection, or
        a connection's background compaction). The threads of a process queue for it; another
        process's hold is polled. While a writer holds or waits for it the process says so
        (storage.durability: a committing writer then lets the next commit cover its own)."""
        import fcntl

        shared = self._shared
        key = self._lock_key
        with shared.writer_count:
            shared.writers += 1
            if shared.writers == 1 and shared.durability is not None:
                shared.durability.writing(True)
        got = fd = None
        deadline = time.monotonic() + max(0.0, float(timeout))
        try:
            got = shared.writer_turn.acquire() if wait else \
                shared.writer_turn.acquire(timeout=timeout) if timeout > 0 else \
                shared.writer_turn.acquire(blocking=False)
            if not got:
                raise DatabaseLocked(self._locked_message(key, timeout))
            fd = open_file(self.path, "writer.lock", os.O_RDWR | os.O_CREAT, self.mode)
            pause = 0.0001
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise DatabaseLocked(self._locked_message(key, timeout)) from None
                    time.sleep(pause)
                    pause = min(2 * pause, 0.002)
            with _WRITING_LOCK:
                _WRITING[key] = _WRITING.get(key, 0) + 1
            try:
                yield
            finally:
                with _WRITING_LOCK:
                    _WRITING[key] -= 1
        finally:
            if fd is not None:
                os.close(fd)
            if got:
                shared.writer_turn.release()
            with shared.writer_count:
                shared.writers -= 1
                if shared.writers == 0 and shared.durability is not None:
                    shared.durability.writing(False)

    @functools.cached_property
    def _lock_key(self) -> str:
        """The database's resolved path: what the writer lock is known by in this process."""
        return str(self.path.resolve())

    def _locked_message(self, key: str, timeout: float) -> str:
        with _WRITING_LOCK:
            here = _WRITING.get(key, 0) > 0
        who = ("another connection of this process (or a background compaction) is writing"
               if here else "another process is writing")
        waited = f" and did not finish within {timeout:g} s" if timeout else ""
        return (f"{who} to '{self.path}' (a write transaction, a load, a drop or a "
                f"compaction){waited}; try again when it has finished")

    def stat(self) -> dict:
        info, _psize = self._info()
        self._gate.enter()
        try:
            return {"map_size": info["map_size"], **self._env.stat()}
        finally:
            self._gate.exit()

    # -- space back (storage.compact) -------------------------------------------------------------
    def space(self) -> Space:
        """The data file's length, the bytes up to its last page written and the live ones."""
        self._gate.enter()
        try:
            return space_of(self._env, self._dbs, self._data_file)
        finally:
            self._gate.exit()

    def compact(self, min_free_share: float = 0.0) -> Space | None:
        """Copy-compact the data file when more than ``min_free_share`` of it is free; the space
        after, or None when skipped: not that much free, or the database open elsewhere (another
        process, or another connection of this one). The caller holds :meth:`writer_lock`.

        The one change of the map that shrinks the file: allowed because no other process has
        it mapped (the open lock, held shared by every process that has the database open, is
        taken exclusively), and none can open it meanwhile."""
        space = self.space()
        if self.read_only or space.free_share <= min_free_share:
            return None
        # the copy holds the live pages: without room for it, the freed pages stay in the file,
        # where later writes reuse them (a compaction after a drop is skipped; VACUUM says so)
        needed = space.live_bytes + (1 << 20)
        free = free_bytes(self.path)
        if free is not None and free < needed:
            if min_free_share > 0:
                return None
            raise DiskFull(self.path, needed, free, detail=(
                f"VACUUM copies the live data of '{self.path}' ({size_text(space.live_bytes)}) "
                f"and has {size_text(free)} free for it; the {size_text(space.free_bytes)} "
                "freed inside the file are reused by later writes and loads meanwhile"))
        shared = self._shared
        with _OPEN_LOCK:
            if shared.references != 1 or not shared.opened.alone():
                return None
            try:
                with self._gate.resize():  # no transaction of this process while it changes
                    try:
                        copy = copy_compacted(shared.env, self.path)
                    except (lmdb.Error, OSError) as exc:  # the old file is untouched
                        remove_copy(self.path)
                        raise _copy_error(exc, self.path) from None
                    shared.env.close()
                    try:
                        swap_in(copy, self.path / "meta.lmdb")
                    finally:  # the new file, or the old one if the swap failed
                        with shared.locks.map_lock():
                            shared.env = _lmdb_open(self.path / "meta.lmdb", self.mode,
                                                    writemap=not shared.careful)
                            shared.epoch = next(_EPOCHS)  # its transaction ids start again
                        shared.durability.forget()
                        shared.allocated = 0
            finally:
                shared.opened.share()
        self._open_subdatabases(None, self.layout, creating=False)
        return self.space()

    def close(self) -> None:
        if self._shared is not None:
            self._shared = None
            _release(self.path)


class _TxnGate:
    """Transactions of one process on one environment, and map changes that must wait for none.

    Any number of threads may be inside (a transaction each, nested ones allowed); a map
    change waits until none is, and new transactions wait while one is pending, except in a
    thread that is inside already (its outer transaction could otherwise never end)."""

    def __init__(self):
        self._cond = threading.Condition()
        self._inside = 0
        self._resizing = False
        self._waiting = 0
        self._depth = threading.local()

    def enter(self) -> None:
        depth = getattr(self._depth, "n", 0)
        with self._cond:
            while self._resizing or (self._waiting and depth == 0):
                self._cond.wait()
            self._inside += 1
        self._depth.n = depth + 1

    def exit(self) -> None:
        self._depth.n -= 1
        with self._cond:
            self._inside -= 1
            if not self._inside:
                self._cond.notify_all()

    @contextlib.contextmanager
    def resize(self) -> Iterator[None]:
        if getattr(self._depth, "n", 0):
            raise StorageError("the database grew in another process while this thread was "
                               "reading it; run the statement again")
        with self._cond:
            self._waiting += 1
            try:
                while self._resizing or self._inside:
                    self._cond.wait()
            finally:
                self._waiting -= 1
            self._resizing = True
        try:
            yield
        finally:
            with self._cond:
                self._resizing = False
                self._cond.notify_all()


class _Shared:
    """What the connections of one process to one database share."""

    def __init__(self, env: lmdb.Environment, locks: LockFile, read_only: bool,
                 opened: OpenLock, durability: GroupSync | None):
        self.env, self.locks, self.read_only = env, locks, read_only
        self.opened = opened  # this process has the database open (storage.compact)
        self.durability = durability  # the shared syncs of writers (None: read-only)
        self.references = 1
        self.gate = _TxnGate()
        #: a new number each time this process opens the file (Environment.generation)
        self.epoch = next(_EPOCHS)
        self.allocated = 0  # the data file is allocated up to here (Environment.allocate)
        self.writer_turn = threading.Lock()  # the threads taking the writer lock, in turn
        self.writer_count = threading.Lock()
        self.writers = 0  # threads holding or waiting for the writer lock
        #: opened without writemap, after a full disk (see Environment._write_carefully)
        self.careful = False


#: Epochs of opened environments (Environment.generation), process-wide.
_EPOCHS = itertools.count(1)

# LMDB allows one open environment per file per process (py-lmdb refuses a second), yet an
# embedding program may well connect twice to one database: connections share the environment,
# counted, and the last one to close closes it.
_OPEN: dict[str, _Shared] = {}
_OPEN_LOCK = threading.Lock()
#: writer locks held in this process, by database (what a DatabaseLocked message names)
_WRITING: dict[str, int] = {}
_WRITING_LOCK = threading.Lock()
#: Seconds a write waits for the writer lock before giving up (SQL writes, loads, drops).
LOCK_TIMEOUT = 30.0


def _acquire(path: Path, read_only: bool, mode: int, existing: bool) -> _Shared:
    key = str(path.resolve())
    with _OPEN_LOCK:
        shared = _OPEN.get(key)
        if shared is not None:
            if shared.read_only and not read_only:
                raise StorageError(f"database '{path}' is already open read-only in this "
                                   "process; close that connection to open it for writing")
            shared.references += 1
            return shared
        if existing:
            _check_data_file(path)
        opened = OpenLock(path, mode)  # waits while another process compacts the file
        locks = LockFile(path / LEASE_FILE, writable=not read_only, mode=mode)
        durability = None
        try:
            if not read_only:
                durability = GroupSync(path, path / "meta.lmdb" / "data.mdb", mode)
            env = _open_lmdb(path / "meta.lmdb", read_only, mode, locks)
        except BaseException:
            if durability is not None:
                durability.close()
            locks.close()
            opened.close()
            raise
        shared = _Shared(env, locks, read_only, opened, durability)
        _OPEN[key] = shared
        return shared


def _open_lmdb(directory: Path, read_only: bool, mode: int, locks: LockFile) -> lmdb.Environment:
    initial = int(os.environ.get("GRAPHDB_INITIAL_MAP_SIZE", str(INITIAL_MAP_SIZE)))
    options = dict(max_dbs=len(SUBDATABASES) + 4, subdir=True, mode=mode)
    data = directory / "data.mdb"
    refuse_links(directory.parent, ("meta.lmdb", *LMDB_FILES), LMDB_FILES)
    try:
        if read_only:
            lock_file = directory / "lock.mdb"
            # A user who may read but not write the lock file: LMDB without its reader table.
            lock = not lock_file.exists() or os.access(lock_file, os.W_OK, effective_ids=True)
            return lmdb.open(str(directory), map_size=max(initial, _file_size(data)),
                             readonly=True, lock=lock, **options)
        if not directory.exists():
            directory.mkdir()
            _chmod(directory, directory_mode(mode))
        created = not data.exists()
        with locks.map_lock():  # nobody resizes while the size is read and the file mapped
            env = _lmdb_open(directory, mode)
        if created:
            for name in ("data.mdb", "lock.mdb"):
                _chmod(directory / name, mode)
        return env
    except lmdb.Error as exc:
        raise _storage_error(exc, f"cannot open database '{directory.parent}'") from exc


def _lmdb_open(directory: Path, mode: int, writemap: bool = True) -> lmdb.Environment:
    """The read-write LMDB open (the caller holds the map lock): a map at least the file's
    length, never shorter (see the module docstring)."""
    initial = int(os.environ.get("GRAPHDB_INITIAL_MAP_SIZE", str(INITIAL_MAP_SIZE)))
    refuse_links(directory.parent, ("meta.lmdb", *LMDB_FILES), LMDB_FILES)
    # metasync=False (MDB_NOMETASYNC): a commit flushes its data pages, not its meta page;
    # storage.durability makes commits durable with shared syncs.
    return lmdb.open(str(directory), map_size=max(initial, _file_size(directory / "data.mdb")),
                     writemap=writemap, metasync=False, max_dbs=len(SUBDATABASES) + 4,
                     subdir=True, mode=mode)


def _commit_error(exc: lmdb.Error, path: Path) -> StorageError:
    """What a failed write transaction raises. LMDB reports a short write of its commit (the
    disk filled up under it, without writemap) as an I/O error: on a disk with next to nothing
    free that is DiskFull too."""
    full = disk_full(exc, {"database": path})
    if full is None and "Input/output error" in str(exc):
        free = free_bytes(path)
        if free is not None and free < (64 << 20):
            full = disk_full(OSError(errno.ENOSPC, str(exc)), {"database": path})
    return full or _storage_error(exc, f"write to '{path}' failed")


def _copy_error(exc: BaseException, path: Path) -> StorageError:
    """What a failed compaction copy raises: DiskFull naming the space, else StorageError."""
    full = disk_full(exc, {"database": path})
    if full is not None:
        return full
    if isinstance(exc, lmdb.Error):
        return _storage_error(exc, f"cannot compact '{path}'")
    return StorageError(f"cannot compact '{path}': {exc}")


def _release(path: Path) -> None:
    key = str(path.resolve())
    with _OPEN_LOCK:
        shared = _OPEN.get(key)
        if shared is None:
            return
        shared.references -= 1
        if shared.references == 0:
            del _OPEN[key]
            try:
                if not shared.read_only:  # what 'normal' commits left unflushed
                    shared.env.sync(True)
            except lmdb.Error:
                pass  # closing goes on; the data pages of every commit are on disk already
            shared.env.close()
            if shared.durability is not None:
                shared.durability.close()
            shared.locks.close()
            shared.opened.close()


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _chmod(path: Path, mode: int) -> None:
    try:
        os.chmod(path, mode)
    except PermissionError:  # not ours (a shared directory): leave it as its owner set it
        pass


def _check_format(path: Path) -> frozenset[str]:
    """The database's format checked; returns the features its marker names."""
    try:
        fd = open_file(path, MARKER)
        with os.fdopen(fd, "rb") as f:
            text = f.read(4096).decode("utf-8")
    except LinkInDatabase:
        raise
    except (OSError, UnicodeDecodeError) as exc:
        raise CorruptData(f"database '{path}': cannot read {MARKER} ({exc})", file=MARKER) \
            from None
    found = re.search(r"format (\d+)", text)
    if found is None:
        raise CorruptData(f"database '{path}': {MARKER} names no format", file=MARKER)
    if int(found.group(1)) != FORMAT_VERSION:
        raise StorageError(
            f"database '{path}' has format {found.group(1)}; this graphdb reads format "
            f"{FORMAT_VERSION} (checksummed catalog and files): load its graphs into a new "
            "database")
    features = re.search(r"^features: (.*)$", text, re.MULTILINE)
    if features is None:
        return frozenset()
    return frozenset(f.strip() for f in features.group(1).split(",") if f.strip())


def _check_data_file(path: Path) -> None:
    """Refuse a database whose LMDB file is missing, empty or cut short: opening it would make
    a new, empty environment (and the next writer's orphan cleanup would remove every graph
    directory as unreferenced) or fault on the missing pages."""
    data = path / "meta.lmdb" / "data.mdb"
    graphs = path / "graphs"
    count = sum(1 for _ in graphs.iterdir()) if graphs.is_dir() else 0
    beside = f" ({count} graph director{'y' if count == 1 else 'ies'} beside it)"
    size = _file_size(data)
    if not data.exists() or size == 0:
        state = "missing" if not data.exists() else "empty"
        raise CorruptData(f"database '{path}' is damaged: meta.lmdb/data.mdb is {state}"
                          f"{beside}; it is not opened, so nothing in it is changed",
                          file="meta.lmdb/data.mdb")
    try:  # our own bounds-checked reading of every page LMDB would follow (storage.lmdb_verify)
        report = verify_file(data)
    except CorruptData as exc:
        raise CorruptData(f"database '{path}' is damaged: {exc}{beside}; it is not opened, so "
                          "nothing in it is read or changed ('graphdb check' reports every "
                          "problem)", file="meta.lmdb/data.mdb") from None
    needed = (report.last_page + 1) * report.page_size
    if size < needed:
        raise CorruptData(f"database '{path}' is damaged: meta.lmdb/data.mdb has {size} bytes, "
                          f"its last commit needs {needed}{beside}", file="meta.lmdb/data.mdb")


#: LMDB errors that are not about the file's contents: a resource or a usage problem.
_NOT_DAMAGE = (lmdb.MapFullError, lmdb.MapResizedError, lmdb.ReadersFullError,
               lmdb.TxnFullError, lmdb.DbsFullError, lmdb.TlsFullError, lmdb.LockError,
               lmdb.BadValsizeError, lmdb.ReadonlyError, lmdb.BadRslotError, lmdb.DiskError,
               lmdb.MemoryError)


def _storage_error(exc: lmdb.Error, what: str) -> StorageError:
    """The storage error for an LMDB error: the disk full, LMDB's resources, else damage to
    the file (LMDB's page checks: corrupted, page not found, a transaction LMDB invalidated
    after finding one, an invalid file), naming it."""
    text = str(exc)
    if "No space left" in text or "Disk quota" in text or "File too large" in text:
        return DiskFull(None, None, None, detail=f"{what}: {text}")
    if isinstance(exc, _NOT_DAMAGE) or "Permission denied" in text or \
            "Input/output error" in text:
        return StorageError(f"{what}: {text}")
    if "belongs to another environment" in text:  # reopened under a caller's handle
        return StorageError(f"{what}: the database was reopened meanwhile (a full disk or a "
                            "compaction); run the statement again")
    return CorruptData(f"{what}: meta.lmdb/data.mdb is damaged (LMDB: {text}); 'graphdb "
                       "check' reports every problem", file="meta.lmdb/data.mdb")
