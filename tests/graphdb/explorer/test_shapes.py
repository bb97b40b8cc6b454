"""Which results are graphs, what a drawing holds, EXPLAIN's tree, and the notebook HTML:
checked against networkx, the database's own answers and the plan."""

from __future__ import annotations

import html
import re

import networkx as nx
import pyarrow as pa
import pytest

import graphdb
from graphdb.explorer.notebook import MAX_EDGES, result_html
from graphdb.explorer.plans import plan_tree
from graphdb.explorer.results import chart
from graphdb.explorer.shapes import draw, shape_of, vertex_id
from tests.graphdb.explorer.conftest import karate, roads


@pytest.fixture(scope="module")
def con(explorer_db):
    with graphdb.connect(explorer_db, read_only=True) as connection:
        yield connection


def edges_of(drawing) -> set[tuple]:
    values = {n["id"]: n["value"] for n in drawing["nodes"]}
    return {(values[e["source"]], values[e["target"]]) for e in drawing["edges"]}


def test_path_columns_are_drawn_as_their_paths(con):
    table = con.execute(
        "SELECT * FROM GRAPH_TABLE (roads MATCH p = ANY SHORTEST (a)-[e]->+(b) "
        "WHERE a.id = 0 AND b.id IN (14, 35) COLUMNS (vertices(p) AS route, edges(p) AS hops, "
        "b.id AS target))").arrow()
    shape = shape_of(table, ["roads"])
    assert shape.kind == "edge_lists" and shape.columns == ("hops",)
    routes = table.column("route").to_pylist()
    expected = {pair for route in routes for pair in zip(route, route[1:])}
    assert edges_of(draw(table, shape)) == expected
    only_vertices = table.drop_columns(["hops"])
    assert shape_of(only_vertices, []).kind == "paths"
    assert edges_of(draw(only_vertices, shape_of(only_vertices, []))) == expected
    grid = roads()
    for route in routes:  # the engine's paths are shortest in hops
        assert len(route) - 1 == nx.shortest_path_length(grid, route[0], route[-1])


def test_k_shortest_paths_rows_are_drawn_by_their_steps(con):
    table = con.execute("SELECT * FROM k_shortest_paths(roads, 0, 35, 3)").arrow()
    shape = shape_of(table, ["roads"])
    assert shape.kind == "steps"
    paths = {}
    for row in sorted(table.to_pylist(), key=lambda r: (r["path"], r["step"])):
        paths.setdefault(row["path"], []).append(row["vertex"])
    expected = {pair for p in paths.values() for pair in zip(p, p[1:])}
    drawing = draw(table, shape)
    assert edges_of(drawing) == expected
    assert drawing["vertex_attributes"] == [{"name": "distance", "numeric": True}]


def test_vertices_of_a_graph_function_need_the_graph(con):
    table = con.execute("SELECT * FROM bfs(karate, 0) WHERE depth <= 1").arrow()
    assert shape_of(table, []) is None
    shape = shape_of(table, ["karate"])
    assert shape.kind == "vertices"
    ids = table.column("vertex").to_pylist()
    induced = con.execute("SELECT src, dst FROM karate.edges WHERE src IN ? AND dst IN ?",
                          [ids, ids]).arrow()
    drawing = draw(table, shape, induced=induced)
    sub = karate().subgraph(ids)
    assert {frozenset(e) for e in edges_of(drawing)} == {frozenset(e) for e in sub.edges}
    depth = {n["value"]: n["depth"] for n in drawing["nodes"]}
    assert depth == dict(zip(ids, table.column("depth").to_pylist()))


def test_a_large_result_is_cut_with_a_note():
    g = nx.gnm_random_graph(3000, 12000, seed=1)
    table = pa.table({"src": [a for a, _ in g.edges], "dst": [b for _, b in g.edges]})
    drawing = draw(table, shape_of(table, []), max_vertices=500, max_edges=2000)
    assert len(drawing["nodes"]) <= 500 and len(drawing["edges"]) <= 2000
    assert "of 12,000 edges" in drawing["note"]
    first = {(a, b) for a, b in list(g.edges)[:50]}
    assert first <= edges_of(drawing)  # the first rows' edges are the ones kept


def test_ids_keep_their_type():
    assert vertex_id(1) != vertex_id("1")
    table = pa.table({"src": ["a", "1"], "dst": ["1", "b"]})
    assert len(draw(table, shape_of(table, []))["nodes"]) == 3
    numbers = pa.table({"src": [1, 2 ** 60], "dst": [2 ** 60, 1]})
    values = {n["value"] for n in draw(numbers, shape_of(numbers, []))["nodes"]}
    assert values == {1, str(2 ** 60)}  # past 2**53 as text: JavaScript keeps it exact


def test_histogram_and_bars_match_numpy():
    import numpy as np

    values = np.random.default_rng(3).lognormal(size=5000)
    table = pa.table({"x": values, "label": [f"v{i}" for i in range(5000)]})
    drawn = chart(table, "x")
    counts, edges = np.histogram(values, bins=30)
    assert drawn["counts"] == counts.tolist() and drawn["bins"] == pytest.approx(edges.tolist())
    log = chart(table, "x", log=True)
    assert sum(log["counts"]) == 5000 and log["log"]
    bars = chart(table, "x", label="label")
    assert bars["labels"][:3] == ["v0", "v1", "v2"] and bars["shown"] == 100


def test_explain_analyze_lines_read_back_as_the_plan(con):
    sql = "SELECT p.vertex, count(*) FROM pagerank(karate) p JOIN karate.edges e " \
          "ON e.src = p.vertex GROUP BY 1"
    lines = con.execute("EXPLAIN ANALYZE " + sql).arrow().column("plan").to_pylist()
    tree = plan_tree(lines)
    plan = con.plan(sql)

    def labels(node):
        return [node.label, [labels(c) for c in node.inputs]]

    def read(node):
        return [node["label"], [read(c) for c in node["children"]]]

    assert read(tree["root"]) == labels(plan)
    operators = [c for c in tree["root"]["children"] if c["label"].startswith("pagerank")]
    assert operators[0]["device"] in ("cpu", "gpu") and operators[0]["variant"] == "resident"
    assert operators[0]["rows"] == 34 and operators[0]["ms"] >= 0
    assert tree["total_ms"] > 0


def test_a_result_renders_in_a_notebook(con):
    table = con.execute("SELECT src, dst FROM karate.edges").arrow()
    page = result_html(table)
    assert "78 rows × 2 columns (the first 10 shown)" in page
    assert page.count("<tr>") == 11
    document = html.unescape(re.search(r'srcdoc="([^"]*)"', page).group(1))
    assert "cytoscape" in document and "http://" not in document.split("<script>")[-1]
    assert len(re.findall(r'"source":', document)) == 78
    big = pa.table({"src": list(range(MAX_EDGES + 50)), "dst": list(range(1, MAX_EDGES + 51))})
    assert "Drawn:" in result_html(big)
    assert "<iframe" not in result_html(con.execute("SELECT 1 AS x").arrow())
    handle_html = graphdb.GraphHandle(con, "karate")._repr_html_()
    assert "34 vertices, 78 edges" in handle_html and "<iframe" in handle_html
