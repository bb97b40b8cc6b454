"""The communicator interface, its byte formulas and counters.

Bytes are counted as what each rank *receives* in a collective, by the usual algorithms'
formulas (the figures NCCL's and MPI's benchmarks report as bus traffic), with P ranks:

==============  ==========================================================
allreduce       ``2 (P - 1) / P * n`` of an n-byte array (ring: reduce-scatter, allgather)
allgather       every other rank's slice of n bytes: ``(P - 1) n`` (slices of one size)
allgatherv      every other rank's slice: ``total - own``
alltoallv       what the other ranks send it (its own part is a local copy)
broadcast       ``n`` on every rank but the root
barrier         nothing
==============  ==========================================================

One rank alone exchanges nothing. :class:`Counters` keeps calls, bytes (summed over this
process's local ranks) and seconds per collective; an operator reads the difference of two
:meth:`Counters.snapshot` s.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ExecutionError

__all__ = [
    "CLUSTER_TIMEOUT", "ClusterFailure", "Communicator", "Counters", "OPS",
    "allgather_bytes", "allgatherv_bytes", "allreduce_bytes", "alltoallv_bytes", "array_module", "broadcast_bytes",
]

#: Reductions every backend has (NCCL has no bitwise ones: bitmaps travel by allgatherv).
OPS = ("sum", "min", "max")

#: Seconds a rank waits in one collective for the others before it declares the job failed
#: (``GRAPHDB_CLUSTER_TIMEOUT``; ``connect(..., cluster_timeout=)``).
CLUSTER_TIMEOUT = float(os.environ.get("GRAPHDB_CLUSTER_TIMEOUT", "120"))


class ClusterFailure(ExecutionError):
    """A rank of a cluster job stopped answering (died, or hangs)."""


def allreduce_bytes(nbytes: int, size: int) -> int:
    """Bytes one rank receives in an allreduce of ``nbytes`` over ``size`` ranks."""
    return 0 if size <= 1 else (2 * (size - 1) * int(nbytes)) // size


def allgather_bytes(nbytes: int, size: int) -> int:
    """Bytes one rank receives in an allgather of slices of ``nbytes`` over ``size`` ranks."""
    return max(size - 1, 0) * int(nbytes)


def allgatherv_bytes(slice_bytes: Sequence[int], rank: int) -> int:
    """Bytes rank ``rank`` receives in an allgatherv of slices of ``slice_bytes``."""
    return int(sum(slice_bytes)) - int(slice_bytes[rank])


def alltoallv_bytes(recv_bytes: Sequence[int], rank: int) -> int:
    """Bytes rank ``rank`` receives in an alltoallv: ``recv_bytes[j]`` from rank j, its own
    part excluded."""
    return int(sum(recv_bytes)) - int(recv_bytes[rank])


def broadcast_bytes(nbytes: int, rank: int, root: int) -> int:
    return 0 if rank == root else int(nbytes)


def array_module(array: Any):
    """numpy or cupy, whichever ``array`` belongs to (CuPy is never imported for numpy)."""
    if type(array).__module__.split(".")[0] == "cupy":
        import cupy

        return cupy
    return np


@dataclass
class CollectiveCount:
    calls: int = 0
    bytes: int = 0
    seconds: float = 0.0


class Counters:
    """Calls, received bytes and seconds per collective, for this process's local ranks."""

    def __init__(self, local_ranks: int):
        self.local_ranks = local_ranks
        self.by_name: dict[str, CollectiveCount] = {}
        self._pending: list = []  # device timings not yet read (see settle)

    def add(self, name: str, nbytes: int, seconds: float = 0.0) -> None:
        count = self.by_name.setdefault(name, CollectiveCount())
        count.calls += 1
        count.bytes += int(nbytes)
        count.seconds += seconds

    def defer(self, name: str, timer: Any) -> None:
        """A device timing (``timer()`` -> seconds, blocking) read at the next snapshot."""
        self._pending.append((name, timer))

    def settle(self) -> None:
        for name, timer in self._pending:
            self.by_name.setdefault(name, CollectiveCount()).seconds += timer()
        self._pending.clear()

    def snapshot(self) -> dict[str, tuple[int, int, float]]:
        self.settle()
        return {k: (c.calls, c.bytes, c.seconds) for k, c in self.by_name.items()}

    def since(self, before: dict[str, tuple[int, int, float]]) -> dict[str, CollectiveCount]:
        """What happened after ``before`` (a :meth:`snapshot`)."""
        now = self.snapshot()
        out = {}
        for name, (calls, nbytes, seconds) in now.items():
            c0, b0, s0 = before.get(name, (0, 0, 0.0))
            if calls > c0:
                out[name] = CollectiveCount(calls - c0, nbytes - b0, seconds - s0)
        return out


class Communicator:
    """Collectives over ``size`` ranks, of which this process drives ``ranks`` (global ids).

    Every collective takes one array per local rank (a list, in the order of ``ranks``) and
    returns one per local rank; they must be called by every rank in the same order (SPMD).
    """

    backend = "abstract"

    def __init__(self, size: int, ranks: Sequence[int], timeout: float | None = None):
        self.size = int(size)
        self.ranks = tuple(int(r) for r in ranks)
        self.timeout = CLUSTER_TIMEOUT if timeout is None else timeout
        self.counters = Counters(len(self.ranks))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size}, ranks={self.ranks})"

    # -- where a local rank's arrays live ---------------------------------------------------------
    @property
    def kind(self) -> str:
        """``"gpu"`` when the ranks' arrays are device arrays, else ``"cpu"``."""
        return "cpu"

    @contextlib.contextmanager
    def on(self, index: int) -> Iterator[None]:
        """Make local rank ``index``'s device current (and its stream), for its work."""
        yield

    def fetch(self, index: int, array: Any) -> np.ndarray:
        """A local rank's array on the host (waiting for its device, within the timeout)."""
        return np.asarray(array)

    # -- collectives ------------------------------------------------------------------------------
    def allreduce(self, values: list, op: str = "sum") -> list:
        raise NotImplementedError

    def allgatherv(self, values: list) -> list:
        """Every rank's slice concatenated in rank order, on every rank."""
        raise NotImplementedError

    def allgather(self, values: list, out: list | None = None, *,
                  overlap: bool = False) -> list:
        """Slices of one size, one per local rank, concatenated in rank order on every rank
        (one AllGather). ``out``: the outputs (``size`` slices each), allocated once by the
        caller; a slice that is its rank's own slot of ``out`` is gathered in place.
        ``overlap``: on the exchange stream, after what the compute streams issued so far;
        work that reads the result goes on :meth:`exchange_on` or waits with :meth:`join`."""
        raise NotImplementedError

    @contextlib.contextmanager
    def exchange_on(self, index: int) -> Iterator[None]:
        """Make local rank ``index``'s exchange stream current (its compute stream where the
        backend has no separate one): work that must follow an overlapped collective."""
        with self.on(index):
            yield

    def join(self, index: int) -> None:
        """Local rank ``index``'s compute stream waits for what its exchange stream holds."""

    def alltoallv(self, values: list, counts: list[np.ndarray],
                  recv_counts: list[np.ndarray] | None = None, *,
                  send_first: list[np.ndarray] | None = None,
                  out: list | None = None) -> tuple[list, list[np.ndarray]]:
        """Owner routing: local rank i sends ``values[i]``, grouped by destination with
        ``counts[i][j]`` elements for rank j (host int64 arrays of ``size``); returns what each
        local rank received (grouped by source, in rank order) and how many from each rank.
        ``recv_counts`` from an earlier call with the same counts skips their exchange.
        ``send_first[i][j]``: where rank j's part starts in ``values[i]`` (default: packed);
        ``out``: buffers to receive into (allocated once by the caller; what arrives is their
        first elements)."""
        raise NotImplementedError

    def broadcast(self, values: list, root: int = 0) -> list:
        """Rank ``root``'s array on every rank (the others pass arrays of its shape)."""
        raise NotImplementedError

    def barrier(self) -> None:
        raise NotImplementedError

    # -- host side: results and control ------------------------------------------------------------
    def allgatherv_host(self, values: list[np.ndarray]) -> np.ndarray:
        """Host slices of every rank concatenated in rank order (the results' gather)."""
        raise NotImplementedError

    def bcast_object(self, obj: Any, root: int = 0) -> Any:
        raise NotImplementedError

    def allgather_object(self, obj: Any) -> list:
        """One picklable object per *global* rank (this process's local ranks share ``obj``)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the communicator holds (NCCL communicators)."""

    # -- shared helpers -----------------------------------------------------------------------------
    def _check_op(self, op: str) -> None:
        if op not in OPS:
            raise ValueError(f"reduction must be one of {OPS}, not {op!r}")

    def _count(self, name: str, received: int, started: float) -> None:
        self.counters.add(name, received, time.perf_counter() - started)

    def _check_counts(self, counts: list[np.ndarray]) -> list[np.ndarray]:
        out = []
        for c in counts:
            c = np.asarray(c, dtype=np.int64)
            if c.shape != (self.size,):
                raise ValueError(f"alltoallv needs one count per rank ({self.size}), got {c.shape}")
            out.append(c)
        return out


def displacements(counts: np.ndarray) -> np.ndarray:
    """Start of each rank's part in a buffer grouped by rank."""
    counts = np.asarray(counts, dtype=np.int64)
    out = np.zeros(counts.size, dtype=np.int64)
    np.cumsum(counts[:-1], out=out[1:])
    return out
