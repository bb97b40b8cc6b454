"""Key lookups: a stored table's rows by primary key, a graph's vertices by id, a property
graph's label table by its key, read through their indexes; every answer as DuckDB's (or a
scan's) over the same rows, whatever the WHERE around the key looks like."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import graphdb

QUERIES = [
    "SELECT name FROM {t} WHERE id = 7",
    "SELECT * FROM {t} WHERE id = 7 AND age > 30",
    "SELECT * FROM {t} WHERE id IN (7, 7, 9, 1000)",
    "SELECT * FROM {t} WHERE id = 7 AND id = 9",
    "SELECT * FROM {t} WHERE id = '7'",
    "SELECT * FROM {t} WHERE id = 7.0",
    "SELECT * FROM {t} WHERE id = NULL",
    "SELECT * FROM {t} WHERE id = 7 OR id = 9",
    "SELECT * FROM {t} WHERE 7 = id",
    "SELECT count(*) FROM {t} x WHERE x.id = 11",
    "SELECT a.name, b.name FROM {t} a LEFT JOIN {t} b ON b.id = a.id + 2 WHERE b.id = 11",
    "SELECT a.name FROM {t} a JOIN {t} b ON b.age = a.age WHERE a.id = 11",
    "SELECT (SELECT name FROM {t} WHERE id = 13) AS n",
    "SELECT name FROM {t} WHERE id = -3",
]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    rows = pa.table({"id": [i * 2 + 1 for i in range(40)] + [-3],
                     "name": [f"p{i}" for i in range(41)],
                     "age": [20 + i % 30 for i in range(41)]})
    con = graphdb.connect(tmp_path_factory.mktemp("lookups") / "db")
    con.create_table("person", rows, primary_key="id")
    con.execute("CREATE TABLE city (name VARCHAR PRIMARY KEY, size INTEGER)")
    con.execute("INSERT INTO city VALUES ('delft', 1), ('ghent', 2)")
    con.execute("CREATE TABLE pair (a INTEGER, b VARCHAR, v DOUBLE, PRIMARY KEY (a, b))")
    con.execute("INSERT INTO pair VALUES (1, 'x', 0.5), (1, 'y', 1.5), (2, 'x', 2.5)")
    con.ingest("g", pa.table({"src": [1, 3], "dst": [3, 5]}), vertices=rows)
    con.execute("CREATE PROPERTY GRAPH pg VERTEX TABLES (person LABEL Person)")
    ref = duckdb.connect()
    ref.register("person", rows)
    yield con, ref
    con.close()


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("table", ["person", "g.vertices", "pg.Person"])
def test_lookup_answers_as_a_scan(setup, query, table):
    con, ref = setup
    sql = query.format(t=table)
    try:
        expected = sorted(ref.execute(query.format(t="person")).fetchall(), key=repr)
    except duckdb.Error:
        with pytest.raises(graphdb.Error):
            con.execute(sql)
        return
    assert sorted(con.execute(sql).fetchall(), key=repr) == expected, sql


def test_string_and_composite_keys(setup):
    con, _ = setup
    assert con.execute("SELECT size FROM city WHERE name = 'ghent'").fetchall() == [(2,)]
    assert con.execute("SELECT size FROM city WHERE name = 'paris'").fetchall() == []
    assert con.execute("SELECT v FROM pair WHERE a = 1 AND b = 'y'").fetchall() == [(1.5,)]
    assert sorted(con.execute("SELECT v FROM pair WHERE a = 1").fetchall()) == [(0.5,), (1.5,)]


def test_the_plan_says_a_lookup_and_writes_are_seen(setup):
    con, _ = setup
    plan = "\n".join(r[0] for r in con.execute(
        "EXPLAIN SELECT name FROM person WHERE id = 7").fetchall())
    assert "KEY LOOKUP person" in plan
    con.execute("BEGIN")
    con.execute("INSERT INTO person VALUES (1001, 'new', 1)")
    con.execute("UPDATE person SET name = 'changed' WHERE id = 7")
    assert con.execute("SELECT name FROM person WHERE id = 1001").fetchall() == [("new",)]
    assert con.execute("SELECT name FROM person WHERE id = 7").fetchall() == [("changed",)]
    assert con.execute("SELECT name FROM pg.Person WHERE id = 1001").fetchall() == [("new",)]
    con.execute("ROLLBACK")
    assert con.execute("SELECT name FROM person WHERE id = 1001").fetchall() == []
    assert con.execute("SELECT name FROM person WHERE id = 7").fetchall() == [("p3",)]


def test_many_keys_checked_against_the_base_at_once():
    """An INSERT of more than 256 rows checks its keys against the base by one binary search
    (integers): collisions, and keys deleted since, agree with DuckDB."""
    import duckdb
    import pyarrow as pa

    base = pa.table({"k": pa.array(range(0, 30000, 3), pa.int64()),
                     "v": pa.array([str(i) for i in range(10000)])})
    ref = duckdb.connect()
    ref.execute("CREATE TABLE t (k BIGINT PRIMARY KEY, v VARCHAR)")
    ref.execute("INSERT INTO t SELECT * FROM base")
    with graphdb.connect() as con:
        con.create_table("t", base, primary_key="k")
        for sql in ("DELETE FROM t WHERE k % 9 = 0",
                    "INSERT INTO t SELECT i, 'n' FROM range(0, 3000) r(i) ON CONFLICT DO NOTHING"):
            con.execute(sql)
            ref.execute(sql)
        assert sorted(con.execute("SELECT * FROM t").fetchall()) == \
            sorted(ref.execute("SELECT * FROM t").fetchall())
        with pytest.raises(graphdb.IntegrityError):
            con.execute("INSERT INTO t SELECT i, 'x' FROM range(30000, 30300) r(i) "
                        "UNION ALL SELECT 3, 'x'")
