"""``g.vertices WHERE id = ...``: the ids' rows found by a binary search of the sorted ids (a key
lookup), answered without the relational engine where the condition is the whole WHERE, and
equal to DuckDB's answer over the same rows in every case (an independent reference: the
vertex table fetched whole and queried by DuckDB directly)."""

import duckdb
import pyarrow as pa
import pytest

import graphdb

IDS = [10 + 7 * i for i in range(200)]
NAMES = [f"p{i}" for i in range(200)]


@pytest.fixture(scope="module")
def con():
    con = graphdb.connect()
    con.ingest("g", pa.table({"src": IDS[:-1], "dst": IDS[1:]}),
               vertices=pa.table({"id": IDS, "name": NAMES}))
    con.ingest("s", pa.table({"src": [f"v{i}" for i in range(50)],
                              "dst": [f"v{(i * 7) % 50}" for i in range(50)]}))
    yield con
    con.close()


def reference(con, graph: str, sql: str, parameters=None) -> list:
    """The same query run by DuckDB over the graph's whole vertex table."""
    table = con.execute(f"SELECT * FROM {graph}.vertices").arrow()
    duck = duckdb.connect()
    duck.register("v", table)
    return sorted(duck.execute(sql.replace(f"{graph}.vertices", "v"), parameters).fetchall(),
                  key=repr)


CASES = [
    ("g", "SELECT name FROM g.vertices WHERE id = ?", [10 + 7 * 77]),
    ("g", "SELECT name FROM g.vertices WHERE id = ?", [11]),  # not a vertex
    ("g", "SELECT name FROM g.vertices WHERE id = ?", [None]),
    ("g", "SELECT * FROM g.vertices WHERE id IN (17, 10, 17, 999, NULL)", None),
    ("g", "SELECT id, name FROM g.vertices WHERE id = 17 AND id = 24", None),
    ("g", "SELECT id FROM g.vertices WHERE id = 17 AND name = 'p1'", None),
    ("g", "SELECT id FROM g.vertices WHERE id = 17 AND name = 'p2'", None),
    ("g", "SELECT count(*) FROM g.vertices WHERE id = ?", [24]),
    ("g", "SELECT name FROM g.vertices WHERE id = ?", [24.0]),  # DuckDB's comparison
    ("g", "SELECT name FROM g.vertices WHERE id = ?", ["24"]),
    ("g", "SELECT v.name FROM g.vertices v WHERE v.id = $1", [31]),
    ("g", "SELECT name FROM g.vertices WHERE id = 24 OR id = 31", None),
    ("g", "SELECT upper(name) AS n FROM g.vertices WHERE id IN (24, 31)", None),
    ("g", "SELECT a.name, b.name FROM g.vertices a JOIN g.vertices b ON b.id = a.id + 7 "
          "WHERE a.id = 24", None),
    ("s", "SELECT id FROM s.vertices WHERE id = ?", ["v7"]),
    ("s", "SELECT id FROM s.vertices WHERE id IN ('v1', 'v49', 'nope')", None),
    ("s", "SELECT id FROM s.vertices WHERE id = ?", [7]),
]


@pytest.mark.parametrize("graph, sql, parameters", CASES)
def test_key_lookup_matches_duckdb(con, graph, sql, parameters):
    try:
        expected = reference(con, graph, sql, parameters)
    except duckdb.Error:  # (a string id compared with a number): refused as DuckDB does
        with pytest.raises(graphdb.Error):
            con.execute(sql, parameters)
        return
    assert sorted(con.execute(sql, parameters).fetchall(), key=repr) == expected


def test_the_lookup_is_planned_as_one(con):
    plan = "\n".join(r[0] for r in con.execute(
        "EXPLAIN SELECT name FROM g.vertices WHERE id = ?", [24]).fetchall())
    assert "key lookup: id IN (24)" in plan
    assert "DUCKDB" not in plan  # the condition is the whole WHERE: no relational engine
    plan = "\n".join(r[0] for r in con.execute(
        "EXPLAIN SELECT name FROM g.vertices WHERE id = 24 AND name <> 'x'").fetchall())
    assert "key lookup: id IN (24)" in plan and "DUCKDB" in plan  # DuckDB filters the rest


def test_lookup_after_writes(tmp_path):
    con = graphdb.connect(tmp_path / "db")
    con.ingest("g", pa.table({"src": IDS[:-1], "dst": IDS[1:]}),
               vertices=pa.table({"id": IDS, "name": NAMES}))
    lookup = "SELECT name FROM g.vertices WHERE id = ?"
    assert con.execute(lookup, [24]).fetchall() == [("p2",)]
    con.execute("INSERT INTO g.vertices (id, name) VALUES (?, ?)", [12, "new"])
    assert con.execute(lookup, [12]).fetchall() == [("new",)]
    assert con.execute(lookup, [24]).fetchall() == [("p2",)]
    con.execute("DETACH DELETE FROM g.vertices WHERE id = ?", [24])
    assert con.execute(lookup, [24]).fetchall() == []
    assert con.execute(lookup, [31]).fetchall() == [("p3",)]
    for v in (10, 12, 17, 31, 1403):
        assert con.execute(lookup, [v]).fetchall() == reference(con, "g", lookup, [v])
    con.close()
