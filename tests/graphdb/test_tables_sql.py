"""Stored tables through SQL, against DuckDB's own tables as the reference: the same statements
on both, the same rows back (or both refusing)."""

from __future__ import annotations

import random

import duckdb
import pytest

import graphdb


class Both:
    """Runs each statement on graphdb and on a DuckDB in memory."""

    def __init__(self, con):
        self.con = con
        self.ref = duckdb.connect()

    def ok(self, sql: str, parameters=None) -> None:
        self.con.execute(sql, parameters)
        self.ref.execute(sql, parameters)

    def fails(self, sql: str, error=graphdb.Error) -> None:
        with pytest.raises(error):
            self.con.execute(sql)
        with pytest.raises(duckdb.Error):
            self.ref.execute(sql)

    def same(self, sql: str, parameters=None) -> list:
        mine = self.con.execute(sql, parameters).fetchall()
        theirs = self.ref.execute(sql, parameters).fetchall()
        assert sorted(mine, key=repr) == sorted(theirs, key=repr), sql
        return mine


@pytest.fixture
def both(tmp_path):
    with graphdb.connect(tmp_path / "db") as con:
        yield Both(con)


def test_create_insert_select(both):
    both.ok("CREATE TABLE person (id BIGINT PRIMARY KEY, name VARCHAR NOT NULL, "
            "age INTEGER DEFAULT 30, score DOUBLE, born DATE)")
    both.ok("INSERT INTO person VALUES (1, 'ann', 31, 1.5, '1990-01-02'), "
            "(2, 'bob', NULL, 2.5, NULL)")
    both.ok("INSERT INTO person (id, name) VALUES (3, 'cy')")
    both.ok("INSERT INTO person (name, id, score) VALUES (?, ?, ?)", ["dee", 4, 7])
    both.same("SELECT * FROM person")
    both.same("SELECT name, age FROM person WHERE id = 3")
    both.same("SELECT count(*), sum(score), min(born) FROM person")
    both.same("SELECT p.name, q.name FROM person p JOIN person q ON p.id + 1 = q.id")


def test_constraints_refuse_and_change_nothing(both):
    both.ok("CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR NOT NULL, c INTEGER CHECK (c > 0), "
            "u INTEGER UNIQUE)")
    both.ok("INSERT INTO t VALUES (1, 'a', 1, 10), (2, 'b', 2, 20)")
    both.fails("INSERT INTO t VALUES (1, 'x', 1, 11)", graphdb.IntegrityError)
    both.fails("INSERT INTO t VALUES (3, NULL, 1, 12)", graphdb.IntegrityError)
    both.fails("INSERT INTO t VALUES (3, 'c', -1, 13)", graphdb.IntegrityError)
    both.fails("INSERT INTO t VALUES (3, 'c', 1, 10)", graphdb.IntegrityError)
    both.fails("INSERT INTO t VALUES (3, 'c', 1, 30), (3, 'd', 1, 31)", graphdb.IntegrityError)
    both.fails("UPDATE t SET id = 2 WHERE id = 1", graphdb.IntegrityError)
    both.same("SELECT * FROM t")
    both.ok("UPDATE t SET id = 5 WHERE id = 1")  # a key may change to a free one
    both.ok("DELETE FROM t WHERE id = 2")
    both.ok("INSERT INTO t VALUES (2, 'again', 3, 20)")  # its key and unique value are free
    both.same("SELECT * FROM t")


def test_foreign_keys(both):
    both.ok("CREATE TABLE city (name VARCHAR PRIMARY KEY)")
    both.ok("CREATE TABLE person (id INTEGER PRIMARY KEY, city VARCHAR REFERENCES city (name))")
    both.ok("INSERT INTO city VALUES ('delft'), ('ghent')")
    both.ok("INSERT INTO person VALUES (1, 'delft'), (2, NULL)")
    both.fails("INSERT INTO person VALUES (3, 'paris')", graphdb.IntegrityError)
    both.fails("DELETE FROM city WHERE name = 'delft'", graphdb.IntegrityError)
    both.ok("DELETE FROM city WHERE name = 'ghent'")
    both.fails("DROP TABLE city")
    both.same("SELECT * FROM city")


@pytest.mark.parametrize("compact", [False, True])
def test_random_writes_agree_with_duckdb(both, compact, monkeypatch):
    """A random sequence of inserts, updates and deletes gives DuckDB's rows every step (also
    when the table gets a new base generation every few statements)."""
    if compact:
        import graphdb.query.table_statements as statements

        monkeypatch.setattr(statements, "MIN_COMPACT", 5)
        monkeypatch.setattr(statements, "COMPACT_SHARE", 0.1)
    rng = random.Random(7)
    both.ok("CREATE TABLE r (k INTEGER PRIMARY KEY, a INTEGER, b VARCHAR, c DOUBLE)")
    keys: set[int] = set()
    for step in range(120):
        action = rng.random()
        if action < 0.5 or not keys:
            fresh = [k for k in rng.sample(range(400), 6) if k not in keys][:rng.randint(1, 4)]
            if not fresh:
                continue
            values = ", ".join(f"({k}, {rng.randint(-5, 5)}, 'v{rng.randint(0, 9)}', "
                               f"{rng.random():.3f})" for k in fresh)
            both.ok(f"INSERT INTO r VALUES {values}")
            keys.update(fresh)
        elif action < 0.75:
            both.ok(f"UPDATE r SET a = a + 1, b = b || 'x' WHERE a < {rng.randint(-5, 5)}")
        else:
            lo = rng.randint(0, 400)
            both.ok(f"DELETE FROM r WHERE k BETWEEN {lo} AND {lo + 40}")
            keys = {k for k in keys if not lo <= k <= lo + 40}
        if step % 10 == 0:
            both.same("SELECT * FROM r")
            k = rng.choice(sorted(keys)) if keys else 0
            both.same(f"SELECT a, b FROM r WHERE k = {k}")
            both.same(f"SELECT * FROM r WHERE k IN ({k}, {k + 1}, 999)")
    both.same("SELECT * FROM r")


def test_create_table_as_and_alter(both):
    both.ok("CREATE TABLE src (a INTEGER, b VARCHAR)")
    both.ok("INSERT INTO src SELECT i, 'n' || i FROM range(10) t(i)")
    both.ok("CREATE TABLE dst AS SELECT a * 2 AS x, b FROM src WHERE a % 2 = 0")
    both.same("SELECT * FROM dst")
    both.ok("ALTER TABLE dst ADD COLUMN y INTEGER DEFAULT 7")
    both.same("SELECT * FROM dst")
    both.ok("ALTER TABLE dst RENAME COLUMN y TO z")
    both.same("SELECT x, z FROM dst")
    both.ok("ALTER TABLE dst DROP COLUMN b")
    both.same("SELECT * FROM dst")
    both.ok("ALTER TABLE dst RENAME TO dst2")
    both.same("SELECT * FROM dst2")
    both.fails("SELECT * FROM dst")
    both.ok("CREATE OR REPLACE TABLE dst2 (q INTEGER)")
    both.same("SELECT count(*) FROM dst2")
    both.ok("DROP TABLE dst2")
    both.ok("DROP TABLE IF EXISTS dst2")
    both.fails("DROP TABLE dst2")


def test_types_round_trip(tmp_path):
    with graphdb.connect(tmp_path / "db") as con:
        con.execute("CREATE TABLE t (i HUGEINT, d DECIMAL(10, 2), s VARCHAR, dt DATE, "
                    "ts TIMESTAMP, iv INTERVAL, b BOOLEAN, l INTEGER[], "
                    "st STRUCT(a INTEGER, b VARCHAR), f FLOAT, u UBIGINT)")
        con.execute("INSERT INTO t VALUES (12345678901234567890, 3.14159, 'x', '2024-02-29', "
                    "'2024-01-01 12:30:00', INTERVAL 3 DAY, true, [1, 2, 3], "
                    "{'a': 1, 'b': 'y'}, 1.5, 18446744073709551615)")
    with graphdb.connect(tmp_path / "db") as con:
        row = con.execute("SELECT i::VARCHAR, d::VARCHAR, s, dt::VARCHAR, ts::VARCHAR, "
                          "iv::VARCHAR, b, l, st.b, f, u::VARCHAR FROM t").fetchone()
        assert row == ("12345678901234567890", "3.14", "x", "2024-02-29",
                       "2024-01-01 12:30:00", "3 days", True, [1, 2, 3], "y", 1.5,
                       "18446744073709551615")
        described = con.execute("DESCRIBE t").fetchall()
        assert [r[1] for r in described] == [
            "HUGEINT", "DECIMAL(10,2)", "VARCHAR", "DATE", "TIMESTAMP", "INTERVAL", "BOOLEAN",
            "INTEGER[]", "STRUCT(a INTEGER, b VARCHAR)", "FLOAT", "UBIGINT"]


def test_transactions_and_persistence(tmp_path):
    path = tmp_path / "db"
    with graphdb.connect(path) as con:
        con.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")
        con.execute("INSERT INTO t VALUES (1)")
        con.execute("BEGIN")
        con.execute("INSERT INTO t VALUES (2)")
        con.execute("CREATE TABLE u AS SELECT 1 AS y")
        assert con.execute("SELECT count(*) FROM t").fetchone() == (2,)
        with graphdb.connect(path) as other:  # another connection sees what is committed
            assert other.execute("SELECT count(*) FROM t").fetchone() == (1,)
            assert other.execute("SHOW TABLES").fetchall() == [("t",)]
        con.execute("ROLLBACK")
        assert con.execute("SHOW TABLES").fetchall() == [("t",)]
        con.execute("BEGIN")
        con.execute("INSERT INTO t VALUES (3)")
        con.execute("DELETE FROM t WHERE x = 1")
        con.execute("COMMIT")
        with pytest.raises(graphdb.IntegrityError):  # a failed statement changes nothing
            con.execute("INSERT INTO t VALUES (4), (3)")
    with graphdb.connect(path) as con:
        assert con.execute("SELECT x FROM t ORDER BY x").fetchall() == [(3,)]
    assert [p.name for p in (path / "graphs").iterdir()] == []  # nothing left of the rollback


def test_copy_from_and_to(tmp_path):
    csv = tmp_path / "people.csv"
    csv.write_text("id|name\n1|ann\n2|bob\n")
    with graphdb.connect(tmp_path / "db") as con:
        con.execute("CREATE TABLE people (id BIGINT PRIMARY KEY, name VARCHAR)")
        assert con.execute(f"COPY people FROM '{csv}' (HEADER, DELIMITER '|')").fetchone() == (2,)
        with pytest.raises(graphdb.IntegrityError):
            con.execute(f"COPY people FROM '{csv}' (HEADER, DELIMITER '|')")
        out = tmp_path / "out.parquet"
        con.execute(f"COPY people TO '{out}'")
        con.execute("CREATE TABLE again AS SELECT * FROM read_parquet('" + str(out) + "')")
        assert con.execute("SELECT * FROM again ORDER BY id").fetchall() == [(1, "ann"),
                                                                            (2, "bob")]


def test_create_table_from_python(tmp_path):
    pd = pytest.importorskip("pandas")
    with graphdb.connect(tmp_path / "db") as con:
        con.create_table("t", pd.DataFrame({"k": [1, 2], "v": ["a", "b"]}), primary_key="k")
        assert con.execute("SELECT v FROM t WHERE k = 2").fetchall() == [("b",)]
        with pytest.raises(graphdb.IntegrityError):
            con.execute("INSERT INTO t VALUES (1, 'c')")
        with pytest.raises(graphdb.CatalogError):
            con.create_table("t", pd.DataFrame({"k": [3]}))
        con.create_table("t", pd.DataFrame({"k": [3]}), replace=True)
        assert con.execute("SELECT * FROM t").fetchall() == [(3,)]


def test_views_schemas_and_information_schema(both):
    both.ok("CREATE TABLE t (a INTEGER PRIMARY KEY, b VARCHAR)")
    both.ok("INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'z')")
    both.ok("CREATE VIEW v AS SELECT a * 10 AS c, b FROM t")
    both.ok("CREATE VIEW w (q) AS SELECT c FROM v WHERE c > 10")
    both.same("SELECT * FROM v")
    both.same("SELECT q FROM w")
    both.same("SELECT x.q, v.b FROM w x JOIN v ON v.c = x.q")
    both.ok("INSERT INTO t VALUES (4, 'w')")  # a view reads the table as it is now
    both.same("SELECT * FROM w")
    both.ok("CREATE SCHEMA s")
    both.ok("CREATE TABLE s.t (z INTEGER)")
    both.ok("INSERT INTO s.t VALUES (5)")
    both.same("SELECT * FROM s.t")
    both.same("SELECT * FROM main.t")
    both.same("SELECT table_schema, table_name, table_type FROM information_schema.tables "
              "WHERE table_schema IN ('main', 's')")
    both.same("SELECT table_name, column_name, ordinal_position, is_nullable, data_type "
              "FROM information_schema.columns WHERE table_schema IN ('main', 's')")
    both.fails("DROP SCHEMA s")
    both.ok("DROP SCHEMA s CASCADE")
    both.fails("SELECT * FROM s.t")
    both.ok("DROP VIEW w")
    both.fails("SELECT * FROM w")


def test_a_script_of_several_statements(tmp_path):
    with graphdb.connect(tmp_path / "db") as con:
        result = con.execute("CREATE TABLE s (id BIGINT, name VARCHAR);"
                             "INSERT INTO s VALUES (0, 'a;b'), (1, 'c'); -- done")
        assert result.fetchall() == [(2,)]
        assert con.execute("SELECT name FROM s ORDER BY id").fetchall() == [("a;b",), ("c",)]


def test_literal_rows_read_as_duckdb_reads_them(both):
    """Rows of literals (read without the general parser) and rows with expressions (read by
    it) store what DuckDB stores, decimals exactly."""
    both.ok("CREATE TABLE v (i INTEGER, d DECIMAL(10, 2), f DOUBLE, s VARCHAR, b BOOLEAN)")
    both.ok("INSERT INTO v VALUES (1, 1.005, 2.5, 'it''s', TRUE), (-2, 2, 1e3, '', NULL), "
            "(3, -0.125, .5, 'x', false);")
    both.ok("INSERT INTO v VALUES (1 + 1, 1.005 + 0, 2.5 * 2, 'a' || 'b', NOT TRUE)")
    both.ok("INSERT INTO v (s, i) VALUES (?, ?)", ["p", 7])
    both.same("SELECT i, d::VARCHAR, f, s, b FROM v")
    both.fails("INSERT INTO v VALUES (1, 2)")  # too few values


def test_executemany_into_a_table(tmp_path):
    with graphdb.connect(tmp_path / "db") as con:
        con.execute("CREATE TABLE m (k INTEGER PRIMARY KEY, v VARCHAR)")
        con.executemany("INSERT INTO m VALUES (?, ?)", [(i, f"v{i}") for i in range(500)])
        assert con.execute("SELECT count(*), sum(k) FROM m").fetchone() == (500, 124750)
        with pytest.raises(graphdb.IntegrityError):
            con.executemany("INSERT INTO m VALUES (?, ?)", [(1000, "a"), (1000, "b")])
        assert con.execute("SELECT count(*) FROM m").fetchone() == (500,)


def test_search_path_finds_and_makes_tables_of_its_schemas(tmp_path):
    """SET search_path = s (DuckPGQ's scripts use it): unqualified names that main has no table
    of are the schema's, CREATE TABLE makes them there, and a property graph over them follows
    their writes; main's own tables come first and are never hidden, and another connection
    keeps its own (empty) path. Rows by hand."""
    path = str(tmp_path / "db")
    con = graphdb.connect(path)
    con.execute("CREATE TABLE Person (id BIGINT PRIMARY KEY, name VARCHAR)")
    con.execute("INSERT INTO Person VALUES (9, 'main')")
    con.execute("CREATE SCHEMA s")
    with pytest.raises(graphdb.CatalogError, match="schema 'nope' does not exist"):
        con.execute("SET search_path = nope")
    con.execute("SET search_path = s")
    with pytest.raises(graphdb.CatalogError, match="exists in schema main"):
        con.execute("CREATE TABLE Person (id BIGINT PRIMARY KEY)")
    con.execute("CREATE TABLE Company (id BIGINT PRIMARY KEY, name VARCHAR)")
    con.execute("CREATE TABLE WorksAt (person_id BIGINT, company_id BIGINT)")
    assert [n for (n,) in con.execute("SHOW TABLES").fetchall()] == [
        "Person", "s.Company", "s.WorksAt"]
    con.execute("INSERT INTO Company VALUES (1, 'acme'), (2, 'initech')")
    con.execute("CREATE PROPERTY GRAPH g VERTEX TABLES (Person, Company) EDGE TABLES (WorksAt "
                "SOURCE KEY (person_id) REFERENCES Person (id) DESTINATION KEY (company_id) "
                "REFERENCES Company (id) LABEL works_at)")
    con.execute("INSERT INTO WorksAt VALUES (9, 2)")
    con.execute("UPDATE Company SET name = 'initrode' WHERE id = 2")
    assert con.execute("SELECT * FROM GRAPH_TABLE (g MATCH (p:Person)-[:works_at]->(c:Company) "
                       "COLUMNS (p.name AS p, c.name AS c))").fetchall() == [("main", "initrode")]
    assert con.execute("SELECT * FROM main.Person").fetchall() == [(9, "main")]
    assert con.execute("SELECT name FROM s.Company ORDER BY id").fetchall() == [
        ("acme",), ("initrode",)]
    other = graphdb.connect(path)
    with pytest.raises(graphdb.BinderError, match="unknown table 'Company'"):
        other.execute("SELECT * FROM Company")
    con.execute("RESET search_path")
    with pytest.raises(graphdb.BinderError, match="unknown table 'Company'"):
        con.execute("SELECT * FROM Company")
