"""MPI ranks (mpi4py): one rank per process, on one machine or many.

Every collective is posted non-blocking and waited for with a deadline (``timeout``, default
:data:`~.base.CLUSTER_TIMEOUT`): a rank whose partners stop answering (a rank died and the
launcher does not clean up, or a rank hangs) prints which collective it was waiting in and
aborts the job (``MPI_Abort``), which ends every rank; so a job never hangs. MPICH's and
Open MPI's launchers also end every rank as soon as one dies.

The operators' traffic runs on a duplicate of the world communicator, apart from whatever the
user's own script sends on ``COMM_WORLD``.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import numpy as np

from .base import (
    ClusterFailure,
    Communicator,
    allgather_bytes,
    allgatherv_bytes,
    allreduce_bytes,
    alltoallv_bytes,
    broadcast_bytes,
    displacements,
)

__all__ = ["EXIT_RANK_FAILED", "MpiComm"]

#: Exit status of a rank that aborts the job because another rank stopped answering.
EXIT_RANK_FAILED = 3
#: A collective is tested this long in a tight loop before the waiting rank starts to sleep.
_SPIN_SECONDS = 0.002


def _mpi():
    from mpi4py import MPI

    return MPI


def _datatype(dtype: np.dtype):
    from mpi4py.util.dtlib import from_numpy_dtype

    return from_numpy_dtype(np.dtype(dtype))


class MpiComm(Communicator):
    """One MPI rank per process; numpy arrays. ``abort=False`` (tests) raises
    :class:`ClusterFailure` instead of aborting the job on a timeout."""

    backend = "mpi"

    def __init__(self, world: Any = None, timeout: float | None = None, abort: bool = True):
        MPI = _mpi()
        self.world = (world or MPI.COMM_WORLD).Dup()
        self.rank = self.world.Get_rank()
        super().__init__(self.world.Get_size(), (self.rank,), timeout)
        self._abort = abort

    # -- waiting within the deadline --------------------------------------------------------------
    def _wait(self, request, what: str) -> None:
        if not self.timeout:
            request.Wait()
            return
        start = time.monotonic()
        pause = 0.0
        while not request.Test():
            waited = time.monotonic() - start
            if waited > self.timeout:
                self.fail(f"rank {self.rank} of {self.size} waited {waited:.0f} s in {what} "
                          "for the other ranks: a rank has died or hangs")
            if waited > _SPIN_SECONDS:
                pause = min(max(pause * 2, 1e-5), 1e-3)
                time.sleep(pause)

    def fail(self, message: str) -> None:
        """Stop the job: say why on stderr, then abort every rank (or raise, without abort)."""
        if not self._abort:
            raise ClusterFailure(message)
        print(f"graphdb cluster: {message}; stopping the job", file=sys.stderr, flush=True)
        self.world.Abort(EXIT_RANK_FAILED)
        os._exit(EXIT_RANK_FAILED)  # pragma: no cover  (Abort does not return)

    # -- collectives ------------------------------------------------------------------------------
    def allreduce(self, values: list, op: str = "sum") -> list:
        self._check_op(op)
        MPI = _mpi()
        start = time.perf_counter()
        (value,) = values
        value = np.ascontiguousarray(value)
        out = np.empty_like(value)
        mpi_op = {"sum": MPI.SUM, "min": MPI.MIN, "max": MPI.MAX}[op]
        self._wait(self.world.Iallreduce(value, out, op=mpi_op), f"allreduce ({op})")
        self._count("allreduce", allreduce_bytes(value.nbytes, self.size), start)
        return [out]

    def sizes(self, count: int, what: str = "sizes") -> np.ndarray:
        """One integer from every rank (the sizes of a coming exchange), within the deadline."""
        mine = np.array([count], dtype=np.int64)
        every = np.empty(self.size, dtype=np.int64)
        self._wait(self.world.Iallgather(mine, every), what)
        return every

    def alltoall_counts(self, sent: np.ndarray) -> np.ndarray:
        """How many elements each rank will send this one, from what this one sends each."""
        received = np.empty(self.size, dtype=np.int64)
        self._wait(self.world.Ialltoall(np.ascontiguousarray(sent, dtype=np.int64), received),
                   "alltoallv (counts)")
        return received

    def allgatherv(self, values: list) -> list:
        start = time.perf_counter()
        (value,) = values
        out, counts = self._gatherv(np.ascontiguousarray(value).ravel())
        self._count("allgatherv", allgatherv_bytes(counts * out.itemsize, self.rank), start)
        return [out]

    def allgather(self, values: list, out: list | None = None, *,
                  overlap: bool = False) -> list:
        MPI = _mpi()
        start = time.perf_counter()
        (value,) = values
        full = out[0] if out is not None else np.empty(value.size * self.size, value.dtype)
        send = MPI.IN_PLACE if np.shares_memory(value, full) else np.ascontiguousarray(value)
        self._wait(self.world.Iallgather(send, full), "allgather")
        self._count("allgather", allgather_bytes(value.nbytes, self.size), start)
        return [full]

    def _gatherv(self, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        counts = self.sizes(value.size, "allgatherv (sizes)")
        out = np.empty(int(counts.sum()), dtype=value.dtype)
        kind = _datatype(value.dtype)
        self._wait(self.world.Iallgatherv([value, kind],
                                          [out, (counts, displacements(counts)), kind]),
                   "allgatherv")
        return out, counts

    def alltoallv(self, values: list, counts: list[np.ndarray],
                  recv_counts: list[np.ndarray] | None = None, *,
                  send_first: list[np.ndarray] | None = None,
                  out: list | None = None) -> tuple[list, list[np.ndarray]]:
        start = time.perf_counter()
        (value,) = values
        value = np.ascontiguousarray(value)
        (sent,) = self._check_counts(counts)
        if recv_counts is None:
            received = self.alltoall_counts(sent)
        else:
            (received,) = recv_counts
        target = np.empty(int(received.sum()), dtype=value.dtype) if out is None else out[0]
        kind = _datatype(value.dtype)
        first = displacements(sent) if send_first is None else \
            np.asarray(send_first[0], dtype=np.int64)
        self._wait(self.world.Ialltoallv([value, (sent, first), kind],
                                         [target, (received, displacements(received)), kind]),
                   "alltoallv")
        self._count("alltoallv", alltoallv_bytes(received * value.itemsize, self.rank), start)
        return [target], [received]

    def broadcast(self, values: list, root: int = 0) -> list:
        start = time.perf_counter()
        (value,) = values
        out = np.ascontiguousarray(value).copy()
        self._wait(self.world.Ibcast(out, root=root), "broadcast")
        self._count("broadcast", broadcast_bytes(out.nbytes, self.rank, root), start)
        return [out]

    def barrier(self) -> None:
        start = time.perf_counter()
        self._wait(self.world.Ibarrier(), "barrier")
        self._count("barrier", 0, start)

    # -- host side ----------------------------------------------------------------------------------
    def allgatherv_host(self, values: list[np.ndarray]) -> np.ndarray:
        """The results' gather: not an exchange of the operator's steps, so not counted (as
        the other backends, which gather on the host of one process, count nothing)."""
        return self._gatherv(np.ascontiguousarray(values[0]).ravel())[0]

    def bcast_object(self, obj: Any, root: int = 0) -> Any:
        """Control (statements, identifiers): a pickled object, no deadline (rank 0 may wait
        for its user as long as it likes)."""
        return self.world.bcast(obj, root=root)

    def allgather_object(self, obj: Any) -> list:
        return self.world.allgather(obj)

    def close(self) -> None:
        world, self.world = self.world, None
        if world is not None:
            world.Free()
