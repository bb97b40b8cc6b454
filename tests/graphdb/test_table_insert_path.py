"""The single-row INSERT's path into a stored table, checked against references: DuckDB's own
tables for the values it stores (literals of every kind into typed columns), and what another
connection commits in between (the catalog's kept read is carried forward only over this
connection's own commit)."""

from __future__ import annotations

import decimal
import random

import duckdb
import pytest

import graphdb

DDL = "CREATE TABLE t (id BIGINT PRIMARY KEY, name VARCHAR, v DOUBLE, n INTEGER, d DECIMAL(18, 4))"


def _literal(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)


def _decimal_text(rng: random.Random, digits: int) -> str:
    scale = rng.randint(0, digits)
    text = "".join(rng.choice("0123456789") for _ in range(digits))
    whole, fraction = text[:digits - scale] or "0", text[digits - scale:]
    return ("-" if rng.random() < 0.3 else "") + whole + ("." + fraction if fraction else "")


def test_literals_into_typed_columns_as_duckdb_stores_them(tmp_path):
    """Decimal literals into a DOUBLE column (up to 15 digits converted without DuckDB, more
    through it), integers into DOUBLE and DECIMAL, strings, NULLs: the same values as DuckDB's
    own table holds after the same statements."""
    rng = random.Random(7)
    ref = duckdb.connect()
    ref.execute(DDL)
    statements = []
    for i in range(120):
        v = rng.choice([_decimal_text(rng, rng.randint(1, 15)),
                        _decimal_text(rng, rng.randint(16, 19)), str(rng.randint(-10**6, 10**6)),
                        "NULL", f"{rng.random() * 1e6:.3e}"])
        n = rng.choice(["NULL", str(rng.randint(-2**31, 2**31 - 1))])
        d = rng.choice(["NULL", _decimal_text(rng, rng.randint(1, 4)), str(rng.randint(-999, 999))])
        name = rng.choice(["NULL", _literal(f"n'{i}")])
        statements.append(f"INSERT INTO t VALUES ({i}, {name}, {v}, {n}, {d})")
    with graphdb.connect(tmp_path / "db") as con:
        con.execute(DDL)
        for sql in statements:
            con.execute(sql)
            ref.execute(sql)
        query = "SELECT id, name, v, n, d FROM t ORDER BY id"
        assert con.execute(query).fetchall() == ref.execute(query).fetchall()


def test_parameters_of_their_columns_kind_and_of_others(tmp_path):
    """Parameters of the column's own kind (built in its type at once) and of other kinds
    (converted as CAST converts them), and values that do not fit: as DuckDB has them."""
    ref = duckdb.connect()
    ref.execute(DDL)
    rows = [(1, "a", 2.5, 7, decimal.Decimal("1.25")), (2, None, 3, None, 4),
            (3, "c", None, 2**31 - 1, None), (4, "d", 2**53, -5, decimal.Decimal("-0.0001")),
            (5, "e", decimal.Decimal("0.1"), 3, 2.5), (6, "f", True, 1, 1)]
    with graphdb.connect(tmp_path / "db") as con:
        con.execute(DDL)
        for row in rows:
            con.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", list(row))
            ref.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", list(row))
        query = "SELECT id, name, v, n, d FROM t ORDER BY id"
        assert con.execute(query).fetchall() == ref.execute(query).fetchall()
        with pytest.raises(graphdb.Error):
            con.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", [9, "x", 1.0, 2**40, 1])
        with pytest.raises(graphdb.IntegrityError):
            con.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", [1, "x", 1.0, 1, 1])
        assert con.execute("SELECT count(*) FROM t").fetchone() == (len(rows),)


def test_a_statement_run_again_reads_its_rows_again(tmp_path):
    """The same INSERT text run twice: a parameterised one takes each run's parameters, a
    literal one of few rows and one of many (whose rows are scanned again) insert theirs each
    time."""
    few = "INSERT INTO u VALUES " + ", ".join(f"({i}, 'x{i}')" for i in range(3))
    many = "INSERT INTO u VALUES " + ", ".join(f"({i}, 'y{i}')" for i in range(40))
    with graphdb.connect(tmp_path / "db") as con:
        con.execute("CREATE TABLE u (k INTEGER, s VARCHAR)")
        for _ in range(2):
            con.execute(few)
            con.execute(many)
        for i in range(5):
            con.execute("INSERT INTO u VALUES (?, ?)", [100 + i, f"p{i}"])
        assert con.execute("SELECT count(*), count(DISTINCT k), sum(k) FROM u").fetchone() == \
            (2 * 3 + 2 * 40 + 5, 3 + 40 - 3 + 5, 2 * 3 + 2 * sum(range(40)) + 510)
        assert con.execute("SELECT s FROM u WHERE k >= 100 ORDER BY k").fetchall() == \
            [(f"p{i}",) for i in range(5)]


def test_commits_of_another_connection_between_this_ones(tmp_path):
    """Two connections writing the same tables in turn: each statement sees the other's
    commits (tables created, rows inserted, a table dropped), whatever this connection kept of
    the catalog after its own commits."""
    path = tmp_path / "db"
    with graphdb.connect(path) as a, graphdb.connect(path) as b:
        a.execute("CREATE TABLE p (id BIGINT PRIMARY KEY, x VARCHAR)")
        expected = 0
        for i in range(6):
            writer, reader = (a, b) if i % 2 == 0 else (b, a)
            writer.execute("INSERT INTO p VALUES (?, ?)", [i, f"x{i}"])
            expected += 1
            assert reader.execute("SELECT count(*) FROM p").fetchone() == (expected,)
            with pytest.raises(graphdb.IntegrityError):
                reader.execute("INSERT INTO p VALUES (?, 'again')", [i])
        b.execute("CREATE TABLE q (k INTEGER)")
        a.execute("INSERT INTO q VALUES (1)")
        b.execute("INSERT INTO q VALUES (2)")
        assert a.execute("SELECT sum(k) FROM q").fetchone() == (3,)
        a.execute("DROP TABLE q")
        with pytest.raises(graphdb.Error):
            b.execute("INSERT INTO q VALUES (3)")
        assert sorted(r[0] for r in b.execute("SHOW TABLES").fetchall()) == ["p"]


def test_a_kept_insert_reaches_a_graph_made_over_its_table_since(tmp_path):
    """The same INSERT text before and after a property graph is made over its table: the
    rows inserted after reach the graph in the same transaction (a BFS over the graph finds
    them, as networkx over the table's rows does), and a table altered since gets the rows in
    its new shape."""
    insert_person = "INSERT INTO person VALUES (?, ?)"
    insert_knows = "INSERT INTO knows VALUES (?, ?)"
    with graphdb.connect(tmp_path / "db") as con:
        con.execute("CREATE TABLE person (id BIGINT PRIMARY KEY, name VARCHAR)")
        con.execute("CREATE TABLE knows (a BIGINT, b BIGINT)")
        for i in range(3):
            con.execute(insert_person, [i, f"p{i}"])
        con.execute(insert_knows, [0, 1])
        con.execute("CREATE PROPERTY GRAPH g VERTEX TABLES (person) EDGE TABLES (knows "
                    "SOURCE KEY (a) REFERENCES person (id) DESTINATION KEY (b) REFERENCES "
                    "person (id))")
        for i in range(3, 6):
            con.execute(insert_person, [i, f"p{i}"])
            con.execute(insert_knows, [i - 1, i])
        depths = dict(con.execute("SELECT vertex, depth FROM bfs(g, 0)").fetchall())
        assert depths == {0: 0, 1: 1}  # 2 -> 3 -> 4 -> 5 start at 2, which 0 does not reach
        con.execute(insert_knows, [1, 2])
        depths = dict(con.execute("SELECT vertex, depth FROM bfs(g, 0)").fetchall())
        assert depths == {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5}
        assert con.execute("SELECT count(*) FROM g.vertices").fetchone() == (6,)
        con.execute("DROP PROPERTY GRAPH g")
        con.execute("ALTER TABLE person ADD COLUMN age INTEGER")
        with pytest.raises(graphdb.Error):
            con.execute(insert_person, [9, "p9"])  # two values for three columns
        con.execute("INSERT INTO person VALUES (?, ?, ?)", [9, "p9", 40])
        assert con.execute("SELECT name, age FROM person WHERE id = 9").fetchone() == ("p9", 40)
