"""The counting sort under every CSR an ingest builds: count keys, then scatter in input order.

Two loops, compiled by numba once an ingest has loaded them (see :mod:`graphdb.storage.compiled`),
with numpy and scipy doing the same work otherwise (small ingests, small memory limits, and the
reference the tests compare the kernels with): scipy's COO->CSR conversion is a counting sort in
C; below :data:`SCIPY_EDGES`, numpy's radix sort of 16-bit integers, digit by digit, in O(n)
(:func:`stable_argsort`), so that small ingests do not import scipy.

* :data:`COUNT_KEYS`: ``counts[key - base] += 1`` for every key (degrees).
* :data:`SCATTER`: every edge to its key's next free position (``fill``), in input order, its
  other endpoint renumbered through ``lut`` on the way (a key space with gaps: raw user ids whose
  absent values are dropped; empty ``lut``: taken as they are) and its payload (weight or input
  row) carried along.

Keys come in chunks (a spool's batches), so neither loop needs the edges in one array: the
chunks are counted and scattered one after another, into arrays allocated once. Indices are
unsigned in the loops: numba emits a wraparound branch for every signed index.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from graphdb.storage.compiled import Kernel

__all__ = ["COUNT_KEYS", "SCATTER", "count_keys", "scatter", "stable_argsort", "stable_order"]


def _count(keys, base, lo, hi, counts):
    """Keys in ``lo..hi-1`` (relative to ``base``) counted; the others belong to another
    thread's range of the same ``counts``."""
    b, first, end = np.uint64(base), np.uint64(lo), np.uint64(hi)
    for i in range(len(keys)):
        k = np.uint64(keys[i]) - b
        if k >= first and k < end:
            counts[k] += 1


def _scatter(keys, base, lo, hi, other, lut, fill, other_out, payload, payload_out):
    b, first, end = np.uint64(base), np.uint64(lo), np.uint64(hi)
    mapped = len(lut) > 0
    carry = len(payload) > 0
    for i in range(len(keys)):
        k = np.uint64(keys[i]) - b
        if k < first or k >= end:
            continue
        at = fill[k]
        if mapped:
            other_out[at] = lut[np.uint64(other[i])]
        else:
            other_out[at] = other[i]
        if carry:
            payload_out[at] = payload[i]
        fill[k] = at + 1


_NOTHING = {np.dtype(np.int8): np.zeros(0, np.int8)}


def _warm_count(compiled) -> None:
    for dtype in (np.int64, np.int32):
        compiled(np.zeros(1, dtype), 0, 0, 1, np.zeros(1, np.int64))


def _warm_scatter(compiled) -> None:
    """int64 raw keys or int32 ids; lut int32 or none; nothing, float64 weights or int64 rows
    to carry; int32 or int64 targets; int32 or int64 positions."""
    for key_type in (np.int64, np.int32):
        keys = np.zeros(1, key_type)
        for lut in (np.zeros(0, np.int32), np.zeros(1, np.int32)):
            for out_type, fill_type in ((np.int32, np.int32), (np.int32, np.int64),
                                        (np.int64, np.int64)):
                for payload in (np.zeros(0, np.int8), np.zeros(1, np.float64),
                                np.zeros(1, np.int64)):
                    compiled(keys, 0, 0, 1, keys, lut, np.zeros(1, fill_type),
                             np.empty(1, out_type), payload, np.empty(len(payload), payload.dtype))


#: Degrees: ~1 ns a key where np.bincount takes ~5 on random keys (RMAT20 on two cores).
COUNT_KEYS = Kernel(_count, _warm_count)
#: The scatter, renumbering included: one pass where numpy needs a sort and a gather.
SCATTER = Kernel(_scatter, _warm_scatter)


def count_keys(chunks, base: int, width: int, threads: int = 1) -> np.ndarray:
    """Degrees (int64) of the keys ``base..base+width-1`` in the key arrays of ``chunks``;
    compiled, on ``threads`` threads, each counting its own range of keys (every thread reads
    every key: reads are cheap, the scattered increments are what costs)."""
    counts = np.zeros(width, dtype=np.int64)
    compiled = COUNT_KEYS.get()
    if compiled is not None:
        chunks = [keys for keys in chunks if len(keys)]
        bounds = np.linspace(0, width, max(1, threads) + 1).astype(np.int64)
        _in_threads(lambda lo, hi: [compiled(keys, base, lo, hi, counts) for keys in chunks],
                    bounds)
        return counts
    for keys in chunks:
        if not len(keys):
            continue
        if len(keys) >= width // 4:
            counts += np.bincount(keys - base if base else keys, minlength=width)
        else:  # few keys over many vertices: no array of 8 bytes per vertex per chunk
            np.add.at(counts, keys - base if base else keys, 1)
    return counts


def _in_threads(work, bounds: np.ndarray) -> None:
    """``work(lo, hi)`` for each range of ``bounds``, on a thread each (the kernels release the
    GIL), or in this thread for one range."""
    ranges = [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    if len(ranges) <= 1:
        for lo, hi in ranges:
            work(lo, hi)
        return
    with ThreadPoolExecutor(len(ranges)) as pool:
        list(pool.map(lambda r: work(*r), ranges))


def scatter(chunks, base: int, fill: np.ndarray, lut: np.ndarray | None, other_out: np.ndarray,
            payload_out: np.ndarray | None, threads: int = 1) -> None:
    """Place the edges of ``chunks`` (dicts of ``key``, ``other`` and, when ``payload_out`` is
    given, ``payload``) in key order, input order within a key: ``fill[key - base]`` is the next
    free position of each key (advanced as edges land). ``lut`` renumbers ``other``.

    Compiled: chunk after chunk, one pass each, on ``threads`` threads that each place the
    keys of their own range (ranges of equal edges). numpy: the chunks concatenated and sorted
    at once (:func:`stable_order`)."""
    compiled = SCATTER.get()
    if compiled is not None:
        none = _NOTHING[np.dtype(np.int8)]
        chunks = [c for c in chunks if len(c["key"])]
        # Ranges of keys holding equal shares of the edges: the fill is where each key starts.
        total = int(sum(len(c["key"]) for c in chunks))
        cuts = np.linspace(int(fill[0]), int(fill[0]) + total, max(1, threads) + 1)
        bounds = np.searchsorted(fill, cuts[1:-1], side="left")
        bounds = np.concatenate([[0], bounds, [len(fill)]]).astype(np.int64)

        def place(lo: int, hi: int) -> None:
            for chunk in chunks:
                payload = chunk.get("payload") if payload_out is not None else None
                compiled(chunk["key"], base, lo, hi, chunk["other"],
                         none if lut is None else lut, fill, other_out,
                         none if payload is None else payload,
                         none if payload_out is None else payload_out)

        _in_threads(place, bounds)
        return
    chunks = [c for c in chunks if len(c["key"])]
    if not chunks:
        return

    def joined(column):
        return chunks[0][column] if len(chunks) == 1 else np.concatenate(
            [c[column] for c in chunks])

    keys = joined("key")
    degrees, values, moved = stable_order(keys - base if base else keys, len(fill),
                                          joined("payload") if payload_out is not None else None,
                                          joined("other"))
    del keys
    # Every edge of the keys at once (the only way this is called without the kernel): they
    # land in key order from the first key's first place on.
    start = int(fill[np.flatnonzero(degrees)[0]])
    other_out[start:start + len(values)] = values if lut is None else lut[values]
    if payload_out is not None:
        payload_out[start:start + len(values)] = moved
    fill += degrees


def stable_argsort(keys: np.ndarray, width: int) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for keys in ``0..width-1``, in O(n): numpy sorts
    16-bit integers by radix, so wider keys go by 16-bit digits, least significant first."""
    if width <= 1 << 16:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    if width > 1 << 48:
        return np.argsort(keys, kind="stable")
    order = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    for shift in range(16, max(16, int(width - 1).bit_length()), 16):
        digit = ((keys[order] >> shift) & 0xFFFF).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
    return order


def stable_order(keys: np.ndarray, n: int, payload: np.ndarray | None, other: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(degrees, other, payload) rearranged in ascending ``keys`` (0..n-1), ties in input order;
    ``payload`` may be None (nothing to carry). One array of keys: the in-memory sort of one
    bucket (the kernels when loaded, else numpy's radix sort by 16-bit digits)."""
    if COUNT_KEYS.get() is not None and SCATTER.get() is not None:
        degrees = count_keys([keys], 0, n)
        fill = np.zeros(n, dtype=np.int64)
        np.cumsum(degrees[:-1], out=fill[1:])
        other_out = np.empty(len(keys), dtype=other.dtype)
        payload_out = None if payload is None else np.empty(len(keys), payload.dtype)
        chunk = {"key": keys, "other": other}
        if payload is not None:
            chunk["payload"] = payload
        scatter([chunk], 0, fill, None, other_out, payload_out)
        return degrees, other_out, payload_out
    if len(keys) >= SCIPY_EDGES:
        return _scipy_order(keys, n, payload, other)
    order = stable_argsort(keys, n)
    return (np.bincount(keys, minlength=n).astype(np.int64), other[order],
            None if payload is None else payload[order])


#: Sorts of at least this many edges without the kernels go to scipy's counting sort in C
#: (RMAT20's 16.8 M edges: ~0.15 s where numpy's radix digits take ~1 s); smaller ones keep
#: to numpy, so a small ingest neither waits for scipy's import nor holds its 12 MB.
SCIPY_EDGES = 1 << 20


def _scipy_order(keys, n, payload, other):
    from scipy.sparse import _sparsetools as tools  # here: its import costs ~0.1 s

    wide = max(n, len(keys)) >= 2**31 or (
        other.dtype.itemsize > 4 and len(other) and int(other.max()) >= 2**31)
    dtype = np.int64 if wide else np.int32  # scipy's index type: keys, offsets and others
    carried = np.zeros(len(keys), dtype=np.int8) if payload is None else payload
    offsets = np.empty(n + 1, dtype=dtype)
    other_out = np.empty(len(keys), dtype=other.dtype if other.dtype == dtype else dtype)
    payload_out = np.empty(len(keys), dtype=carried.dtype)
    tools.coo_tocsr(n, max(n, 1), len(keys), keys.astype(dtype, copy=False),
                    other.astype(dtype, copy=False), carried, offsets, other_out, payload_out)
    return (np.diff(offsets).astype(np.int64), other_out,
            None if payload is None else payload_out)
