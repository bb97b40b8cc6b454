"""Which communicator a placement runs on, made once per process where that costs anything.

A ``local`` placement gets a fresh :class:`~.local.LocalComm` per run (it holds nothing). NCCL
communicators take a fraction of a second to create and hold device memory: one per device
tuple is kept for the process. A cluster (``graphdb.connect(path, cluster="mpi")``) registers
its MPI communicator here with :func:`set_cluster`; its ranks' GPU traffic goes through one
NCCL communicator made over it.
"""

from __future__ import annotations

import threading
from typing import Any

from .base import Communicator
from .local import LocalComm

__all__ = ["cluster", "communicator", "set_cluster"]

_lock = threading.Lock()
_cluster: Any = None
_nccl: dict[tuple, Communicator] = {}


def set_cluster(comm: Any) -> None:
    """Register the process's cluster communicator (an MpiComm), or None to leave it."""
    global _cluster
    with _lock:
        _cluster = comm


def cluster() -> Any:
    """The cluster this process belongs to (an MpiComm), or None."""
    return _cluster


def communicator(placement: Any) -> Communicator:
    """The communicator of a :class:`~graphdb.executor.algorithms.spec.Placement`."""
    backend, devices = placement.backend, tuple(placement.devices)
    if backend == "local":
        return LocalComm(placement.ranks, kind="gpu" if devices else "cpu")
    if backend == "nccl":
        with _lock:
            comm = _nccl.get(devices)
            if comm is None:
                from .nccl import NcclComm

                comm = _nccl[devices] = NcclComm(devices)
            return comm
    if backend == "mpi":
        if _cluster is None:
            raise RuntimeError("an MPI placement needs a cluster connection "
                               "(graphdb.connect(path, cluster='mpi') under mpiexec)")
        if not devices:
            return _cluster
        with _lock:
            key = ("mpi",) + devices
            comm = _nccl.get(key)
            if comm is None:
                from .nccl import NcclComm

                comm = _nccl[key] = NcclComm(devices, mpi=_cluster)
            return comm
    raise ValueError(f"unknown communicator backend {backend!r}")
