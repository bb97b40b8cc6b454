"""Numpy arrays stored as fixed-size blocks in LMDB, addressable by (graph, array, block).

Key layout in the ``blocks`` sub-database::

    <graph_id>/<array>/meta      b"<dtype>:<length>:<block_bytes>", then the same trailer as
                                 a block's
    <graph_id>/<array>/<%010d>   block n: its bytes (the last block may be short), then an
                                 8-byte trailer: checksum u32, algorithm u8 (storage.checksum),
                                 3 zero bytes

Cutting arrays into blocks keeps every LMDB value bounded and lets an operator read any range of
an array (a range of vertices' offsets, the edges of those vertices) without reading the rest.
The checksum trailer means a damaged block or array record raises :class:`CorruptData` instead of
being returned; an array record must also describe a plain numeric array (a dtype numpy reads
from bytes, a sane block size), so no edit of it can make a reader allocate or misread.
Readers that go through the buffer manager use :func:`block_key` and :func:`unpack_block`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator

import numpy as np

from .checksum import ALGORITHMS, checksum, default_algorithm
from .errors import CorruptData

__all__ = [
    "DEFAULT_BLOCK_BYTES",
    "ArrayInfo",
    "array_info",
    "block_key",
    "delete_arrays",
    "parse_array_info",
    "get_array",
    "get_range",
    "put_array",
    "seal",
    "unpack_block",
]

#: The default page size: the buffer pool's frames are one page, so blocks should not be larger
#: (write_topology uses the database's page size).
DEFAULT_BLOCK_BYTES = 2 << 20
TRAILER = struct.Struct("<IB3x")
TRAILER_BYTES = TRAILER.size


def _key(graph_id: str, array: str, suffix: str) -> bytes:
    return f"{graph_id}/{array}/{suffix}".encode()


def block_key(graph_id: str, array: str, n: int) -> bytes:
    return _key(graph_id, array, f"{n:010d}")


class ArrayInfo:
    """dtype, length and block size of a stored array, with block arithmetic."""

    __slots__ = ("block_bytes", "dtype", "length")

    def __init__(self, dtype: np.dtype, length: int, block_bytes: int):
        self.dtype, self.length, self.block_bytes = np.dtype(dtype), length, block_bytes

    @property
    def per_block(self) -> int:
        return self.block_bytes // self.dtype.itemsize

    @property
    def num_blocks(self) -> int:
        return -(-self.length // self.per_block) if self.length else 0

    def block_length(self, n: int) -> int:
        """Elements in block ``n``."""
        return min(self.per_block, self.length - n * self.per_block)

    def __iter__(self):  # unpacks as (dtype, length, block_bytes)
        return iter((self.dtype, self.length, self.block_bytes))


def put_array(txn, db, graph_id: str, array: str, values: np.ndarray,
              block_bytes: int = DEFAULT_BLOCK_BYTES,
              on_block: Callable[[int], None] | None = None) -> int:
    """Store ``values`` under (graph_id, array); returns the bytes written.

    ``values`` may be an ``np.memmap``: it is read one block at a time. ``on_block(nbytes)``
    is called after each block is put (the topology writer unmaps what it wrote as it goes).
    """
    itemsize = values.dtype.itemsize
    block_bytes = max(itemsize, block_bytes - block_bytes % itemsize)
    per_block = block_bytes // itemsize
    meta = f"{values.dtype.str}:{values.size}:{block_bytes}".encode()
    txn.put(_key(graph_id, array, "meta"), seal(np.frombuffer(meta, np.uint8)), db=db)
    flat = values.reshape(-1)
    for n, start in enumerate(range(0, flat.size, per_block)):
        raw = np.ascontiguousarray(flat[start : start + per_block]).view(np.uint8)
        txn.put(block_key(graph_id, array, n), seal(raw), db=db)
        if on_block is not None:
            on_block(raw.nbytes)
    return flat.size * itemsize


def put_array_chunked(env, db_name: str, graph_id: str, array: str, values: np.ndarray,
                      block_bytes: int = DEFAULT_BLOCK_BYTES, chunk_bytes: int = 32 << 20,
                      still_wanted: Callable[[], bool] | None = None) -> int:
    """:func:`put_array` in write transactions of about ``chunk_bytes`` each, so that other
    writers wait at most one chunk (a compaction writes a new base this way, next to committed
    writes; nothing references the blocks until its entry commits). ``still_wanted()`` is
    asked between chunks: False stops (the caller removes what was written). Returns the
    bytes written."""
    itemsize = values.dtype.itemsize
    block_bytes = max(itemsize, block_bytes - block_bytes % itemsize)
    per_block = block_bytes // itemsize
    flat = values.reshape(-1)
    blocks = -(-flat.size // per_block)
    step = max(1, chunk_bytes // block_bytes)
    meta = f"{values.dtype.str}:{values.size}:{block_bytes}".encode()

    def put(first: int, last: int):
        def write(txn):
            db = env.db(db_name)
            if first == 0:
                txn.put(_key(graph_id, array, "meta"), seal(np.frombuffer(meta, np.uint8)),
                        db=db)
            for n in range(first, last):
                raw = np.ascontiguousarray(flat[n * per_block:(n + 1) * per_block]).view(
                    np.uint8)
                txn.put(block_key(graph_id, array, n), seal(raw), db=db)
        return write

    for first in range(0, max(blocks, 1), step):
        if still_wanted is not None and not still_wanted():
            break
        last = min(blocks, first + step)
        env.write(put(first, last), nbytes=2 * (last - first) * block_bytes + (1 << 20))
    return flat.size * itemsize


def seal(raw: np.ndarray) -> np.ndarray:
    """``raw`` (uint8) followed by its checksum trailer, as stored; :func:`unpack_block` checks it."""
    # np.empty, not bytearray(n): every byte is written below, so zero-filling first is waste
    # (an ingest writes hundreds of MB of blocks).
    out = np.empty(raw.size + TRAILER_BYTES, dtype=np.uint8)
    out[: raw.size] = raw
    algorithm = default_algorithm()
    TRAILER.pack_into(out, raw.size, checksum(raw.data, algorithm), algorithm)
    return out


def unpack_block(value, where: str) -> memoryview:
    """The payload of a stored block after checking its trailer; CorruptData when it fails."""
    if value is None:
        raise CorruptData(f"{where} is missing", missing=True)
    view = memoryview(value)
    if len(view) < TRAILER_BYTES:
        raise CorruptData(f"{where} is truncated")
    payload = view[: len(view) - TRAILER_BYTES]
    expected, algorithm = TRAILER.unpack_from(view, len(view) - TRAILER_BYTES)
    if algorithm not in ALGORITHMS:
        raise CorruptData(f"{where} names an unknown checksum algorithm ({algorithm})")
    if checksum(payload, algorithm) != expected:
        raise CorruptData(f"{where} fails its checksum")
    return payload


def array_info(txn, db, graph_id: str, array: str) -> ArrayInfo:
    where = f"the record of array {array!r} (graph {graph_id})"
    raw = txn.get(_key(graph_id, array, "meta"), db=db) if db is not None else None
    if raw is None:
        raise CorruptData(f"array {array!r} of graph {graph_id} is missing", missing=True)
    return parse_array_info(bytes(unpack_block(raw, where)), where)


#: dtypes arrays are stored in: little-endian integers and floats of up to 8 bytes.
_DTYPE_KINDS = "iuf"


def parse_array_info(text: bytes, where: str) -> ArrayInfo:
    """An array record's fields, each checked (the record passed its checksum already)."""
    try:
        dtype, length, block_bytes = text.decode("ascii").split(":")
        dtype, length, block_bytes = np.dtype(dtype), int(length), int(block_bytes)
    except (UnicodeDecodeError, ValueError, TypeError):
        raise CorruptData(f"{where} is unreadable: {text[:60]!r}") from None
    if dtype.kind not in _DTYPE_KINDS or dtype.itemsize > 8 or dtype.byteorder == ">":
        raise CorruptData(f"{where} names dtype {dtype.str!r}, not a stored numeric type")
    if length < 0 or not 0 < block_bytes <= 1 << 32 or block_bytes % dtype.itemsize:
        raise CorruptData(f"{where} has length {length} and block size {block_bytes}")
    return ArrayInfo(dtype, length, block_bytes)


def get_range(txn, db, graph_id: str, array: str, start: int, stop: int,
              info: ArrayInfo | None = None) -> np.ndarray:
    """Elements ``start:stop`` of a stored array, reading only the blocks that hold them."""
    info = info or array_info(txn, db, graph_id, array)
    start, stop = max(0, start), min(stop, info.length)
    out = np.empty(max(0, stop - start), dtype=info.dtype)
    if not out.size:
        return out
    per = info.per_block
    for n in range(start // per, (stop - 1) // per + 1):
        where = f"block {n} of array {array!r} (graph {graph_id})"
        payload = unpack_block(txn.get(block_key(graph_id, array, n), db=db), where)
        block = np.frombuffer(payload, dtype=info.dtype)
        if len(block) != info.block_length(n):
            raise CorruptData(f"{where} has {len(block)} elements, expected {info.block_length(n)}")
        lo, hi = max(start, n * per), min(stop, (n + 1) * per)
        out[lo - start : hi - start] = block[lo - n * per : hi - n * per]
    return out


def get_array(txn, db, graph_id: str, array: str) -> np.ndarray:
    """Read a whole array back into a new numpy array."""
    info = array_info(txn, db, graph_id, array)
    return get_range(txn, db, graph_id, array, 0, info.length, info)


def delete_arrays(txn, db, graph_id: str) -> int:
    """Delete every block of every array of ``graph_id``; returns the number of keys deleted."""
    return delete_prefix(txn, db, f"{graph_id}/".encode())


def iter_prefix(txn, db, prefix: bytes, values: bool = True) -> Iterator:
    """``(key, value)`` of every key of ``db`` starting with ``prefix``, in key order (the keys
    alone with ``values=False``), read in ``txn``."""
    cursor = txn.cursor(db=db)
    if not cursor.set_range(prefix):
        return
    for item in cursor.iternext(values=values):
        key = bytes(item[0] if values else item)
        if not key.startswith(prefix):
            return
        yield (key, item[1]) if values else key


def delete_prefix(txn, db, prefix: bytes) -> int:
    """Delete every key starting with ``prefix`` in ``db``; returns how many."""
    cursor = txn.cursor(db=db)
    deleted = 0
    if cursor.set_range(prefix):
        while bytes(cursor.key()).startswith(prefix):
            if not cursor.delete():
                break
            deleted += 1
    return deleted
