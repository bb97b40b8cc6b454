"""Communicators: how the ranks of a partitioned operator exchange vertex state.

One process drives one or more ranks (its *local ranks*): every collective takes a list with
one array per local rank and returns a list, so the same operator code runs

- ``local``: every rank in this process (:class:`LocalComm`), numpy or CuPy arrays of one
  device: the tests' simulated ranks, and several ranks on one GPU;
- ``nccl``: the GPUs of one host from one process, or one GPU per MPI process
  (:class:`NcclComm`, ``cupy.cuda.nccl``), collectives on the operator's stream;
- ``mpi``: one rank per process (:class:`MpiComm`, mpi4py), CPU arrays; GPU ranks under MPI
  exchange their arrays through NCCL and keep MPI for the host side.

Collectives: ``allreduce`` (sum, min, max), ``allgather`` (slices of one size in rank order:
one AllGather, in place, optionally on an exchange stream that overlaps compute),
``allgatherv`` (owned slices of different sizes, concatenated in rank order), ``alltoallv`` (owner routing), ``broadcast``, ``barrier``; and
on the host ``allgatherv_host`` (results), ``bcast_object``/``allgather_object`` (control).
Every collective counts its calls, the bytes each rank receives (by the formulas of
:mod:`.base`) and its time, which EXPLAIN ANALYZE reports.
"""

from .base import (
    CLUSTER_TIMEOUT,
    ClusterFailure,
    Communicator,
    Counters,
    allgather_bytes,
    allgatherv_bytes,
    allreduce_bytes,
    alltoallv_bytes,
    array_module,
    broadcast_bytes,
)
from .local import LocalComm
from .registry import cluster, communicator, set_cluster

__all__ = [
    "CLUSTER_TIMEOUT", "ClusterFailure", "Communicator", "Counters", "LocalComm",
    "allgather_bytes", "allgatherv_bytes", "allreduce_bytes", "alltoallv_bytes", "array_module",
    "broadcast_bytes", "cluster", "communicator", "set_cluster",
]
