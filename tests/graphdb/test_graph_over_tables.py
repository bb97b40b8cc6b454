"""Property graphs over stored tables follow the tables' writes: after every random batch of
INSERT, UPDATE and DELETE, the graph answers as a graph built afresh from the same rows, and as
networkx does over those rows."""

from __future__ import annotations

import random

import networkx as nx
import pytest

import graphdb

SCHEMA = """
CREATE TABLE person (id BIGINT PRIMARY KEY, name VARCHAR, age INTEGER);
CREATE TABLE city (name VARCHAR PRIMARY KEY, country VARCHAR);
CREATE TABLE knows (a BIGINT REFERENCES person (id), b BIGINT REFERENCES person (id),
                    since INTEGER);
CREATE TABLE lives (p BIGINT REFERENCES person, c VARCHAR REFERENCES city (name));
"""

GRAPH = """
CREATE {replace} PROPERTY GRAPH {name}
  VERTEX TABLES (person LABEL Person, city LABEL City LABEL Place)
  EDGE TABLES (
    knows SOURCE KEY (a) REFERENCES person (id) DESTINATION KEY b REFERENCES person
          LABEL Knows,
    lives SOURCE person DESTINATION city LABEL LivesIn)
"""

QUERIES = [
    "SELECT a, b, s FROM GRAPH_TABLE ({g} MATCH (x:Person)-[k:Knows]->(y:Person) "
    "COLUMNS (x.name AS a, y.name AS b, k.since AS s))",
    "SELECT p, c FROM GRAPH_TABLE ({g} MATCH (x:Person)-[:LivesIn]->(y:Place) "
    "COLUMNS (x.id AS p, y.name AS c))",
    "SELECT x FROM GRAPH_TABLE ({g} MATCH (x:Person) WHERE x.age > 30 COLUMNS (x.id AS x))",
    "SELECT count(*) FROM {g}.vertices",
    "SELECT * FROM {g}.City",
]


def rows(con, sql):
    return sorted(con.execute(sql).fetchall(), key=repr)


def check(con):
    con.execute(GRAPH.format(replace="OR REPLACE", name="fresh"))
    for query in QUERIES:
        assert rows(con, query.format(g="g")) == rows(con, query.format(g="fresh")), query
    edges = con.execute("SELECT a, b FROM knows").fetchall()
    people = [r[0] for r in con.execute("SELECT id FROM person").fetchall()]
    reference = nx.DiGraph()
    reference.add_nodes_from(people)
    reference.add_edges_from(edges)
    if people:
        source = min(people)
        depths = dict(rows(con, f"SELECT vertex, depth FROM bfs(GRAPH g LABELS (Knows), "
                                f"{source})"))
        assert depths == nx.single_source_shortest_path_length(reference, source)


@pytest.mark.parametrize("seed,compact", [(1, False), (2, True)])
def test_random_table_writes_reach_the_graph(tmp_path, seed, compact, monkeypatch):
    if compact:  # the tables get new base generations often: their rows keep their ids
        import graphdb.query.table_statements as statements

        monkeypatch.setattr(statements, "MIN_COMPACT", 4)
        monkeypatch.setattr(statements, "COMPACT_SHARE", 0.1)
    rng = random.Random(seed)
    with graphdb.connect(tmp_path / "db") as con:
        con.execute(SCHEMA)
        con.execute("INSERT INTO person VALUES (1, 'ann', 30), (2, 'bob', 41)")
        con.execute("INSERT INTO city VALUES ('delft', 'nl')")
        con.execute("INSERT INTO knows VALUES (1, 2, 2000)")
        con.execute(GRAPH.format(replace="", name="g"))
        next_id = 3
        for step in range(40):
            people = [r[0] for r in con.execute("SELECT id FROM person").fetchall()]
            cities = [r[0] for r in con.execute("SELECT name FROM city").fetchall()]
            action = rng.random()
            try:
                if action < 0.25:
                    count = rng.randint(1, 3)
                    con.execute("INSERT INTO person VALUES " + ", ".join(
                        f"({next_id + i}, 'p{next_id + i}', {rng.randint(18, 60)})"
                        for i in range(count)))
                    next_id += count
                elif action < 0.45 and len(people) > 1:
                    con.execute("INSERT INTO knows VALUES " + ", ".join(
                        f"({rng.choice(people)}, {rng.choice(people)}, {rng.randint(1990, 2020)})"
                        for _ in range(rng.randint(1, 4))))
                elif action < 0.55:
                    con.execute(f"INSERT INTO city VALUES ('c{step}', 'x')")
                elif action < 0.65 and people and cities:
                    con.execute(f"INSERT INTO lives VALUES ({rng.choice(people)}, "
                                f"'{rng.choice(cities)}')")
                elif action < 0.75:
                    con.execute(f"UPDATE person SET age = age + 1, name = name || '+' "
                                f"WHERE id % 3 = {rng.randint(0, 2)}")
                elif action < 0.85:
                    con.execute(f"DELETE FROM knows WHERE since < {rng.randint(1990, 2020)}")
                elif action < 0.9:
                    con.execute("UPDATE knows SET since = since + 1 WHERE a = b")
                elif people:  # a person without edges may go; one with edges is refused
                    victim = rng.choice(people)
                    con.execute(f"DELETE FROM person WHERE id = {victim}")
            except graphdb.IntegrityError:
                pass  # a vertex with edges: refused, and nothing changed
            if step % 8 == 7:
                check(con)
        con.execute("CHECKPOINT g")
        check(con)


def test_a_transaction_reaches_the_graph_or_nothing(tmp_path):
    with graphdb.connect(tmp_path / "db") as con:
        con.execute(SCHEMA)
        con.execute(GRAPH.format(replace="", name="g"))  # over empty tables
        assert rows(con, "SELECT count(*) FROM g.vertices") == [(0,)]
        con.execute("BEGIN")
        con.execute("INSERT INTO person VALUES (1, 'a', 1), (2, 'b', 2)")
        con.execute("INSERT INTO knows VALUES (1, 2, 7)")
        assert rows(con, QUERIES[0].format(g="g")) == [("a", "b", 7)]
        con.execute("ROLLBACK")
        assert rows(con, "SELECT count(*) FROM g.vertices") == [(0,)]
        con.execute("BEGIN")
        con.execute("INSERT INTO person VALUES (1, 'a', 1), (2, 'b', 2)")
        con.execute("INSERT INTO knows VALUES (1, 2, 7)")
        con.execute("COMMIT")
    with graphdb.connect(tmp_path / "db") as con:
        assert rows(con, QUERIES[0].format(g="g")) == [("a", "b", 7)]
        check(con)


def test_keys_from_foreign_keys(tmp_path):
    with graphdb.connect(tmp_path / "db") as con:
        con.execute(SCHEMA)
        con.execute("INSERT INTO person VALUES (1, 'a', 1); INSERT INTO city VALUES ('x', 'y');"
                    "INSERT INTO lives VALUES (1, 'x')")
        with pytest.raises(graphdb.ProgrammingError, match="2 foreign keys to person"):
            con.execute("CREATE PROPERTY GRAPH h VERTEX TABLES (person) "
                        "EDGE TABLES (knows SOURCE person DESTINATION person)")
        con.execute("CREATE PROPERTY GRAPH h VERTEX TABLES (person, city) "
                    "EDGE TABLES (lives SOURCE person DESTINATION city)")
        assert rows(con, "SELECT * FROM GRAPH_TABLE (h MATCH (a:person)-[:lives]->(b:city) "
                         "COLUMNS (a.id, b.name))") == [(1, "x")]
        with pytest.raises(graphdb.ProgrammingError, match="no foreign key to city"):
            con.execute("CREATE PROPERTY GRAPH h2 VERTEX TABLES (person, city) EDGE TABLES "
                        "(knows SOURCE KEY (a) REFERENCES person DESTINATION city)")


def test_dropping_a_table_under_a_graph_is_refused(tmp_path):
    with graphdb.connect(tmp_path / "db") as con:
        con.execute(SCHEMA)
        con.execute(GRAPH.format(replace="", name="g"))
        for statement in ("DROP TABLE knows", "ALTER TABLE person ADD COLUMN x INTEGER",
                          "ALTER TABLE city RENAME TO town"):
            with pytest.raises(graphdb.CatalogError, match="property graph 'g'"):
                con.execute(statement)
        con.execute("DROP PROPERTY GRAPH g")
        con.execute("DROP TABLE knows")


def test_edges_into_a_graph_made_over_an_empty_edge_table(tmp_path):
    with graphdb.connect(tmp_path / "db") as con:
        con.execute("CREATE TABLE p (id INTEGER PRIMARY KEY); CREATE TABLE k (a INTEGER, "
                    "b INTEGER, w INTEGER); INSERT INTO p SELECT i FROM range(5) t(i)")
        con.execute("CREATE PROPERTY GRAPH h VERTEX TABLES (p) EDGE TABLES (k SOURCE KEY (a) "
                    "REFERENCES p DESTINATION KEY (b) REFERENCES p)")
        con.execute("INSERT INTO k VALUES (0, 1, 7), (1, 2, 8)")
        assert rows(con, "SELECT * FROM GRAPH_TABLE (h MATCH (x)-[e]->(y) COLUMNS (x.id, y.id "
                         "AS y, e.w))") == [(0, 1, 7), (1, 2, 8)]


def test_a_load_into_an_empty_table_is_its_base_and_reaches_the_graph(tmp_path, monkeypatch):
    import graphdb.executor.writes.table_rows as table_writes

    monkeypatch.setattr(table_writes, "BASE_ROWS", 3)
    with graphdb.connect(tmp_path / "db") as con:
        con.execute(SCHEMA)
        con.execute(GRAPH.format(replace="", name="g"))
        con.execute("INSERT INTO person VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3), (4, 'd', 4)")
        con.execute("INSERT INTO knows VALUES (1, 2, 1), (2, 3, 2), (3, 4, 3), (4, 1, 4)")
        assert con.catalog.table("knows").base_rows == 4  # written as the base, no records
        con.execute("DELETE FROM knows WHERE since IN (2, 4)")
        check(con)
        con.execute("DELETE FROM knows")
        con.execute("INSERT INTO knows VALUES (1, 3, 5), (3, 1, 6), (2, 4, 7)")  # ids go on
        check(con)
        assert rows(con, QUERIES[0].format(g="g")) == [("a", "c", 5), ("b", "d", 7),
                                                       ("c", "a", 6)]
