"""Errors raised by the storage layer."""

__all__ = [
    "BufferPoolExhausted",
    "CorruptData",
    "DatabaseLocked",
    "MapTooSmall",
    "StorageError",
]


class StorageError(Exception):
    """The database files could not be read or written."""


class DatabaseLocked(StorageError):
    """Another process holds a lock this operation needs."""


class CorruptData(StorageError):
    """Stored bytes failed a consistency check (never returned as data)."""


class BufferPoolExhausted(StorageError):
    """Every frame of the buffer pool is pinned; nothing can be evicted for a new item."""


class MapTooSmall(StorageError):
    """Raised inside a write transaction that will not fit the LMDB map, before writing it;
    :meth:`Environment.write` grows the map by ``nbytes`` and runs the transaction again."""

    def __init__(self, nbytes: int):
        super().__init__(f"the database map needs {nbytes} more bytes")
        self.nbytes = nbytes
