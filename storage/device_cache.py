"""A device-side cache of pages and blocks (GTS's GPU page cache), behind the host pool.

Same interface as the host :class:`~graphdb.storage.buffer_manager.BufferManager`:
``with cache.pin(key) as device_array:``, ``cache.scan(keys)``, ``cache.prefetch(keys)`` and
``cache.stats()``. A miss pins the item in the host
pool (a page-locked frame when CuPy is present, so the copy is a DMA), copies it to the device
and keeps the device copy under a byte budget with LRU eviction; pinned entries are never
evicted. GTS sizes this cache from what is left of device memory after the resident vertex
state and the streaming buffers; the caller passes that budget.

The device is reached only through an *allocator* (``to_device(host_view) -> device buffer``
and ``nbytes(buffer)``), so the cache's logic is tested on the CPU with a fake allocator and
CuPy is imported only by :class:`CupyAllocator`, and only when it is used.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Iterator

from .buffer_manager import BufferManager, ItemKey
from .errors import BufferPoolExhausted, StorageError

__all__ = ["CupyAllocator", "DeviceCache"]


class CupyAllocator:
    """Copies host frames into CuPy arrays on one stream (asynchronous from pinned memory)."""

    def __init__(self, stream=None):
        import cupy

        self._cupy = cupy
        self.stream = stream if stream is not None else cupy.cuda.Stream(non_blocking=True)

    def to_device(self, host_view):
        device = self._cupy.empty(host_view.shape, dtype=host_view.dtype)
        device.set(host_view, stream=self.stream)
        # The host frame is unpinned right after this returns: wait for the copy to finish.
        self.stream.synchronize()
        return device

    @staticmethod
    def nbytes(buffer) -> int:
        return int(buffer.nbytes)


class DeviceCache:
    """LRU cache of device copies of items, within ``budget_bytes`` of device memory."""

    def __init__(self, host: BufferManager, budget_bytes: int, allocator=None):
        if budget_bytes < host.frame_bytes:
            raise StorageError(f"device cache of {budget_bytes} bytes cannot hold one frame "
                               f"of {host.frame_bytes} bytes")
        self.host = host
        self.budget_bytes = int(budget_bytes)
        self.allocator = allocator if allocator is not None else CupyAllocator()
        self._lock = threading.Lock()
        self._entries: OrderedDict[ItemKey, list] = OrderedDict()  # key -> [buffer, nbytes, pins]
        self._used = 0
        self.hits = self.misses = self.evictions = self.bytes_to_device = 0

    @contextlib.contextmanager
    def pin(self, key: ItemKey) -> Iterator[object]:
        entry = self._acquire(key)
        try:
            yield entry[0]
        finally:
            with self._lock:
                entry[2] -= 1

    def prefetch(self, keys) -> None:
        """Start host loads of the items not on the device yet (the device copy happens on pin)."""
        with self._lock:
            missing = [k for k in keys if k not in self._entries]
        self.host.prefetch(missing)

    def scan(self, keys: list[ItemKey], window: int = 2) -> Iterator[tuple[ItemKey, object]]:
        """Pin ``keys`` on the device one after another, host loads ``window`` items ahead."""
        self.prefetch(keys[:window])
        for i, key in enumerate(keys):
            if window and i + window < len(keys):
                self.prefetch([keys[i + window]])
            with self.pin(key) as device:
                yield key, device

    def _acquire(self, key: ItemKey) -> list:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                entry[2] += 1
                self.hits += 1
                return entry
            self.misses += 1
        with self.host.pin(key) as view:
            nbytes = len(view)
            with self._lock:
                self._make_room(nbytes)
                self._used += nbytes  # reserved before the copy so concurrent misses see it
            try:
                buffer = self.allocator.to_device(view)
            except BaseException:
                with self._lock:
                    self._used -= nbytes
                raise
        self.host.note_device_bytes(nbytes)
        with self._lock:
            self.bytes_to_device += nbytes
            existing = self._entries.get(key)
            if existing is not None:  # another thread loaded it meanwhile: keep one copy
                self._used -= nbytes
                existing[2] += 1
                return existing
            entry = [buffer, nbytes, 1]
            self._entries[key] = entry
            return entry

    def _make_room(self, nbytes: int) -> None:
        for key in list(self._entries):
            if self._used + nbytes <= self.budget_bytes:
                return
            entry = self._entries[key]
            if entry[2] == 0:
                del self._entries[key]
                self._used -= entry[1]
                self.evictions += 1
        if self._used + nbytes > self.budget_bytes:
            raise BufferPoolExhausted(
                f"device cache of {self.budget_bytes} bytes is full of pinned items")

    def forget(self, graph_id: str) -> None:
        with self._lock:
            for key in [k for k, e in self._entries.items() if k.graph_id == graph_id and not e[2]]:
                self._used -= self._entries.pop(key)[1]

    def stats(self) -> dict:
        with self._lock:
            return {
                "pool": "device", "capacity_bytes": self.budget_bytes,
                "frame_bytes": self.host.frame_bytes,
                "frames": self.budget_bytes // self.host.frame_bytes,
                "frames_used": len(self._entries),
                "pinned": sum(1 for e in self._entries.values() if e[2]),
                "hits": self.hits, "misses": self.misses, "evictions": self.evictions,
                "prefetched": 0, "bytes_read": 0, "bytes_to_device": self.bytes_to_device,
                "page_locked": False,
            }
