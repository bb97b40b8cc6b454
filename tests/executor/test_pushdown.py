"""Aggregates and top-k pushed down onto graph operators (executor/physical/pushdown.py), and
the result path's host side (executor/results.py): every pushed query gives what the relational
operators give over the operator's rows, on graphs with identity, integer and string ids."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

import graphdb
from graphdb.executor.physical import GraphOperator, pushdown

#: (query, pushed: whether the plan must push it down ("ints": with integer vertex ids only:
#: min/max of a vertex column), the ordered key's column for ORDER BY queries). {s} a source, {t} a target, {far} a vertex the source does not reach.
QUERIES = [
    ("SELECT count(*) FROM bfs(g, {s})", True, None),
    ("SELECT count(*) AS c, min(depth), max(depth), sum(depth), avg(depth), min(vertex), "
     "max(vertex), count(vertex) FROM bfs(g, {s})", "ints", None),
    ("SELECT depth, count(*) FROM bfs(g, {s}) GROUP BY depth", True, None),
    ("SELECT count(*) AS n, hops FROM khop(g, {s}, 2) GROUP BY hops", True, None),
    ("SELECT count(*), max(depth) FROM bfs(g, {far})", True, None),
    ("SELECT component, count(*) FROM wcc(g) GROUP BY component", True, None),
    ("SELECT count(*), min(component), max(component) FROM wcc(g)", "ints", None),
    ("SELECT min(rank), max(rank), sum(rank), avg(rank), count(*) FROM pagerank(g)", True, None),
    ("SELECT vertex, rank FROM pagerank(g) ORDER BY rank DESC LIMIT 5", True, 1),
    ("SELECT vertex, rank FROM pagerank(g) ORDER BY rank LIMIT 3 OFFSET 2", True, 1),
    ("SELECT rank AS r, vertex AS v FROM pagerank(g) ORDER BY r DESC LIMIT 1000", True, 0),
    ("SELECT * FROM sssp(g, {s}) ORDER BY distance DESC LIMIT 4", True, 1),
    ("SELECT max(distance), min(distance), count(*) FROM sssp(g, {s})", True, None),
    ("SELECT label, count(*) FROM cdlp(g, 5) GROUP BY label", True, None),
    ("SELECT max(coefficient), sum(coefficient), count(*) FROM lcc(g)", True, None),
    ("SELECT max(width), min(width), count(*) FROM sswp(g, {s})", True, None),
    ("SELECT count(*), sum(distance), max(step) FROM shortest_path(g, {s}, {t})", True, None),
    ("SELECT count(*), max(distance), sum(step), avg(step) FROM shortest_path(g, {s}, {far})",
     True, None),
    ("SELECT count(*), min(neighbor) FROM neighbors(g, {s})", "ints", None),
    ("SELECT * FROM bfs(g, {s}) ORDER BY depth DESC LIMIT 3", True, 1),
    ("SELECT depth FROM bfs(g, {s}) ORDER BY depth LIMIT 2", True, 0),
    # stay relational
    ("SELECT count(DISTINCT component) FROM wcc(g)", False, None),
    ("SELECT max(vertex) FROM bfs(g, {s}) WHERE depth > 1", False, None),
    ("SELECT vertex, count(*) FROM bfs(g, {s}) GROUP BY vertex", False, None),
    ("SELECT max(depth + 1) FROM bfs(g, {s})", False, None),
    ("SELECT * FROM pagerank(g) ORDER BY vertex LIMIT 3", False, None),
]


def _graph(kind: str):
    """A weighted directed graph with three components and an isolated vertex, its vertex ids
    exactly 0..V-1 (identity), spread integers, or strings."""
    rng = np.random.default_rng(3)
    g = nx.gnm_random_graph(60, 240, seed=4, directed=True)
    g.add_edges_from([(60, 61), (61, 62), (63, 64)])
    g.add_node(65)
    for u, v in g.edges:
        g.edges[u, v]["weight"] = float(rng.integers(1, 9))
    names = {"identity": lambda v: v, "spread": lambda v: 1000 + 7 * v,
             "string": lambda v: f"v{v:03d}"}[kind]
    return nx.relabel_nodes(g, {v: names(v) for v in g.nodes}), names


@pytest.fixture(scope="module", params=["identity", "spread", "string"])
def con(request, tmp_path_factory):
    g, names = _graph(request.param)
    c = graphdb.connect(str(tmp_path_factory.mktemp("db") / "db"), device="cpu")
    c.from_networkx("g", g)
    c.names = names
    yield c
    c.close()


def _sql(con, query: str) -> str:
    n = con.names
    return query.format(s=repr(n(0)), t=repr(n(5)), far=repr(n(60)))


def _rows(con, sql):
    return con.execute(sql).fetchall()


def _close(got, want) -> bool:
    if len(got) != len(want):
        return False
    for r, w in zip(got, want, strict=True):
        for x, y in zip(r, w, strict=True):
            if isinstance(x, float) and isinstance(y, float):
                if not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12):
                    return False
            elif x != y:
                return False
    return True


def _pushed(con, sql) -> bool:
    return any(isinstance(n, GraphOperator) and (n.reduction or n.top)
               for n in con.plan(sql).walk())


@pytest.mark.parametrize("query,pushed,key", QUERIES, ids=[q for q, _, _ in QUERIES])
def test_pushed_down_queries_equal_the_relational_answer(con, query, pushed, key, monkeypatch):
    sql = _sql(con, query)
    if pushed == "ints":
        pushed = not isinstance(con.names(0), str)
    assert _pushed(con, sql) == pushed
    got = _rows(con, sql)
    monkeypatch.setattr(pushdown, "PUSHDOWN", False)
    assert not _pushed(con, sql)
    want = _rows(con, sql)
    if key is None:
        assert _close(sorted(got, key=repr), sorted(want, key=repr)), (got, want)
        return
    # ties may be broken either way: the keys in order, and every row a real one
    assert [r[key] for r in got] == pytest.approx([r[key] for r in want])
    every = set(_rows(con, sql.split(" ORDER BY")[0]))
    assert set(got) <= every


def test_a_scan_read_twice_is_not_pushed_down(con):
    sql = _sql(con, "WITH b AS (SELECT * FROM bfs(g, {s})) "
                    "SELECT (SELECT count(*) FROM b), (SELECT max(depth) FROM b)")
    assert not _pushed(con, sql)
    count, deepest = _rows(con, sql)[0]
    assert count == _rows(con, _sql(con, "SELECT count(*) FROM bfs(g, {s})"))[0][0]
    assert deepest == _rows(con, _sql(con, "SELECT max(depth) FROM bfs(g, {s})"))[0][0]


def test_explain_says_what_was_pushed_down(con):
    lines = [r[0] for r in con.execute(_sql(con, "EXPLAIN SELECT depth, count(*) FROM "
                                                 "bfs(g, {s}) GROUP BY depth")).fetchall()]
    text = "\n".join(lines)
    assert "→ count(*) GROUP BY depth" in text and "HASH AGGREGATE" not in text
    assert "pushed down: count(*) GROUP BY depth" in text


def test_group_counts_and_types_by_hand(con):
    """count(*) GROUP BY depth from networkx's BFS, and the column types of the pushed table."""
    g, names = _graph("identity")
    depths = nx.single_source_shortest_path_length(g, 0)
    want = sorted(np.unique(list(depths.values()), return_counts=True)[1].tolist())
    table = con.execute(_sql(con, "SELECT depth, count(*) AS n FROM bfs(g, {s}) "
                                  "GROUP BY depth")).arrow()
    assert sorted(table.column("n").to_pylist()) == want
    assert [str(t) for t in table.schema.types] == ["int64", "int64"]
    empty = con.execute(_sql(con, "SELECT max(distance), count(*), avg(step) FROM "
                                  "shortest_path(g, {s}, {far})")).arrow()
    assert empty.to_pylist() == [{"max(distance)": None, "count(*)": 0, "avg(step)": None}]
    assert [str(t) for t in empty.schema.types] == ["double", "int64", "double"]
