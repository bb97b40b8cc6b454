"""Bytes on disk and in memory: the LMDB environment, CSR blocks, slotted pages, buffer pools."""

from .blocks import delete_arrays, get_array, get_range, put_array
from .buffer_manager import BufferManager, ItemKey, stats_table
from .device_cache import DeviceCache
from .env import Environment
from .errors import BufferPoolExhausted, CorruptData, DatabaseLocked, StorageError
from .pages import PageLayout, decode_page
from .topology import csr_from_edges, delete_topology, topology_info, write_topology

__all__ = [
    "Environment",
    "StorageError",
    "DatabaseLocked",
    "CorruptData",
    "BufferPoolExhausted",
    "put_array",
    "get_array",
    "get_range",
    "delete_arrays",
    "PageLayout",
    "decode_page",
    "write_topology",
    "delete_topology",
    "topology_info",
    "csr_from_edges",
    "BufferManager",
    "ItemKey",
    "DeviceCache",
    "stats_table",
]
