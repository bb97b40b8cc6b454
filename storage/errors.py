"""Errors raised by the storage layer."""

__all__ = ["StorageError", "DatabaseLocked", "CorruptData"]


class StorageError(Exception):
    """The database files could not be read or written."""


class DatabaseLocked(StorageError):
    """Another process holds a lock this operation needs."""


class CorruptData(StorageError):
    """Stored bytes failed a consistency check (never returned as data)."""
