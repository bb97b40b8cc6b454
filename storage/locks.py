"""Byte-range locks on one small file per database: reader leases and the map-growth lock.

``DB/leases.lock`` holds no data; processes lock bytes of it (``fcntl`` record locks)::

    byte s (0 <= s < MAP_LOCK_BYTE)   shared: a statement of this process reads the catalog as
                                      of sequence number s or later (a *reader lease*)
    byte MAP_LOCK_BYTE                exclusive: this process is opening the LMDB environment or
                                      changing its map size (see storage.env)

Why locks and not files with contents: the kernel drops a process's locks when it dies, so a
lease of a killed reader can never keep a dropped graph's data forever (nothing stale to detect
or clean up), and asking "does anybody hold a lease below R?" is one ``F_GETLK`` call, answered
atomically. On Linux the locks are open-file-description locks (``F_OFD_*``): closing some other
descriptor of the file does not drop them (classic POSIX locks would), and a probe through a
second description sees this process's own leases too. Elsewhere classic POSIX locks are used
and this process's own leases are counted in memory (they are anyway: leases are shared per
byte, so the byte is unlocked only when its last holder leaves).

A reader that may not write the database directory can still take leases if it may read the
file (a read lock needs only read access); where the file cannot be opened at all, leases are
off for that process (:attr:`LockFile.available`) and its statements run unprotected: a graph
dropped under one then fails with a clear error instead of being read.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import struct
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from .errors import StorageError
from .files import open_file

__all__ = ["LEASE_FILE", "MAP_LOCK_BYTE", "LockFile"]

LEASE_FILE = "leases.lock"
#: The byte whose exclusive lock serialises opening and resizing the LMDB map across processes.
MAP_LOCK_BYTE = 1 << 62

_OFD = hasattr(fcntl, "F_OFD_SETLK") and sys.platform.startswith("linux")
_SETLK = fcntl.F_OFD_SETLK if _OFD else fcntl.F_SETLK
_SETLKW = fcntl.F_OFD_SETLKW if _OFD else fcntl.F_SETLKW
_GETLK = fcntl.F_OFD_GETLK if _OFD else fcntl.F_GETLK
# struct flock: Linux and the BSDs order the fields differently.
_FLOCK = struct.Struct("hhqqi4x") if sys.platform.startswith("linux") else struct.Struct("qqihh")


def _flock(kind: int, start: int, length: int) -> bytes:
    if sys.platform.startswith("linux"):
        return _FLOCK.pack(kind, os.SEEK_SET, start, length, 0)
    return _FLOCK.pack(start, length, 0, kind, os.SEEK_SET)


def _kind(raw: bytes) -> int:
    fields = _FLOCK.unpack(raw)
    return fields[0] if sys.platform.startswith("linux") else fields[3]


class LockFile:
    """The lease and map locks of one database, shared by the connections of one process."""

    def __init__(self, path: Path, *, writable: bool, mode: int = 0o600):
        self.path = path
        self._fd = self._probe = None
        self._counts: dict[int, int] = {}
        self._lock = threading.Lock()
        try:
            # never through a link (storage.files): a planted one would lock, or create, a
            # file outside the database
            if writable:
                self._fd = open_file(path.parent, path.name, os.O_RDWR | os.O_CREAT, mode)
            else:
                self._fd = open_file(path.parent, path.name, os.O_RDONLY)
            self._probe = open_file(path.parent, path.name, os.O_RDONLY)
        except OSError as exc:
            if writable or exc.errno not in (errno.EACCES, errno.ENOENT, errno.EROFS,
                                             errno.EPERM):
                self.close()
                raise StorageError(f"cannot open the lock file '{path}': {exc.strerror}") from exc
            self.close()  # a reader without access: no leases (see the module docstring)

    @property
    def available(self) -> bool:
        return self._fd is not None

    # -- reader leases --------------------------------------------------------------------------
    def hold(self, sequence: int) -> None:
        """Take (a share of) the lease at ``sequence``; :meth:`release` gives it back."""
        if not 0 <= sequence < MAP_LOCK_BYTE:
            raise StorageError(f"catalog sequence {sequence} out of range")
        with self._lock:
            count = self._counts.get(sequence, 0)
            if count == 0 and self._fd is not None:
                fcntl.fcntl(self._fd, _SETLKW, _flock(fcntl.F_RDLCK, sequence, 1))
            self._counts[sequence] = count + 1

    def release(self, sequence: int) -> None:
        with self._lock:
            count = self._counts.get(sequence, 0) - 1
            if count > 0:
                self._counts[sequence] = count
                return
            self._counts.pop(sequence, None)
            if self._fd is not None:
                fcntl.fcntl(self._fd, _SETLK, _flock(fcntl.F_UNLCK, sequence, 1))

    def leased_below(self, sequence: int) -> bool:
        """Whether a live statement of any process holds a lease below ``sequence``."""
        with self._lock:
            if any(s < sequence for s in self._counts):
                return True
        if self._probe is None or sequence <= 0:
            return False
        answer = fcntl.fcntl(self._probe, _GETLK, _flock(fcntl.F_WRLCK, 0, sequence))
        return _kind(answer) != fcntl.F_UNLCK

    # -- the map lock ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def map_lock(self) -> Iterator[None]:
        """Exclusive across processes, while the LMDB map is opened or resized."""
        if self._fd is None:
            raise StorageError(f"cannot lock '{self.path}'")
        fcntl.fcntl(self._fd, _SETLKW, _flock(fcntl.F_WRLCK, MAP_LOCK_BYTE, 1))
        try:
            yield
        finally:
            fcntl.fcntl(self._fd, _SETLK, _flock(fcntl.F_UNLCK, MAP_LOCK_BYTE, 1))

    def close(self) -> None:
        for fd in (self._fd, self._probe):
            if fd is not None:
                os.close(fd)
        self._fd = self._probe = None
