"""The physical plan: the decisions of the cost model, read from the structured plan (device,
variant, budget, bytes), and the promise that what EXPLAIN shows is what runs."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

import graphdb
from graphdb.executor import algorithms
from graphdb.executor.device import Device
from graphdb.executor.errors import DeviceOutOfMemory
from graphdb.executor.physical import GraphOperator, choose, topology_bytes

MiB = 1 << 20


def entry(n=1_000_000, m=16_000_000, weighted=True, directed=False, pages=90):
    return SimpleNamespace(name="g", num_vertices=n, num_edges=m, directed=directed,
                           weighted=weighted, stats={"pages": pages, "page_size": 2 * MiB})


CPU = Device("cpu", 1 << 40, reason="test")


def test_topology_counts_only_the_forms_a_variant_reads():
    e = entry(n=10, m=100, weighted=True, directed=True)
    csr = 8 * 11 + 4 * 100
    assert topology_bytes(e, ("out",)) == csr
    assert topology_bytes(e, ("out", "in")) == 2 * csr
    assert topology_bytes(e, ("out", "weights")) == csr + 800
    undirected = entry(n=10, m=100, weighted=False, directed=False)
    assert topology_bytes(undirected, ("out", "in", "weights")) == csr  # in = out, no weights


@pytest.mark.parametrize("kind", ["cpu", "gpu"])
def test_variants_by_size(kind):
    e = entry()
    spec = algorithms.get
    big = Device(kind, 1 << 34, reason="test")
    assert choose(spec("sssp"), e, big, CPU, None).variant.name == "resident"
    small = Device(kind, 64 * MiB, reason="test")
    d = choose(spec("sssp"), e, small, CPU, None)
    assert (d.variant.device, d.variant.name) == (kind, "subway")
    assert d.budget_bytes == 64 * MiB
    assert d.state_bytes == d.variant.state_per_vertex * e.num_vertices
    assert d.topology_bytes == topology_bytes(e, ("out", "weights"))
    assert choose(spec("pagerank"), e, small, CPU, None).variant.name == "edge_centric"
    assert choose(spec("cdlp"), e, small, CPU, None).variant.name == "edge_centric"
    assert choose(spec("bfs"), e, small, CPU, 50 * MiB).variant.name == "pages"
    assert choose(spec("pagerank"), e, small, CPU, 50 * MiB).variant.name == "pages"
    with pytest.raises(DeviceOutOfMemory, match="subway needs the topology in host memory"):
        choose(spec("sssp"), e, small, CPU, 100 * MiB)  # no page-streamed SSSP
    with pytest.raises(DeviceOutOfMemory, match="cannot run within"):
        choose(spec("lcc"), e, small, CPU, None)  # no streamed LCC


def test_an_algorithm_without_a_gpu_implementation_is_judged_against_the_cpu_budget():
    import dataclasses

    tiny_gpu = Device("gpu", 1000, name="small GPU", reason="test")
    sswp = algorithms.get("sswp")  # (every family has a GPU variant now: one without)
    cpu_only = dataclasses.replace(sswp, variants=(sswp.variant("cpu"),))
    d = choose(cpu_only, entry(n=100, m=1000), tiny_gpu, CPU, None)
    assert d.device is CPU and d.variant.name == "resident"
    assert "has no GPU implementation" in d.reason


def test_vertex_state_that_fits_no_variant_is_refused_naming_the_sizes():
    with pytest.raises(DeviceOutOfMemory, match=r"1000000 vertices.*16.0 MiB gpu budget"):
        choose(algorithms.get("pagerank"), entry(), Device("gpu", 16 * MiB, reason="t"), CPU,
               None)


@pytest.fixture
def con(tmp_path):
    rng = np.random.default_rng(5)
    n, m = 400, 3000
    c = graphdb.connect(str(tmp_path / "db"), device="cpu")
    c.from_scipy("g", sp.coo_matrix((rng.random(m) + 0.1, (rng.integers(0, n, m),
                                                           rng.integers(0, n, m))), shape=(n, n)))
    yield c
    c.close()


def _operator(plan) -> GraphOperator:
    return next(node for node in plan.walk() if isinstance(node, GraphOperator))


def test_the_plan_records_the_decision_and_the_operator_receives_it(con):
    plan = con.plan("SELECT * FROM sssp(g, 7)")
    op = _operator(plan)
    assert (op.device, op.variant) == ("cpu", "resident")
    assert op.options == {"source": 7, "weight": None} or op.options["source"] == 7
    assert op.config.budget_bytes == op.decision.budget_bytes
    assert op.config.state_bytes == op.decision.state_bytes
    assert op.decision.needed_bytes <= op.decision.budget_bytes
    assert op.entry.name == "g"


def test_a_subquery_argument_is_planned_as_an_input(con):
    plan = con.plan("SELECT * FROM bfs(g, (SELECT min(id) FROM g.vertices))")
    op = _operator(plan)
    assert "source" in op.subqueries and len(op.inputs) == 1
    rows = con.execute("SELECT count(*) FROM bfs(g, (SELECT min(id) FROM g.vertices))").fetchone()
    assert rows == con.execute("SELECT count(*) FROM bfs(g, 0)").fetchone()


ALGORITHMS = {"bfs": "bfs(g, 3)", "sssp": "sssp(g, 3)", "wcc": "wcc(g)", "cdlp": "cdlp(g, 3)",
              "pagerank": "pagerank(g, max_iterations => 5)", "khop": "khop(g, 3, 2)",
              "lcc": "lcc(g)"}


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_what_explain_promises_is_what_runs_at_every_budget(con, name):
    """The issue's scenario, everywhere: for budgets from a few bytes a vertex up to plenty, and
    host budgets from tiny to plenty, the variant EXPLAIN's plan names is the one that ran, or
    the plan is refused at plan time with the sizes; a run never fails after a plan was made."""
    sql = f"SELECT count(*) FROM {ALGORITHMS[name]}"
    reference = con.execute(sql).fetchone()
    n = 400
    ran = set()
    for per_vertex, host in itertools.product((2, 20, 30, 44, 60, 100, 300, 3000),
                                              ("1KB", "10MB")):
        con.execute(f"SET memory_limit = {per_vertex * n}")
        con.execute(f"SET host_memory_limit = '{host}'")
        try:
            plan = con.plan(sql)
        except graphdb.OperationalError as exc:
            assert "cannot run within" in str(exc)
            with pytest.raises(graphdb.OperationalError):
                con.execute(sql)
            continue
        op = _operator(plan)
        explained = "\n".join(r[0] for r in con.execute("EXPLAIN " + sql).fetchall())
        assert f"cpu · {op.variant}" in explained
        con.execute(sql)  # runs: the same statement plans the same way
        stats = con.session.runner.stats
        metrics = next(s.metrics for s in stats.values() if "variant" in s.metrics)
        assert metrics["variant"] == op.variant
        assert con.execute(sql).fetchone() == reference
        ran.add(op.variant)
    con.execute("RESET ALL")
    assert "resident" in ran or name == "lcc"


def test_streamed_sssp_checks_the_weight_argument_like_the_resident_one(con):
    resident = con.execute("SELECT vertex, distance FROM sssp(g, 3) ORDER BY vertex").fetchall()
    con.execute("SET memory_limit = '12KB'")
    assert _operator(con.plan("SELECT * FROM sssp(g, 3)")).variant == "subway"
    streamed = con.execute("SELECT vertex, distance FROM sssp(g, 3, weight => 'weight') "
                           "ORDER BY vertex").fetchall()
    assert dict(streamed) == pytest.approx(dict(resident))
    with pytest.raises(graphdb.InvalidInputError, match="no edge column 'nope'"):
        con.execute("SELECT * FROM sssp(g, 3, weight => 'nope')")


def test_arguments_are_checked_before_any_graph_data_is_read(con, monkeypatch):
    """Bind-time validation: a bad weight column or an unknown source fails at planning, with
    no topology loaded (the graph's arrays are never read)."""
    from graphdb.executor import graph as graph_module

    def refuse(self, name):  # noqa: ARG001
        raise AssertionError(f"topology read while planning: {name}")

    monkeypatch.setattr(graph_module.Graph, "array", refuse)
    with pytest.raises(graphdb.InvalidInputError, match="no edge column"):
        con.plan("SELECT * FROM sssp(g, 3, weight => 'nope')")
    with pytest.raises(graphdb.InvalidInputError, match="not a vertex"):
        con.plan("SELECT * FROM bfs(g, 99999)")


def test_debug_variant_forces_a_streamed_plan_that_streams_in_several_pieces(con):
    con.execute("SET debug_variant = 'streamed'")
    op = _operator(con.plan("SELECT * FROM sssp(g, 3)"))
    assert op.variant == "subway" and op.decision.budget_bytes < op.decision.topology_bytes
    con.execute("SELECT * FROM sssp(g, 3)")
    metrics = next(s.metrics for s in con.session.runner.stats.values() if "variant" in s.metrics)
    assert metrics["partitions"] > metrics["outer_iterations"]


def test_explain_fits_100_columns(con):
    con.execute("SET memory_limit = '20KB'")
    for sql in ("EXPLAIN ANALYZE SELECT * FROM sssp(g, 3)",
                "EXPLAIN ANALYZE SELECT v.id, p.rank FROM pagerank(g) p JOIN g.vertices v "
                "ON v.id = p.vertex ORDER BY p.rank DESC LIMIT 3"):
        lines = [r[0] for r in con.execute(sql).fetchall()]
        assert max(len(line) for line in lines) <= 100, max(lines, key=len)


def test_a_gpu_plan_carries_the_familys_tuning_and_a_cpu_fallback(con, monkeypatch):
    """Planned for a GPU (a stand-in Device: planning touches no device): PageRank's blocking
    comes from the device's L2, and the CPU plan to fall back on is planned with it."""
    from graphdb.executor.algorithms.pagerank.gpu import Layout

    gpu = Device("gpu", 1 << 30, name="fake GPU", reason="test", l2_bytes=50 << 20)
    monkeypatch.setattr(con.session.runner, "device_for", lambda: gpu)
    op = _operator(con.plan("SELECT * FROM pagerank(g)"))
    assert (op.device, op.variant) == ("gpu", "resident")
    assert isinstance(op.config.tuning, Layout) and op.config.tuning.block_vertices >= 400
    assert (op.fallback.device, op.fallback.config.tuning) == ("cpu", None)
    lines = "\n".join(r[0] for r in con.execute("EXPLAIN SELECT * FROM pagerank(g)").fetchall())
    assert "gpu · resident" in lines and "if the GPU runs out of memory: cpu · resident" in lines
