"""The LMDB environment of one database directory.

A database is a directory::

    DB/
      meta.lmdb/        LMDB environment: sub-databases 'catalog' (graph entries) and
                        'blocks' (CSR arrays cut into fixed-size blocks)
      graphs/<id>/      Arrow IPC files of one graph version (vertex ids, properties)

LMDB gives one writer and many readers with ACID commits: a write transaction either commits
whole or leaves no trace, also when the process is killed in the middle. Files under ``graphs/``
are written *before* the transaction that references them commits; a directory that no committed
catalog entry references is an unfinished ingest and is removed by the next writer.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Callable, Iterator, TypeVar

import lmdb

from .errors import DatabaseLocked, StorageError

__all__ = ["Environment", "SUBDATABASES"]

T = TypeVar("T")

SUBDATABASES = ("catalog", "blocks", "meta")

#: Initial LMDB map size; it doubles whenever a write transaction fills it.
INITIAL_MAP_SIZE = 1 << 30
#: Marker file that identifies a directory as a graphdb database.
MARKER = "graphdb.db"
FORMAT_VERSION = 1


class Environment:
    """An open database directory (LMDB environment + the Arrow file area)."""

    def __init__(self, path: str | os.PathLike, *, create: bool = True, read_only: bool = False):
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
            self._env = lmdb.open(
                str(self.path / "meta.lmdb"),
                map_size=INITIAL_MAP_SIZE,
                max_dbs=len(SUBDATABASES) + 4,
                readonly=read_only,
                subdir=True,
                lock=True,
            )
        except lmdb.Error as exc:
            raise StorageError(f"cannot open database '{self.path}': {exc}") from exc
        self._dbs = {}
        if not read_only:
            with self._env.begin(write=True) as txn:
                for name in SUBDATABASES:
                    self._dbs[name] = self._env.open_db(name.encode(), txn=txn)
        else:
            for name in SUBDATABASES:
                try:
                    self._dbs[name] = self._env.open_db(name.encode(), create=False)
                except lmdb.NotFoundError:
                    self._dbs[name] = None

    # -- transactions ---------------------------------------------------------------------
    def db(self, name: str):
        return self._dbs[name]

    @contextlib.contextmanager
    def read_txn(self) -> Iterator[lmdb.Transaction]:
        with self._env.begin(write=False, buffers=True) as txn:
            yield txn

    def write(self, fn: Callable[[lmdb.Transaction], T]) -> T:
        """Run ``fn(txn)`` in one write transaction, growing the map and retrying when full.

        ``fn`` must be repeatable: it is called again from the start after a map resize.
        """
        if self.read_only:
            raise StorageError("database is open read-only")
        while True:
            try:
                with self._env.begin(write=True) as txn:
                    return fn(txn)
            except lmdb.MapFullError:
                self._env.set_mapsize(self._env.info()["map_size"] * 2)
            except lmdb.Error as exc:
                raise StorageError(f"write to '{self.path}' failed: {exc}") from exc

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
        self._env.close()
