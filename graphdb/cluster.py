"""Cluster runs: one statement on every rank of an MPI job, rank 0 speaking for the job.

``graphdb.connect(path, cluster="mpi")`` in a script started by ``mpiexec -n N`` (or ``srun``)
joins the job's ranks: each rank opens its own copy of the database at ``path`` (read-only:
load and change graphs before, then copy the database to every machine), the copies are checked
to hold the same graph versions, and every statement the script runs is planned and run by every
rank alike: graph operators the planner partitions run over all ranks (each reading only its
segment of its copy), everything else runs on each rank. Every rank gets the result; rank 0
prints it (``graphdb query ... --cluster mpi``, the shell).

The shell and ``graphdb query`` read statements on rank 0 only: :class:`Leader` sends each one
to the other ranks, which :func:`follow` until the leader leaves.

A rank that dies ends the job: MPI's launchers stop every other rank when one exits abnormally,
and a rank whose partners stop answering in a collective for ``cluster_timeout`` seconds
(``GRAPHDB_CLUSTER_TIMEOUT``, default 120) says so on stderr and aborts the job
(:mod:`graphdb.executor.comm.mpi`): it never hangs.
"""

from __future__ import annotations

import sys
from typing import Any

from .errors import Error, InterfaceError, OperationalError

__all__ = ["CLUSTERS", "Leader", "fingerprint", "follow", "join"]

CLUSTERS = ("mpi",)


def join(kind: str, timeout: float | None = None) -> Any:
    """This process's communicator in the job (an MpiComm), registered for the planner; its
    GPU, when the machine has any, is the rank's place among the ranks of its machine."""
    if kind not in CLUSTERS:
        raise InterfaceError(f"cluster must be one of {', '.join(CLUSTERS)}, got {kind!r}")
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        raise InterfaceError("cluster='mpi' needs mpi4py and an MPI runtime: "
                             "pip install 'graphdb[cluster]'") from None
    from graphdb.executor.comm import cluster, set_cluster
    from graphdb.executor.comm.mpi import MpiComm

    comm = cluster()
    if comm is None:
        comm = MpiComm(timeout=timeout)
        set_cluster(comm)
    elif timeout is not None:
        comm.timeout = timeout
    return comm


def _node(comm: Any) -> tuple[int, int]:
    """(this rank's place among the ranks of its machine, how many they are)."""
    from mpi4py import MPI

    node = comm.world.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return node.Get_rank(), node.Get_size()
    finally:
        node.Free()


def local_rank(comm: Any) -> int:
    """This rank's place among the ranks on its machine (which GPU it takes)."""
    return _node(comm)[0]


def threads_per_rank(comm: Any) -> int:
    """CPU threads of one rank: the machine's cores shared by its ranks (the compiled kernels'
    threads of several ranks on too few cores slowed a 2-rank job on 2 cores sixfold)."""
    import os

    return max(1, (os.cpu_count() or 1) // _node(comm)[1])


def fingerprint(con: Any) -> list[tuple]:
    """What must be equal in every rank's copy: each graph's name, version, sizes, kind."""
    return sorted((e.name, e.graph_id, e.num_vertices, e.num_edges, e.directed, e.weighted)
                  for e in con.catalog.entries())


def check_copies(con: Any, comm: Any) -> None:
    """Refuse to run when the ranks' copies of the database differ (every rank raises)."""
    prints = comm.allgather_object(fingerprint(con))
    for rank, other in enumerate(prints):
        if other != prints[0]:
            mine = {g[0]: g for g in prints[0]}
            theirs = {g[0]: g for g in other}
            names = sorted(n for n in set(mine) | set(theirs) if mine.get(n) != theirs.get(n))
            raise OperationalError(
                f"rank {rank}'s copy of the database differs from rank 0's (graph"
                f"{'s' if len(names) > 1 else ''} {', '.join(repr(n) for n in names)}): copy "
                "the same database to every machine (see README, 'A cluster')")


class Leader:
    """Rank 0's connection in the shell and the command line: each statement goes to the other
    ranks first, then runs here; everything else is the connection's."""

    def __init__(self, con: Any, comm: Any):
        self._con, self._comm = con, comm

    def execute(self, sql: str, parameters: Any = None):
        self._comm.bcast_object(("execute", sql, parameters))
        return self._con.execute(sql, parameters)

    def close(self) -> None:
        self.stop()
        self._con.close()

    def stop(self) -> None:
        if self._comm is not None:
            self._comm.bcast_object(None)
            self._comm = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)

    def __enter__(self) -> "Leader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def follow(con: Any, comm: Any) -> int:
    """Run the statements rank 0 sends until it leaves; rank 0 reports results and errors."""
    while True:
        message = comm.bcast_object(None)
        if message is None:
            return 0
        _, sql, parameters = message
        try:
            con.execute(sql, parameters)
        except Error:
            pass  # rank 0 meets the same error and reports it
        except Exception as exc:  # noqa: BLE001  (a rank's own failure: the job must end)
            print(f"graphdb cluster: rank {comm.ranks[0]}: {type(exc).__name__}: {exc}",
                  file=sys.stderr, flush=True)
            raise
