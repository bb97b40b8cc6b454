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

from graphdb.executor.comm import (
    allgatherv_bytes,
    allreduce_bytes,
    alltoallv_bytes,
    broadcast_bytes,
    set_cluster,
)
from graphdb.executor.comm.mpi import MpiComm
from tests.executor.partitioned_cases import CASES, agrees, config, graphs, partitioned, single


def check_collectives(comm: MpiComm) -> list[str]:
    """Each collective's result and the bytes it counted, from this rank's side."""
    problems = []
    size, rank = comm.size, comm.rank
    before = comm.counters.snapshot()
    (total,) = comm.allreduce([np.arange(4.0) * (rank + 1)], "sum")
    if not np.array_equal(total, np.arange(4.0) * size * (size + 1) / 2):
        problems.append(f"allreduce gave {total}")
    (low,) = comm.allreduce([np.full(3, rank, dtype=np.int64)], "min")
    if low.tolist() != [0, 0, 0]:
        problems.append(f"allreduce min gave {low}")
    (full,) = comm.allgatherv([np.full(rank + 1, rank, dtype=np.int32)])
    if full.tolist() != [r for r in range(size) for _ in range(r + 1)]:
        problems.append(f"allgatherv gave {full}")
    sent = np.array([10 * rank + d for d in range(size) for _ in range(d + 1)], dtype=np.int64)
    (got,), (counts,) = comm.alltoallv([sent], [np.arange(1, size + 1)])
    if got.tolist() != [10 * r + rank for r in range(size) for _ in range(rank + 1)]:
        problems.append(f"alltoallv gave {got}")
    (bcast,) = comm.broadcast([np.full(5, rank, dtype=np.uint8)], root=size - 1)
    if bcast.tolist() != [size - 1] * 5:
        problems.append(f"broadcast gave {bcast}")
    comm.barrier()
    done = {k: (c.calls, c.bytes) for k, c in comm.counters.since(before).items()}
    want = {
        "allreduce": (2, allreduce_bytes(32, size) + allreduce_bytes(24, size)),
        "allgatherv": (1, allgatherv_bytes([4 * (r + 1) for r in range(size)], rank)),
        "alltoallv": (1, alltoallv_bytes(np.full(size, rank + 1) * 8, rank)),
        "broadcast": (1, broadcast_bytes(5, rank, size - 1)),
        "barrier": (1, 0),
    }
    if done != want:
        problems.append(f"counted {done}, formulas give {want}")
    return problems


def main() -> int:
    comm = MpiComm(timeout=60)
    set_cluster(comm)
    problems = [f"rank {comm.rank}: {p}" for p in check_collectives(comm)]
    cases = 0
    for name, graph in graphs().items():
        runs = [(a, config("mpi", comm.size)) for a in sorted(CASES)]
        runs += [(a, config("mpi", comm.size, "split")) for a in ("pagerank", "cdlp")]
        runs += [("pagerank", config("mpi", comm.size, streamed=True))]
        for algorithm, cfg in runs:
            got, metrics = partitioned(algorithm, graph, cfg)
            cases += 1
            if not agrees(algorithm, got, single(algorithm, graph)):
                problems.append(f"rank {comm.rank}: {algorithm} on {name} "
                                f"({cfg.placement.strategy}) differs from one device")
            if metrics["ranks"] != comm.size or metrics["backend"] != "mpi":
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
