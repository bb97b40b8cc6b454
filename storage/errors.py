"""Errors raised by the storage layer."""

from __future__ import annotations

__all__ = [
    "BufferPoolExhausted",
    "CorruptData",
    "DatabaseLocked",
    "DiskFull",
    "MapTooSmall",
    "NeedsCarefulWrites",
    "StorageError",
    "size_text",
]


class StorageError(Exception):
    """The database files could not be read or written."""


class DatabaseLocked(StorageError):
    """Another process holds a lock this operation needs."""


class CorruptData(StorageError):
    """Stored bytes failed a consistency check (never returned as data).

    ``file``: the file of the database that holds them, relative to its directory, where known
    (``meta.lmdb/data.mdb`` for blocks, pages and metadata)."""

    def __init__(self, message: str, *, file: str | None = "meta.lmdb/data.mdb",
                 missing: bool = False):
        super().__init__(message)
        self.file = file
        #: the bytes are absent rather than damaged (a graph version freed under a reader that
        #: could take no lease reads as missing, not as corrupt)
        self.missing = missing


class DiskFull(StorageError):
    """A write was refused before it started because the disk has no room for it; nothing was
    written."""

    def __init__(self, path, nbytes: int | None, free: int | None, detail: str | None = None):
        self.path, self.nbytes, self.free = path, nbytes, free
        if detail is not None:
            message = f"the disk is full: {detail}"
        else:
            have = "" if free is None else f", {size_text(free)} are free"
            message = (f"not enough disk space for database '{path}': the write needs "
                       f"{size_text(nbytes)} more{have}; nothing was written (free some space and "
                       "run it again)")
        super().__init__(message)


class NeedsCarefulWrites(StorageError):
    """Raised where disk blocks could not be allocated ahead of a write: the environment is
    reopened without writemap (LMDB then writes with pwrite, and a full disk is an error of
    the commit, never a fault) and the write runs again. See storage.env."""

    def __init__(self, nbytes: int):
        super().__init__(f"the disk has no room to allocate {nbytes} bytes ahead of a write")
        self.nbytes = nbytes


class BufferPoolExhausted(StorageError):
    """Every frame of the buffer pool is pinned; nothing can be evicted for a new item."""


class MapTooSmall(StorageError):
    """Raised inside a write transaction that will not fit the LMDB map, before writing it;
    :meth:`Environment.write` grows the map by ``nbytes`` and runs the transaction again."""

    def __init__(self, nbytes: int):
        super().__init__(f"the database map needs {nbytes} more bytes")
        self.nbytes = nbytes


def size_text(nbytes: int) -> str:
    """``nbytes`` for a message: bytes, KiB, MiB, GiB or TiB."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if nbytes < 1024 or unit == "TiB":
            return f"{nbytes} {unit}" if unit == "bytes" else f"{nbytes:.1f} {unit}"
        nbytes /= 1024
    return str(nbytes)
