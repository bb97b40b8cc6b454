"""The plans of queries already seen, reused only while nothing they depend on changed: every
answer of a repeated query against a fresh connection's answer (which plans anew), across
writes (this connection's, another's, another process's, in and out of transactions), DROP and
CREATE, settings, registered tables, table functions, parameters of every type, and prepared
statements."""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pytest

import graphdb

QUERIES = [
    ("SELECT count(*) FROM g.edges", None),
    ("SELECT count(*) FROM bfs(g, 1)", None),
    ("SELECT sum(depth) FROM bfs(g, ?)", [1]),
    ("SELECT * FROM GRAPH_TABLE (g MATCH (a WHERE a.id = ?)-[]->(b) COLUMNS (b.id AS b)) "
     "ORDER BY b", [2]),
    ("SELECT count(*) FROM GRAPH_TABLE (g MATCH (a)-[]->{1,3}(b) COLUMNS (a.id))", None),
    ("SELECT src, dst FROM g.edges WHERE src = $s ORDER BY dst", {"s": 1}),
    ("SELECT v.id FROM g.vertices v ORDER BY v.id", None),
]


def fresh(path, sql, parameters):
    """The answer of a connection that never saw the query."""
    with graphdb.connect(path) as other:
        return other.execute(sql, parameters).fetchall()


def answers(con, path):
    for sql, parameters in QUERIES:
        assert con.execute(sql, parameters).fetchall() == fresh(path, sql, parameters), sql


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "db"
    con = graphdb.connect(path)
    con.ingest("g", pa.table({"src": [1, 2, 3, 3], "dst": [2, 3, 1, 4]}))
    yield con, path
    con.close()


def test_repeated_queries_reuse_their_plans(db):
    con, _path = db
    for sql, parameters in QUERIES:
        first = con.execute(sql, parameters).fetchall()
        hits = con.session.plans.hits
        assert con.execute(sql, parameters).fetchall() == first
        assert con.session.plans.hits == hits + 1, sql


def test_writes_of_this_connection_retire_plans(db):
    con, path = db
    answers(con, path)
    con.execute("INSERT INTO g.edges (src, dst) VALUES (4, 5), (5, 1), (2, 9)")
    answers(con, path)
    con.execute("DELETE FROM g.edges WHERE src = 3")
    answers(con, path)
    con.execute("CHECKPOINT g")
    answers(con, path)


def test_a_transaction_sees_its_own_writes_and_not_after_rollback(db):
    con, path = db
    answers(con, path)
    before = con.execute(*QUERIES[0]).fetchall()
    con.execute("BEGIN")
    con.execute("INSERT INTO g.edges (src, dst) VALUES (7, 8)")
    assert con.execute(*QUERIES[0]).fetchall() == [(before[0][0] + 1,)]
    assert con.execute("SELECT count(*) FROM bfs(g, 7)").fetchall() == [(2,)]
    con.execute("ROLLBACK")
    assert con.execute(*QUERIES[0]).fetchall() == before
    with pytest.raises(graphdb.Error):
        con.execute("SELECT count(*) FROM bfs(g, 7)").fetchall()
    answers(con, path)


def test_writes_of_another_connection_and_process_retire_plans(db):
    con, path = db
    answers(con, path)
    with graphdb.connect(path) as other:
        other.execute("INSERT INTO g.edges (src, dst) VALUES (1, 4), (4, 2)")
    answers(con, path)
    code = ("import graphdb, sys; c = graphdb.connect(sys.argv[1]); "
            "c.execute('DELETE FROM g.edges WHERE dst = 2'); c.close()")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=120)
    answers(con, path)


def test_drop_and_create_retire_plans(db):
    con, path = db
    answers(con, path)
    con.execute("DROP GRAPH g")
    for sql, parameters in QUERIES:
        with pytest.raises(graphdb.Error):
            con.execute(sql, parameters).fetchall()
    con.ingest("g", pa.table({"src": [1, 1, 2], "dst": [2, 3, 3]}))
    answers(con, path)
    con.ingest("g", pa.table({"src": [1], "dst": [9]}), replace=True)
    answers(con, path)


def test_settings_retire_plans(db):
    con, path = db
    sql = "SELECT count(*) FROM GRAPH_TABLE (g MATCH (a)-[]->{1,3}(b) COLUMNS (a.id AS a))"
    rows = "SELECT count(a) FROM GRAPH_TABLE (g MATCH (a)-[]->{1,3}(b) COLUMNS (a.id AS a))"
    count = con.execute(sql).fetchone()[0]
    assert con.execute(rows).fetchone()[0] == count
    con.execute(f"SET max_path_rows = {count - 1}")
    with pytest.raises(graphdb.ProgrammingError, match="max_path_rows"):
        con.execute(rows).fetchall()
    con.execute("RESET max_path_rows")
    assert con.execute(rows).fetchone()[0] == count
    # any setting plans anew (the device, the budget a plan sized its operators by ...)
    for setting in ("memory_limit = '64MB'", "device = 'cpu'", "debug_variant = 'streamed'",
                    "threads = 1"):
        con.execute("SELECT count(*) FROM bfs(g, 1)").fetchall()
        hits = con.session.plans.hits
        con.execute(f"SET {setting}")
        con.execute("SELECT count(*) FROM bfs(g, 1)").fetchall()
        assert con.session.plans.hits == hits, setting
        con.execute(f"RESET {setting.split()[0]}")
    assert con.execute("SELECT value FROM settings() WHERE name = 'threads'").fetchone()[0] \
        == fresh(path, "SELECT value FROM settings() WHERE name = 'threads'", None)[0][0]
    answers(con, path)


def test_registered_tables_and_table_functions_retire_plans(db):
    con, _path = db
    con.register("t", pa.table({"x": [1, 2]}))
    assert con.execute("SELECT sum(x) FROM t").fetchall() == [(3,)]
    con.register("t", pa.table({"x": [10, 20, 30]}))
    assert con.execute("SELECT sum(x) FROM t").fetchall() == [(60,)]
    con.unregister("t")
    with pytest.raises(graphdb.Error):
        con.execute("SELECT sum(x) FROM t")
    con.register_table_function("answer", lambda: pa.table({"x": [42]}))
    assert con.execute("SELECT x FROM answer()").fetchall() == [(42,)]
    con.register_table_function("answer", lambda: pa.table({"x": [43]}))
    assert con.execute("SELECT x FROM answer()").fetchall() == [(43,)]
    # a table function's rows are read while planning: never from a kept plan
    state = {"x": 1}
    con.register_table_function("moving", lambda: pa.table({"x": [state["x"]]}))
    assert con.execute("SELECT x FROM moving()").fetchall() == [(1,)]
    state["x"] = 2
    assert con.execute("SELECT x FROM moving()").fetchall() == [(2,)]
    con.execute("INSERT INTO g.edges (src, dst) VALUES (8, 9)")
    assert ("g",) in con.execute("SELECT name FROM graphs()").fetchall()
    edges = con.execute("SELECT edges FROM graphs() WHERE name = 'g'").fetchone()[0]
    con.execute("INSERT INTO g.edges (src, dst) VALUES (9, 10)")
    assert con.execute("SELECT edges FROM graphs() WHERE name = 'g'").fetchone()[0] == edges + 1


def outcome(con, sql, parameters):
    try:
        rows = con.execute(sql, parameters).fetchall()
        return [(v, type(v)) for row in rows for v in row]
    except graphdb.Error as exc:
        return type(exc)


def test_parameters_of_equal_python_values_and_other_types_plan_apart(db):
    """1, True and 1.0 are one dict key in Python; as SQL values they differ (True + 1 is an
    error)."""
    con, _path = db
    values = [1, True, 1.0, 1.5, "1", 2**40, None, [1, 2], (1, 2)]
    with graphdb.connect() as other:
        for sql in ("SELECT ? + 1", "SELECT ?", "SELECT typeof(?)"):
            expected = {repr(v): outcome(other, sql, [v]) for v in values}
            for v in values + values[::-1]:
                assert outcome(con, sql, [v]) == expected[repr(v)], (sql, v)


def test_parameter_values_plan_apart(db):
    con, path = db
    sql, _ = QUERIES[3]
    for source in (1, 2, 3, 2, 1, 99):
        assert con.execute(sql, [source]).fetchall() == fresh(path, sql, [source])
    lists = "SELECT count(*) FROM bfs(g, sources => ?)"
    assert con.execute(lists, [[1]]).fetchall() != con.execute(lists, [[1, 3]]).fetchall() or \
        fresh(path, lists, [[1]]) == fresh(path, lists, [[1, 3]])


def test_prepared_statements(db):
    con, path = db
    with pytest.raises(graphdb.ProgrammingError):
        con.prepare("SELEC 1")
    lookup = con.prepare("SELECT dst FROM g.edges WHERE src = ? ORDER BY dst")
    assert lookup.execute([3]).fetchall() == [(1,), (4,)]
    assert con.execute(lookup, [1]).fetchall() == [(2,)]
    con.execute("INSERT INTO g.edges (src, dst) VALUES (1, 7)")
    assert lookup.execute([1]).fetchall() == [(2,), (7,)]
    assert "SELECT dst" in repr(lookup)
