"""Space back: copy-compaction of a database's LMDB file.

LMDB never shrinks its data file: pages freed by a drop go to its free list and are reused by
later writes, but the file keeps its size (a database that once held a large graph stays large).
Compaction copies the live pages into a new file (LMDB's ``mdb_env_copy2`` with
``MDB_CP_COMPACT``: free pages left out, pages renumbered) and puts it in place of the old one::

    DB/meta.lmdb.compact/data.mdb   the copy, written and fsynced first
    DB/meta.lmdb/data.mdb           replaced by it in one rename (then the directory is fsynced)

Crash-safe: until the rename the old file is untouched (a copy left by a killed compaction is
deleted by the next one, or by the next read-write open); after it the new file is complete.

Only a process that is alone with the database may swap its file: another process's map of the
old file would go on reading (and, worse, writing) a file that is no longer the database. Every
process holds a shared lock on ``DB/open.lock`` while it has the database open; compaction takes
it exclusively, without waiting, and is skipped when it cannot (another process has the database
open), as it is when another connection of this process has it open. The caller holds the
writer lock (no other write is running or can start).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from .files import open_file, refuse_links

__all__ = ["COMPACT_WHEN_FREE", "OPEN_LOCK", "TEST_PAUSE_ENV", "OpenLock", "Space",
           "copy_compacted", "remove_copy", "space_of", "swap_in"]

#: Share of the file's pages that must be free for a drop or replace to compact on its own.
COMPACT_WHEN_FREE = 0.5
#: Test hook: when set to a path, compaction creates that file once its copy is written (before
#: the swap), then sleeps, so a test can kill it there.
TEST_PAUSE_ENV = "GRAPHDB_TEST_PAUSE_IN_COMPACTION"
OPEN_LOCK = "open.lock"
COPY_DIR = "meta.lmdb.compact"


@dataclass(frozen=True)
class Space:
    """Bytes of the LMDB file: its length, the pages in use up to the last one written, the
    live pages (in the B-trees), and so the free ones (in the free list)."""

    file_bytes: int
    used_bytes: int
    live_bytes: int

    @property
    def free_bytes(self) -> int:
        return max(0, self.used_bytes - self.live_bytes)

    @property
    def free_share(self) -> float:
        return self.free_bytes / self.used_bytes if self.used_bytes else 0.0


def space_of(lmdb_env, dbs: dict, data_file: Path) -> Space:
    info, stat = lmdb_env.info(), lmdb_env.stat()
    psize = stat["psize"]
    pages = 2  # the two meta pages
    with lmdb_env.begin() as txn:
        for s in [stat] + [txn.stat(db) for db in dbs.values() if db is not None]:
            pages += s["branch_pages"] + s["leaf_pages"] + s["overflow_pages"]
    try:
        length = data_file.stat().st_size
    except FileNotFoundError:
        length = 0
    return Space(length, (info["last_pgno"] + 1) * psize, pages * psize)


class OpenLock:
    """This process's shared lock on ``DB/open.lock``, held while the database is open."""

    def __init__(self, directory: Path, mode: int = 0o600):
        self.fd = None
        try:  # never through a link (storage.files)
            self.fd = open_file(directory, OPEN_LOCK, os.O_RDWR | os.O_CREAT, mode)
        except OSError:
            try:  # a reader without write access to the directory: lock what exists
                self.fd = open_file(directory, OPEN_LOCK, os.O_RDONLY)
            except OSError:
                return
        fcntl.flock(self.fd, fcntl.LOCK_SH)  # waits while another process compacts

    def alone(self) -> bool:
        """Turn the lock exclusive if no other process holds it (then :meth:`share` again)."""
        if self.fd is None:
            return False
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            fcntl.flock(self.fd, fcntl.LOCK_SH)  # a failed conversion may have dropped it
            return False

    def share(self) -> None:
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_SH)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def remove_copy(database: Path) -> None:
    """Delete a copy a killed compaction left behind (a file at its name too: removing a name
    never touches what a link points to)."""
    path = database / COPY_DIR
    if path.is_symlink() or path.is_file():
        path.unlink()
    shutil.rmtree(path, ignore_errors=True)


def copy_compacted(lmdb_env, database: Path) -> Path:
    """The live pages copied into ``DB/meta.lmdb.compact/data.mdb``, on disk (fsynced)."""
    target = database / COPY_DIR
    refuse_links(database, (COPY_DIR, COPY_DIR + "/data.mdb"))
    remove_copy(database)
    target.mkdir(mode=0o700)
    lmdb_env.copy(str(target), compact=True)
    copy = target / "data.mdb"
    # The copy takes the data file's permissions (LMDB creates it as the umask says).
    os.chmod(copy, stat.S_IMODE((database / "meta.lmdb" / "data.mdb").stat().st_mode))
    fd = open_file(database, COPY_DIR + "/data.mdb")
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    marker = os.environ.get(TEST_PAUSE_ENV)
    if marker:
        Path(marker).write_text(str(os.getpid()))
        time.sleep(60)
    return copy


def swap_in(copy: Path, lmdb_dir: Path) -> None:
    """Put the compacted copy in place of the data file (the environment closed by now)."""
    os.replace(copy, lmdb_dir / "data.mdb")
    fd = os.open(lmdb_dir, os.O_RDONLY)
    try:
        os.fsync(fd)  # the rename is durable before anything writes to the new file
    finally:
        os.close(fd)
    # The lock file's reader table and transaction id describe the old file; the next open
    # (this process, alone) writes a fresh one.
    (lmdb_dir / "lock.mdb").unlink(missing_ok=True)
    shutil.rmtree(copy.parent, ignore_errors=True)
