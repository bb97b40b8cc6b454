"""Bytes on disk and in memory: the LMDB environment, CSR blocks, slotted pages, buffer pools.

- ``env``: one LMDB environment per database directory (sub-databases catalog, blocks, pages,
  meta), the page layout chosen at creation, map growth, the cross-process writer lock.
- ``pages``: the GTS slotted-page format (byte diagram in its docstring) and its numpy builder.
- ``blocks``: arrays cut into fixed-size, checksummed blocks; whole or ranged reads.
- ``topology``: a graph's CSR blocks written in the caller's transaction (``write_topology``),
  its slotted pages built from them on first need (``build_pages``, ``pages_built``,
  ``estimate_pages``), all deleted together (``delete_topology``); ``csr_from_edges``.
- ``buffer_manager``: host frames under a byte budget; pins, CLOCK, bulk-scan rings, prefetch,
  counters (``stats_table`` gives them as a pyarrow Table).
- ``checksum``: xxh3 when the ``xxhash`` package is installed, zlib's crc32 otherwise.
"""

from .blocks import delete_arrays, get_array, get_range, put_array
from .buffer_manager import BufferManager, ItemKey, stats_table
from .env import Environment
from .errors import BufferPoolExhausted, CorruptData, DatabaseLocked, StorageError
from .pages import PageLayout, decode_page
from .topology import (
    build_pages,
    csr_from_edges,
    delete_topology,
    estimate_pages,
    pages_built,
    topology_info,
    write_topology,
)

__all__ = [
    "BufferManager",
    "BufferPoolExhausted",
    "CorruptData",
    "DatabaseLocked",
    "Environment",
    "ItemKey",
    "PageLayout",
    "StorageError",
    "build_pages",
    "csr_from_edges",
    "decode_page",
    "delete_arrays",
    "delete_topology",
    "estimate_pages",
    "get_array",
    "get_range",
    "pages_built",
    "put_array",
    "stats_table",
    "topology_info",
    "write_topology",
]
