"""The embedding API: PEP 249 shape, parameters, errors, the graph handle, interop."""

from __future__ import annotations

import re

import networkx as nx
import numpy as np
import pyarrow as pa
import pytest
import scipy.sparse as sp

import graphdb


@pytest.fixture
def social(con):
    graph = nx.DiGraph([(1, 2), (1, 3), (2, 3), (3, 4), (4, 1), (4, 5), (6, 5)])
    graph.add_node(7)
    con.from_networkx("social", graph)
    return con


def test_module_globals_follow_pep249():
    assert graphdb.apilevel == "2.0" and graphdb.paramstyle == "qmark"
    assert issubclass(graphdb.ParseError, graphdb.ProgrammingError)
    assert issubclass(graphdb.ProgrammingError, graphdb.DatabaseError)
    assert issubclass(graphdb.OperationalError, graphdb.DatabaseError)
    assert issubclass(graphdb.DatabaseError, graphdb.Error)


def test_positional_and_named_parameters(social):
    rows = social.execute("SELECT vertex FROM bfs(social, ?, ?) WHERE depth = ?", [1, 2, 2])
    assert rows.fetchall() == [(4,)]
    rows = social.execute("SELECT vertex FROM bfs(social, $s) WHERE depth > $d ORDER BY vertex",
                          {"s": 1, "d": 1})
    assert rows.fetchall() == [(4,), (5,)]
    assert social.execute("SELECT ? || '!'", ["hi"]).fetchone() == ("hi!",)
    assert social.execute("SELECT ?", [np.int64(3)]).fetchone() == (3,)


@pytest.mark.parametrize("sql,params,message", [
    ("SELECT ?", [], "more '?' placeholders"),
    ("SELECT ?", [1, 2], "has 1 '?' placeholders"),
    ("SELECT $x", {"y": 1}, "no value given for parameter $x"),
    ("SELECT ?", {"x": 1}, "given by name"),
    ("SELECT 1", [5], "has none"),
])
def test_parameter_mistakes(social, sql, params, message):
    with pytest.raises(graphdb.ProgrammingError, match=re.escape(message)):
        social.execute(sql, params)


def test_cursor_fetch_methods_and_description(social):
    cur = social.cursor()
    assert cur.description is None and cur.rowcount == -1
    cur.execute("SELECT vertex, depth FROM bfs(social, 1) ORDER BY vertex")
    assert [d[0] for d in cur.description] == ["vertex", "depth"]
    assert cur.description[0][1] == "BIGINT" == graphdb.NUMBER != graphdb.STRING
    assert cur.description[0][1].arrow_type == pa.int64()
    assert cur.rowcount == 5
    assert cur.fetchone() == (1, 0)
    assert cur.fetchmany(2) == [(2, 1), (3, 1)]
    assert cur.fetchall() == [(4, 2), (5, 3)]
    assert cur.fetchone() is None
    assert isinstance(cur.arrow(), pa.Table)
    cur.executemany("SELECT * FROM bfs(social, ?)", [[6], [7]])
    assert cur.fetchall() == [(7, 0)]
    cur.close()
    with pytest.raises(graphdb.InterfaceError):
        cur.fetchall()


def test_result_iterates_and_converts(social):
    result = social.execute("SELECT id FROM social.vertices ORDER BY id")
    assert [r[0] for r in result] == [1, 2, 3, 4, 5, 6, 7]
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(graphdb.NotSupportedError, match="pandas"):
            social.execute("SELECT 1").df()
    else:
        assert social.execute("SELECT 1 AS x").df()["x"].tolist() == [1]


def test_closed_connection_is_an_interface_error(db_path):
    con = graphdb.connect(db_path)
    con.close()
    with pytest.raises(graphdb.InterfaceError):
        con.execute("SELECT 1")


def test_graph_handle_runs_registry_algorithms(social):
    g = social.graph("social")
    ranks = g.pagerank(max_iterations=100, tolerance=1e-12)
    assert ranks.column_names == ["vertex", "rank"]
    expected = nx.pagerank(g.to_networkx(), alpha=0.85, tol=1e-13, max_iter=1000)
    ours = dict(zip(ranks["vertex"].to_pylist(), ranks["rank"].to_pylist()))
    # rel 1e-6: the GPU kernels keep ranks in float32 (the Graphalytics rule is 1e-4).
    assert ours == pytest.approx(expected, rel=1e-6)
    assert g.bfs(1, max_depth=1).num_rows == 3
    assert set(dir(g)) >= {"bfs", "pagerank"}
    with pytest.raises(TypeError, match="did you mean 'max_depth'"):
        g.bfs(1, depth=1)
    with pytest.raises(graphdb.ProgrammingError, match="not a vertex"):
        g.bfs(42)
    with pytest.raises(AttributeError, match="algorithms"):
        g.no_such_algorithm()
    with pytest.raises(graphdb.CatalogError, match="did you mean 'social'"):
        social.graph("socal")


def test_networkx_round_trip_keeps_isolated_vertices_and_weights(con):
    graph = nx.Graph()
    graph.add_weighted_edges_from([("a", "b", 2.0), ("b", "c", 0.5)])
    graph.add_node("lonely")
    handle = con.from_networkx("u", graph)
    back = handle.to_networkx()
    assert not back.is_directed()
    assert set(back.nodes) == {"a", "b", "c", "lonely"}
    assert back["a"]["b"]["weight"] == 2.0 and back.number_of_edges() == 2


def test_scipy_round_trip(con):
    matrix = sp.csr_array(np.array([[0, 1.5, 0], [0, 0, 2.0], [3.0, 0, 0]]))
    handle = con.from_scipy("m", matrix)
    out, ids = handle.to_scipy()
    assert ids.to_pylist() == [0, 1, 2]
    assert (out.toarray() == matrix.toarray()).all()
    assert con.execute("SELECT sum(weight) FROM m.edges").fetchone() == (6.5,)


def test_threads_setting_really_sets_arrow_cpu_count(con):
    before = pa.cpu_count()
    con.execute("SET threads = 1")
    assert pa.cpu_count() == 1
    con.execute("RESET threads")
    assert pa.cpu_count() == before


def test_buffer_stats_hook_is_one_line(db_path):
    class WithBufferStats(graphdb.Connection):
        def buffer_stats(self) -> pa.Table:
            return pa.table({"hits": [3], "misses": [1]})

    with WithBufferStats(db_path) as con:
        assert con.execute("SELECT hits + misses FROM buffer_stats()").fetchone() == (4,)


def test_interrupt_stops_the_running_query_and_the_next_one_runs(social, monkeypatch):
    runner = social.session.runner
    original = runner._run_AlgorithmScan

    def algorithm_then_ctrl_c(node, metrics):
        table = original(node, metrics)
        social.interrupt()  # what the shell does when Ctrl-C arrives mid-query
        return table

    monkeypatch.setattr(runner, "_run_AlgorithmScan", algorithm_then_ctrl_c)
    with pytest.raises(graphdb.OperationalError, match="cancelled"):
        social.execute("SELECT count(*) FROM bfs(social, 1)")
    monkeypatch.undo()
    assert social.execute("SELECT count(*) FROM bfs(social, 1)").fetchone() == (5,)
