"""Subgraphs and query-time weights on the GPU: the same answers as networkx, the view compacted
on the device from the resident CSR (the host never builds it)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import graphdb
from graphdb.executor.residency import RESIDENCY
from graphdb.executor.stored import graph_key
from tests.gpu._gpu_graphs import gpu_connection
from tests.graphdb import test_subgraph_sql as cases

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def con():
    yield from gpu_connection()


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("seed", cases.SEEDS)
def test_every_algorithm_on_a_random_subgraph_on_the_gpu(con, seed, directed):
    # rel 1e-4: the GPU PageRank sums float32 contributions (pagerank/gpu.py), the precision
    # every GPU PageRank test holds it to
    cases.test_every_algorithm_on_a_random_subgraph(con, seed, directed, rank_rel=1e-4)


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("seed", cases.SEEDS)
def test_weights_chosen_at_query_time_on_the_gpu(con, seed, directed):
    cases.test_weights_chosen_at_query_time(con, seed, directed)


def test_the_view_is_compacted_on_the_device(con):
    rng = np.random.default_rng(3)
    n, m = 5000, 40000
    con.ingest("big", pa.table({"src": rng.integers(0, n, m), "dst": rng.integers(0, n, m),
                                "year": rng.integers(2018, 2022, m)}), replace=True)
    sql = "SELECT count(*) FROM bfs(GRAPH big WHERE e.year >= 2020, 0)"
    plan = con.plan(sql)
    operator = next(node for node in plan.walk() if node.kind == "AlgorithmScan")
    assert operator.device == "gpu"
    got = con.execute(sql).fetchone()[0]
    with graphdb.connect() as cpu:  # the answer the CPU gives on the same data
        cpu.ingest("big", con.execute("SELECT * FROM big.edges").arrow())
        assert cpu.execute(sql).fetchone()[0] == got
    names = [name for _, device, name, _ in RESIDENCY.entries()]
    assert any(name.startswith("device:view:out") for name in names)
    assert not any(name == "view:out" for name in names), "the host built the view"


@pytest.mark.parametrize("masks", ["both", "edges", "vertices"])
def test_compaction_on_the_device_matches_numpy(masks):
    import cupy as cp

    from graphdb.executor.graph import CSR
    from graphdb.executor.subgraph import compact

    rng = np.random.default_rng(11)
    n, m = 3000, 50000
    csr = CSR.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n)
    keep_edge = None if masks == "vertices" else rng.random(m) < 0.5
    keep_vertex = None if masks == "edges" else rng.random(n) < 0.8
    new_id = None if keep_vertex is None else np.cumsum(keep_vertex) - 1

    def on(xp, array):
        return None if array is None else xp.asarray(array)

    host = compact(np, csr.offsets, csr.targets, keep_edge, keep_vertex, new_id)
    device = compact(cp, cp.asarray(csr.offsets), cp.asarray(csr.targets),
                     on(cp, keep_edge), on(cp, keep_vertex), on(cp, new_id))
    for a, b in ((host.offsets, device.offsets), (host.targets, device.targets),
                 (host.kept, device.kept)):
        assert a.tolist() == b.get().tolist()


def test_a_subgraph_that_keeps_everything_runs_on_the_resident_graph(con):
    """Every edge kept: no view is compacted, the operator runs on the graph's resident CSR,
    and answers as on the whole graph."""
    rng = np.random.default_rng(5)
    n, m = 4000, 30000
    con.ingest("every", pa.table({"src": rng.integers(0, n, m), "dst": rng.integers(0, n, m),
                                  "year": rng.integers(2018, 2022, m)}), replace=True)
    for function, tail in (("bfs", ", 0"), ("wcc", ""), ("pagerank", "")):
        column = {"bfs": "depth", "wcc": "component", "pagerank": "round(rank, 6)"}[function]
        whole = con.execute(f"SELECT count(*), max({column}) FROM {function}(every{tail})"
                            ).fetchall()
        sql = f"SELECT count(*), max({column}) FROM {function}(GRAPH every WHERE e.year >= 0{tail})"
        assert con.execute(sql).fetchall() == whole
        plan = "\n".join(r[0] for r in con.execute("EXPLAIN ANALYZE " + sql).fetchall())
        assert "gpu" in plan and "view the stored graph (every edge and vertex kept)" in plan
    key = graph_key(con.catalog, con.catalog.get("every"))
    views = [name for graph, _, name, _ in RESIDENCY.entries() if isinstance(graph, tuple)
             and len(graph) > len(key) and graph[:len(key)] == key]
    assert not views, f"a view was built: {views}"
