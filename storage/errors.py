"""Errors raised by the storage layer."""

__all__ = ["StorageError", "DatabaseLocked", "CorruptData", "BufferPoolExhausted"]


class StorageError(Exception):
    """The database files could not be read or written."""


class DatabaseLocked(StorageError):
    """Another process holds a lock this operation needs."""


class CorruptData(StorageError):
    """Stored bytes failed a consistency check (never returned as data)."""


class BufferPoolExhausted(StorageError):
    """Every frame of the buffer pool is pinned; nothing can be evicted for a new item."""
