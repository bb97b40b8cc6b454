"""Group commit: the commits of every writer made durable by shared syncs.

LMDB commits in two steps: it flushes the transaction's data pages, then writes the meta page
that makes them the database's current state. Synced after each step (LMDB's default), a commit
costs two flushes of the disk. The environment is opened with ``MDB_NOMETASYNC`` instead: a
commit flushes its data pages (and with them the meta page of the commit before it, which lies
in the same map) and writes its own meta page without waiting. The order of the two steps is
kept, so no crash of any kind can leave a meta page pointing at pages that are not on disk: the
database is never torn. What a commit lacks on return is only the flush of its own meta page.

How long a commit waits for that flush is the connection's ``synchronous`` setting, as SQLite's:

- ``'full'`` (the default): the write returns only once its meta page is on disk. The flush is
  shared (:class:`GroupSync`): after committing (and after giving up the writer lock, so other
  writers go on meanwhile), a writer asks for a sync covering its transaction; one writer at a
  time, of any thread or process, syncs everything committed so far and records that, and every
  writer whose transaction that covers returns without a flush of its own. Each commit's own
  data flush covers the previous commit's meta page too. Writers of one process and of other
  processes share syncs: ``k`` writers committing together cost about ``k + 1`` flushes, not
  ``2k``; one writer alone pays two, as before.
- ``'normal'``: the write returns after its data flush. A crash of the process loses nothing (the
  meta page is in the operating system's cache); a crash of the operating system or a power loss
  may undo the last transaction committed before it (its meta page was not yet on disk), never
  more and never partly. Closing the database syncs.

A waiting writer learns that a later commit covered its own from LMDB's newest transaction id:
a commit writes its meta page only after its data flush, which wrote every earlier meta page. It
waits for one (up to about one sync's time) while another writer is at work: a thread of its
process holding or queueing for the writer lock, or another process that says so with a shared
``fcntl`` lock on byte 16 of ``sync.lock``.

The record of what is durable is 16 bytes in ``sync.lock`` (the data file's inode, the highest
durable transaction id), read and written under an exclusive ``flock`` of that file, which is
also what one syncing writer holds. It is written only after a sync, so after any crash it names
a transaction at or below the one LMDB recovers; a data file replaced by compaction (a new
inode) makes it void.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from .errors import StorageError
from .files import open_file

__all__ = ["SYNC_FILE", "SYNCHRONOUS", "GroupSync", "check_synchronous"]

#: The file that records what is durable and is locked by the writer syncing.
SYNC_FILE = "sync.lock"
#: The ``synchronous`` levels (see the module docstring).
SYNCHRONOUS = ("full", "normal")
#: The byte of :data:`SYNC_FILE` a process holding or waiting for the writer lock keeps a shared
#: (fcntl) lock on; the durable record is bytes 0-15.
_WRITING_BYTE = 16
#: The least a waiter gives a writer at work to commit before syncing itself (seconds).
MIN_WAIT = 0.002


def check_synchronous(level: str) -> str:
    level = str(level).lower()
    if level not in SYNCHRONOUS:
        raise StorageError(f"synchronous must be one of {', '.join(SYNCHRONOUS)}, got {level!r}")
    return level


class GroupSync:
    """The durable commits of one database in one process (see the module docstring)."""

    def __init__(self, directory: Path, data_file: Path, mode: int):
        self._data_file = data_file
        self._lock = threading.Lock()
        self._durable = 0  # the highest transaction id known durable
        self._inode = -1
        self._announce = threading.Lock()
        self._announced = False
        self._fd = None
        try:
            self._fd = open_file(directory, SYNC_FILE, os.O_RDWR | os.O_CREAT, mode)
        except OSError as exc:
            raise StorageError(f"cannot open '{directory / SYNC_FILE}': {exc.strerror}") \
                from exc
        self._sync_seconds = 0.0  # the last sync's time
        self.syncs = 0  # flushes this process made for durability (for tests and benchmarks)

    def committed(self, txnid: int) -> None:
        """Transaction ``txnid`` committed: its data flush covered the meta page of every
        transaction before it."""
        with self._lock:
            if txnid - 1 > self._durable:
                self._durable = txnid - 1

    def wait(self, txnid: int, last_txnid: Callable[[], int], sync: Callable[[], None],
             writing_here: Callable[[], bool] = lambda: False) -> None:
        """Return once transaction ``txnid`` is durable: covered by a later commit's flush or by
        a sync already made (by this process or another), else by one this call makes for every
        transaction committed so far (``last_txnid()``: the newest one, read before
        ``sync()``). While another writer holds the writer lock (or, ``writing_here()``, a
        thread of this process holds or waits for it), its commit is waited for a while (it
        will cover this one) before syncing."""
        if self._durable >= txnid:
            return
        if self._covered(txnid, last_txnid, writing_here):
            return
        with self._lock:  # the threads of this process: one syncs, the others find it done
            if self._durable >= txnid or self._covered(txnid, last_txnid, None):
                return
            fcntl.flock(self._fd, fcntl.LOCK_EX)  # the processes: likewise
            try:
                recorded = self._recorded()
                if recorded < txnid:
                    newest = last_txnid()
                    started = time.monotonic()
                    sync()
                    self._sync_seconds = time.monotonic() - started
                    self.syncs += 1
                    os.pwrite(self._fd, self._inode.to_bytes(8, "little")
                              + newest.to_bytes(8, "little"), 0)
                    recorded = newest
                self._durable = max(self._durable, recorded)
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _covered(self, txnid: int, last_txnid: Callable[[], int],
                 writing_here: Callable[[], bool] | None) -> bool:
        """Whether a commit after ``txnid`` has landed (its data flush wrote ``txnid``'s meta
        page); with ``writing_here``, waiting up to about one sync's time for one while a
        writer is at work (the caller then does not hold ``self._lock``)."""
        deadline = None
        pause = 20e-6
        while True:
            newest = last_txnid()
            if newest > txnid:
                if writing_here is not None:
                    with self._lock:
                        self._durable = max(self._durable, newest - 1)
                else:
                    self._durable = max(self._durable, newest - 1)
                return True
            if writing_here is None or not (writing_here() or self._writing()):
                return False
            now = time.monotonic()
            if deadline is None:
                deadline = now + max(2 * self._sync_seconds, MIN_WAIT)
            elif now >= deadline:
                return False
            time.sleep(pause)
            pause = min(2 * pause, 5e-4)

    def writing(self, on: bool) -> None:
        """This process has a writer holding or waiting for the writer lock (``on``), or no
        more: a shared lock on byte :data:`_WRITING_BYTE` of the file says so to the other
        processes (a process's locks go with it when it dies)."""
        with self._announce:
            if on != self._announced:
                fcntl.lockf(self._fd, fcntl.LOCK_SH if on else fcntl.LOCK_UN, 1, _WRITING_BYTE)
                self._announced = on

    def _writing(self) -> bool:
        """Whether another process has a writer holding or waiting for the writer lock."""
        with self._announce:
            if self._announced:
                return True
            try:
                fcntl.lockf(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, _WRITING_BYTE)
            except OSError:
                return True
            fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, _WRITING_BYTE)
            return False

    def _recorded(self) -> int:
        """The durable transaction id the file records for the current data file (0: none)."""
        self._inode = os.stat(self._data_file).st_ino
        raw = os.pread(self._fd, 16, 0)
        if len(raw) != 16 or int.from_bytes(raw[:8], "little") != self._inode:
            return 0
        return int.from_bytes(raw[8:], "little")

    def forget(self) -> None:
        """The data file was replaced (compaction): nothing known durable carries over."""
        with self._lock:
            self._durable = 0

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # (its locks go with it)
            self._fd = None
