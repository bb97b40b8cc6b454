"""The buffer manager: a byte budget of host frames in front of LMDB, with pins and prefetch.

Operators never read LMDB: they ask for an *item* (a CSR block or a topology page, named by an
:class:`ItemKey`) and get a read-only view of a frame that holds a verified copy of it::

    with bm.pin(ItemKey.page(graph_id, "out", pid)) as view:   # uint8 view, valid in the block
        ...
    for key, view in bm.scan(keys):                            # sequential, prefetching ahead
        ...

Why frames and copies: an LMDB value is valid only inside its read transaction, and a long-lived
read transaction would pin old versions of the whole file. A frame outlives the transaction, has
a fixed size (the database's page size; CSR blocks are written with the same size), and when CuPy
and a GPU are present it is page-locked, so the copy to the device is asynchronous (DMA).

Frame states (one page table maps ItemKey -> frame)::

                  victim chosen                load + checksum ok
       FREE  ------------------->  LOADING  ----------------------->  READY (pins = 0..n)
        ^                            |  load failed (missing,           |  ^     pin: pins += 1,
        |                            |  CorruptData): error to the      |  |     ref = 1
        +----------------------------+  caller, nothing cached          |  +-- unpin: pins -= 1
        |                                                               |
        +--- CLOCK evicts (pins == 0, ref bit cleared), or a bulk ------+
             scan's ring recycles its own frame (pins == 0)

CLOCK: the hand sweeps frames; a READY frame with its ref bit set gets a second chance (the bit
is cleared), an unpinned one without it is evicted. Pinned and LOADING frames are never evicted.
A miss when every frame is pinned raises :class:`BufferPoolExhausted` (a larger pool, or fewer
pages held at once, fixes it). A bulk scan (more items than the pool holds, e.g. streaming every
page of a graph larger than the pool) does not sweep the pool: its misses recycle a small ring of
frames (see :meth:`BufferManager.scan`). Frames are allocated in slabs as they are first needed,
so the budget is a ceiling, not an up-front allocation.

Every load is verified (the page or block checksum, see storage.checksum) before any pin sees it.
Prefetch runs loads on a small thread pool: LMDB reads, the copy into the frame and the checksum
release the GIL, so they overlap the consumer. Scans read ahead only once their loads turn out
to wait on the disk (from the page cache the handoff to another thread costs more than it hides).

Counters: hits, misses, evictions, prefetched loads, bytes read from LMDB, bytes handed to a
device (reported by the device cache).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .blocks import ArrayInfo, array_info, block_key, unpack_block
from .errors import BufferPoolExhausted, CorruptData, StorageError
from .mapped import release_view
from .pages import verify_page
from .topology import page_key, topology_info

__all__ = ["DEFAULT_POOL_SHARE", "BufferManager", "ItemKey", "pinned_available", "stats_table"]

#: Share of physical memory the host pool may use when no size is given.
DEFAULT_POOL_SHARE = 0.25
#: Frames allocated together (one pinned allocation per slab; cudaHostAlloc is slow).
SLAB_BYTES = 64 << 20
#: The first slab's size; each further slab doubles, up to SLAB_BYTES. Pinning costs time in
#: proportion to the bytes (cudaHostAlloc), and a small graph's first query should not pin
#: 64 MiB it will not use.
FIRST_SLAB_BYTES = 4 << 20
FREE, LOADING, READY = 0, 1, 2
#: A scan's own load taking longer than a fixed allowance plus its bytes at this rate waits on
#: the disk, not on memory: the scan then starts prefetching (reads in parallel). Loads from the
#: page cache run at several GB/s after some 10-20 us of transaction and lookup.
IO_BOUND_BYTES_PER_S = 1.0e9
IO_BOUND_ALLOWANCE_S = 1e-4
#: Consecutive slow loads before a scan believes it (the first touches of new frames are slow).
IO_BOUND_STREAK = 3


class ItemKey(NamedTuple):
    """What a frame holds: ``("block", graph, array, n)`` or ``("page", graph, direction, pid)``."""

    kind: str
    graph_id: str
    name: str
    n: int

    @classmethod
    def block(cls, graph_id: str, array: str, n: int) -> ItemKey:
        return cls("block", graph_id, array, n)

    @classmethod
    def page(cls, graph_id: str, direction: str, pid: int) -> ItemKey:
        return cls("page", graph_id, direction, pid)


@dataclass
class _Ring:
    size: int
    generation: int
    frames: list = None
    next: int = 0

    def __post_init__(self):
        self.frames = []


@dataclass
class _Frame:
    buf: np.ndarray
    key: ItemKey | None = None
    state: int = FREE
    length: int = 0
    pins: int = 0
    ref: bool = False


def pinned_available() -> bool:
    """CuPy importable and a CUDA device present (imported lazily; never required)."""
    if os.environ.get("GRAPHDB_DISABLE_GPU"):
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def _default_budget() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * DEFAULT_POOL_SHARE)
    except (ValueError, OSError, AttributeError):
        return 1 << 30


class BufferManager:
    """Host frames for one database environment; thread-safe."""

    def __init__(self, env, budget_bytes: int | None = None, *, pinned: bool | None = None,
                 prefetch_threads: int = 2):
        self.env = env
        self.frame_bytes = env.layout.page_size
        self.pinned = pinned
        self._prefetch_threads = prefetch_threads
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Condition()
        self._info: dict[tuple[str, str], ArrayInfo] = {}
        self._reset_counters()
        self._configure(budget_bytes)

    # -- configuration --------------------------------------------------------------------------
    def _configure(self, budget_bytes: int | None) -> None:
        budget = _default_budget() if budget_bytes is None else int(budget_bytes)
        if budget < 2 * self.frame_bytes:
            raise StorageError(
                f"buffer pool of {budget} bytes is too small: it must hold at least two frames "
                f"of {self.frame_bytes} bytes (the database's page size)")
        self.budget_bytes = budget
        self.capacity = budget // self.frame_bytes
        self._frames: list[_Frame] = []
        self._slabs = 0  # slabs allocated (they double in size: see FIRST_SLAB_BYTES)
        self._free: list[int] = []
        self._table: dict[ItemKey, int] = {}
        self._hand = 0
        self._generation = getattr(self, "_generation", 0) + 1

    def resize(self, budget_bytes: int | None) -> None:
        """Change the budget (``SET buffer_pool_size``); drops every cached frame."""
        with self._lock:
            while any(f.state == LOADING for f in self._frames):  # prefetches in flight
                self._lock.wait()
            if any(f.pins for f in self._frames):
                raise StorageError("cannot resize the buffer pool while pages are pinned")
            self._configure(budget_bytes)

    def _reset_counters(self) -> None:
        self.hits = self.misses = self.evictions = self.prefetched = 0
        #: seconds the last load of this thread spent checking its page (not waiting on a disk)
        self._checks = threading.local()
        self.bytes_read = self.bytes_to_device = 0

    # -- pinning --------------------------------------------------------------------------------
    @contextlib.contextmanager
    def pin(self, key: ItemKey) -> Iterator[np.ndarray]:
        """A read-only uint8 view of the item, valid until the ``with`` block ends."""
        index = self._acquire(key, pin=True)
        try:
            yield self._view(index)
        finally:
            self._unpin(index)

    def _view(self, index: int) -> np.ndarray:
        frame = self._frames[index]
        view = frame.buf[: frame.length].view()
        view.flags.writeable = False
        return view

    def _unpin(self, index: int) -> None:
        with self._lock:
            self._frames[index].pins -= 1
            self._lock.notify_all()  # a ring or a full pool may be waiting for this frame

    def _acquire(self, key: ItemKey, *, pin: bool, ring: _Ring | None = None,
                 timing: list | None = None) -> int:
        """Find or load ``key``; ``timing`` collects (bytes, seconds) of a load done here."""
        with self._lock:
            while True:
                index = self._table.get(key)
                if index is not None:
                    frame = self._frames[index]
                    if frame.state == LOADING:
                        self._lock.wait()
                        continue
                    frame.ref = True
                    if pin:
                        frame.pins += 1
                        self.hits += 1
                    return index
                index = self._victim() if ring is None else self._ring_victim(ring)
                if index is None:
                    self._lock.wait()  # every candidate frame is loading or pinned
                    continue
                frame = self._frames[index]
                frame.key, frame.state, frame.pins, frame.ref = key, LOADING, int(pin), True
                self._table[key] = index
                if pin:
                    self.misses += 1
                else:
                    self.prefetched += 1
                break
        start = time.perf_counter()
        try:
            length = self._load(key, frame.buf)
        except BaseException:
            with self._lock:
                self._table.pop(key, None)
                frame.key, frame.state, frame.pins = None, FREE, 0
                self._free.append(index)
                self._lock.notify_all()
            raise
        if timing is not None:  # what the load waited for, less the page's own checks
            checked = getattr(self._checks, "seconds", 0.0)
            self._checks.seconds = 0.0
            timing.append((length, time.perf_counter() - start - checked))
        with self._lock:
            frame.length, frame.state = length, READY
            self.bytes_read += length
            self._lock.notify_all()
        return index

    def _victim(self) -> int | None:
        """A free frame, a new one within the budget, or a CLOCK victim; None: wait."""
        if self._free:
            return self._free.pop()
        if len(self._frames) < self.capacity:
            self._grow()
            return self._free.pop()
        loading = False
        for _ in range(2 * len(self._frames)):
            index = self._hand
            self._hand = (self._hand + 1) % len(self._frames)
            frame = self._frames[index]
            if frame.state == LOADING:
                loading = True
            elif frame.pins == 0 and frame.state == READY:
                if frame.ref:
                    frame.ref = False
                    continue
                del self._table[frame.key]
                frame.key, frame.state = None, FREE
                self.evictions += 1
                return index
        if loading:
            return None
        raise BufferPoolExhausted(
            f"all {len(self._frames)} frames of the buffer pool ({self.budget_bytes} bytes) are "
            "pinned; raise buffer_pool_size or hold fewer pages at once")

    def _ring_victim(self, ring: _Ring) -> int | None:
        """The next frame of a bulk scan's ring (taking frames from the pool until it is full)."""
        if ring.generation != self._generation:  # the pool was resized under the scan
            ring.frames, ring.next, ring.generation = [], 0, self._generation
        if len(ring.frames) < ring.size:
            index = self._victim()
            if index is not None:
                ring.frames.append(index)
            return index
        for _ in range(len(ring.frames)):
            index = ring.frames[ring.next]
            ring.next = (ring.next + 1) % len(ring.frames)
            frame = self._frames[index]
            if frame.state == LOADING or frame.pins:
                continue
            if frame.state == READY:
                del self._table[frame.key]
                self.evictions += 1
            elif index in self._free:  # freed meanwhile (forget, failed load): take it back
                self._free.remove(index)
            frame.key, frame.state = None, FREE
            return index
        return None

    def _grow(self) -> None:
        slab_bytes = min(SLAB_BYTES, FIRST_SLAB_BYTES << min(self._slabs, 8))
        self._slabs += 1
        count = max(1, min(self.capacity - len(self._frames), slab_bytes // self.frame_bytes))
        slab = self._allocate(count * self.frame_bytes)
        base = len(self._frames)
        for i in range(count):
            self._frames.append(_Frame(slab[i * self.frame_bytes : (i + 1) * self.frame_bytes]))
        self._free.extend(range(base + count - 1, base - 1, -1))

    def _allocate(self, nbytes: int) -> np.ndarray:
        if self.pinned is None:
            self.pinned = pinned_available()
        if self.pinned:
            import cupy

            memory = cupy.cuda.alloc_pinned_memory(nbytes)
            return np.frombuffer(memory, dtype=np.uint8, count=nbytes)
        return np.empty(nbytes, dtype=np.uint8)

    def _load(self, key: ItemKey, out: np.ndarray) -> int:
        """Copy one item out of LMDB into ``out`` and verify it (outside the pool's lock)."""
        if key.kind == "block":
            lmdb_key, db = block_key(key.graph_id, key.name, key.n), self.env.db("blocks")
        else:
            lmdb_key, db = page_key(key.graph_id, key.name, key.n), self.env.db("pages")
        where = f"{key.kind} {key.n} of {key.name!r} (graph {key.graph_id})"
        with self.env.read_txn() as txn:
            value = txn.get(lmdb_key, db=db) if db is not None else None
            if value is None:
                raise CorruptData(f"{where} is missing", missing=True)
            if key.kind == "block":
                value = unpack_block(value, where)
            length = len(value)
            if length > len(out):
                raise StorageError(f"{where} has {length} bytes, more than a frame "
                                   f"({len(out)}); it was written with another page size")
            out[:length] = np.frombuffer(value, dtype=np.uint8)
            # Copied into the frame: the map's pages need not stay resident (storage.mapped).
            release_view(value)
        if key.kind == "page":
            start = time.perf_counter()
            verify_page(out[:length], key.n, self.env.layout)
            self._checks.seconds = time.perf_counter() - start
        return length

    # -- prefetch and scans ---------------------------------------------------------------------
    def prefetch(self, keys: Iterable[ItemKey], ring: _Ring | None = None) -> list[Future]:
        """Start loading ``keys`` in the background; errors surface when they are pinned."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self._prefetch_threads,
                                                thread_name_prefix="graphdb-prefetch")
        return [self._executor.submit(self._prefetch_one, key, ring) for key in keys]

    def _prefetch_one(self, key: ItemKey, ring: _Ring | None) -> None:
        try:
            self._acquire(key, pin=False, ring=ring)
        except Exception:
            pass  # reported to whoever pins the item

    def scan(self, keys: list[ItemKey], window: int | None = None
             ) -> Iterator[tuple[ItemKey, np.ndarray]]:
        """Pin ``keys`` one after another, prefetching ``window`` items ahead.

        ``window=None`` adapts: items are loaded by the caller's thread (from the page cache a
        load is a copy and a checksum, and a handoff to another thread only adds to it; a GPU
        consumer's copies and kernels are asynchronous and overlap the next load anyway) until
        loads turn out to wait on the disk, then one item per prefetch thread is read ahead.

        A scan of more items than the pool holds is a *bulk* scan: its misses recycle a ring of
        ``window + 2`` frames instead of evicting across the whole pool (Postgres's bulk-read
        ring, GTS's streaming buffers). The pool keeps what other work had cached, and the
        copies land in a few cache-warm frames rather than cold memory spread over the budget.
        """
        limit = max(0, self.capacity // 2 - 1)
        adaptive = window is None
        window = 0 if adaptive else max(0, min(window, limit))
        ring = None
        if len(keys) > self.capacity:
            ring = _Ring((min(self._prefetch_threads, limit) if adaptive else window) + 2,
                         self._generation)
        self.prefetch(keys[:window], ring)
        timing: list = []
        slow = 0
        for i, key in enumerate(keys):
            if window and i + window < len(keys):
                self.prefetch([keys[i + window]], ring)
            index = self._acquire(key, pin=True, ring=ring, timing=timing if adaptive else None)
            if timing:
                nbytes, seconds = timing.pop()
                waited = seconds > IO_BOUND_ALLOWANCE_S + nbytes / IO_BOUND_BYTES_PER_S
                slow = slow + 1 if waited else 0
                if slow >= IO_BOUND_STREAK:  # waiting on the disk: read ahead from now on
                    adaptive, window = False, min(self._prefetch_threads, limit)
                    self.prefetch(keys[i + 1 : i + 1 + window], ring)
            try:
                yield key, self._view(index)
            finally:
                self._unpin(index)

    # -- arrays and pages -----------------------------------------------------------------------
    def array_info(self, graph_id: str, array: str) -> ArrayInfo:
        info = self._info.get((graph_id, array))
        if info is None:  # graph versions are immutable, so this never goes stale
            with self.env.read_txn() as txn:
                info = array_info(txn, self.env.db("blocks"), graph_id, array)
            self._info[(graph_id, array)] = info
        return info

    def read_range(self, graph_id: str, array: str, start: int, stop: int) -> np.ndarray:
        """Elements ``start:stop`` of a stored array, through the pool, block by block."""
        info = self.array_info(graph_id, array)
        start, stop = max(0, start), min(stop, info.length)
        out = np.empty(max(0, stop - start), dtype=info.dtype)
        if not out.size:
            return out
        per = info.per_block
        blocks = range(start // per, (stop - 1) // per + 1)
        keys = [ItemKey.block(graph_id, array, n) for n in blocks]
        for key, view in self.scan(keys):
            block = view.view(info.dtype)
            if len(block) != info.block_length(key.n):
                raise CorruptData(f"block {key.n} of {array!r} (graph {graph_id}) has "
                                  f"{len(block)} elements, expected {info.block_length(key.n)}")
            lo, hi = max(start, key.n * per), min(stop, (key.n + 1) * per)
            out[lo - start : hi - start] = block[lo - key.n * per : hi - key.n * per]
        return out

    def read_array(self, graph_id: str, array: str) -> np.ndarray:
        """A whole stored array, copied once: each block straight from the map into the result
        (checksum verified), not through the frames. A whole array is read to be held whole
        by its reader (the executor's residency owner), so caching its blocks in frames too
        would cost a second copy and evict what streaming scans keep there."""
        info = self.array_info(graph_id, array)
        out = np.empty(info.length, dtype=info.dtype)
        per = info.per_block
        db = self.env.db("blocks")
        with self.env.read_txn() as txn:
            for n in range(info.num_blocks):
                lo, hi = n * per, min(info.length, (n + 1) * per)
                where = f"block {n} of {array!r} (graph {graph_id})"
                value = txn.get(block_key(graph_id, array, n), db=db) if db is not None else None
                block = np.frombuffer(unpack_block(value, where), dtype=info.dtype)
                if len(block) != hi - lo:
                    raise CorruptData(f"{where} has {len(block)} elements, expected {hi - lo}")
                out[lo:hi] = block
                release_view(value)  # copied: the map's pages need not stay resident
                self.bytes_read += block.nbytes
        return out

    def page_count(self, graph_id: str, direction: str) -> int:
        with self.env.read_txn() as txn:
            return int(topology_info(self.env, txn, graph_id, direction)["pages"])

    def page_keys(self, graph_id: str, direction: str,
                  pids: Iterable[int] | None = None) -> list[ItemKey]:
        if pids is None:
            pids = range(self.page_count(graph_id, direction))
        return [ItemKey.page(graph_id, direction, int(p)) for p in pids]

    def forget(self, graph_id: str) -> None:
        """Drop unpinned frames of a dropped or replaced graph version."""
        with self._lock:
            for key in [k for k in self._table if k.graph_id == graph_id]:
                frame = self._frames[self._table[key]]
                if frame.pins == 0 and frame.state == READY:
                    frame.key, frame.state = None, FREE
                    self._free.append(self._table.pop(key))
            self._info = {k: v for k, v in self._info.items() if k[0] != graph_id}

    def note_device_bytes(self, nbytes: int) -> None:
        with self._lock:
            self.bytes_to_device += nbytes

    # -- reporting ------------------------------------------------------------------------------
    def stats(self) -> dict:
        with self._lock:
            return {
                "pool": "host", "capacity_bytes": self.capacity * self.frame_bytes,
                "frame_bytes": self.frame_bytes, "frames": self.capacity,
                "frames_used": len(self._table),
                "pinned": sum(1 for f in self._frames if f.pins),
                "hits": self.hits, "misses": self.misses, "evictions": self.evictions,
                "prefetched": self.prefetched, "bytes_read": self.bytes_read,
                "bytes_to_device": self.bytes_to_device, "page_locked": bool(self.pinned),
            }

    def close(self) -> None:
        """Stop prefetching and free every frame now (not when the pool object goes)."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
        with self._lock:
            self._frames, self._free, self._table, self._info = [], [], {}, {}


def stats_table(*pools):
    """The counters of one or more pools (host, device) as a pyarrow Table, one row per pool."""
    import pyarrow as pa

    rows = [p.stats() for p in pools if p is not None]
    return pa.Table.from_pylist(rows, schema=_stats_schema())


def _stats_schema():
    import pyarrow as pa

    return pa.schema([
        ("pool", pa.string()), ("capacity_bytes", pa.int64()), ("frame_bytes", pa.int64()),
        ("frames", pa.int64()), ("frames_used", pa.int64()), ("pinned", pa.int64()),
        ("hits", pa.int64()), ("misses", pa.int64()), ("evictions", pa.int64()),
        ("prefetched", pa.int64()), ("bytes_read", pa.int64()), ("bytes_to_device", pa.int64()),
        ("page_locked", pa.bool_()),
    ])
