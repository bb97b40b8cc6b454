"""How many ranks the planner takes: the scaling model's decisions on catalog entries alone.

A skewed (small-world) graph's PageRank goes to several GPUs, a high-diameter grid's BFS stays
on one (thousands of levels, each paying collectives), a graph that fits no single GPU runs
partitioned, and no plan uses a rank count the model predicts slower. EXPLAIN says why.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import graphdb
from graphdb.executor import algorithms
from graphdb.executor.device import Device
from graphdb.executor.errors import DeviceOutOfMemory
from graphdb.executor.physical import choose
from graphdb.executor.physical.planner import partitioned_details
from graphdb.executor.physical.scaling import MARGIN, Fleet, estimate, levels, rank_bytes

GiB = 1 << 30
CPU = Device("cpu", 1 << 40, reason="test")


@pytest.fixture(autouse=True)
def _uncalibrated(monkeypatch):
    """The model's own figures (a machine's calibration would decide otherwise)."""
    monkeypatch.setenv("GRAPHDB_CALIBRATION", "0")


def entry(n, m, max_degree, directed=True, weighted=False):
    return SimpleNamespace(name="g", num_vertices=n, num_edges=m, directed=directed,
                           weighted=weighted, stats={"max_out_degree": max_degree})


RMAT26 = entry(1 << 26, 1 << 30, 900_000)
GRID = entry(4096 * 4096, 4 * 4096 * 4096, 4, directed=False)


def gpu(budget=64 * GiB):
    return Device("gpu", budget, name="test GPU", reason="test")


def nccl(count):
    return Fleet("nccl", count, tuple(range(count)), "gpu")


def test_levels_small_world_and_mesh():
    assert levels(RMAT26) < 15
    assert levels(GRID) == 4096


@pytest.mark.parametrize("name", ["bfs", "sssp", "pagerank", "wcc"])
def test_a_graph_that_fits_one_gpu_stays_there_with_measured_rates(name):
    """The partitioned steps as landed were measured 9-84x slower than the one-GPU operators:
    the default plan must not take them while the graph fits one GPU, and says why with both
    predictions."""
    d = choose(algorithms.get(name), RMAT26, gpu(), CPU, None, fleet=nccl(8),
               options={"max_iterations": 20})
    assert d.placement is None
    assert d.scaling_reason.startswith("one GPU: ")
    assert "GPUs predicted" in d.scaling_reason and "on one" in d.scaling_reason


def test_skewed_pagerank_goes_to_several_gpus_when_forced():
    fleet = Fleet("nccl", 8, tuple(range(8)), "gpu", force=True)
    d = choose(algorithms.get("pagerank"), RMAT26, gpu(), CPU, None, fleet=fleet,
               options={"max_iterations": 20})
    assert d.placement is not None and d.placement.ranks >= 1
    assert d.placement.devices == tuple(range(d.placement.ranks))
    assert d.scaling_reason.startswith(f"{d.placement.ranks} GPU")


def test_high_diameter_bfs_stays_on_one_gpu():
    d = choose(algorithms.get("bfs"), GRID, gpu(), CPU, None, fleet=nccl(8),
               options={"source": 0, "max_depth": None})
    assert d.placement is None and d.variant.name == "resident"
    assert d.scaling_reason.startswith("one GPU: ")
    assert "4096 steps" in d.scaling_reason


@pytest.mark.parametrize("name", ["bfs", "sssp", "pagerank", "wcc", "cdlp", "lcc"])
@pytest.mark.parametrize("graph", [RMAT26, GRID, entry(1 << 20, 1 << 24, 300),
                                   entry(1 << 16, 1 << 18, 5000)])
@pytest.mark.parametrize("count", [2, 4, 8])
def test_never_a_rank_count_predicted_slower(name, graph, count):
    spec = algorithms.get(name)
    fleet = nccl(count)
    d = choose(spec, graph, gpu(), CPU, None, fleet=fleet, options={})
    variant = spec.partitioned("gpu")
    one = d.baseline.seconds
    if d.placement is None:
        for ranks in fleet.counts():  # every count that would fit is predicted no faster
            topology, state = rank_bytes(variant, graph, ranks, "replicated", False)
            if topology + state <= d.budget_bytes:
                assert estimate(spec, variant, graph, fleet, ranks, "replicated",
                                {}).seconds * MARGIN >= one
    else:
        assert d.estimate.seconds * MARGIN < one
        for ranks in fleet.counts():  # and it is the fastest count predicted
            assert d.estimate.seconds <= estimate(spec, variant, graph, fleet, ranks,
                                                  d.placement.strategy, {}).seconds + 1e-12


def test_a_graph_that_fits_no_single_gpu_runs_partitioned():
    spec = algorithms.get("wcc")  # no streamed WCC fits a budget this small
    small = gpu(5 * GiB)
    with pytest.raises(DeviceOutOfMemory):
        choose(spec, RMAT26, small, CPU, 1 << 20)
    d = choose(spec, RMAT26, small, CPU, 1 << 20, fleet=nccl(4), options={})
    assert d.placement.ranks >= 2 and "does not fit one GPU" in d.reason
    assert d.needed_bytes <= small.memory_limit


def test_split_state_when_replicated_state_does_not_fit():
    spec = algorithms.get("pagerank")
    variant = spec.partitioned("gpu")
    g = entry(1 << 28, 1 << 29, 100_000)
    fleet = Fleet("nccl", 8, tuple(range(8)), "gpu", force=True)
    replicated = sum(rank_bytes(variant, g, 8, "replicated", False))
    split = sum(rank_bytes(variant, g, 8, "split", False))
    budget = (replicated + split) // 2
    d = choose(spec, g, gpu(budget), CPU, None, fleet=fleet, options={})
    assert (d.placement.ranks, d.placement.strategy, d.placement.streamed) == (8, "split", False)


def test_streamed_ranks_when_their_rows_do_not_fit():
    spec = algorithms.get("pagerank")
    variant = spec.partitioned("gpu")
    fleet = Fleet("nccl", 2, (0, 1), "gpu", force=True)
    topology, state = rank_bytes(variant, RMAT26, 2, "replicated", False)
    d = choose(spec, RMAT26, gpu(state + (64 << 20)), CPU, None, fleet=fleet, options={})
    assert d.placement.streamed and d.placement.strategy == "replicated"


def test_one_gpu_runs_partitioned_only_when_forced():
    assert nccl(1).counts() == ()
    forced = Fleet("nccl", 1, (0,), "gpu", force=True)
    assert forced.counts() == (1,)
    d = choose(algorithms.get("bfs"), GRID, gpu(), CPU, None, "partitioned", forced, {})
    assert d.placement == forced.placement(1, "replicated", False)


def test_a_cluster_uses_all_of_its_ranks_or_one():
    fleet = Fleet("mpi", 6, (), "cpu")
    assert fleet.counts() == (6,)
    d = choose(algorithms.get("pagerank"), RMAT26, Device("cpu", 1 << 40, reason="t"), CPU,
               None, fleet=fleet, options={})
    assert d.placement is None or d.placement.ranks == 6


def test_explain_says_partitions_strategy_bytes_and_why():
    fleet = Fleet("nccl", 4, tuple(range(4)), "gpu", force=True)
    d = choose(algorithms.get("pagerank"), RMAT26, gpu(), CPU, None, fleet=fleet,
               options={"max_iterations": 20})
    lines = partitioned_details(d, RMAT26)
    ranks = d.placement.ranks
    assert lines[0].startswith(f"gpu · partitioned · {ranks} GPUs (NCCL, GPUs 0, 1")
    assert lines[1].startswith(f"partitions: {ranks} vertex-range segments balanced by in-edges")
    assert lines[2] == "vertex state: replicated on every rank (GTS Strategy-P)"
    assert "AllGather" in lines[3] and "per GPU per step, 20 steps" in lines[3]
    assert lines[4].startswith(f"why {ranks} GPUs: debug_variant = 'partitioned'; predicted ")
    assert "on one GPU" in lines[4]


def test_settings_and_connect_arguments(tmp_path):
    with graphdb.connect(tmp_path / "db", device="cpu") as con:
        assert con.execute("SET gpus = 2").fetchall() == []
        assert con.settings.gpus == 2
        con.execute("SET gpus = 'all'")
        assert con.settings.gpus is None
        for bad in ("SET gpus = 0", "SET gpus = 'some'", "SET debug_ranks = -1"):
            with pytest.raises(graphdb.ProgrammingError):
                con.execute(bad)
        con.execute("SET debug_ranks = 2")
        fleet = con.session.fleet(con.session.device())
        assert (fleet.backend, fleet.ranks, fleet.kind) == ("local", 2, "cpu")
    for bad in ([0, 0], [], "two", -1):
        with pytest.raises(graphdb.InterfaceError):
            graphdb.connect(tmp_path / "db2", gpus=bad)
