"""What a killed ingest leaves behind, found and removed by the next one to look.

An ingest spills edges and sorted runs to temporary files: inside the new graph's directory
(``graphs/<id>/tmp``) or, with ``--temp-dir``, in ``<temp dir>/graphdb-ingest-<id>``. A process
killed mid-ingest cannot remove them. So:

* a read-write open of the database that finds spill folders (or a copy a killed compaction
  left) removes those of graph directories that no committed entry references, when no other
  process is writing (it takes the writer lock without waiting, or leaves it to the next open;
  an open that finds nothing to remove does not ask for the lock at all, so it never makes a
  writer starting at that moment find the database busy);
* an ingest given a temp directory removes the ``graphdb-ingest-*`` folders there whose ingest
  is over: a running ingest holds a lock on its folder (``flock`` on the directory), which the
  kernel releases when the process dies.

The rest of an unfinished graph directory (its Arrow files) goes with the next writer's cleanup
(:func:`remove_abandoned`). What it removes is named by a committed record, never inferred from
what the catalog does not list: a new graph version's directory is made only after a record
``pending/<id>`` in 'meta' names it (:func:`begin_graph_dir`), and the commit that makes the
version visible deletes that record in the same transaction (:func:`settle`). A record still
there when a writer holds the lock is a killed or failed write's, and only its directory goes.
An empty or unreadable catalog therefore never leads to deleting a graph: a damaged entry
cannot make a committed version's directory look like an orphan.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from graphdb.storage.blocks import iter_prefix, seal
from graphdb.storage.compact import COPY_DIR, remove_copy
from graphdb.storage.errors import CorruptData, DatabaseLocked

__all__ = ["PENDING_PREFIX", "TEMP_PREFIX", "begin_graph_dir", "holding", "pending_ids",
           "remove_abandoned", "remove_killed_writes", "remove_stale_temp", "settle"]

#: Key prefix in 'meta' of the record that names a graph version's directory until its commit.
PENDING_PREFIX = b"pending/"

TEMP_PREFIX = "graphdb-ingest-"
#: A temp folder is made under its name plus this, locked, then renamed (see :func:`holding`).
NEW_SUFFIX = ".new"
#: A folder still being made is left alone this long (after it, it is a killed ingest's).
FRESH_SECONDS = 60


def begin_graph_dir(env, graph_id: str) -> Path:
    """The directory of a new graph version, made after a committed record names it (see the
    module): killed at any moment after this, the next writer knows what to remove."""
    record = json.dumps({"started": time.time(), "pid": os.getpid()}).encode()
    env.write(lambda txn: txn.put(PENDING_PREFIX + graph_id.encode(),
                                  seal(np.frombuffer(record, np.uint8)), db=env.db("meta")))
    return env.new_graph_dir(graph_id)


def settle(env, txn, graph_id: str) -> None:
    """In the commit that makes version ``graph_id`` visible: its directory is no longer
    pending."""
    txn.delete(PENDING_PREFIX + graph_id.encode(), db=env.db("meta"))


def pending_ids(env) -> list[str]:
    """Graph ids whose directory was begun and whose commit has not landed."""
    db = env.db("meta")
    if db is None:
        return []
    with env.read_txn() as txn:
        keys = list(iter_prefix(txn, db, PENDING_PREFIX, values=False))
    return [key[len(PENDING_PREFIX):].decode("ascii", "replace") for key in keys]


def remove_abandoned(env) -> list[str]:
    """Remove the directories of writes that never committed: those a pending record names.
    The caller holds the writer lock, so none of them is still being written."""
    abandoned = pending_ids(env)
    for graph_id in abandoned:
        with contextlib.suppress(CorruptData):  # a damaged name: no file is touched for it
            env.remove_graph_dir(graph_id)
    if abandoned:
        def commit(txn):
            for graph_id in abandoned:
                txn.delete(PENDING_PREFIX + graph_id.encode("ascii", "replace"),
                           db=env.db("meta"))

        env.write(commit)
    return abandoned


def remove_killed_writes(env) -> list[Path]:
    """Spill folders of killed ingests inside the database, removed (see the module)."""
    removed: list[Path] = []
    graphs = env.path / "graphs"
    try:
        leftovers = (env.path / COPY_DIR).exists() or any(
            (folder / "tmp").is_dir() for folder in graphs.iterdir())
    except OSError:
        return removed
    if not leftovers:
        return removed  # the usual open: the writer lock is not even asked for
    try:
        with env.writer_lock():
            remove_copy(env.path)
            for graph_id in pending_ids(env):
                try:
                    tmp = env.graph_dir(graph_id) / "tmp"
                except CorruptData:
                    continue
                if tmp.is_dir() and not tmp.is_symlink():
                    shutil.rmtree(tmp, ignore_errors=True)
                    removed.append(tmp)
    except DatabaseLocked:
        pass  # an ingest or drop is running: the next open looks again
    except OSError:
        pass  # a directory that may not be written: nothing to clean here
    return removed


@contextlib.contextmanager
def holding(folder: Path) -> Iterator[None]:
    """Create ``folder`` and hold a lock on it while the block runs (an ingest's temp folder:
    :func:`remove_stale_temp` leaves locked folders alone). It is made under a name of its own
    and locked before it takes its real one, so no cleaner ever sees it unlocked."""
    making = folder.with_name(folder.name + NEW_SUFFIX)
    making.mkdir(parents=True, mode=0o700)
    fd = os.open(making, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        making.rename(folder)
        yield
    finally:
        os.close(fd)


def remove_stale_temp(directory: Path) -> list[Path]:
    """``graphdb-ingest-*`` folders in ``directory`` whose ingest is over, removed."""
    removed: list[Path] = []
    try:
        folders = [p for p in directory.iterdir()
                   if p.name.startswith(TEMP_PREFIX) and p.is_dir()]
    except OSError:
        return removed
    for folder in folders:
        try:
            if (folder.name.endswith(NEW_SUFFIX)
                    and time.time() - folder.stat().st_mtime < FRESH_SECONDS):
                continue  # being made: not locked yet
            fd = os.open(folder, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue  # a running ingest's
        try:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        finally:
            os.close(fd)
    return removed
