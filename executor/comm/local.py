"""Simulated ranks: every rank in this process, arrays of one device (numpy, or CuPy on one GPU).

The tests run every partitioned operator on 1-4 of these ranks against the single-device
result; on one GPU they run the multi-rank logic of the GPU path without a second GPU. A
collective is the reduction or concatenation itself, each rank receiving its own copy, and is
counted with the same formulas as the real backends.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from .base import (
    Communicator,
    allgather_bytes,
    allgatherv_bytes,
    allreduce_bytes,
    alltoallv_bytes,
    array_module,
    broadcast_bytes,
    displacements,
)

__all__ = ["LocalComm"]


class LocalComm(Communicator):
    backend = "local"

    def __init__(self, size: int, kind: str = "cpu"):
        if size < 1:
            raise ValueError("a communicator needs at least one rank")
        super().__init__(size, range(size), timeout=None)
        self._kind = kind

    @property
    def kind(self) -> str:
        return self._kind

    @contextlib.contextmanager
    def on(self, index: int) -> Iterator[None]:
        if self._kind != "gpu":
            yield
            return
        from ..gpu.runtime import operator_stream

        with operator_stream():
            yield

    def fetch(self, index: int, array: Any) -> np.ndarray:
        return array.get() if hasattr(array, "get") else np.asarray(array)

    def allreduce(self, values: list, op: str = "sum") -> list:
        with self.on(0):
            return self._allreduce(values, op)

    def allgatherv(self, values: list) -> list:
        with self.on(0):
            return self._allgatherv(values)

    def alltoallv(self, values: list, counts: list[np.ndarray],
                  recv_counts: list[np.ndarray] | None = None, *,
                  send_first: list[np.ndarray] | None = None,
                  out: list | None = None) -> tuple[list, list[np.ndarray]]:
        with self.on(0):
            got, received = self._alltoallv(values, counts, send_first)
            if out is not None:
                for o, g in zip(out, got):
                    o[:g.shape[0]] = g
                got = out
            return got, received

    def allgather(self, values: list, out: list | None = None, *,
                  overlap: bool = False) -> list:
        with self.on(0):
            start = time.perf_counter()
            xp = array_module(values[0])
            full = xp.concatenate([xp.ravel(v) for v in values])  # a copy: slots may be views
            if out is None:
                out = [full.copy() for _ in values]
            else:
                for o in out:
                    o[...] = full
            nbytes = int(values[0].nbytes)
            self._count("allgather", allgather_bytes(nbytes, self.size) * self.size, start)
            return out

    def broadcast(self, values: list, root: int = 0) -> list:
        with self.on(0):
            return self._broadcast(values, root)

    # The collectives themselves, on the one device's operator stream (see on()).
    def _allreduce(self, values: list, op: str) -> list:
        self._check_op(op)
        start = time.perf_counter()
        xp = array_module(values[0])
        combine = {"sum": xp.add, "min": xp.minimum, "max": xp.maximum}[op]
        total = functools.reduce(combine, values[1:], values[0])
        nbytes = values[0].nbytes
        out = [total.copy() for _ in values]
        self._count("allreduce", allreduce_bytes(nbytes, self.size) * self.size, start)
        return out

    def _allgatherv(self, values: list) -> list:
        start = time.perf_counter()
        xp = array_module(values[0])
        full = xp.concatenate([xp.ravel(v) for v in values])
        sizes = [int(v.nbytes) for v in values]
        out = [full.copy() for _ in values]
        self._count("allgatherv", sum(allgatherv_bytes(sizes, r) for r in range(self.size)),
                    start)
        return out

    def _alltoallv(self, values: list, counts: list[np.ndarray],
                   send_first: list[np.ndarray] | None = None) -> tuple[list, list]:
        start = time.perf_counter()
        counts = self._check_counts(counts)
        xp = array_module(values[0])
        pieces = []
        for i, v in enumerate(values):
            first = displacements(counts[i]) if send_first is None else send_first[i]
            pieces.append([v[int(a):int(a + c)] for a, c in zip(first, counts[i])])
        out, received = [], []
        received_bytes = 0
        for j in range(self.size):
            parts = [pieces[i][j] for i in range(self.size)]
            out.append(xp.concatenate(parts) if parts else values[j][:0])
            rc = np.array([counts[i][j] for i in range(self.size)], dtype=np.int64)
            received.append(rc)
            itemsize = values[j].dtype.itemsize
            received_bytes += alltoallv_bytes(rc * itemsize, j)
        self._count("alltoallv", received_bytes, start)
        return out, received

    def _broadcast(self, values: list, root: int) -> list:
        start = time.perf_counter()
        out = [values[root].copy() for _ in values]
        self._count("broadcast", sum(broadcast_bytes(values[root].nbytes, r, root)
                                     for r in range(self.size)), start)
        return out

    def barrier(self) -> None:
        self.counters.add("barrier", 0)

    def allgatherv_host(self, values: list[np.ndarray]) -> np.ndarray:
        return np.concatenate([np.asarray(v) for v in values])

    def bcast_object(self, obj: Any, root: int = 0) -> Any:
        return obj

    def allgather_object(self, obj: Any) -> list:
        return [obj] * self.size
