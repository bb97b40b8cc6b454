"""NCCL ranks (``cupy.cuda.nccl``): the GPUs of one host driven by one process, or one GPU per
MPI process.

One process, several GPUs: ``NcclCommunicator.initAll(devices)`` gives one communicator per
device; every collective issues one call per device inside ``groupStart``/``groupEnd`` (NCCL's
rule for one thread driving several devices), each on its device's operator stream
(:func:`graphdb.executor.gpu.runtime.operator_stream`), so it is ordered with the kernels
before and after it and the host does not wait. Under MPI each process owns one GPU and the
unique id travels by MPI; MPI then keeps the host side (sizes, results, control).

NCCL has no allgatherv and no alltoallv: the first is one AllGather of slices padded to the
largest (then each rank's part copied out), the second one send and one receive per pair of
ranks, each set inside one group. ``allgather(..., overlap=True)`` runs on a second stream per
device, the *exchange stream*, after an event of the compute stream: the operator keeps
launching work that does not read the result, puts what follows the exchange on
:meth:`exchange_on`, and makes its compute stream wait (:meth:`join`) only where it reads it.
NVLink SHARP (multicast) is kept off (``NCCL_NVLS_ENABLE=0`` before the first communicator) and
no multicast API is used. Collective times come from CUDA events around each group, read when
the counters are.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from . import base
from .base import Communicator, displacements

__all__ = ["NcclComm", "nccl_dtype"]


def _nccl():
    os.environ["NCCL_NVLS_ENABLE"] = "0"  # NVLink multicast stays off, always
    from cupy.cuda import nccl

    return nccl


def nccl_dtype(dtype: np.dtype) -> int:
    """NCCL's code for a numpy dtype (booleans travel as bytes)."""
    nccl = _nccl()
    dtype = np.dtype(dtype)
    codes = {
        np.dtype(np.int8): nccl.NCCL_INT8, np.dtype(np.uint8): nccl.NCCL_UINT8,
        np.dtype(np.bool_): nccl.NCCL_UINT8,
        np.dtype(np.int32): nccl.NCCL_INT32, np.dtype(np.uint32): nccl.NCCL_UINT32,
        np.dtype(np.int64): nccl.NCCL_INT64, np.dtype(np.uint64): nccl.NCCL_UINT64,
        np.dtype(np.float16): nccl.NCCL_FLOAT16, np.dtype(np.float32): nccl.NCCL_FLOAT32,
        np.dtype(np.float64): nccl.NCCL_FLOAT64,
    }
    if dtype not in codes:
        raise TypeError(f"NCCL cannot exchange {dtype} arrays")
    return codes[dtype]


class NcclComm(Communicator):
    """NCCL over ``devices`` (one process), or over one GPU per MPI rank (``mpi``)."""

    backend = "nccl"

    def __init__(self, devices: Sequence[int], mpi: Any = None):
        import cupy

        nccl = _nccl()
        self.cp = cupy
        self.devices = tuple(int(d) for d in devices)
        self.mpi = mpi
        if mpi is None:
            self._comms = nccl.NcclCommunicator.initAll(list(self.devices))
            super().__init__(len(self.devices), range(len(self.devices)), timeout=None)
        else:
            if len(self.devices) != 1:
                raise ValueError("under MPI each process drives one GPU")
            uid = mpi.bcast_object(nccl.get_unique_id() if mpi.rank == 0 else None)
            with cupy.cuda.Device(self.devices[0]):
                self._comms = [nccl.NcclCommunicator(mpi.size, uid, mpi.rank)]
            super().__init__(mpi.size, (mpi.rank,), timeout=mpi.timeout)
        self._streams = []
        self._exchange = []
        self._marks: dict = {}
        from ..gpu.runtime import operator_stream

        for d in self.devices:
            with cupy.cuda.Device(d):
                self._streams.append(operator_stream())
                self._exchange.append(cupy.cuda.Stream(non_blocking=True))

    @property
    def kind(self) -> str:
        return "gpu"

    @contextlib.contextmanager
    def on(self, index: int) -> Iterator[None]:
        with self.cp.cuda.Device(self.devices[index]), self._streams[index]:
            yield

    @contextlib.contextmanager
    def exchange_on(self, index: int) -> Iterator[None]:
        with self.cp.cuda.Device(self.devices[index]), self._exchange[index]:
            yield

    def _order(self, first: Any, then: Any, index: int) -> None:
        """Stream ``then`` waits for what stream ``first`` holds now (device ``index``); the
        event is reused (a wait takes the event's state when it is enqueued)."""
        with self.cp.cuda.Device(self.devices[index]):
            mark = self._marks.get((index, first.ptr))
            if mark is None:
                mark = self._marks[(index, first.ptr)] = self.cp.cuda.Event(disable_timing=True)
            mark.record(first)
            then.wait_event(mark)

    def join(self, index: int) -> None:
        self._order(self._exchange[index], self._streams[index], index)

    def fetch(self, index: int, array: Any) -> np.ndarray:
        with self.cp.cuda.Device(self.devices[index]):
            if self.mpi is not None and self.timeout:
                self._wait_stream(index)
            return array.get(stream=self._streams[index])

    def _wait_stream(self, index: int) -> None:
        """Wait for a rank's stream within the deadline (a peer of an MPI job may be gone, and
        NCCL's kernels would wait for it forever)."""
        done = self.cp.cuda.Event(disable_timing=True)
        done.record(self._streams[index])
        start = time.monotonic()
        while not done.done:
            if time.monotonic() - start > self.timeout:
                for comm in self._comms:
                    comm.abort()
                self.mpi.fail(f"rank {self.ranks[index]} of {self.size} waited "
                              f"{self.timeout:.0f} s for its GPU's collectives: a rank has "
                              "died or hangs")
            time.sleep(0.001)

    # -- one group of NCCL calls, timed with events ---------------------------------------------------
    @contextlib.contextmanager
    def _group(self, name: str, received: int, streams: list | None = None) -> Iterator[None]:
        nccl = _nccl()
        cp = self.cp
        streams = self._streams if streams is None else streams
        marks = []
        for d, s in zip(self.devices, streams):
            with cp.cuda.Device(d):
                first, last = cp.cuda.Event(), cp.cuda.Event()
                first.record(s)
                marks.append((d, first, last))
        nccl.groupStart()
        try:
            yield
        finally:
            nccl.groupEnd()
        for (d, _, last), s in zip(marks, streams):
            with cp.cuda.Device(d):
                last.record(s)

        def timer() -> float:
            seconds = 0.0
            for d, first, last in marks:
                with cp.cuda.Device(d):
                    last.synchronize()
                    seconds = max(seconds, cp.cuda.get_elapsed_time(first, last) / 1000.0)
            return seconds

        self.counters.add(name, received)
        self.counters.defer(name, timer)

    def _empty(self, index: int, size: int, dtype) -> Any:
        with self.on(index):  # allocated in the order of the stream that writes it
            return self.cp.empty(int(size), dtype=dtype)

    def _every(self, local: list[int], what: str) -> np.ndarray:
        """One integer per global rank (sizes): known here in one process, by MPI otherwise."""
        if self.mpi is None:
            return np.asarray(local, dtype=np.int64)
        return self.mpi.sizes(int(local[0]), what)

    # -- collectives ------------------------------------------------------------------------------
    def allreduce(self, values: list, op: str = "sum") -> list:
        self._check_op(op)
        nccl = _nccl()
        code = {"sum": nccl.NCCL_SUM, "min": nccl.NCCL_MIN, "max": nccl.NCCL_MAX}[op]
        values = [v if v.flags.c_contiguous else v.copy() for v in values]
        outs = [self._empty(i, v.size, v.dtype) for i, v in enumerate(values)]
        received = sum(base.allreduce_bytes(v.nbytes, self.size) for v in values)
        with self._group("allreduce", received):
            for i, (v, out) in enumerate(zip(values, outs)):
                self._comms[i].allReduce(v.data.ptr, out.data.ptr, v.size, nccl_dtype(v.dtype),
                                         code, self._streams[i].ptr)
        return outs

    def allgatherv(self, values: list) -> list:
        """One AllGather of the slices padded to the largest, then each part copied out."""
        values = [v.ravel() if v.flags.c_contiguous else v.ravel().copy() for v in values]
        dtype = values[0].dtype
        counts = self._every([v.size for v in values], "allgatherv (sizes)")
        first = displacements(counts)
        widest = int(counts.max()) if counts.size else 0
        slots = []
        for i, (rank, v) in enumerate(zip(self.ranks, values)):
            with self.on(i):
                slot = self.cp.empty(widest * self.size, dtype=dtype)
                slot[rank * widest:rank * widest + v.size] = v
                slots.append(slot)
        if widest:
            self._allgather([s[r * widest:(r + 1) * widest] for r, s in zip(self.ranks, slots)],
                            slots, "allgatherv",
                            sum(base.allgatherv_bytes(counts * dtype.itemsize, r)
                                for r in self.ranks), self._streams)
        outs = []
        for i, slot in enumerate(slots):
            with self.on(i):
                out = self.cp.empty(int(counts.sum()), dtype=dtype)
                for root in range(self.size):
                    c = int(counts[root])
                    if c:
                        out[int(first[root]):int(first[root]) + c] = \
                            slot[root * widest:root * widest + c]
                outs.append(out)
        return outs

    def allgather(self, values: list, out: list | None = None, *,
                  overlap: bool = False) -> list:
        values = [v.ravel() for v in values]
        count = int(values[0].size)
        if out is None:
            out = [self._empty(i, count * self.size, v.dtype) for i, v in enumerate(values)]
        streams = self._exchange if overlap else self._streams
        if overlap:
            for i in range(len(values)):
                self._order(self._streams[i], self._exchange[i], i)
        received = sum(base.allgather_bytes(v.nbytes, self.size) for v in values)
        self._allgather(values, out, "allgather", received, streams)
        return out

    def _allgather(self, values: list, outs: list, name: str, received: int,
                   streams: list) -> None:
        """One ncclAllGather per local rank in one group (in place where a slice is its rank's
        slot of the output)."""
        code = nccl_dtype(values[0].dtype)
        count = int(values[0].size)
        with self._group(name, received, streams):
            for i, (v, o) in enumerate(zip(values, outs)):
                self._comms[i].allGather(v.data.ptr, o.data.ptr, count, code, streams[i].ptr)

    def alltoallv(self, values: list, counts: list[np.ndarray],
                  recv_counts: list[np.ndarray] | None = None, *,
                  send_first: list[np.ndarray] | None = None,
                  out: list | None = None) -> tuple[list, list[np.ndarray]]:
        counts = self._check_counts(counts)
        if recv_counts is None:
            if self.mpi is None:
                matrix = np.stack(counts)  # matrix[i][j]: i sends to j
                recv_counts = [matrix[:, j].copy() for j in range(self.size)]
            else:
                recv_counts = [self.mpi.alltoall_counts(counts[0])]
        values = [v if v.flags.c_contiguous else v.copy() for v in values]
        dtype = values[0].dtype
        itemsize = dtype.itemsize
        code = nccl_dtype(dtype)
        outs = out if out is not None else \
            [self._empty(i, rc.sum(), dtype) for i, rc in enumerate(recv_counts)]
        received = sum(base.alltoallv_bytes(rc * itemsize, r)
                       for r, rc in zip(self.ranks, recv_counts))
        with self._group("alltoallv", received):
            for i, rank in enumerate(self.ranks):
                firsts = displacements(counts[i]) if send_first is None else send_first[i]
                recv_first = displacements(recv_counts[i])
                for peer in range(self.size):
                    if peer == rank:
                        continue
                    if counts[i][peer]:
                        self._comms[i].send(values[i].data.ptr + int(firsts[peer]) * itemsize,
                                            int(counts[i][peer]), code, peer,
                                            self._streams[i].ptr)
                    if recv_counts[i][peer]:
                        self._comms[i].recv(outs[i].data.ptr + int(recv_first[peer]) * itemsize,
                                            int(recv_counts[i][peer]), code, peer,
                                            self._streams[i].ptr)
        for i, rank in enumerate(self.ranks):  # a rank's part for itself: a device copy
            own = int(counts[i][rank])
            if own:
                with self.on(i):
                    a = int((displacements(counts[i]) if send_first is None
                             else send_first[i])[rank])
                    b = int(displacements(recv_counts[i])[rank])
                    outs[i][b:b + own] = values[i][a:a + own]
        return outs, recv_counts

    def broadcast(self, values: list, root: int = 0) -> list:
        values = [v if v.flags.c_contiguous else v.copy() for v in values]
        outs = [self._empty(i, v.size, v.dtype).reshape(v.shape) for i, v in enumerate(values)]
        received = sum(base.broadcast_bytes(v.nbytes, r, root) for r, v in zip(self.ranks, values))
        with self._group("broadcast", received):
            for i, (v, out) in enumerate(zip(values, outs)):
                self._comms[i].broadcast(v.data.ptr, out.data.ptr, v.size, nccl_dtype(v.dtype),
                                         root, self._streams[i].ptr)
        return outs

    def barrier(self) -> None:
        """Every rank has reached it: an allreduce of one integer, waited for on the host."""
        nccl = _nccl()
        tokens = [self._empty(i, 1, np.int32) for i in range(len(self.ranks))]
        for i, token in enumerate(tokens):
            with self.on(i):
                token.fill(0)
        with self._group("barrier", 0):
            for i, token in enumerate(tokens):
                self._comms[i].allReduce(token.data.ptr, token.data.ptr, 1, nccl.NCCL_INT32,
                                         nccl.NCCL_SUM, self._streams[i].ptr)
        for i, token in enumerate(tokens):
            self.fetch(i, token)

    # -- host side ----------------------------------------------------------------------------------
    def allgatherv_host(self, values: list[np.ndarray]) -> np.ndarray:
        if self.mpi is None:
            return np.concatenate([np.asarray(v) for v in values])
        return self.mpi.allgatherv_host(values)

    def bcast_object(self, obj: Any, root: int = 0) -> Any:
        return obj if self.mpi is None else self.mpi.bcast_object(obj, root)

    def allgather_object(self, obj: Any) -> list:
        return [obj] * self.size if self.mpi is None else self.mpi.allgather_object(obj)

    def close(self) -> None:
        for comm in self._comms:
            comm.destroy()
        self._comms = []
