"""The partitioned operators on GPUs: the same cases as tests/executor/test_partitioned.py with
the ranks' arrays on the device.

- ranks simulated on one GPU (``local`` with a device): the multi-rank GPU path on one GPU;
- NCCL over every GPU present (a communicator of one rank on a one-GPU machine, which NCCL
  allows): its collectives and byte counts, and every operator against the CPU;
- SQL with ``SET debug_variant = 'partitioned'`` on the GPU against the CPU's answers.

Both sides compute in float64, so PageRank agrees to 1e-9 here too.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import graphdb
from tests.executor import partitioned_cases as cases

pytestmark = pytest.mark.gpu

GRAPHS = cases.graphs()


def _gpus() -> tuple[int, ...]:
    from graphdb.executor.device import gpu_count

    return tuple(range(gpu_count()))


@pytest.fixture(scope="module")
def reference():
    return {(g, a): cases.single(a, graph) for g, graph in GRAPHS.items() for a in cases.CASES}


@pytest.mark.parametrize("ranks", [1, 2, 3])
@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("algorithm", sorted(cases.CASES))
def test_ranks_simulated_on_one_gpu(reference, algorithm, graph, ranks):
    got, metrics = cases.partitioned(algorithm, GRAPHS[graph],
                                     cases.config("local", ranks, devices=(0,)))
    assert cases.agrees(algorithm, got, reference[graph, algorithm]), (algorithm, graph, ranks)
    assert metrics["ranks"] == ranks


@pytest.mark.parametrize("strategy,streamed", [("split", False), ("replicated", True)])
def test_split_and_streamed_pagerank_on_one_gpu(reference, strategy, streamed):
    got, _ = cases.partitioned("pagerank", GRAPHS["rmat"],
                               cases.config("local", 2, strategy, streamed, devices=(0,)))
    assert cases.agrees("pagerank", got, reference["rmat", "pagerank"])


def test_simulated_collectives_on_one_gpu():
    import cupy

    from graphdb.executor.comm import LocalComm

    assert cases.check_collectives(LocalComm(3, kind="gpu"), cupy) == []


def test_nccl_collectives_on_every_gpu():
    import cupy

    from graphdb.executor.comm.nccl import NcclComm

    for devices in {(0,), _gpus()}:
        comm = NcclComm(devices)
        try:
            assert cases.check_collectives(comm, cupy) == [], devices
        finally:
            comm.close()


@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("algorithm", sorted(cases.CASES))
def test_partitioned_over_nccl(reference, algorithm, graph):
    gpus = _gpus()
    got, metrics = cases.partitioned(algorithm, GRAPHS[graph],
                                     cases.config("nccl", len(gpus), devices=gpus))
    assert cases.agrees(algorithm, got, reference[graph, algorithm]), (algorithm, graph, gpus)
    assert (metrics["ranks"], metrics["backend"]) == (len(gpus), "nccl")


def test_sql_partitioned_on_the_gpus(tmp_path):
    from graphdb.generators import rmat

    src, dst = rmat(12, 8, seed=6)
    matrix = sp.coo_matrix((np.ones(len(src)), (src, dst)), shape=(1 << 12, 1 << 12))
    queries = ["SELECT vertex, rank FROM pagerank(g) ORDER BY vertex",
               "SELECT vertex, depth FROM bfs(g, 3) ORDER BY vertex",
               "SELECT vertex, component FROM wcc(g) ORDER BY vertex"]
    with graphdb.connect(tmp_path / "db", device="cpu") as con:
        con.from_scipy("g", matrix, weighted=False)
        expected = [con.execute(q).fetchall() for q in queries]
        con.execute("SET device = 'gpu'")
        con.execute("SET debug_variant = 'partitioned'")
        plan = "\n".join(r[0] for r in con.execute("EXPLAIN " + queries[0]).fetchall())
        assert "gpu · partitioned" in plan and "NCCL, GPUs 0" in plan
        for q, want in zip(queries, expected):
            got = con.execute(q).fetchall()
            assert [r[0] for r in got] == [r[0] for r in want]
            assert np.allclose([r[1] for r in got], [r[1] for r in want], rtol=0, atol=1e-9)
