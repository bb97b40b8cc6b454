"""The partitioned operators on GPUs, each against its one-GPU twin and the CPU.

- ranks simulated on one GPU (``local`` with a device): the multi-rank GPU path on one GPU;
- NCCL over every GPU present (a communicator of one rank on a one-GPU machine, which NCCL
  allows): its collectives and byte counts, and every operator against the CPU and against the
  one-GPU operator on the same graph;
- one rank on the GPU that holds the graph: the one-GPU operator's very layout, so PageRank's
  ranks are the one-GPU operator's bit for bit;
- PageRank's relabelled, blocked and tiled layout on small graphs (tiny blocks and tiles), cut
  at segment bounds, over 1-3 ranks;
- SQL with ``SET debug_variant = 'partitioned'`` on the GPU against the CPU's answers, and a
  pushed-down LIMIT that moves only its rows.

PageRank on the GPU sums float32 contributions (as the one-GPU operator does): it agrees with
the CPU's float64 ranks to 1e-4 relative; everything else exactly.
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


def agrees(name: str, got: np.ndarray, want: np.ndarray) -> bool:
    if name == "pagerank":
        return got.shape == want.shape and bool(np.allclose(got, want, rtol=1e-4, atol=1e-12))
    return bool(np.array_equal(got, want))


@pytest.fixture(scope="module")
def reference():
    return {(g, a): cases.single(a, graph) for g, graph in GRAPHS.items() for a in cases.CASES}


def one_gpu(name: str, graph) -> np.ndarray:
    """The one-GPU operator's answer (it also makes the graph resident on GPU 0)."""
    import importlib

    from graphdb.executor.algorithms.spec import OperatorConfig

    args, column, missing = cases.CASES[name]
    family = {"khop": "bfs"}.get(name, name)
    module = importlib.import_module(f"graphdb.executor.algorithms.{family}.gpu")
    out = getattr(module, name)(graph, OperatorConfig(device="gpu"), **args)
    columns = {k: v.get() if hasattr(v, "get") else np.asarray(v)
               for k, v in out.columns.items()}
    return cases.dense(columns, graph.num_vertices, column, missing)


def partitioned(name: str, graph, config):
    got, metrics = cases.partitioned(name, graph, config)
    return got, metrics


@pytest.mark.parametrize("ranks", [1, 2, 3])
@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("algorithm", sorted(cases.CASES))
def test_ranks_simulated_on_one_gpu(reference, algorithm, graph, ranks):
    got, metrics = partitioned(algorithm, GRAPHS[graph],
                               cases.config("local", ranks, devices=(0,)))
    assert agrees(algorithm, got, reference[graph, algorithm]), (algorithm, graph, ranks)
    assert metrics["ranks"] == ranks


@pytest.mark.parametrize("strategy,streamed", [("split", False), ("replicated", True)])
def test_split_and_streamed_pagerank_on_one_gpu(reference, strategy, streamed):
    got, _ = partitioned("pagerank", GRAPHS["rmat"],
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
            # one padded AllGather, in place, on the exchange stream
            slots = []
            for i, d in enumerate(devices):
                with cupy.cuda.Device(d):
                    slots.append(cupy.full(3 * len(devices), -1, dtype=np.float32))
                    slots[-1][3 * i:3 * i + 3] = cupy.arange(3, dtype=np.float32) + 10 * i
            own = [s[3 * i:3 * i + 3] for i, s in enumerate(slots)]
            comm.allgather(own, slots, overlap=True)
            for i, d in enumerate(devices):
                comm.join(i)
                with cupy.cuda.Device(d):
                    want = np.concatenate([np.arange(3) + 10 * j for j in range(len(devices))])
                    assert slots[i].get().tolist() == want.tolist()
        finally:
            comm.close()


@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("algorithm", sorted(cases.CASES))
def test_partitioned_over_nccl(reference, algorithm, graph):
    gpus = _gpus()
    g = GRAPHS[graph]
    if algorithm in ("bfs", "sssp", "pagerank", "wcc", "khop"):
        twin = one_gpu(algorithm, g)  # resident on GPU 0 now: shards are cut from it
        assert agrees(algorithm, twin, reference[graph, algorithm])
    got, metrics = partitioned(algorithm, g, cases.config("nccl", len(gpus), devices=gpus))
    assert agrees(algorithm, got, reference[graph, algorithm]), (algorithm, graph, gpus)
    if algorithm in ("bfs", "sssp", "wcc", "khop"):
        assert np.array_equal(got, twin)
    assert (metrics["ranks"], metrics["backend"]) == (len(gpus), "nccl")


@pytest.mark.parametrize("algorithm", ["bfs", "sssp", "pagerank", "wcc"])
def test_one_rank_is_the_one_gpu_operator(algorithm):
    """One partitioned rank on the GPU that holds the graph runs the one-GPU operator's own
    layout and kernels: the same answer bit for bit (PageRank included)."""
    g = GRAPHS["rmat"]
    twin = one_gpu(algorithm, g)
    got, metrics = partitioned(algorithm, g, cases.config("nccl", 1, devices=(0,)))
    assert np.array_equal(got, twin), algorithm
    assert metrics["bytes_exchanged"] == 0


def _tiny_layout(n: int):
    from graphdb.executor.algorithms.pagerank.gpu import Layout
    from graphdb.executor.algorithms.pagerank.tiles import TileShape

    return Layout(64, True, TileShape(sources=n // 3, src=16, dst=40, min_edges=0, chunk=24))


@pytest.mark.parametrize("backend", ["local", "nccl"])
@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_pagerank_blocked_relabelled_and_tiled_shards(reference, backend, ranks):
    """The one-GPU layout cut per rank (tiny blocks and tiles, so a small graph has many of
    each, block bounds at the segment bounds), own sources gathered before the exchange."""
    import dataclasses

    gpus = _gpus()
    if backend == "nccl":
        ranks = min(ranks, len(gpus))
    devices = gpus[:ranks] if backend == "nccl" else (0,)
    for name in ("rmat", "skewed"):
        g = GRAPHS[name]
        one_gpu("pagerank", g)  # resident on GPU 0: the relabelled layout is cut from it
        config = dataclasses.replace(cases.config(backend, ranks, devices=devices),
                                     tuning=_tiny_layout(g.num_vertices))
        got, metrics = partitioned("pagerank", g, config)
        assert agrees("pagerank", got, reference[name, "pagerank"]), (name, backend, ranks)
        assert metrics["reordered"] and metrics["blocks"] > 1
        if ranks > 1:  # a rank receives at most 4 bytes a vertex (and its two totals)
            assert metrics["bytes_per_step"] <= 4 * (ranks - 1) * (g.num_vertices + 8)


def test_sql_partitioned_on_the_gpus(tmp_path):
    from graphdb.generators import rmat

    src, dst = rmat(12, 8, seed=6)
    matrix = sp.coo_matrix((np.ones(len(src)), (src, dst)), shape=(1 << 12, 1 << 12))
    queries = ["SELECT vertex, rank FROM pagerank(g) ORDER BY vertex",
               "SELECT vertex, depth FROM bfs(g, 3) ORDER BY vertex",
               "SELECT vertex, distance FROM sssp(g, 3) ORDER BY vertex",
               "SELECT vertex, component FROM wcc(g) ORDER BY vertex"]
    with graphdb.connect(tmp_path / "db", device="cpu") as con:
        con.from_scipy("g", matrix, weighted=False)
        expected = [con.execute(q).fetchall() for q in queries]
        top = con.execute("SELECT vertex FROM pagerank(g) ORDER BY rank DESC LIMIT 10").fetchall()
        con.execute("SET device = 'gpu'")
        con.execute("SET debug_variant = 'partitioned'")
        plan = "\n".join(r[0] for r in con.execute("EXPLAIN " + queries[0]).fetchall())
        assert "gpu · partitioned" in plan and "NCCL, GPUs 0" in plan
        for q, want in zip(queries, expected):
            got = con.execute(q).fetchall()
            assert [r[0] for r in got] == [r[0] for r in want]
            assert np.allclose([r[1] for r in got], [r[1] for r in want], rtol=1e-4, atol=0)
        got = con.execute("SELECT vertex FROM pagerank(g) ORDER BY rank DESC LIMIT 10")
        assert len(got.fetchall()) == 10
        analyzed = "\n".join(r[0] for r in con.execute(
            "EXPLAIN ANALYZE SELECT vertex FROM pagerank(g) ORDER BY rank DESC LIMIT 10"
        ).fetchall())
        assert "10 rows" in analyzed or "rows: 10" in analyzed, analyzed
    assert len(top) == 10


def test_calibration_run_writes_rates_the_planner_reads(tmp_path, monkeypatch):
    """``graphdb.calibration.calibrate_gpus``'s run (small graphs here): a fit per traffic
    pattern and GPU count, kept where the planner looks."""
    from graphdb.executor.physical import calibration
    from graphdb.executor.physical.measure import calibrate_gpus, rank_counts
    from graphdb.generators import GRAPH500_ABC

    monkeypatch.setattr(calibration, "_path", lambda key: tmp_path / f"calibration-{key}.json")
    lines = []
    fitted = calibrate_gpus(GRAPH500_ABC, rmat_scale=12, grid_side=48, repeats=1,
                            progress=lines.append)
    assert {t for t, _ in fitted.fits} == {"frontier", "relax", "pull", "labels"}
    assert {r for _, r in fitted.fits} == set(rank_counts(len(_gpus())))
    assert calibration.calibration_for("gpu", "nccl").fits == fitted.fits
    assert any("calibration written to" in line for line in lines)
