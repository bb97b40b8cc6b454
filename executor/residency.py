"""The one owner of everything derived from a graph version on a device.

Operators never keep copies of a graph's data on the side: the host CSR arrays as loaded from
storage, the forms built from them (kernel views, the in-edges of a graph that stores none, the
symmetric CSR, inverse out-degrees, page-locked copies), and on a GPU the device CSR, PageRank's
partitions and the like are all held here, keyed by::

    (graph key, device, name)        graph key = (database, graph id, delta sequence)

A graph id names one immutable stored version (a replace or a write makes a new key), so an
entry never goes stale; a dropped version's entries are forgotten with :meth:`forget`. Every entry
is counted in bytes against its device's budget (``set_budget``: the connection's
``memory_limit`` for a GPU, the host budget for ``"cpu"``) and the least recently used entries
are evicted to make room, before an operator allocates (:meth:`make_room`). What a running
operator allocates for itself (a query's vertex state, a partitioned run's slots and queues) is
counted too, while it runs (:meth:`reserve`): entries built during the run (a rank's shard)
make room around it, so cached entries and a query's buffers together stay within the budget.
An operator that is
using an evicted array keeps its reference, so eviction only ends the caching; the memory goes
back when the operator is done with it.

One process-wide instance, :data:`RESIDENCY`: device memory and page-locked memory are process
resources, and two connections to one database share what either has loaded.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any, TypeVar

import pyarrow as pa

__all__ = ["RESIDENCY", "Residency", "nbytes_of"]

T = TypeVar("T")


def nbytes_of(value: Any, _depth: int = 0) -> int:
    """Bytes held by ``value``: arrays (numpy, CuPy, Arrow) directly, containers and dataclasses
    by their members (two levels down), anything else as nothing."""
    size = getattr(value, "nbytes", None)
    if isinstance(size, int) and not isinstance(value, type):
        return size
    if isinstance(value, (pa.Table, pa.ChunkedArray)):
        return int(value.nbytes)
    if _depth >= 3:
        return 0
    if isinstance(value, dict):
        return sum(nbytes_of(v, _depth + 1) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(nbytes_of(v, _depth + 1) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sum(nbytes_of(getattr(value, f.name), _depth + 1)
                   for f in dataclasses.fields(value))
    return 0


class _Entry:
    __slots__ = ("value", "nbytes")

    def __init__(self, value: Any, nbytes: int):
        self.value, self.nbytes = value, nbytes


class Residency:
    """Derived graph data by (graph key, device, name), within a byte budget per device."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._entries: OrderedDict[tuple, _Entry] = OrderedDict()  # least recently used first
        self._bytes: dict[str, int] = {}
        self._budget: dict[str, int | None] = {}
        self._building: dict[tuple, threading.Lock] = {}
        self._working: dict[str, int] = {}
        self.evictions = 0

    # -- budgets --------------------------------------------------------------------------------
    def set_budget(self, device: str, budget_bytes: int | None) -> None:
        """Cap what ``device`` may hold (None: no cap) and evict down to it."""
        with self._lock:
            self._budget[device] = None if budget_bytes is None else int(budget_bytes)
            self.make_room(device, 0)

    def make_room(self, device: str, need_bytes: int) -> None:
        """Evict ``device``'s least recently used entries until ``need_bytes`` more fit."""
        with self._lock:
            budget = self._budget.get(device)
            if budget is None:
                return
            for key in [k for k in self._entries if k[1] == device]:
                if self._bytes.get(device, 0) + self._working.get(device, 0) + need_bytes \
                        <= budget:
                    break
                self._drop(key)
                self.evictions += 1

    def held_bytes(self, device: str) -> int:
        return self._bytes.get(device, 0)

    def working_bytes(self, device: str) -> int:
        """Bytes that running operators reserved on ``device`` (:meth:`reserve`)."""
        return self._working.get(device, 0)

    @contextlib.contextmanager
    def reserve(self, devices: Iterable[str], nbytes: int) -> Iterator[None]:
        """Count ``nbytes`` of an operator's own buffers on each of ``devices`` while it runs:
        room is made for them now, and entries built meanwhile make room around them."""
        devices = list(devices)
        nbytes = max(int(nbytes), 0)
        with self._lock:
            for device in devices:
                self.make_room(device, nbytes)
                self._working[device] = self._working.get(device, 0) + nbytes
        try:
            yield
        finally:
            with self._lock:
                for device in devices:
                    self._working[device] = self._working.get(device, 0) - nbytes

    # -- entries --------------------------------------------------------------------------------
    def get(self, graph: Hashable, device: str, name: str, build: Callable[[], T], *,
            nbytes: Callable[[T], int] | None = None) -> T:
        """The entry ``name`` of ``graph`` on ``device``, built by ``build()`` on a miss (once,
        however many threads ask at the same time), counted and kept within the budget."""
        key = (graph, device, name)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                return entry.value
            gate = self._building.setdefault(key, threading.Lock())
        with gate:
            with self._lock:
                entry = self._entries.get(key)
                if entry is not None:
                    return entry.value
            value = build()
            size = nbytes(value) if nbytes is not None else nbytes_of(value)
            with self._lock:
                self._building.pop(key, None)
                self.make_room(device, size)
                self._entries[key] = _Entry(value, size)
                self._bytes[device] = self._bytes.get(device, 0) + size
            return value

    def peek(self, graph: Hashable, device: str, name: str) -> Any:
        """The entry if it is held, else None (never builds)."""
        with self._lock:
            entry = self._entries.get((graph, device, name))
            return None if entry is None else entry.value

    def put(self, graph: Hashable, device: str, name: str, value: Any) -> None:
        """Hold ``value`` (built elsewhere: a benchmark's device arrays, a device-side loader)."""
        with self._lock:
            if (graph, device, name) in self._entries:
                self._drop((graph, device, name))
        self.get(graph, device, name, lambda: value)

    def forget(self, graph: Hashable, device: str | None = None, prefix: str = "") -> None:
        """Drop ``graph``'s entries (on ``device`` only, and whose name starts with ``prefix``),
        and those of its views (keys that extend its key: :mod:`graphdb.executor.subgraph`)."""
        with self._lock:
            for key in [k for k in self._entries if _of(k[0], graph)
                        and (device is None or k[1] == device) and k[2].startswith(prefix)]:
                self._drop(key)

    def forget_database(self, database: str) -> None:
        """Drop every entry of graphs of ``database`` (its last connection closed)."""
        with self._lock:
            for key in [k for k in self._entries
                        if isinstance(k[0], tuple) and k[0] and k[0][0] == database]:
                self._drop(key)

    def _drop(self, key: tuple) -> None:
        entry = self._entries.pop(key)
        self._bytes[key[1]] = self._bytes.get(key[1], 0) - entry.nbytes

    def entries(self) -> list[tuple[Hashable, str, str, int]]:
        """(graph, device, name, bytes) of every entry, least recently used first."""
        with self._lock:
            return [(k[0], k[1], k[2], e.nbytes) for k, e in self._entries.items()]


def _of(key: Hashable, graph: Hashable) -> bool:
    """Whether ``key`` is ``graph``'s or one of its views' (a tuple extending it)."""
    if key == graph:
        return True
    return isinstance(key, tuple) and isinstance(graph, tuple) and len(key) > len(graph) \
        and key[:len(graph)] == graph


#: The process's residency owner.
RESIDENCY = Residency()
