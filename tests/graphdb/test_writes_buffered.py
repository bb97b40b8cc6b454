"""Single-row INSERTs inside a transaction are kept and applied together (query/buffered.py):
what the transaction, a rollback, a commit and a failed apply leave, against sqlite3 running the
same statements."""

from __future__ import annotations

import random
import sqlite3

import pytest

import graphdb


def _edges(con, table="g.edges"):
    return sorted(con.execute(f"SELECT src, dst, weight, label FROM {table}").fetchall(),
                  key=repr)


@pytest.fixture
def pair():
    con = graphdb.connect()
    con.execute("CREATE GRAPH g (VERTICES (id BIGINT, name VARCHAR), "
                "EDGES (weight DOUBLE, label VARCHAR))")
    ref = sqlite3.connect(":memory:")
    ref.execute("CREATE TABLE edges (src INTEGER, dst INTEGER, weight REAL, label TEXT)")
    yield con, ref
    con.close()


def _both(con, ref, sql, params):
    assert con.execute(sql, params).fetchall() == [(1,)]
    ref.execute(sql.replace("g.edges", "edges"), params)


def _ref_edges(ref):
    return sorted(ref.execute("SELECT src, dst, weight, label FROM edges").fetchall(), key=repr)


def test_kept_rows_are_seen_committed_and_rolled_back_in_order(pair):
    con, ref = pair
    rng = random.Random(7)
    con.execute("BEGIN")
    for i in range(300):
        src, dst, w = rng.randrange(30), rng.randrange(30), float(rng.randrange(10))
        if i % 3:
            _both(con, ref, "INSERT INTO g.edges (src, dst, weight) VALUES (?, ?, ?)",
                  [src, dst, w])
        else:
            _both(con, ref, "INSERT INTO g.edges (src, dst, weight, label) VALUES (?, ?, ?, ?)",
                  [src, dst, w, rng.choice(["a", None])])
        if i % 50 == 49:  # a read inside the transaction sees every row before it
            assert _edges(con) == _ref_edges(ref)
            con.execute("DELETE FROM g.edges WHERE weight = 0")
            ref.execute("DELETE FROM edges WHERE weight = 0")
    con.execute("COMMIT")
    assert _edges(con) == _ref_edges(ref)
    vertices = {v for e in _ref_edges(ref) for v in e[:2]}
    assert sorted(v for (v,) in con.execute("SELECT id FROM g.vertices").fetchall()) == \
        sorted(vertices)
    committed = _ref_edges(ref)
    con.execute("BEGIN")
    for i in range(20):
        con.execute("INSERT INTO g.edges (src, dst, weight) VALUES (?, ?, ?)", [i, i + 1, 1.0])
    con.execute("ROLLBACK")
    assert _edges(con) == committed


def test_a_row_that_does_not_fit_fails_alone(pair):
    con, ref = pair
    con.execute("BEGIN")
    _both(con, ref, "INSERT INTO g.edges (src, dst, weight) VALUES (?, ?, ?)", [1, 2, 1.0])
    with pytest.raises(graphdb.ProgrammingError, match="non-negative"):
        con.execute("INSERT INTO g.edges (src, dst, weight) VALUES (?, ?, ?)", [2, 3, -1.0])
    with pytest.raises(graphdb.ProgrammingError):
        con.execute("INSERT INTO g.edges (src, dst, weight) VALUES (?, ?, ?)", [2, "x", 1.0])
    _both(con, ref, "INSERT INTO g.edges (src, dst, weight) VALUES (?, ?, ?)", [3, 4, 2.0])
    # vertex inserts are not kept: a duplicate id fails at once, in its own statement
    con.execute("INSERT INTO g.vertices (id, name) VALUES (?, ?)", [9, "ann"])
    with pytest.raises(graphdb.ProgrammingError, match="exists already"):
        con.execute("INSERT INTO g.vertices (id, name) VALUES (?, ?)", [1, "bob"])
    con.execute("COMMIT")
    assert _edges(con) == _ref_edges(ref)
    assert con.execute("SELECT count(*) FROM g.vertices").fetchone() == (5,)


def test_rows_whose_apply_fails_are_kept_for_the_commit(pair, monkeypatch):
    con, ref = pair
    con.execute("BEGIN")
    for i in range(5):
        _both(con, ref, "INSERT INTO g.edges (src, dst, weight) VALUES (?, ?, ?)",
              [i, i + 1, 1.0])
    real, calls = con.session.execute_plan, []

    def failing_once(*args):
        calls.append(1)
        if len(calls) == 1:
            raise graphdb.OperationalError("no space left on device")
        return real(*args)

    monkeypatch.setattr(con.session, "execute_plan", failing_once)
    with pytest.raises(graphdb.Error):
        con.execute("COMMIT")
    con.execute("COMMIT")  # the rows were kept: this commit writes them
    assert _edges(con) == _ref_edges(ref)
