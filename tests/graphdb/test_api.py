"""The Python API: connect, execute, results, parameters, errors, atomic ingest."""

from __future__ import annotations

import re

import networkx as nx
import numpy as np
import pyarrow as pa
import pytest

import graphdb
from graphdb.generators import rmat


@pytest.fixture
def small(con, tmp_path):
    edges = tmp_path / "small.csv"
    edges.write_text("src,dst\n10,20\n20,30\n30,10\n30,40\n50,10\n")
    con.ingest("g", edges)
    return con


def test_result_interfaces(small):
    result = small.execute("SELECT vertex, depth FROM bfs(g, 10) ORDER BY vertex")
    assert result.columns == ["vertex", "depth"]
    assert [d[0] for d in result.description] == ["vertex", "depth"]
    assert result.fetchone() == (10, 0)
    assert result.fetchall() == [(20, 1), (30, 2), (40, 3)]
    assert result.fetchone() is None
    table = result.arrow()
    assert isinstance(table, pa.Table) and table.num_rows == 4
    assert table.schema.field("vertex").type == pa.int64()


def test_context_manager_closes(db_path):
    with graphdb.connect(db_path) as con:
        con.execute("SHOW GRAPHS")
    with pytest.raises(graphdb.InterfaceError):
        con.execute("SHOW GRAPHS")


def test_reopen_sees_committed_graph(small):
    path = small.path
    small.close()
    with graphdb.connect(path) as again:
        assert again.execute("SHOW GRAPHS").fetchall() == [("g", True, False, 5, 5)]
        assert again.execute("SELECT vertex FROM bfs(g, 50) WHERE depth = 1").fetchall() == [(10,)]


def test_parameters(small):
    q = "SELECT vertex FROM bfs(g, ?) WHERE depth = ? ORDER BY vertex"
    assert small.execute(q, [10, 1]).fetchall() == [(20,)]
    with pytest.raises(graphdb.ProgrammingError, match="parameters"):
        small.execute(q, [10])


def test_named_parameter_rows(small):
    rows = small.execute("SELECT vertex FROM bfs(g, $s) WHERE depth = $d ORDER BY vertex",
                         {"s": 30, "d": 1}).fetchall()
    assert rows == [(10,), (40,)]


def test_string_ids_round_trip(con, tmp_path):
    edges = tmp_path / "names.csv"
    edges.write_text("a,b\nann,bob\nbob,cid\ncid,ann\n")
    con.ingest("people", edges)
    rows = con.execute("SELECT vertex, depth FROM bfs(people, 'bob') ORDER BY depth").fetchall()
    assert rows == [("bob", 0), ("cid", 1), ("ann", 2)]


@pytest.mark.parametrize("sql, error, text", [
    ("SELECT * FROM bfs(nope, 1)", graphdb.CatalogError, "graph 'nope' does not exist"),
    ("SELECT * FROM bsf(g, 1)", graphdb.BinderError, "did you mean bfs"),
    ("SELECT * FROM pagerank(g, dampng => 0.5)", graphdb.BinderError, "did you mean 'damping'"),
    ("SELECT * FROM bfs(g)", graphdb.BinderError, "missing argument 'source'"),
    ("SELECT * FROM bfs(g, 99)", graphdb.InvalidInputError, "not a vertex"),
    ("SELECT dept FROM bfs(g, 10)", graphdb.BinderError, 'Candidate bindings: "depth"'),
    ("SELECT * FROM pagerank(g, damping => 2)", graphdb.InvalidInputError, "<= 1"),
    ("SELECT * FROM pagerank(g, max_iterations => 1e30)", graphdb.InvalidInputError, r"<= 1e\+06"),
    ("SELECT *\nFROM bfs(g, 10)\nWHERE", graphdb.ParseError, "line 3"),
    ("SELEC 1", graphdb.ParseError, "syntax error"),
])
def test_errors_are_typed_and_helpful(small, sql, error, text):
    with pytest.raises(error, match=text):
        small.execute(sql)
    assert issubclass(error, graphdb.ProgrammingError)


def test_parse_error_carries_position(small):
    with pytest.raises(graphdb.ParseError) as info:
        small.execute("SELECT *\nFROM bfs(g, 10)\nWHERE")
    assert info.value.line == 3 and info.value.column >= 1


def _ingest_edges(con, name, src, dst, tmp_path):
    path = tmp_path / f"{name}.csv"
    path.write_text("s,d\n" + "\n".join(f"{a},{b}" for a, b in zip(src, dst)))
    con.ingest(name, path)


def test_pagerank_tolerance_stops_early_and_converges(con, tmp_path):
    src, dst = rmat(8, 8, seed=3)
    _ingest_edges(con, "r", src, dst, tmp_path)
    g = nx.MultiDiGraph()
    g.add_edges_from(zip(src.tolist(), dst.tolist()))
    expected = nx.pagerank(g, alpha=0.85, tol=1e-12, max_iter=1000)
    # Stopping once an iteration changes the ranks by less than 1e-6 (L1) leaves at most
    # 1e-6 * d / (1 - d) ~ 5.7e-6 of L1 error; 6e-6 leaves room for float32 rounding on a GPU.
    sql = "SELECT vertex, rank FROM pagerank(r, max_iterations => 1000, tolerance => 1e-6)"
    rows = dict(con.execute(sql).fetchall())
    assert rows.keys() == expected.keys()
    assert sum(abs(rows[v] - expected[v]) for v in rows) < 6e-6
    plan = "\n".join(r[0] for r in con.execute("EXPLAIN ANALYZE " + sql).fetchall())
    iterations = int(re.search(r"\biterations (\d+)", plan).group(1))
    assert 5 < iterations < 1000
    fixed = con.execute("EXPLAIN ANALYZE SELECT * FROM pagerank(r, max_iterations => 7, "
                        "tolerance => 0)").fetchall()
    assert re.search(r"\biterations 7\b", "\n".join(r[0] for r in fixed))


def test_bfs_matches_networkx_on_random_graph(con, tmp_path):
    src, dst = rmat(9, 4, seed=11)
    _ingest_edges(con, "r", src, dst, tmp_path)
    g = nx.DiGraph()
    g.add_edges_from(zip(src.tolist(), dst.tolist()))
    source = int(np.bincount(src).argmax())
    expected = nx.single_source_shortest_path_length(g, source)
    got = dict(con.execute("SELECT vertex, depth FROM bfs(r, ?)", [source]).fetchall())
    assert got == expected
    capped = dict(con.execute("SELECT vertex, depth FROM bfs(r, ?, max_depth => 2)", [source]).fetchall())
    assert capped == {v: d for v, d in expected.items() if d <= 2}
