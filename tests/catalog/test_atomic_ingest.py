"""An ingest that fails half-way leaves the database exactly as it was."""

from __future__ import annotations

import pytest

import graphdb
from graphdb.storage.env import Environment


def _fail_at_commit(monkeypatch, message: str) -> dict:
    """Make every write transaction do all its work, then fail just before it commits."""
    real_write = Environment.write
    calls = {"n": 0}

    def failing_write(self, fn):
        def fn_then_fail(txn):
            fn(txn)
            calls["n"] += 1
            raise OSError(message)

        return real_write(self, fn_then_fail)

    monkeypatch.setattr(Environment, "write", failing_write)
    return calls


def _snapshot(con):
    graphs = con.execute("SHOW GRAPHS").fetchall()
    files = sorted(p.relative_to(con.path).as_posix() for p in (con.path / "graphs").rglob("*"))
    return graphs, files


def test_failure_inside_the_commit_leaves_no_trace(con, tmp_path, monkeypatch):
    first = tmp_path / "first.csv"
    first.write_text("s,d\n1,2\n2,3\n")
    con.ingest("kept", first)
    before = _snapshot(con)

    calls = _fail_at_commit(monkeypatch, "disk on fire")
    second = tmp_path / "second.csv"
    second.write_text("s,d\n7,8\n8,9\n9,7\n")
    with pytest.raises(OSError, match="disk on fire"):
        con.ingest("lost", second)
    assert calls["n"] == 1  # the whole graph was written inside the transaction, then lost
    assert _snapshot(con) == before
    # The earlier graph still answers, and the failed name is free to load again.
    assert con.execute("SELECT vertex FROM bfs(kept, 1) WHERE depth = 2").fetchall() == [(3,)]
    monkeypatch.undo()
    con.ingest("lost", second)
    assert [g[0] for g in con.execute("SHOW GRAPHS").fetchall()] == ["kept", "lost"]


def test_replace_is_atomic_too(con, tmp_path, monkeypatch):
    edges = tmp_path / "e.csv"
    edges.write_text("s,d\n1,2\n")
    con.ingest("g", edges)
    _fail_at_commit(monkeypatch, "no space")
    bigger = tmp_path / "big.csv"
    bigger.write_text("s,d\n1,2\n2,3\n3,4\n")
    with pytest.raises(OSError):
        con.ingest("g", bigger, replace=True)
    assert con.execute("SHOW GRAPHS").fetchall() == [("g", True, False, 2, 1)]
    assert len(list((con.path / "graphs").iterdir())) == 1


def test_replace_requires_the_flag(con, tmp_path):
    edges = tmp_path / "e.csv"
    edges.write_text("s,d\n1,2\n")
    con.ingest("g", edges)
    with pytest.raises(graphdb.CatalogError, match="already exists"):
        con.ingest("g", edges)


def test_edge_schema_matches_the_edge_table(con, tmp_path):
    edges = tmp_path / "e.csv"
    edges.write_text("s,d,weight,kind\na,b,1.5,x\nb,c,2,y\n")
    con.ingest("g", edges)
    entry = con.catalog.get("g")
    assert con.catalog.edge_schema(entry) == con.execute("SELECT * FROM g.edges").arrow().schema
