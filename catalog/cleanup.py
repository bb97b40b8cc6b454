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

The rest of an unfinished graph directory (its Arrow files) goes with the next writer's orphan
cleanup, as before: opens only remove what is certainly temporary.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from graphdb.storage.compact import COPY_DIR, remove_copy
from graphdb.storage.errors import DatabaseLocked

__all__ = ["TEMP_PREFIX", "holding", "remove_killed_writes", "remove_stale_temp"]

TEMP_PREFIX = "graphdb-ingest-"
#: A temp folder is made under its name plus this, locked, then renamed (see :func:`holding`).
NEW_SUFFIX = ".new"
#: A folder still being made is left alone this long (after it, it is a killed ingest's).
FRESH_SECONDS = 60


def remove_killed_writes(env, referenced_ids: Callable[[], set[str] | None]) -> list[Path]:
    """Spill folders of killed ingests inside the database, removed (see the module);
    ``referenced_ids()`` gives the graph ids in use (None: unknown, nothing is removed)."""
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
            referenced = referenced_ids()
            if referenced is None:
                return removed
            for folder in graphs.iterdir() if graphs.is_dir() else ():
                tmp = folder / "tmp"
                if folder.name not in referenced and tmp.is_dir():
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
