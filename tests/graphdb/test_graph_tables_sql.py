"""``g.edges``, ``g.adjacency`` and LATERAL graph functions, checked against networkx.

- an undirected graph's ``g.edges`` lists each loaded edge once (its count is what SHOW GRAPHS
  reports), ``g.adjacency`` both directions;
- on a large graph a ``src = x`` filter is applied by reading x's rows of the CSR (forced here
  on a small one), in a self-join too, with the same answers;
- ``LATERAL khop(g, t.v, k)`` is one multi-source operator whatever the number of rows, with
  the answers of one call per row.
"""

from __future__ import annotations

import random

import networkx as nx
import pytest

import graphdb
from graphdb.executor.physical import GraphOperator, TableScan


def _random_graph(seed: int, n: int = 120, m: int = 400) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    return [(rng.randrange(n), rng.randrange(n)) for _ in range(m)]


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    path = tmp_path_factory.mktemp("tables")
    edges = _random_graph(5)
    text = "src,dst,since\n" + "".join(f"{a},{b},{2000 + i % 20}\n" for i, (a, b) in
                                       enumerate(edges))
    (path / "e.csv").write_text(text)
    with graphdb.connect(path / "db") as con:
        con.ingest("d", path / "e.csv")
        con.ingest("u", path / "e.csv", undirected=True)
        yield con


def test_undirected_edges_once_adjacency_both_ways(con):
    shown = dict((r[0], r) for r in con.execute("SHOW GRAPHS").fetchall())
    loaded = len(_random_graph(5))
    assert shown["u"][4] == loaded
    assert con.execute("SELECT count(*) FROM u.edges").fetchone() == (loaded,)
    rows = con.execute("SELECT src, dst FROM u.edges").fetchall()
    assert sorted(rows) == sorted((min(a, b), max(a, b)) for a, b in _random_graph(5))
    loops = sum(a == b for a, b in _random_graph(5))
    assert con.execute("SELECT count(*) FROM u.adjacency").fetchone() == (2 * loaded - loops,)
    assert con.execute("SELECT count(*) FROM d.adjacency").fetchone() == (loaded,)


def test_weightless_third_column_keeps_its_name_and_type(con):
    assert con.execute("DESCRIBE u.edges").fetchall() == [
        ("src", "int64"), ("dst", "int64"), ("since", "int64")]
    assert con.execute("SELECT weighted FROM graphs() WHERE name = 'u'").fetchone() == (False,)


SELF_JOIN = ("SELECT e2.dst FROM {g}.edges e1 JOIN {g}.edges e2 ON e1.dst = e2.src "
             "WHERE e1.src = ?")


@pytest.mark.parametrize("graph", ["d", "u"])
@pytest.mark.parametrize("pushdown", [False, True], ids=["scan", "pushed"])
def test_self_join_filtered_on_one_source(con, graph, pushdown, monkeypatch):
    from graphdb.query import binder

    if pushdown:
        monkeypatch.setattr(binder, "PUSHDOWN_MIN_ROWS", 0)
    loaded = _random_graph(5)
    rows = loaded if graph == "d" else [(min(a, b), max(a, b)) for a, b in loaded]
    for source in (0, 3, 17, 999):
        expected = sorted(c for a, b in rows if a == source for b2, c in rows if b2 == b)
        got = sorted(r[0] for r in con.execute(SELF_JOIN.format(g=graph), [source]).fetchall())
        assert got == expected
    plan = con.plan(SELF_JOIN.format(g=graph), [3])
    scans = [n for n in plan.walk() if isinstance(n, TableScan)]
    assert sorted(str(n.logical.sources) for n in scans) == (
        ["(3,)", "None"] if pushdown else ["None"])
    explain = "\n".join(r[0] for r in con.execute("EXPLAIN " + SELF_JOIN.format(g=graph),
                                                  [3]).fetchall())
    assert ("filter pushed into the scan: src IN (3)" in explain) == pushdown
    assert "FILTER (src = 3)" in explain  # DuckDB's filter, below the join


@pytest.mark.parametrize("graph", ["d", "u"])
def test_lateral_khop_is_one_multi_source_run(con, graph):
    sql = ("SELECT s.v, k.vertex, k.hops FROM (SELECT id AS v FROM {g}.vertices "
           "WHERE id % 7 = 0) s, LATERAL khop({g}, s.v, 2) k").format(g=graph)
    rows = sorted(con.execute(sql).fetchall())
    nxg = nx.DiGraph(_random_graph(5)) if graph == "d" else nx.Graph(_random_graph(5))
    expected = sorted((v, u, d) for v in nxg.nodes if v % 7 == 0
                      for u, d in nx.single_source_shortest_path_length(nxg, v, 2).items())
    assert rows == expected
    plan = con.plan(sql)
    operators = [n for n in plan.walk() if isinstance(n, GraphOperator)]
    assert len(operators) == 1 and operators[0].logical.lateral == ("source",)
    # the same as one call per row, and as a correlated subquery around the function
    for v in (0, 7, 14):
        one = con.execute(f"SELECT vertex, hops FROM khop({graph}, ?, 2)", [v]).fetchall()
        assert sorted(one) == sorted((u, d) for s, u, d in expected if s == v)
    counts = con.execute(f"SELECT v.id, (SELECT count(*) FROM khop({graph}, v.id, 2)) "
                         f"FROM {graph}.vertices v WHERE v.id % 7 = 0").fetchall()
    assert sorted(counts) == sorted(
        (v, sum(1 for s, _, _ in expected if s == v)) for v in nxg.nodes if v % 7 == 0)


def test_lateral_rows_without_a_source_give_no_rows(con):
    rows = con.execute("SELECT t.s, k.vertex FROM (VALUES (0), (NULL), (123456)) t(s), "
                       "LATERAL khop(d, t.s, 0) k").fetchall()
    assert rows == [(0, 0)]
    left = con.execute("SELECT t.s, k.vertex FROM (VALUES (0), (123456)) t(s) "
                       "LEFT JOIN LATERAL khop(d, t.s, 0) k ON true ORDER BY 1").fetchall()
    assert left == [(0, 0), (123456, None)]


def test_weight_is_named_or_none_never_guessed(tmp_path):
    edges = tmp_path / "e.csv"
    edges.write_text("src,dst,weight,cost\n1,2,5,1.5\n2,3,7,2.5\n")
    with graphdb.connect() as con:
        con.ingest("auto", edges)  # the column named weight
        con.ingest("none", edges, weight=None)
        con.ingest("cost", edges, weight="cost")
        shown = {r[0]: r[2] for r in con.execute("SHOW GRAPHS").fetchall()}
        assert shown == {"auto": True, "none": False, "cost": True}
        assert con.execute("SELECT * FROM none.edges ORDER BY src").fetchall() == [
            (1, 2, 5, 1.5), (2, 3, 7, 2.5)]  # every column kept, by name and type
        assert [c for c, _ in con.execute("DESCRIBE cost.edges").fetchall()] == [
            "src", "dst", "cost", "weight"]
        assert con.execute("SELECT distance FROM sssp(cost, 1) WHERE vertex = 3").fetchone() \
            == (4.0,)
        # and any numeric column at query time, whatever the graph was loaded with
        assert con.execute("SELECT distance FROM sssp(none, 1, weight => 'weight') "
                           "WHERE vertex = 3").fetchone() == (12.0,)
