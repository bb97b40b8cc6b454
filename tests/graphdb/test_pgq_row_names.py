"""Names SQL/PGQ users write beside the pattern itself: ``x.rowid`` of a pattern's element (the
row id of its row in its table) and three-part table names with the database's catalog
(``memory.main.t``, ``memory.s.t``). Each is checked against DuckDB running the same statements
over the same tables: its rowid is a row's position in its table, as graphdb's row id is for
rows loaded in order, and its in-memory catalog is ``memory``."""

from __future__ import annotations

import pytest

from tests.support import same_rows as _same
from tests.support import with_reference

TABLES = """
CREATE TABLE Person(id BIGINT PRIMARY KEY, name VARCHAR);
INSERT INTO Person VALUES (30, 'Ada'), (10, 'Bo'), (20, 'Cy'), (40, 'Di');
CREATE TABLE knows(src BIGINT, dst BIGINT, since INT);
INSERT INTO knows VALUES (10, 20, 1), (20, 30, 2), (30, 10, 3), (40, 10, 4), (10, 40, 5);
CREATE TABLE Tag(name VARCHAR);
INSERT INTO Tag VALUES ('x'), ('y');
"""

GRAPH = """
CREATE PROPERTY GRAPH g
VERTEX TABLES (Person, Tag)
EDGE TABLES (knows SOURCE KEY (src) REFERENCES Person (id)
                   DESTINATION KEY (dst) REFERENCES Person (id))
"""


@pytest.fixture()
def both(tmp_path):
    with with_reference(tmp_path / "db", TABLES, GRAPH) as pair:
        yield pair


def test_rowid_of_vertices_and_edges_is_their_rows(both):
    rows = _same(both,
                 "SELECT * FROM GRAPH_TABLE (g MATCH (a:Person)-[k:knows]->(b:Person) "
                 "COLUMNS (a.rowid AS ar, k.rowid AS kr, b.rowid AS br, k.since))",
                 "SELECT a.rowid, k.rowid, b.rowid, k.since FROM knows k "
                 "JOIN Person a ON a.id = k.src JOIN Person b ON b.id = k.dst")
    assert rows[0] == (0, 2, 1, 3)  # Ada is Person's first row, 30 -> 10 knows' third
    # a table without a key: its rows' ids are its vertices' identity
    _same(both, "SELECT * FROM GRAPH_TABLE (g MATCH (t:Tag) COLUMNS (t.rowid, t.name))",
          "SELECT rowid, name FROM Tag")


def test_rowid_in_where_and_in_a_path_search(both):
    _same(both, "SELECT * FROM GRAPH_TABLE (g MATCH (a:Person WHERE a.rowid = 1)-[k:knows]->"
                "(b:Person) WHERE b.rowid > 1 COLUMNS (a.name, b.name))",
          "SELECT a.name, b.name FROM knows k JOIN Person a ON a.id = k.src "
          "JOIN Person b ON b.id = k.dst WHERE a.rowid = 1 AND b.rowid > 1")
    con, _ = both
    # from Ada (row 0): Bo in 1 hop, Cy and Di in 2 (worked out by hand from knows)
    assert sorted(con.execute(
        "SELECT * FROM GRAPH_TABLE (g MATCH p = ANY SHORTEST (a:Person WHERE a.rowid = 0)"
        "-[k:knows]->+(b:Person) COLUMNS (b.rowid, path_length(p)))").fetchall()) == \
        [(0, 3), (1, 1), (2, 2), (3, 2)]


def test_rowid_follows_writes_and_a_property_named_rowid_wins(both):
    con, ref = both
    for statement in ("DELETE FROM knows WHERE since >= 4", "DELETE FROM Person WHERE id = 40",
                      "INSERT INTO Person VALUES (50, 'Ed')",
                      "INSERT INTO knows VALUES (50, 30, 6)"):
        con.execute(statement)
        ref.execute(statement)
    # deleted rows keep their ids out of use; the new row comes after every row there was
    assert con.execute("SELECT * FROM GRAPH_TABLE (g MATCH (a:Person WHERE a.id = 50) "
                       "COLUMNS (a.rowid))").fetchall() == [(4,)]
    _same(both, "SELECT * FROM GRAPH_TABLE (g MATCH (a:Person)-[k:knows]->(b) "
                "WHERE a.id <> 50 COLUMNS (a.rowid, k.rowid, a.name))",
          "SELECT a.rowid, k.rowid, a.name FROM knows k JOIN Person a ON a.id = k.src "
          "WHERE a.id <> 50")
    con.execute("CREATE TABLE r(id BIGINT PRIMARY KEY, rowid VARCHAR)")
    con.execute("INSERT INTO r VALUES (1, 'mine')")
    con.execute("CREATE PROPERTY GRAPH h VERTEX TABLES (r)")
    assert con.execute("SELECT * FROM GRAPH_TABLE (h MATCH (x) COLUMNS (x.rowid))"
                       ).fetchall() == [("mine",)]
    # rowid is no property: x.* leaves it out
    assert con.execute("SELECT * FROM GRAPH_TABLE (g MATCH (t:Tag) COLUMNS (t.*))"
                       ).fetchall() == [("x",), ("y",)]


def test_three_part_names_with_the_databases_catalog(both):
    con, ref = both
    script = """
    CREATE SCHEMA s;
    CREATE TABLE memory.s.city(id BIGINT PRIMARY KEY, name VARCHAR);
    INSERT INTO memory.s.city VALUES (1, 'Oslo'), (2, 'Lima');
    CREATE TABLE memory.main.lives(person BIGINT, city BIGINT);
    INSERT INTO memory.main.lives VALUES (10, 1), (20, 2), (30, 2);
    UPDATE memory.s.city SET name = upper(name) WHERE id = 2;
    """
    con.execute(script)
    ref.execute(script)
    _same(both, "SELECT c.name, count(*) FROM memory.main.lives l JOIN memory.s.city c "
                "ON c.id = l.city GROUP BY ALL",
          "SELECT c.name, count(*) FROM memory.main.lives l JOIN memory.s.city c "
          "ON c.id = l.city GROUP BY ALL")
    assert con.execute("SELECT current_database()").fetchall() == [("memory",)]
    con.execute("""CREATE PROPERTY GRAPH m
        VERTEX TABLES (memory.main.Person, memory.s.city)
        EDGE TABLES (memory.main.lives SOURCE KEY (person) REFERENCES memory.main.Person (id)
                                       DESTINATION KEY (city) REFERENCES memory.s.city (id))""")
    _same(both, "SELECT * FROM GRAPH_TABLE (m MATCH (p:Person)-[:lives]->(c:city) "
                "COLUMNS (p.name AS p, c.name AS c))",
          "SELECT p.name, c.name FROM lives l JOIN Person p ON p.id = l.person "
          "JOIN s.city c ON c.id = l.city")
    # a column or alias named memory is not a catalog
    assert con.execute("SELECT memory.name FROM Tag AS memory ORDER BY 1").fetchall() == \
        [("x",), ("y",)]


def test_graph_table_spelled_as_two_words(both):
    con, _ = both
    con.execute("CREATE TABLE graph(x INT); INSERT INTO graph VALUES (1)")  # still a table name
    spelled = ("SELECT * FROM GRAPH TABLE (g MATCH (a:Person)-[k:knows]->(b) COLUMNS "
               "(a.name, b.name)) AS t, graph")
    _same(both, spelled.replace("GRAPH TABLE", "GRAPH_TABLE"),
          "SELECT a.name, b.name, 1 FROM knows k JOIN Person a ON a.id = k.src "
          "JOIN Person b ON b.id = k.dst")
    assert sorted(con.execute(spelled).fetchall()) == sorted(con.execute(
        spelled.replace("GRAPH TABLE", "GRAPH_TABLE")).fetchall())
