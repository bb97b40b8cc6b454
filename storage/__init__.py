"""Bytes on disk and in memory: the LMDB environment, CSR blocks, slotted pages, buffer pools."""

from .blocks import delete_arrays, get_array, get_range, put_array
from .buffer_manager import BufferManager, ItemKey, stats_table
from .device_cache import DeviceCache
from .env import Environment
from .errors import BufferPoolExhausted, CorruptData, DatabaseLocked, StorageError
from .pages import PageLayout, decode_page
from .topology import csr_from_edges, delete_topology, topology_info, write_topology

__all__ = [
    "BufferManager",
    "BufferPoolExhausted",
    "CorruptData",
    "DatabaseLocked",
    "DeviceCache",
    "Environment",
    "ItemKey",
    "PageLayout",
    "StorageError",
    "csr_from_edges",
    "decode_page",
    "delete_arrays",
    "delete_topology",
    "get_array",
    "get_range",
    "put_array",
    "stats_table",
    "topology_info",
    "write_topology",
]
