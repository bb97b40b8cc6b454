"""The LMDB environment of one database directory.

A database is a directory::

    DB/
      meta.lmdb/        LMDB environment: sub-databases 'catalog' (graph entries),
                        'blocks' (CSR arrays cut into fixed-size blocks), 'pages' (slotted
                        topology pages) and 'meta' (the page layout, per-graph topology info)
      graphs/<id>/      Arrow IPC files of one graph version (vertex ids, properties)

LMDB gives one writer and many readers with ACID commits: a write transaction either commits
whole or leaves no trace, also when the process is killed in the middle. Files under ``graphs/``
are written *before* the transaction that references them commits; a directory that no committed
catalog entry references is an unfinished ingest and is removed by the next writer.

The page layout (page size, record-id widths) is chosen when the database is created and kept
in 'meta'; CSR blocks use the page size too, so one frame size in the buffer manager fits both.
Another process may grow the LMDB map while this one has it open; LMDB then refuses new
transactions here until the map is re-read (``set_mapsize(0)``), which both paths below do.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import lmdb

from .errors import DatabaseLocked, MapTooSmall, StorageError
from .mapped import advise_file, release_file, trim_heap
from .pages import PageLayout

__all__ = ["SUBDATABASES", "Environment"]

T = TypeVar("T")

SUBDATABASES = ("catalog", "blocks", "pages", "meta")
_LAYOUT_KEY = b"storage/layout"

#: Initial LMDB map size; it doubles whenever a write transaction fills it. The environment
#: variable lets tests start small so that growth (and other processes adopting it) is exercised.
INITIAL_MAP_SIZE = 1 << 30
#: Marker file that identifies a directory as a graphdb database.
MARKER = "graphdb.db"
FORMAT_VERSION = 1


class Environment:
    """An open database directory (LMDB environment + the Arrow file area)."""

    def __init__(self, path: str | os.PathLike, *, create: bool = True, read_only: bool = False,
                 page_size: int | None = None, layout: PageLayout | None = None):
        self.path = Path(path)
        self.read_only = read_only
        if self.path.exists() and not self.path.is_dir():
            raise StorageError(f"'{self.path}' exists and is not a database directory")
        if not self.path.exists():
            if not create or read_only:
                raise StorageError(f"database '{self.path}' does not exist")
            self.path.mkdir(parents=True)
        marker = self.path / MARKER
        if not marker.exists():
            if any(self.path.iterdir()):
                raise StorageError(
                    f"'{self.path}' is not a graphdb database (a non-empty directory without "
                    f"{MARKER}); choose a new or empty directory"
                )
            if read_only or not create:
                raise StorageError(f"database '{self.path}' does not exist")
            marker.write_text(f"graphdb database, format {FORMAT_VERSION}\n")
        (self.path / "graphs").mkdir(exist_ok=True)
        try:
            self._env = _acquire(self.path / "meta.lmdb", read_only)
        except lmdb.Error as exc:
            raise StorageError(f"cannot open database '{self.path}': {exc}") from exc
        self._dbs = {}
        if not read_only:
            # py-lmdb opens named sub-databases of a writable environment in a write transaction,
            # so a read-write open waits while another process commits (an ingest's final
            # transaction). A read-only open never waits: readers never block in LMDB.
            with self._env.begin(write=True) as txn:
                for name in SUBDATABASES:
                    self._dbs[name] = self._env.open_db(name.encode(), txn=txn)
                self.layout = self._layout(txn, page_size, layout)
        else:
            for name in SUBDATABASES:
                try:
                    self._dbs[name] = self._env.open_db(name.encode(), create=False)
                except lmdb.NotFoundError:
                    self._dbs[name] = None
            with self.read_txn() as txn:
                self.layout = self._layout(txn, page_size, layout)

    def _layout(self, txn, page_size: int | None, wanted: PageLayout | None) -> PageLayout:
        """The database's page layout; a new database stores the one asked for (or the default).

        ``page_size`` alone keeps the default record-id widths; ``wanted`` sets all of it."""
        if wanted is not None and page_size is not None and wanted.page_size != page_size:
            raise StorageError("page_size and layout.page_size disagree")
        raw = txn.get(_LAYOUT_KEY, db=self._dbs["meta"]) if self._dbs["meta"] else None
        if raw is not None:
            layout = PageLayout(**json.loads(bytes(raw)))
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

    # -- transactions ---------------------------------------------------------------------
    def db(self, name: str):
        return self._dbs[name]

    def _begin(self, write: bool) -> lmdb.Transaction:
        try:
            return self._env.begin(write=write, buffers=not write)
        except lmdb.MapResizedError:  # another process grew the map: adopt its size
            self._env.set_mapsize(0)
            return self._env.begin(write=write, buffers=not write)

    @contextlib.contextmanager
    def read_txn(self) -> Iterator[lmdb.Transaction]:
        """A read snapshot; values are memoryviews valid only inside the ``with`` block."""
        with self._begin(write=False) as txn:
            yield txn

    def map_headroom(self) -> int:
        """Bytes the map has beyond the pages in use (a lower bound: freed pages are reused)."""
        info, stat = self._env.info(), self._env.stat()
        return info["map_size"] - (info["last_pgno"] + 1) * stat["psize"]

    def reserve(self, nbytes: int) -> None:
        """Grow the map ahead of a big write so it is not redone after MapFull.

        Call it outside any transaction of this process (LMDB's rule for resizing)."""
        info = self._env.info()
        wanted = info["map_size"] - self.map_headroom() + 2 * int(nbytes)
        if wanted > info["map_size"]:
            size = info["map_size"]
            while size < wanted:
                size *= 2
            self._env.set_mapsize(size)

    def write(self, fn: Callable[[lmdb.Transaction], T]) -> T:
        """Run ``fn(txn)`` in one write transaction, growing the map and retrying when full.

        ``fn`` must be repeatable: it is called again from the start after a map resize.
        """
        if self.read_only:
            raise StorageError("database is open read-only")
        while True:
            try:
                with self._begin(write=True) as txn:
                    return fn(txn)
            except MapTooSmall as short:  # said before writing: grow once, to what is needed
                self.reserve(short.nbytes)
            except lmdb.MapFullError:
                self._env.set_mapsize(self._env.info()["map_size"] * 2)
            except lmdb.Error as exc:
                raise StorageError(f"write to '{self.path}' failed: {exc}") from exc

    def release_resident(self) -> int:
        """Unmap this process's pages of the data file (see :mod:`graphdb.storage.mapped`): after a
        large write they are page cache, not memory the process needs. Returns the bytes of
        address space advised (0 off Linux). The C heap's free memory goes back too."""
        trim_heap()
        return release_file(self._data_file)

    def advise_bulk_write(self, on: bool) -> None:
        """Advise the map for a large write transaction (on) or for reads (off); see
        :func:`graphdb.storage.mapped.advise_file`."""
        advise_file(self._data_file, on)

    @property
    def _data_file(self) -> Path:
        return self.path / "meta.lmdb" / "data.mdb"

    # -- the Arrow file area ----------------------------------------------------------------
    def graph_dir(self, graph_id: str) -> Path:
        return self.path / "graphs" / graph_id

    def new_graph_dir(self, graph_id: str) -> Path:
        d = self.graph_dir(graph_id)
        d.mkdir(parents=True, exist_ok=False)
        return d

    def remove_unreferenced(self, referenced: set[str]) -> list[str]:
        """Delete graph directories that no committed entry references (killed ingests)."""
        import shutil

        removed = []
        for d in (self.path / "graphs").iterdir():
            if d.is_dir() and d.name not in referenced:
                shutil.rmtree(d, ignore_errors=True)
                removed.append(d.name)
        return removed

    @contextlib.contextmanager
    def writer_lock(self) -> Iterator[None]:
        """An exclusive, non-blocking lock for long writes (ingest) across processes."""
        import fcntl

        fd = os.open(self.path / "writer.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise DatabaseLocked(
                    f"another process is writing to '{self.path}' (an ingest or drop is running); "
                    "try again when it has finished"
                ) from None
            yield
        finally:
            os.close(fd)

    def stat(self) -> dict:
        return {"map_size": self._env.info()["map_size"], **self._env.stat()}

    def close(self) -> None:
        if self._env is not None:
            _release(self.path / "meta.lmdb")
            self._env = None


# LMDB allows one open environment per file per process (py-lmdb refuses a second), yet an
# embedding program may well connect twice to one database: connections share the environment,
# counted, and the last one to close closes it.
_OPEN: dict[str, list] = {}  # resolved path -> [lmdb.Environment, references, read_only]
_OPEN_LOCK = threading.Lock()


def _acquire(path: Path, read_only: bool) -> lmdb.Environment:
    key = str(path.resolve())
    with _OPEN_LOCK:
        entry = _OPEN.get(key)
        if entry is not None:
            if entry[2] and not read_only:
                raise StorageError(f"database '{path.parent}' is already open read-only in this "
                                   "process; close that connection to open it for writing")
            entry[1] += 1
            return entry[0]
        env = lmdb.open(
            str(path),
            map_size=int(os.environ.get("GRAPHDB_INITIAL_MAP_SIZE", str(INITIAL_MAP_SIZE))),
            max_dbs=len(SUBDATABASES) + 4,
            readonly=read_only,
            subdir=True,
            lock=True,
            # Dirty pages of a write transaction go straight into the file mapping instead
            # of malloc'ed copies held until commit: an ingest's commit of a 16 M edge graph
            # peaked at 486 MB of anonymous memory without this and 155 MB with it, and ran
            # faster. Commits stay atomic (copy-on-write B+tree; the meta page flips last).
            # The data file is sparse up to the map size.
            writemap=True,
        )
        _OPEN[key] = [env, 1, read_only]
        return env


def _release(path: Path) -> None:
    key = str(path.resolve())
    with _OPEN_LOCK:
        entry = _OPEN.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] == 0:
            del _OPEN[key]
            entry[0].close()
