"""Writes to stored tables as plans: EXPLAIN shows INSERT, UPDATE, DELETE and COPY of a table
(the operator, the table, the key check, the graphs the write reaches), and the writes give what
sqlite3 gives for the same statements."""

from __future__ import annotations

import random
import sqlite3

import pytest

import graphdb

SCHEMA = ("CREATE TABLE p (id BIGINT PRIMARY KEY, name VARCHAR NOT NULL, "
          "age INTEGER CHECK (age >= 0))")


def lines(con, sql, parameters=None) -> list[str]:
    return [line for (line,) in con.execute(sql, parameters).fetchall()]


@pytest.fixture
def con(tmp_path):
    with graphdb.connect(tmp_path / "db") as con:
        con.execute(SCHEMA)
        con.execute("CREATE TABLE k (a BIGINT, b BIGINT, since INTEGER)")
        con.execute("INSERT INTO p VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)")
        con.execute("INSERT INTO k VALUES (1, 2, 2000), (2, 3, 2001)")
        con.execute("CREATE PROPERTY GRAPH g VERTEX TABLES (p) EDGE TABLES (k SOURCE KEY (a) "
                    "REFERENCES p DESTINATION KEY (b) REFERENCES p)")
        yield con


def test_explain_shows_each_table_write(con, tmp_path):
    plan = lines(con, "EXPLAIN INSERT INTO p VALUES (?, ?, ?)", [9, "z", 1])
    assert plan[0] == "INSERT INTO TABLE p"
    text = "\n".join(plan)
    assert "primary key (id) through the key index" in text
    assert "NOT NULL name" in text and "CHECK age >= 0" in text
    assert "delta records in the same transaction: g" in text
    assert plan[-1].endswith("VALUES (1 rows)")
    plan = lines(con, "EXPLAIN UPDATE p SET age = age + 1 WHERE id = 2")
    assert plan[0] == "UPDATE TABLE p SET age"
    assert any("SCAN p (newest version)" in line for line in plan)
    plan = lines(con, "EXPLAIN DELETE FROM k WHERE since > 2000")
    assert plan[0] == "DELETE FROM TABLE k"
    assert any("FILTER (since > 2000)" in line for line in plan)
    plan = lines(con, "EXPLAIN INSERT INTO p SELECT id + 10, name, age FROM p "
                      "ON CONFLICT DO NOTHING")
    assert any("ON CONFLICT DO NOTHING" in line for line in plan)
    path = tmp_path / "rows.csv"
    path.write_text("4,d,40\n5,e,50\n")
    plan = lines(con, f"EXPLAIN COPY p FROM '{path}'")
    assert plan[0] == "INSERT INTO TABLE p"
    assert any(f"READ FILE {path}" in line for line in plan)
    # EXPLAIN changed nothing; EXPLAIN ANALYZE runs the write
    assert con.execute("SELECT count(*), sum(age) FROM p").fetchone() == (3, 60)
    analyzed = lines(con, "EXPLAIN ANALYZE UPDATE p SET age = age + 1 WHERE id = 2")
    assert any("actual:" in line for line in analyzed)
    assert con.execute("SELECT age FROM p WHERE id = 2").fetchone() == (21,)
    assert con.execute(f"COPY p FROM '{path}'").fetchone() == (2,)
    assert con.execute("SELECT count(*) FROM GRAPH_TABLE (g MATCH (x) COLUMNS (x.id))"
                       ).fetchone() == (5,)


def test_a_replaced_row_of_a_vertex_table_keeps_its_vertex_and_edges(con):
    con.execute("INSERT INTO p VALUES (1, 'x', 3), (7, 'n', 1) ON CONFLICT (id) DO UPDATE "
                "SET name = excluded.name || p.name")
    con.execute("INSERT OR REPLACE INTO p VALUES (2, 'bb', 5)")
    assert con.execute("SELECT * FROM p ORDER BY id").fetchall() == [
        (1, "xa", 10), (2, "bb", 5), (3, "c", 30), (7, "n", 1)]
    assert sorted(con.execute("SELECT * FROM GRAPH_TABLE (g MATCH (x)-[e]->(y) COLUMNS "
                              "(x.name, y.name AS y, e.since))").fetchall()) == [
        ("bb", "c", 2001), ("xa", "bb", 2000)]


def _statements(rng: random.Random) -> list[str]:
    out = []
    for _ in range(60):
        kind = rng.randrange(6)
        key = rng.randrange(25)
        if kind == 0:
            out.append(f"INSERT INTO t VALUES ({key}, 'n{rng.randrange(9)}', "
                       f"{rng.choice(['NULL', rng.randrange(-5, 50)])})")
        elif kind == 1:
            out.append(f"INSERT INTO t VALUES ({key}, 'm{key}', {key}) ON CONFLICT (id) "
                       "DO UPDATE SET v = t.v + excluded.v")
        elif kind == 2:
            out.append(f"INSERT INTO t VALUES ({key}, 'o', 1) ON CONFLICT DO NOTHING")
        elif kind == 3:
            out.append(f"UPDATE t SET v = v * 2, name = name || 'u' WHERE id % 5 = {key % 5}")
        elif kind == 4:
            out.append(f"DELETE FROM t WHERE v > {rng.randrange(60)} OR id = {key}")
        else:
            out.append(f"INSERT INTO t SELECT id + 100, name, v FROM t WHERE id < {key} "
                       "ON CONFLICT DO NOTHING")
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_table_writes_agree_with_sqlite(tmp_path, seed):
    rng = random.Random(seed)
    lite = sqlite3.connect(":memory:")
    lite.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, v INTEGER)")
    with graphdb.connect(tmp_path / "db") as con:
        con.execute("CREATE TABLE t (id BIGINT PRIMARY KEY, name VARCHAR, v BIGINT)")
        for sql in _statements(rng):
            try:
                lite.execute(sql)
                expected_error = None
            except sqlite3.IntegrityError as exc:
                expected_error = exc
            if expected_error is None:
                con.execute(sql)
            else:
                with pytest.raises(graphdb.IntegrityError):
                    con.execute(sql)
            ours = con.execute("SELECT id, name, v FROM t ORDER BY id").fetchall()
            theirs = lite.execute("SELECT id, name, v FROM t ORDER BY id").fetchall()
            assert ours == theirs, sql


def test_explain_shows_table_definitions_and_they_run_as_plans(tmp_path):
    with graphdb.connect(tmp_path / "db") as con:
        plan = lines(con, f"EXPLAIN {SCHEMA}")
        assert plan[0] == "CREATE TABLE p"
        assert "id BIGINT, name VARCHAR, age INTEGER" in plan[1]
        assert con.execute("SHOW TABLES").fetchall() == []  # EXPLAIN created nothing
        con.execute(SCHEMA)
        con.execute("INSERT INTO p VALUES (1, 'a', 5), (2, 'b', 0)")
        plan = lines(con, "EXPLAIN CREATE TABLE q AS SELECT * FROM p WHERE age > 1")
        assert plan[0] == "CREATE TABLE q" and any("SCAN p" in line for line in plan)
        con.execute("CREATE TABLE q AS SELECT * FROM p WHERE age > 1")
        assert con.execute("SELECT * FROM q").fetchall() == [(1, "a", 5)]
        assert lines(con, "EXPLAIN DROP TABLE q")[0] == "DROP TABLE q"
        con.execute("DROP TABLE q")
        assert con.execute("SHOW TABLES").fetchall() == [("p",)]
        con.execute("BEGIN")
        con.execute("CREATE TABLE r (x INTEGER)")
        con.execute("ROLLBACK")
        assert con.execute("SHOW TABLES").fetchall() == [("p",)]


def test_explain_shows_alter_truncate_views_and_schemas_and_runs_nothing(tmp_path):
    with graphdb.connect(tmp_path / "db") as con:
        con.execute(SCHEMA)
        con.execute("INSERT INTO p VALUES (1, 'a', 5), (2, 'b', 0)")
        plan = lines(con, "EXPLAIN ALTER TABLE p ADD COLUMN city VARCHAR DEFAULT 'x', "
                          "ADD COLUMN zip INTEGER")
        assert plan[0] == "ALTER TABLE p"
        assert any("ADD COLUMN city VARCHAR" in line for line in plan)
        assert any("ADD COLUMN zip INTEGER" in line for line in plan)
        assert "RENAME COLUMN age TO years" in lines(
            con, "EXPLAIN ALTER TABLE p RENAME COLUMN age TO years")[1]
        assert lines(con, "EXPLAIN TRUNCATE p")[0] == "TRUNCATE p"
        assert lines(con, "EXPLAIN CREATE VIEW v AS SELECT id FROM p")[0] == "CREATE VIEW v"
        assert lines(con, "EXPLAIN CREATE SCHEMA s")[0] == "CREATE SCHEMA s"
        # nothing ran: the table, its rows and the namespace are as they were
        assert con.execute("SELECT * FROM p ORDER BY id").fetchall() == [(1, "a", 5),
                                                                         (2, "b", 0)]
        assert con.execute("SHOW TABLES").fetchall() == [("p",)]
        with pytest.raises(graphdb.CatalogError):
            con.execute("CREATE TABLE s.t (x INTEGER)")  # no schema s yet
        con.execute("ALTER TABLE p ADD COLUMN city VARCHAR DEFAULT 'x', ADD COLUMN zip INTEGER")
        con.execute("ALTER TABLE p RENAME COLUMN age TO years")
        assert con.execute("SELECT id, years, city, zip FROM p ORDER BY id").fetchall() == [
            (1, 5, "x", None), (2, 0, "x", None)]
        con.execute("CREATE SCHEMA s")
        con.execute("CREATE TABLE s.t (x INTEGER)")
        con.execute("CREATE VIEW s.v AS SELECT x FROM s.t")
        plan = lines(con, "EXPLAIN DROP SCHEMA s CASCADE")
        assert plan[0] == "DROP SCHEMA s CASCADE"
        assert lines(con, "EXPLAIN DROP VIEW s.v")[0] == "DROP VIEW s.v"
        con.execute("DROP SCHEMA s CASCADE")
        assert con.execute("SHOW TABLES").fetchall() == [("p",)]


def test_alter_table_is_part_of_the_transaction(tmp_path):
    with graphdb.connect(tmp_path / "db") as con:
        con.execute("CREATE TABLE t (a INTEGER)")
        con.execute("INSERT INTO t VALUES (1), (2)")
        con.execute("BEGIN")
        con.execute("CREATE TABLE u (b INTEGER)")  # made in this transaction, altered in it
        con.execute("ALTER TABLE u ADD COLUMN c INTEGER DEFAULT 7")
        con.execute("INSERT INTO u VALUES (1, 2)")
        con.execute("ALTER TABLE t RENAME COLUMN a TO z")
        assert con.execute("SELECT b, c FROM u").fetchall() == [(1, 2)]
        con.execute("ROLLBACK")
        assert con.execute("SHOW TABLES").fetchall() == [("t",)]
        assert con.execute("SELECT a FROM t ORDER BY a").fetchall() == [(1,), (2,)]
        with pytest.raises(graphdb.IntegrityError, match="NOT NULL"):
            con.execute("ALTER TABLE t ADD COLUMN n INTEGER NOT NULL")  # rows would be NULL
        with pytest.raises(graphdb.ProgrammingError, match="outside a transaction"):
            con.execute("BEGIN")
            con.execute("CREATE VIEW w AS SELECT a FROM t")
        con.execute("ROLLBACK")


def test_tables_that_reference_each_other_drop_together(tmp_path):
    """PostgreSQL drops a referenced table when its referencing table goes in the same DROP;
    alone, or under a table outside the dropped schema, it is refused."""
    with graphdb.connect(tmp_path / "db") as con:
        con.execute("CREATE TABLE a (id INTEGER PRIMARY KEY)")
        con.execute("CREATE TABLE b (id INTEGER PRIMARY KEY, a_id INTEGER REFERENCES a(id))")
        with pytest.raises(graphdb.CatalogError, match="foreign key"):
            con.execute("DROP TABLE a")
        con.execute("DROP TABLE a, b")
        assert con.execute("SHOW TABLES").fetchall() == []
        con.execute("CREATE SCHEMA s")
        con.execute("CREATE TABLE s.a (id INTEGER PRIMARY KEY)")
        con.execute("CREATE TABLE c (id INTEGER PRIMARY KEY, a_id INTEGER REFERENCES s.a(id))")
        with pytest.raises(graphdb.CatalogError, match="foreign key"):
            con.execute("DROP SCHEMA s CASCADE")
        assert [name for (name,) in con.execute("SHOW TABLES").fetchall()] == ["c", "s.a"]


def test_create_table_with_column_names_as_query(tmp_path):
    """``CREATE TABLE t (a, b) AS query`` (SQL's and PostgreSQL's form): the query's first
    columns renamed; typed columns before AS are no form of CREATE TABLE and are refused (the
    query was dropped without a word)."""
    lite = sqlite3.connect(":memory:")
    with graphdb.connect(tmp_path / "db") as con:
        for db in (con, lite):
            db.execute("CREATE TABLE a (x INTEGER, y VARCHAR)")
            db.execute("INSERT INTO a VALUES (1, 'q'), (2, 'r')")
        con.execute('CREATE TABLE b (p, "Q r") AS SELECT x, y FROM a WHERE x > 1')
        assert [d[0] for d in con.execute("SELECT * FROM b").description] == ["p", "Q r"]
        assert con.execute("SELECT * FROM b").fetchall() == lite.execute(
            "SELECT x, y FROM a WHERE x > 1").fetchall() == [(2, "r")]
        con.execute("CREATE TABLE c (p) AS SELECT x, y FROM a")
        assert [d[0] for d in con.execute("SELECT * FROM c").description] == ["p", "y"]
        with pytest.raises(graphdb.BinderError, match="names 3 columns"):
            con.execute("CREATE TABLE d (p, q, r) AS SELECT x, y FROM a")
        with pytest.raises(graphdb.ParseError):
            con.execute("CREATE TABLE e (p INTEGER) AS SELECT 1")
        assert sorted(n for (n,) in con.execute("SHOW TABLES").fetchall()) == ["a", "b", "c"]
