"""Bytes on disk and in memory: the LMDB environment, CSR blocks, Arrow files."""

from .blocks import delete_arrays, get_array, put_array
from .env import Environment
from .errors import CorruptData, DatabaseLocked, StorageError

__all__ = [
    "Environment",
    "StorageError",
    "DatabaseLocked",
    "CorruptData",
    "put_array",
    "get_array",
    "delete_arrays",
]
