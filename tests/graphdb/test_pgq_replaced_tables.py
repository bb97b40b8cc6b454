"""CREATE OR REPLACE TABLE of a table a property graph is built over (DuckPGQ's test scripts
replace their tables between graphs). The graph was built over the old table: it never answers
for it again (no stale rows), refuses to be read with an error that says how to make it anew,
and no write reaches it; made again, it answers for the new tables, checked against DuckDB's
joins of the same tables."""

from __future__ import annotations

import duckdb
import pytest

import graphdb
from graphdb.errors import Error

TABLES = """
CREATE TABLE Student(id BIGINT, name VARCHAR);
INSERT INTO Student VALUES (0, 'Daniel'), (1, 'Tavneet'), (2, 'Gabor'), (3, 'Peter'), (4, 'David');
CREATE TABLE know(src BIGINT, dst BIGINT, createDate BIGINT);
INSERT INTO know VALUES (0, 1, 10), (0, 2, 11), (0, 3, 12), (3, 0, 13), (1, 2, 14), (4, 3, 17);
"""

GRAPH = """
CREATE {replace} PROPERTY GRAPH pg
VERTEX TABLES (Student)
EDGE TABLES (know SOURCE KEY (src) REFERENCES Student (id)
                  DESTINATION KEY (dst) REFERENCES Student (id))
"""

REPLACED = """
CREATE OR REPLACE TABLE Student(id BIGINT, name VARCHAR);
INSERT INTO Student VALUES (0, 'Alice'), (1, 'Bob'), (5, 'Frank');
CREATE OR REPLACE TABLE know(src BIGINT, dst BIGINT, createDate BIGINT);
INSERT INTO know VALUES (0, 5, 1), (5, 1, 2);
"""

PAIRS = ("SELECT * FROM GRAPH_TABLE (pg MATCH (a)-[k]->(b) COLUMNS (a.name AS a, b.name AS b, "
         "k.createDate AS d))")
JOINED = ("SELECT a.name, b.name, k.createDate FROM know k JOIN Student a ON a.id = k.src "
          "JOIN Student b ON b.id = k.dst")


def _rows(con, sql: str) -> list:
    return sorted(con.execute(sql).fetchall(), key=repr)


@pytest.fixture()
def db(tmp_path):
    path = tmp_path / "db"
    with graphdb.connect(path) as con:
        con.execute(TABLES)
        con.execute(GRAPH.format(replace=""))
    return path


def test_a_replaced_table_leaves_its_graph_unread_until_it_is_made_again(db):
    ref = duckdb.connect()
    ref.execute(TABLES)
    ref.execute(REPLACED)
    with graphdb.connect(db) as con:
        con.execute("CREATE OR REPLACE TABLE Student(id BIGINT, name VARCHAR)")
        with pytest.raises(Error, match="'Student', which has been replaced.*CREATE OR REPLACE "
                                        "PROPERTY GRAPH pg"):
            con.execute(PAIRS)
        # no write reaches the old graph: this one names keys its old table never had
        con.execute(REPLACED)
        with pytest.raises(Error, match="replaced"):
            con.execute("SELECT count(*) FROM GRAPH_TABLE (pg MATCH (a) COLUMNS (a.id))")
    with graphdb.connect(db) as con:  # as stored: still out of step after a reopen
        with pytest.raises(Error, match="replaced"):
            con.execute(PAIRS)
        con.execute(GRAPH.format(replace="OR REPLACE"))
        assert _rows(con, PAIRS) == sorted(ref.execute(JOINED).fetchall(), key=repr)
        # the graph made again follows its new tables
        for sql in ("INSERT INTO Student VALUES (6, 'Gus')", "INSERT INTO know VALUES (6, 0, 3)",
                    "DELETE FROM know WHERE createDate = 1"):
            con.execute(sql)
            ref.execute(sql)
        assert _rows(con, PAIRS) == sorted(ref.execute(JOINED).fetchall(), key=repr)


def test_a_graph_over_a_replaced_table_may_be_dropped_and_so_may_the_table(db):
    with graphdb.connect(db) as con:
        with pytest.raises(Error, match="property graph 'pg' is built over it"):
            con.execute("DROP TABLE know")  # a graph in step with its tables keeps them
        con.execute("CREATE OR REPLACE TABLE know AS SELECT 0 AS src, 1 AS dst, 5 AS createDate")
        con.execute("DROP TABLE know")  # the graph is over the old table, not this one
        with pytest.raises(Error, match="'know', which has been dropped"):
            con.execute(PAIRS)
        # the graph reads none of its tables again: the one it still names may change
        con.execute("ALTER TABLE Student ADD COLUMN age INTEGER")
        con.execute("DROP PROPERTY GRAPH pg")
        assert con.execute("SHOW PROPERTY GRAPHS").fetchall() == []
        con.execute("DROP TABLE Student")


def test_create_table_from_python_replaces_the_same_way(db):
    import pyarrow as pa

    with graphdb.connect(db) as con:
        con.create_table("Student", pa.table({"id": [7], "name": ["Ida"]}), replace=True)
        with pytest.raises(Error, match="replaced"):
            con.execute(PAIRS)
        con.execute("DELETE FROM know")
        con.execute(GRAPH.format(replace="OR REPLACE"))
        assert con.execute("SELECT * FROM GRAPH_TABLE (pg MATCH (a) COLUMNS (a.id, a.name))"
                           ).fetchall() == [(7, "Ida")]
