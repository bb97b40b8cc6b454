"""Compaction with writes committed while it builds: they are carried over to the new base
generation, translated, and the graph answers what a fresh ingest answers before, during and
after. Also: the automatic threshold, CHECKPOINT of every graph, graph_changes() and EXPLAIN."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

import graphdb
from graphdb.catalog.compaction import compact
from graphdb.query import compacting

from .writes_oracle import Model, compare, create


def _writes_meanwhile(con, model: Model, rng: random.Random) -> None:
    """Writes of every kind, through ``con`` (another connection), mirrored in ``model``."""
    v = model.vid
    inserted = [(v(1), v(50), 3, "b"), (v(50), v(51), 2, "c"), (v(2), v(3), 1, "a")]
    for src, dst, w, label in inserted:
        con.execute("INSERT INTO g.edges (src, dst, weight, label) VALUES (?, ?, ?, ?)",
                    [src, dst, w, label])
        model.add_edge(src, dst, w, label)
    # a base edge, a delta edge of before the compaction's version, one inserted meanwhile
    for label in ("a", "z"):
        deleted = model.delete_edges(lambda e, label=label: e[3] != label)
        assert con.execute("DELETE FROM g.edges WHERE label = ?",
                           [label]).fetchall() == [(deleted,)]
    model.delete_edges(lambda e: not (e[0] == v(50) and e[1] == v(51)))
    con.execute("DELETE FROM g.edges WHERE src = ? AND dst = ?", [v(50), v(51)])
    victim = sorted(model.vertices)[0]
    model.delete_edges(lambda e: victim not in (e[0], e[1]))
    del model.vertices[victim]
    con.execute("DETACH DELETE FROM g.vertices WHERE id = ?", [victim])
    con.execute("UPDATE g.vertices SET name = 'late' WHERE id = ?", [v(50)])
    model.vertices[v(50)] = "late"
    con.execute("UPDATE g.edges SET weight = weight + 10 WHERE label = 'b'")
    for e in model.edges:
        if e[3] == "b":
            e[2] += 10


# the carry-over is the same for an undirected graph: directed in the default run
@pytest.mark.parametrize("directed", [True, pytest.param(False, marks=pytest.mark.slow)])
def test_writes_during_a_compaction_are_carried_over(tmp_path, directed):
    rng = random.Random(7)
    db = tmp_path / "db"
    model = Model(directed, True, False)
    with graphdb.connect(db) as con, graphdb.connect(db) as other:
        con.execute("SET compaction_threshold = 0")
        other.execute("SET compaction_threshold = 0")
        create(con, model, 30, rng)
        for i in range(20):  # a delta: edges of every label, a vertex, a deletion
            src, dst = model.vid(i % 13), model.vid((5 * i) % 17)
            con.execute("INSERT INTO g.edges VALUES (?, ?, ?, ?)", [src, dst, i % 4, "abz"[i % 3]])
            model.add_edge(src, dst, i % 4, "abz"[i % 3])
        con.execute("INSERT INTO g.vertices VALUES (?, 'new')", [model.vid(99)])
        model.vertices[model.vid(99)] = "new"
        model.delete_edges(lambda e: e[0] != model.vid(4) and
                           (directed or e[1] != model.vid(4)))
        con.execute("DELETE FROM g.edges WHERE src = ?", [model.vid(4)])
        compare(con, model, rng)
        version = con.catalog.get("g").version
        calls = []

        def meanwhile() -> bool:  # asked between the blocks the compaction writes
            if not calls:
                _writes_meanwhile(other, model, rng)
            calls.append(1)
            return False

        new = compact(con.catalog, "g", cancelled=meanwhile)
        assert new is not None and calls
        assert new.version > 0  # the writes made meanwhile are records of the new generation
        assert new.delta["generation"] == 1
        entry = con.catalog.get("g")
        assert entry.graph_id == new.graph_id and entry.version == new.version > 0
        assert version > 0
        compare(con, model, rng)
        compare(other, model, rng)
        con.execute("INSERT INTO g.edges VALUES (?, ?, 1, 'c')", [model.vid(2), model.vid(99)])
        model.add_edge(model.vid(2), model.vid(99), 1, "c")
        con.execute("CHECKPOINT g")
        assert not con.catalog.get("g").changed
        compare(con, model, rng)


def test_automatic_compaction_past_the_threshold(monkeypatch):
    monkeypatch.setattr(compacting, "MIN_DELTA_EDGES", 10)
    with graphdb.connect() as con:
        con.ingest("g", pa.table({"src": list(range(100)), "dst": list(range(1, 101))}))
        con.execute("SET compaction_threshold = '5%'")
        for i in range(4):
            con.execute("INSERT INTO g.edges VALUES (?, ?)", [200 + i, 300 + i])
        assert con.catalog.get("g").version == 8  # 4 x (new vertices, edges): below 5%
        con.executemany("INSERT INTO g.edges VALUES (?, ?)", [(400 + i, 500) for i in range(8)])
        # past it: compacted in the background
        assert compacting.wait_for_compaction(con.session, "g")
        entry = con.catalog.get("g")
        assert not entry.changed and entry.delta["generation"] == 1
        assert con.execute("SELECT count(*) FROM g.edges").fetchone() == (112,)
        row = con.execute("SELECT version, generation, delta_size, compacting, "
                          "compaction_error FROM graph_changes('g')").fetchone()
        assert row == (0, 1, 0, False, None)


def test_checkpoint_every_graph_and_graph_changes():
    with graphdb.connect() as con:
        con.execute("SET compaction_threshold = 0")
        for name in ("a", "b"):
            con.execute(f"CREATE GRAPH {name}")
            con.execute(f"INSERT INTO {name}.edges VALUES (1, 2), (2, 3)")
        rows = con.execute("SELECT graph, version, inserted_edges, delta_size, new_vertices "
                           "FROM graph_changes() ORDER BY graph").fetchall()
        assert rows == [("a", 2, 2, 2, 3), ("b", 2, 2, 2, 3)]
        assert "compacted 'a'" in con.execute("CHECKPOINT").message
        assert con.execute("SELECT sum(version) FROM graph_changes()").fetchone() == (0,)
        assert con.execute("CHECKPOINT a").message == "graph 'a' has no delta to compact"
        with pytest.raises(graphdb.CatalogError, match="does not exist"):
            con.execute("SELECT * FROM graph_changes('nope')")
        con.execute("BEGIN")
        with pytest.raises(graphdb.ProgrammingError, match="inside a transaction"):
            con.execute("CHECKPOINT a")
        con.execute("ROLLBACK")


def test_explain_shows_the_delta_an_operator_merges():
    def explain(sql: str) -> str:
        return " ".join(" ".join(r[0].split()) for r in con.execute("EXPLAIN " + sql).fetchall())

    with graphdb.connect() as con:
        con.ingest("g", pa.table({"src": [1, 2, 3], "dst": [2, 3, 1]}))
        assert "delta" not in explain("SELECT * FROM bfs(g, 1)")
        con.execute("INSERT INTO g.edges VALUES (3, 4)")  # a new vertex, then the edge
        con.execute("DELETE FROM g.edges WHERE src = 1")
        plan = explain("SELECT * FROM bfs(g, 1)")
        assert "delta: version 3 over the stored base (+1 edges, -1 stored base edges, " \
               "+1/-0 vertices; 66.7% of its edges)" in plan
        assert "delta: version 3" in explain(
            "SELECT * FROM GRAPH_TABLE (g MATCH (a)-[e]->(b) COLUMNS (b.id))")
