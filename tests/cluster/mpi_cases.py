"""The partitioned operators through MPI: run by ``mpiexec -n N python -m tests.cluster.mpi_cases``
(tests/cluster/test_mpi.py does), one rank per process.

Every rank checks the MPI collectives and their byte counts against the formulas, then runs
every partitioned operator of tests/executor/partitioned_cases.py over the job's ranks and
compares it with the single-device result it computes itself (and PageRank's exchanged bytes
with the formula). Rank 0 prints one line per failed
case and ``ok <cases>``; the exit status is non-zero when any rank saw a failure.
"""

from __future__ import annotations

import sys

import numpy as np

from graphdb.executor.algorithms.pagerank.partitioned import balanced_segments
from graphdb.executor.comm import allgather_bytes, communicator, set_cluster
from graphdb.executor.comm.mpi import MpiComm
from tests.executor import partitioned_cases as cases


def pagerank_bytes(graph, size: int, rank: int, iterations: int = 20,
                   gpu: bool = False) -> int:
    """What one rank receives in a replicated PageRank: every iteration but the last, every
    other rank's slot (its contributions padded to the largest segment, and its two float64
    totals; contributions are float64 on the CPU, float32 on a GPU); at the end the ranks
    gathered (float64, padded to the largest segment)."""
    largest = int(balanced_segments(graph.offsets("in"), size).sizes().max())
    widest = largest + (largest & 1)
    slot = (widest + 4) * 4 if gpu else (widest + 2) * 8
    return (iterations - 1) * allgather_bytes(slot, size) + allgather_bytes(largest * 8, size)


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
    exchange = communicator(cases.config("mpi", comm.size, devices=devices).placement)
    problems = [f"rank {comm.rank}: {p}" for p in cases.check_collectives(exchange, xp)]
    count = 0
    for name, graph in cases.graphs().items():
        runs = [(a, cases.config("mpi", comm.size, devices=devices)) for a in sorted(cases.CASES)]
        runs += [(a, cases.config("mpi", comm.size, "split", devices=devices))
                 for a in ("pagerank", "cdlp")]
        runs += [("pagerank", cases.config("mpi", comm.size, streamed=True, devices=devices))]
        for algorithm, cfg in runs:
            got, metrics = cases.partitioned(algorithm, graph, cfg)
            count += 1
            want = cases.single(algorithm, graph)
            close = (np.allclose(got, want, rtol=1e-4, atol=1e-12)  # float32 contributions
                     if devices and algorithm == "pagerank" and cfg.placement.strategy ==
                     "replicated" and not cfg.placement.streamed
                     else cases.agrees(algorithm, got, want))
            if not close:
                problems.append(f"rank {comm.rank}: {algorithm} on {name} "
                                f"({cfg.placement.strategy}) differs from one device")
            if metrics["ranks"] != comm.size or metrics["backend"] != exchange.backend:
                problems.append(f"rank {comm.rank}: {algorithm} ran on {metrics}")
            if (algorithm, cfg.placement.strategy, cfg.placement.streamed) == (
                    "pagerank", "replicated", False):
                want = pagerank_bytes(graph, comm.size, comm.rank, gpu=bool(devices))
                if metrics["bytes_exchanged"] != want:
                    problems.append(f"rank {comm.rank}: pagerank on {name} received "
                                    f"{metrics['bytes_exchanged']} bytes, the formula {want}")
    every = comm.allgather_object(problems)
    if comm.rank == 0:
        for rank_problems in every:
            for p in rank_problems:
                print(p)
        if not any(every):
            print(f"ok {count} cases on {comm.size} ranks")
    return 1 if any(every) else 0


if __name__ == "__main__":
    sys.exit(main())
