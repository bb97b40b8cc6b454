"""The result path on the device (executor/operators/results.cu, results_gpu.py) against its
host twin (executor/results.py, numpy), the single-block frontier kernels against the CPU, and
whole queries on the GPU against the same queries on the CPU."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pyarrow as pa
import pytest
from scipy.sparse import csgraph

from graphdb.executor.algorithms.spec import AlgorithmOutput, Column, OperatorConfig
from graphdb.executor.graph import Graph
from graphdb.executor.ids import VertexIds
from graphdb.generators import grid, rmat

pytestmark = pytest.mark.gpu

SIZES = [0, 1, 4095, 4096, 4097, 3 * 4096 + 17, (1 << 20) + 5]


def _cp():
    from graphdb.executor.gpu import runtime as rt

    return rt.cp()


def _marks(rng, n: int, density: float, kind: str):
    keep = rng.random(n) < density
    if kind == "negative":
        return np.where(keep, rng.integers(0, 50, n), -1).astype(np.int32), keep
    if kind == "zero":
        return np.where(keep, rng.integers(1, 9, n), 0).astype(np.int64), keep
    fill = np.inf if kind == "pos_inf" else -np.inf
    return np.where(keep, rng.normal(size=n), fill), keep


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("density", [0.0, 0.01, 0.5, 1.0])
@pytest.mark.parametrize("kind", ["negative", "zero", "pos_inf", "neg_inf"])
def test_compaction_is_flatnonzero(n, density, kind):
    from graphdb.executor.operators.results_gpu import compact

    rng = np.random.default_rng(n + int(density * 100))
    marks, keep = _marks(rng, n, density, kind)
    rows, k = compact(_cp().asarray(marks), kind)
    expected = np.flatnonzero(keep)
    assert k == expected.size
    np.testing.assert_array_equal(rows.get(), expected)


COLUMNS = (Column("vertex", pa.int64(), vertex=True), Column("depth", pa.int64()),
           Column("label", pa.int64(), vertex=True), Column("score", pa.float64()))


def _ids(kind: str, n: int) -> VertexIds:
    if kind == "identity":
        return VertexIds(pa.array(np.arange(n, dtype=np.int64)), "g", "int64")
    if kind == "spread":
        return VertexIds(pa.array(np.arange(n, dtype=np.int64) * 3 - 7), "g", "int64")
    return VertexIds(pa.array([f"v{i:07d}" for i in range(n)]), "g", "string")


def _values(rng, n: int):
    depth = np.where(rng.random(n) < 0.7, rng.integers(0, 30, n), -1).astype(np.int32)
    label = rng.integers(0, max(n, 1), n).astype(np.int32)
    score = rng.normal(size=n)
    score[rng.random(n) < 0.05] = 0.25  # ties for the top-k
    return {"depth": depth, "label": label, "score": score}


def _device(values: dict) -> dict:
    return {k: _cp().asarray(v) for k, v in values.items()}


def _user_ids(ids: VertexIds):
    return lambda: _cp().asarray(ids.numeric)


@pytest.mark.parametrize("ids_kind", ["identity", "spread", "string"])
@pytest.mark.parametrize("n", [0, 5, 4097, 150_000])
def test_device_table_is_the_host_table(ids_kind, n):
    """Same rows, same types; a result of a MiB or more lands in page-locked memory that the
    Arrow columns point into (one copy, no host pass)."""
    from graphdb.executor.results import column_layout, output_table

    rng = np.random.default_rng(n)
    values = _values(rng, n)
    ids = _ids(ids_kind, n)
    host = output_table(COLUMNS, AlgorithmOutput.vertices(values, reached="depth",
                                                          drop="negative"), ids, None, {})
    metrics: dict = {}
    dev = output_table(COLUMNS, AlgorithmOutput.vertices(_device(values), reached="depth",
                                                         drop="negative"),
                       ids, _user_ids(ids) if ids_kind != "string" else None, metrics)
    assert dev.schema == host.schema
    assert dev.to_pydict() == host.to_pydict()
    rows = host.num_rows
    assert metrics["result_rows"] == rows
    assert metrics["result_bytes"] == column_layout(rows, [8] * 4)[1]
    if metrics["result_bytes"] >= 1 << 20 and ids_kind != "string":
        cp = _cp()
        address = dev.column("score").chunk(0).buffers()[1].address
        assert cp.cuda.runtime.pointerGetAttributes(address).type == 1  # cudaMemoryTypeHost


def _reduction(key, calls):
    from graphdb.executor.results import Reduction

    return Reduction(key, key and f"__{key}", tuple(calls))


REDUCTIONS = [
    (None, [("c", "count_all", None), ("lo", "min", "depth"), ("hi", "max", "depth"),
            ("s", "sum", "depth"), ("m", "mean", "depth")]),
    (None, [("lo", "min", "score"), ("hi", "max", "score"), ("s", "sum", "score"),
            ("m", "mean", "score"), ("n", "count", "score")]),
    (None, [("lo", "min", "vertex"), ("hi", "max", "label")]),
    (None, [("c", "count_all", None), ("n", "count", "depth")]),  # counts alone: no row ids
    ("depth", [("c", "count_all", None)]),
    ("label", [("c", "count_all", None), ("d", "count", "score")]),
]


@pytest.mark.parametrize("n", [0, 1, 4097, 100_000])
@pytest.mark.parametrize("spec", range(len(REDUCTIONS)))
def test_device_reductions_are_the_host_ones(n, spec):
    from graphdb.executor.operators.results_gpu import device_reduce
    from graphdb.executor.results import host_rows, reduce_rows

    rng = np.random.default_rng(n + spec)
    values = _values(rng, n)
    ids = _ids("spread", n)
    reduction = _reduction(*REDUCTIONS[spec])
    out = AlgorithmOutput.vertices(values, reached="depth", drop="negative")
    rows = host_rows(out, COLUMNS)
    host = reduce_rows(np, reduction, rows, len(rows["vertex"]), COLUMNS, ids)
    pv = AlgorithmOutput.vertices(_device(values), reached="depth", drop="negative").per_vertex
    dev = device_reduce(reduction, COLUMNS, pv, ids, _user_ids(ids), {})
    assert dev.schema == host.schema
    if reduction.key is not None:
        assert dev.to_pydict() == host.sort_by(host.column_names[0]).to_pydict()
        return
    for name in host.column_names:
        a, b = dev.column(name)[0].as_py(), host.column(name)[0].as_py()
        assert (a is None and b is None) or a == pytest.approx(b, rel=1e-9, abs=1e-9), name


@pytest.mark.parametrize("n", [0, 3, 4097, 100_000])
@pytest.mark.parametrize("column,descending", [("score", True), ("score", False),
                                               ("depth", True), ("depth", False)])
@pytest.mark.parametrize("limit,offset", [(1, 0), (10, 3), (5000, 0), (10**9, 0)])
def test_device_top_rows_are_the_host_ones(n, column, descending, limit, offset):
    """The same keys in the same order, every row a real one (ties may pick other rows)."""
    from graphdb.executor.operators.results_gpu import device_top
    from graphdb.executor.results import TopRows, host_rows, top_rows

    rng = np.random.default_rng(n + limit)
    values = _values(rng, n)
    ids = _ids("spread", n)
    top = TopRows(column, descending, limit, offset,
                  (("v", "vertex"), ("k", column), ("l", "label")))
    out = AlgorithmOutput.vertices(values, reached="depth", drop="negative")
    rows = host_rows(out, COLUMNS)
    host = top_rows(np, top, rows, COLUMNS, ids)
    pv = AlgorithmOutput.vertices(_device(values), reached="depth", drop="negative").per_vertex
    dev = device_top(top, COLUMNS, pv, ids, _user_ids(ids), {})
    assert dev.schema == host.schema and dev.num_rows == host.num_rows
    assert dev.column("k").to_pylist() == host.column("k").to_pylist()
    every = set(zip(ids.user(rows["vertex"]).to_pylist(), rows[column].tolist(),
                    ids.user(rows["label"]).to_pylist(), strict=True))
    assert set(zip(*dev.to_pydict().values(), strict=True)) <= every


# ---------------------------------------------------------------- single-block frontiers

GPU = OperatorConfig(device="gpu")


def _graphs():
    src, dst = grid(60, 45)
    yield Graph.from_edges(src, dst, 60 * 45, directed=False), 0
    path = np.arange(9999)
    yield Graph.from_edges(path, path + 1, 10_000, directed=True), 0  # > SMALL_MAX_STEPS levels
    src, dst = rmat(12, 8, seed=5)
    g = Graph.from_edges(src, dst, 1 << 12, directed=True)
    yield g, int(np.argmax(g.out_csr.degrees()))
    rng = np.random.default_rng(2)
    yield Graph.from_edges(rng.integers(0, 3000, 6000), rng.integers(0, 3000, 6000), 3000,
                           directed=False), 17


@pytest.mark.parametrize("small", [0, 64, 10**9])
@pytest.mark.parametrize("K", [2, 16])
def test_bfs_small_frontier_kernel_matches_cpu(small, K):
    from graphdb.executor.algorithms.bfs.cpu import bfs_depths
    from graphdb.executor.algorithms.bfs.gpu import bfs_depths_gpu

    for g, s in _graphs():
        for max_depth in (None, 0, 3, 5000):
            ref, _ = bfs_depths(g, s, max_depth)
            depth, stats = bfs_depths_gpu(g, s, max_depth, K=K, small_frontier=small)
            np.testing.assert_array_equal(depth.get(), ref)
            assert stats["reached"] == int((ref >= 0).sum())
            assert stats["levels"] == ref.max() + 1
            if small == 10**9 and max_depth is None:
                assert stats["small_levels"] >= ref.max()  # every level in the one block


def test_grid_bfs_runs_its_levels_in_few_launches():
    from graphdb.executor.algorithms.bfs.gpu import bfs_depths_gpu

    src, dst = grid(200, 200)
    g = Graph.from_edges(src, dst, 40_000, directed=False)
    depth, stats = bfs_depths_gpu(g, 0)
    assert int(depth.max().get()) == 398
    assert stats["small_levels"] >= 398 and stats["host_syncs"] <= 4


@pytest.mark.parametrize("small", [0, 64, 10**9])
def test_sssp_small_frontier_kernel_matches_dijkstra(small):
    from graphdb.executor.algorithms.sssp.gpu import sssp_distances_gpu

    rng = np.random.default_rng(7)
    for g, s in _graphs():
        w = rng.integers(1, 100, g.num_edges).astype(np.float64)
        out = g.out_csr
        wg = Graph.from_csr("w", type(out)(out.offsets, out.targets, w), directed=g.directed)
        ref = csgraph.dijkstra(wg.csr("out", weights=True).to_scipy(weighted=True), indices=s)
        for delta in (None, 5.0):
            got, stats = sssp_distances_gpu(wg, s, delta=delta, small_frontier=small)
            np.testing.assert_allclose(got.get(), ref, rtol=1e-12)
            if small == 10**9:
                assert stats["small_rounds"] == stats["relax_rounds"]


# ---------------------------------------------------------------- whole queries, GPU vs CPU

QUERIES = [
    ("SELECT vertex, depth FROM bfs(g, {s})", None),
    ("SELECT * FROM khop(g, {s}, 2)", None),
    ("SELECT * FROM sssp(g, {s})", None),
    ("SELECT * FROM sswp(g, {s})", None),
    ("SELECT * FROM wcc(g)", None),
    ("SELECT * FROM pagerank(g, max_iterations => 7)", "float"),
    ("SELECT * FROM cdlp(g, 4)", None),
    ("SELECT * FROM lcc(g)", "float"),
    ("SELECT * FROM neighbors(g, {s}, direction => 'both')", None),
    ("SELECT count(*), max(depth), sum(depth), min(vertex) FROM bfs(g, {s})", None),
    ("SELECT depth, count(*) FROM bfs(g, {s}) GROUP BY depth", None),
    ("SELECT component, count(*) FROM wcc(g) GROUP BY component", None),
    ("SELECT max(distance), avg(distance) FROM sssp(g, {s})", "float"),
    ("SELECT vertex, rank FROM pagerank(g) ORDER BY rank DESC LIMIT 7", "top"),
    ("SELECT vertex, distance FROM sssp(g, {s}) ORDER BY distance DESC LIMIT 3", "top"),
]


@pytest.fixture(scope="module", params=["spread", "string"])
def databases(request, tmp_path_factory):
    import graphdb

    rng = np.random.default_rng(11)
    g = nx.gnm_random_graph(3000, 15000, seed=12, directed=True)
    g.add_edges_from([(3000, 3001), (3001, 3002)])
    for u, v in g.edges:
        g.edges[u, v]["weight"] = float(rng.integers(1, 20))
    name = (lambda v: 5 + 3 * v) if request.param == "spread" else (lambda v: f"n{v:05d}")
    g = nx.relabel_nodes(g, {v: name(v) for v in g.nodes})
    path = tmp_path_factory.mktemp("db") / "db"
    with graphdb.connect(str(path)) as c:
        c.from_networkx("g", g)
    gpu, cpu = graphdb.connect(str(path), device="gpu"), graphdb.connect(str(path), device="cpu")
    yield gpu, cpu, name
    gpu.close()
    cpu.close()


@pytest.mark.parametrize("query,compare", QUERIES, ids=[q for q, _ in QUERIES])
def test_queries_on_the_gpu_equal_the_cpu(databases, query, compare):
    from graphdb.executor.physical import GraphOperator

    gpu, cpu, name = databases
    sql = query.format(s=repr(name(0)))
    op = next(n for n in gpu.plan(sql).walk() if isinstance(n, GraphOperator))
    assert op.device == "gpu", op.details
    got, want = gpu.execute(sql).fetchall(), cpu.execute(sql).fetchall()
    if compare == "top":
        assert [r[1] for r in got] == pytest.approx([r[1] for r in want], rel=1e-5)
        return
    got, want = sorted(got, key=repr), sorted(want, key=repr)
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        for x, y in zip(a, b, strict=True):
            if isinstance(x, float) and compare == "float":
                assert math.isclose(x, y, rel_tol=1e-4, abs_tol=1e-9), (a, b)
            else:
                assert x == y, (a, b)


PATTERNS = [
    "(a)-[e]->(b) COLUMNS (a.id AS a, b.id AS b, e.weight AS w)",
    "(a)<-[]-(b)-[]->(c) WHERE a.id = {s} COLUMNS (b.id AS b, c.id AS c)",
    "(a)-[]-{1,3}(b) WHERE a.id = {s} COLUMNS (b.id AS b)",
    "(a)-[]->{0,2}(b) COLUMNS (a.id AS a, b.id AS b)",
    # cycles: the closing hop's edges looked up, the hop before it intersected (executor.cycles)
    "(a)-[]-(b)-[]-(c)-[]-(a) WHERE a.id < {u} COLUMNS (a.id AS a, b.id AS b, c.id AS c)",
    "(a)-[e]->(b)-[f]->(c)-[h]->(a) COLUMNS (a.id AS a, e.weight AS w, h.weight AS x)",
    "(a)-[]->(b)<-[]-(c)-[]->(b) COLUMNS (a.id AS a, c.id AS c)",
    # path searches from both ends (executor.path_search)
    "p = ALL SHORTEST (a)-[]->+(b) WHERE a.id = {s} AND b.id = {t} COLUMNS (vertices(p) AS v)",
    "p = ALL SHORTEST (a)-[]-+(b) WHERE a.id = {s} COLUMNS (b.id AS b, path_length(p) AS n)",
    "p = ANY 3 (a)-[]->+(b) WHERE a.id = {s} AND b.id = {t} COLUMNS (path_length(p) AS n)",
    "p = ANY SHORTEST (a)<-[]-+(b) WHERE a.id = {s} AND b.id = {t} COLUMNS (path_length(p) AS n)",
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_graph_table_on_the_gpu_equals_the_cpu(databases, pattern):
    from graphdb.executor.physical import PatternOperator

    gpu, cpu, name = databases
    # the quantifiers' braces are not placeholders: replace, not str.format
    pattern = pattern.replace("{s}", repr(name(0))).replace("{t}", repr(name(7))).replace(
        "{u}", repr(name(1500)))
    sql = f"SELECT * FROM GRAPH_TABLE (g MATCH {pattern})"
    op = next(n for n in gpu.plan(sql).walk() if isinstance(n, PatternOperator))
    assert op.device == "gpu", op.details
    got = gpu.execute(sql).fetchall()
    assert sorted(got, key=repr) == sorted(cpu.execute(sql).fetchall(), key=repr)


@pytest.mark.parametrize("pattern", ["(a)-[]->{1,4}(b)", "(a)-[]-(b)-[]->{0,2}(c)",
                                     "(a)-[]->(b)-[]->(c)-[]->(a)"])
def test_count_of_a_pattern_on_the_gpu_equals_the_cpu(databases, pattern):
    """count(*) counted without building rows (walks per vertex on the device)."""
    gpu, cpu, _name = databases
    sql = f"SELECT count(*) FROM GRAPH_TABLE (g MATCH {pattern} COLUMNS (a.id))"
    assert gpu.execute(sql).fetchall() == cpu.execute(sql).fetchall()


def test_a_streamed_plan_frees_what_other_graphs_left_on_the_device(tmp_path):
    """A streamed variant sizes its buffers to the whole budget beside its vertex state, so the
    device copies another graph's resident query left must go first: without that the chunks
    ran out of memory and the query fell back to the CPU (bench_streaming saw it on an H200)."""
    import graphdb

    src, dst = rmat(13, 8, seed=2)
    big_src, big_dst = rmat(16, 16, seed=3)
    with graphdb.connect(tmp_path / "db", device="gpu") as con:
        con.ingest("small", pa.table({"src": src, "dst": dst}))
        con.ingest("big", pa.table({"src": big_src, "dst": big_dst}))
        con.execute("SELECT count(*) FROM bfs(small, 0)").fetchall()  # its CSR stays resident
        con.execute("SET debug_variant = 'streamed'")  # state + a quarter of the topology
        plan = "\n".join(r[0] for r in con.execute(
            "EXPLAIN ANALYZE SELECT count(*) FROM pagerank(big, max_iterations => 3)").fetchall())
        assert "gpu · edge_centric" in plan and "ran on the CPU" not in plan, plan
        got = con.execute("SELECT vertex, rank FROM pagerank(big, max_iterations => 3) "
                          "ORDER BY vertex").fetchall()
        con.execute("SET device = 'cpu'")
        con.execute("SET debug_variant = 'auto'")
        want = con.execute("SELECT vertex, rank FROM pagerank(big, max_iterations => 3) "
                           "ORDER BY vertex").fetchall()
    assert [v for v, _ in got] == [v for v, _ in want]
    np.testing.assert_allclose([r for _, r in got], [r for _, r in want], rtol=1e-9)
