"""DuckDB's replacement scans: a file path as a table, and the caller's DataFrames and Arrow
tables found by name, with answers checked against sqlite3 over the same rows."""

from __future__ import annotations

import sqlite3

import pyarrow as pa
import pytest

import graphdb

pd = pytest.importorskip("pandas")


@pytest.fixture
def con():
    with graphdb.connect() as con:
        yield con


def _sqlite(rows, sql):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (id INTEGER, name TEXT)")
    db.executemany("INSERT INTO t VALUES (?, ?)", rows)
    return db.execute(sql).fetchall()


ROWS = [(1, "ann"), (2, "bob"), (3, "cid"), (4, "bob")]


def test_a_file_path_is_a_table(con, tmp_path, monkeypatch):
    path = tmp_path / "people.csv"
    path.write_text("id,name\n" + "".join(f"{i},{n}\n" for i, n in ROWS))
    monkeypatch.chdir(tmp_path)  # relative to the current directory, as in DuckDB
    expected = _sqlite(ROWS, "SELECT name, count(*) FROM t GROUP BY name ORDER BY name")
    assert con.execute("SELECT name, count(*) FROM 'people.csv' GROUP BY name "
                       "ORDER BY name").fetchall() == expected
    assert con.execute('SELECT count(*) FROM "people.csv" AS p WHERE p.id > 1').fetchall() == \
        _sqlite(ROWS, "SELECT count(*) FROM t WHERE id > 1")
    with pytest.raises(graphdb.OperationalError, match="nofile.csv"):
        con.execute("SELECT * FROM 'nofile.csv'")


def test_the_callers_dataframes_and_arrow_tables_are_found_by_name(con):
    people = pd.DataFrame({"id": [r[0] for r in ROWS], "name": [r[1] for r in ROWS]})
    extra = pa.table({"id": [2, 3], "score": [0.5, 1.5]})  # noqa: F841 (found by name)
    rows = con.execute("SELECT p.name, e.score FROM people p JOIN extra e ON p.id = e.id "
                       "ORDER BY p.id").fetchall()
    assert rows == [("bob", 0.5), ("cid", 1.5)]
    people.loc[0, "name"] = "ada"  # read as it is when the statement runs
    assert con.execute("SELECT name FROM people WHERE id = 1").fetchall() == [("ada",)]
    with con.cursor() as cursor:  # through a cursor too
        assert cursor.execute("SELECT count(*) FROM extra").fetchall() == [(2,)]


def _inner(con):
    inner_only = pa.table({"x": [7]})  # noqa: F841 (found by name)
    return con.execute("SELECT x FROM inner_only").fetchall()


def test_only_the_calling_scope_and_table_like_values(con):
    assert _inner(con) == [(7,)]
    not_a_table = [1, 2, 3]  # noqa: F841
    with pytest.raises(graphdb.BinderError, match="unknown table 'not_a_table'"):
        con.execute("SELECT * FROM not_a_table")
    with pytest.raises(graphdb.BinderError, match="unknown table 'inner_only'"):
        con.execute("SELECT * FROM inner_only")


def test_registered_tables_and_graph_tables_come_first(con):
    people = pd.DataFrame({"id": [1]})  # noqa: F841
    con.register("people", pa.table({"id": [1, 2]}))
    assert con.execute("SELECT count(*) FROM people").fetchall() == [(2,)]
