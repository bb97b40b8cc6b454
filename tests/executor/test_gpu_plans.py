"""Every graph operator has a GPU plan, or EXPLAIN says why not: planned against a stand-in GPU
device (no GPU is needed to plan)."""

from __future__ import annotations

import networkx as nx
import pytest

import graphdb
from graphdb.executor import algorithms
from graphdb.executor.device import Device
from graphdb.executor.physical import GraphOperator, PatternOperator

CALLS = {"bfs": "bfs(g, 0)", "khop": "khop(g, 0, 2)", "sssp": "sssp(g, 0)", "sswp": "sswp(g, 0)",
         "wcc": "wcc(g)", "cdlp": "cdlp(g)", "lcc": "lcc(g)", "pagerank": "pagerank(g)",
         "neighbors": "neighbors(g, 0)", "shortest_path": "shortest_path(g, 0, 3)"}


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    g = nx.gnm_random_graph(50, 200, seed=1, directed=True)
    for u, v in g.edges:
        g.edges[u, v]["weight"] = 1.0 + (u + v) % 5
        g.edges[u, v]["w2"] = (u * v) % 7
    c = graphdb.connect(str(tmp_path_factory.mktemp("db") / "db"), device="cpu")
    c.from_networkx("g", g)
    gpu = Device("gpu", 1 << 32, name="stand-in GPU", reason="test", l2_bytes=50 << 20,
                 bandwidth=4.8e12)
    c.session.runner.device_for = lambda: gpu
    yield c
    c.close()


#: Graph functions with no GPU variant: EXPLAIN says why.
CPU_ONLY = {"degree": "degree(g)", "k_shortest_paths": "k_shortest_paths(g, 0, 3, 2)"}


def test_every_algorithm_is_listed():
    assert set(CALLS) | set(CPU_ONLY) == set(algorithms.REGISTRY)


@pytest.mark.parametrize("name", sorted(CPU_ONLY))
def test_cpu_only_operators_say_why(con, name):
    op = next(n for n in con.plan(f"SELECT * FROM {CPU_ONLY[name]}").walk()
              if isinstance(n, GraphOperator))
    assert op.device == "cpu"
    assert f"{name} has no GPU implementation (" in " ".join(op.details)


@pytest.mark.parametrize("call", ["sssp(g, 0, weight => NULL)", "sswp(g, 0, weight => 'w2')",
                                  "bfs(GRAPH g WHERE e.weight > 2 AND v.id < 40, 0)",
                                  "pagerank(GRAPH g WHERE v.id < 40)",
                                  "sssp(GRAPH g WHERE e.weight > 2, 0, weight => 'w2')"])
def test_views_of_the_graph_plan_onto_the_gpu(con, call):
    """Another weight column, no weights and subgraphs keep the GPU variants (the view is
    compacted on the device)."""
    op = next(n for n in con.plan(f"SELECT * FROM {call}").walk()
              if isinstance(n, GraphOperator))
    assert op.device == "gpu", op.details
    assert any(d.startswith("view:") for d in op.details)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_every_graph_operator_plans_onto_the_gpu(con, name):
    plan = con.plan(f"SELECT * FROM {CALLS[name]}")
    op = next(n for n in plan.walk() if isinstance(n, GraphOperator))
    assert op.device == "gpu", op.details
    assert op.fallback is not None and op.fallback.device == "cpu"


def test_pagerank_is_blocked_by_the_devices_l2(con):
    from graphdb.executor.algorithms.pagerank.gpu import Layout, block_vertices

    op = next(n for n in con.plan("SELECT * FROM pagerank(g)").walk()
              if isinstance(n, GraphOperator))
    assert isinstance(op.config.tuning, Layout)
    assert op.config.tuning.block_vertices == min(block_vertices(50 << 20), 50)


def test_graph_table_plans_onto_the_gpu_or_says_why(con):
    sql = "SELECT * FROM GRAPH_TABLE (g MATCH (a)<-[]-(b) COLUMNS (a.id AS a))"
    op = next(n for n in con.plan(sql).walk() if isinstance(n, PatternOperator))
    assert op.device == "gpu" and op.details[0].startswith("gpu ·")
    small = Device("gpu", 2000, name="tiny GPU", reason="test")
    con.session.runner.device_for = lambda: small
    try:
        op = next(n for n in con.plan(sql).walk() if isinstance(n, PatternOperator))
    finally:
        con.session.runner.device_for = lambda: Device("gpu", 1 << 32, reason="test")
    assert op.device == "cpu" and "more than half the GPU budget" in op.details[-1]
