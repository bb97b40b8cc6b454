"""Numpy arrays stored as fixed-size blocks in LMDB, addressable by (graph, array, block).

Key layout in the ``blocks`` sub-database::

    <graph_id>/<array>/meta      b"<dtype>:<length>:<block_bytes>"
    <graph_id>/<array>/<%010d>   the bytes of block number n (the last one may be short)

Cutting arrays into blocks keeps every LMDB value bounded and lets an operator read any range of
an array (a range of vertices' offsets, the edges of those vertices) without reading the rest.
"""

from __future__ import annotations

import numpy as np

from .errors import CorruptData, StorageError

__all__ = ["DEFAULT_BLOCK_BYTES", "put_array", "get_array", "array_info", "delete_arrays"]

DEFAULT_BLOCK_BYTES = 4 << 20


def _key(graph_id: str, array: str, suffix: str) -> bytes:
    return f"{graph_id}/{array}/{suffix}".encode()


def put_array(txn, db, graph_id: str, array: str, values: np.ndarray,
              block_bytes: int = DEFAULT_BLOCK_BYTES) -> int:
    """Store ``values`` under (graph_id, array); returns the bytes written."""
    values = np.ascontiguousarray(values)
    raw = values.view(np.uint8).reshape(-1) if values.size else np.zeros(0, np.uint8)
    itemsize = values.dtype.itemsize
    block_bytes = max(itemsize, block_bytes - block_bytes % itemsize)
    meta = f"{values.dtype.str}:{values.size}:{block_bytes}".encode()
    txn.put(_key(graph_id, array, "meta"), meta, db=db)
    for n, start in enumerate(range(0, raw.size, block_bytes)):
        txn.put(_key(graph_id, array, f"{n:010d}"), raw[start : start + block_bytes].tobytes(), db=db)
    return raw.size


def array_info(txn, db, graph_id: str, array: str) -> tuple[np.dtype, int, int]:
    meta = txn.get(_key(graph_id, array, "meta"), db=db)
    if meta is None:
        raise StorageError(f"array {array!r} of graph {graph_id} is missing")
    dtype, length, block_bytes = bytes(meta).decode().split(":")
    return np.dtype(dtype), int(length), int(block_bytes)


def get_array(txn, db, graph_id: str, array: str) -> np.ndarray:
    """Read a whole array back into a new numpy array."""
    dtype, length, block_bytes = array_info(txn, db, graph_id, array)
    out = np.empty(length, dtype=dtype)
    raw = out.view(np.uint8).reshape(-1)
    nblocks = -(-raw.size // block_bytes) if raw.size else 0
    for n in range(nblocks):
        block = txn.get(_key(graph_id, array, f"{n:010d}"), db=db)
        start = n * block_bytes
        expected = min(block_bytes, raw.size - start)
        if block is None or len(block) != expected:
            raise CorruptData(f"block {n} of array {array!r} (graph {graph_id}) is missing or short")
        raw[start : start + expected] = np.frombuffer(block, dtype=np.uint8)
    return out


def delete_arrays(txn, db, graph_id: str) -> int:
    """Delete every block of every array of ``graph_id``; returns the number of keys deleted."""
    prefix = f"{graph_id}/".encode()
    cursor = txn.cursor(db=db)
    deleted = 0
    if cursor.set_range(prefix):
        while bytes(cursor.key()).startswith(prefix):
            if not cursor.delete():
                break
            deleted += 1
    return deleted
