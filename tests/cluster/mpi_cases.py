"""The partitioned operators through MPI: run by ``mpiexec -n N python -m tests.cluster.mpi_cases``
(tests/cluster/test_mpi.py does), one rank per process.

Every rank checks the MPI collectives and their byte counts against the formulas, then runs
every partitioned operator of tests/executor/partitioned_cases.py over the job's ranks and
compares it with the single-device result it computes itself. Rank 0 prints one line per failed
case and ``ok <cases>``; the exit status is non-zero when any rank saw a failure.
"""

from __future__ import annotations

import sys

import numpy as np

from graphdb.executor.comm import communicator, set_cluster
from graphdb.executor.comm.mpi import MpiComm
from tests.executor.partitioned_cases import (
    CASES,
    agrees,
    check_collectives,
    config,
    graphs,
    partitioned,
    single,
)


def main() -> int:
    """``--gpu``: the ranks' arrays on their GPUs (one GPU per rank, NCCL over MPI)."""
    comm = MpiComm(timeout=60)
    set_cluster(comm)
    devices, xp = (), np
    if "--gpu" in sys.argv:
        import cupy

        from graphdb.cluster import local_rank

        devices = (local_rank(comm) % cupy.cuda.runtime.getDeviceCount(),)
        cupy.cuda.Device(devices[0]).use()
        xp = cupy
    exchange = communicator(config("mpi", comm.size, devices=devices).placement)
    problems = [f"rank {comm.rank}: {p}" for p in check_collectives(exchange, xp)]
    cases = 0
    for name, graph in graphs().items():
        runs = [(a, config("mpi", comm.size, devices=devices)) for a in sorted(CASES)]
        runs += [(a, config("mpi", comm.size, "split", devices=devices))
                 for a in ("pagerank", "cdlp")]
        runs += [("pagerank", config("mpi", comm.size, streamed=True, devices=devices))]
        for algorithm, cfg in runs:
            got, metrics = partitioned(algorithm, graph, cfg)
            cases += 1
            if not agrees(algorithm, got, single(algorithm, graph)):
                problems.append(f"rank {comm.rank}: {algorithm} on {name} "
                                f"({cfg.placement.strategy}) differs from one device")
            if metrics["ranks"] != comm.size or metrics["backend"] != exchange.backend:
                problems.append(f"rank {comm.rank}: {algorithm} ran on {metrics}")
    every = comm.allgather_object(problems)
    if comm.rank == 0:
        for rank_problems in every:
            for p in rank_problems:
                print(p)
        if not any(every):
            print(f"ok {cases} cases on {comm.size} ranks")
    return 1 if any(every) else 0


if __name__ == "__main__":
    sys.exit(main())
