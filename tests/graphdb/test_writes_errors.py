"""Writes a user gets wrong are refused with a graphdb.Error that says why, and change nothing."""

from __future__ import annotations

import pyarrow as pa
import pytest

import graphdb

EDGES = [(1, 2), (2, 3), (3, 1), (3, 4)]


@pytest.fixture
def con():
    con = graphdb.connect()
    con.ingest("g", pa.table({"src": [e[0] for e in EDGES], "dst": [e[1] for e in EDGES]}))
    yield con
    con.close()


def _edges(con):
    return sorted(con.execute("SELECT src, dst FROM g.edges").fetchall())


@pytest.mark.parametrize("sql, message", [
    ("INSERT INTO GRAPH_TABLE (g MATCH (a) COLUMNS (a.id)) VALUES (1)", "read-only"),
    ("DELETE FROM GRAPH_TABLE (g MATCH (a) COLUMNS (a.id AS x))", "read-only"),
    ("INSERT INTO g.adjacency VALUES (1, 2)", "writable tables are g.edges and g.vertices"),
    ("INSERT INTO nosuch.edges VALUES (1, 2)", "does not exist"),
    ("INSERT INTO g.edges VALUES ('x', 2)", "integers"),
    ("CHECKPOINT nosuch", "does not exist"),
])
def test_refused_with_a_reason(con, sql, message):
    with pytest.raises(graphdb.Error, match=message):
        con.execute(sql)
    assert _edges(con) == sorted(EDGES)


def test_a_vertex_with_edges_is_deleted_only_with_detach(con):
    degree = sum(1 for e in EDGES if 3 in e)
    with pytest.raises(graphdb.ProgrammingError, match=f"it has {degree} edges.*DETACH"):
        con.execute("DELETE FROM g.vertices WHERE id = 3")
    assert _edges(con) == sorted(EDGES)
    assert con.execute("DETACH DELETE FROM g.vertices WHERE id = 3").fetchall() == [(1,)]
    assert _edges(con) == sorted(e for e in EDGES if 3 not in e)
    assert sorted(v for (v,) in con.execute("SELECT id FROM g.vertices").fetchall()) == [1, 2, 4]


@pytest.mark.parametrize("ids", [list(range(-3, 6)), [-7, -2, 0, 3, 1 << 40]],
                         ids=["a range", "gaps"])
def test_inserted_edges_find_the_vertices_that_exist(ids):
    """Ids of inserted edges resolve to existing vertices (a range of ids or not) and only
    the others become new vertices: compared with a set of the ids."""
    far = (1 << 63) - 1
    with graphdb.connect() as con:
        con.ingest("g", pa.table({"src": ids[:2], "dst": ids[1:3]}),
                   vertices=pa.table({"id": ids}))
        ends = [ids[0], ids[-1], ids[0] - 1, ids[-1] + 1, far, -far, ids[2], 12345]
        con.insert_edges("g", pa.table({"src": ends, "dst": ends[::-1]}))
        got = sorted(v for (v,) in con.execute("SELECT id FROM g.vertices").fetchall())
        assert got == sorted(set(ids) | set(ends))
        assert sorted(con.execute("SELECT src, dst FROM g.edges").fetchall()) == \
            sorted(list(zip(ids[:2], ids[1:3])) + list(zip(ends, ends[::-1])))


def test_a_property_graph_refuses_writes_and_keeps_its_edges():
    with graphdb.connect() as con:
        con.create_property_graph(
            "social", {"Person": pa.table({"id": [1, 2, 3]})},
            {"knows": (pa.table({"a": [1, 2], "b": [2, 3]}), "Person", "Person")})
        before = sorted(con.execute("SELECT * FROM social.knows").fetchall())
        assert before == [(1, 2), (2, 3)]
        for sql in ["DELETE FROM social.edges WHERE true",
                    "INSERT INTO social.vertices (id) VALUES ('Person:9')"]:
            with pytest.raises(graphdb.ProgrammingError, match="property graph"):
                con.execute(sql)
        with pytest.raises(graphdb.ProgrammingError, match="property graph"):
            con.insert_edges("social", pa.table({"src": ["Person:3"], "dst": ["Person:1"]}))
        con.execute("BEGIN")
        with pytest.raises(graphdb.ProgrammingError, match="property graph"):
            con.execute("INSERT INTO social.edges (src, dst) VALUES (?, ?)", [3, 1])
        con.execute("COMMIT")
        assert sorted(con.execute("SELECT * FROM social.knows").fetchall()) == before
