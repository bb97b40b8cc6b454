"""The catalog's ledger: a missing, changed or re-keyed entry is damage, never absence; and the
whole-database check (``graphdb check``, ``PRAGMA integrity_check``) lists every problem."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import lmdb
import pyarrow as pa
import pytest

import graphdb
from graphdb.catalog.ledger import LEDGER_KEY
from graphdb.catalog.records import canonical as _canonical
from graphdb.storage.checksum import checksum, default_algorithm

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "db"
    with graphdb.connect(path) as con:
        con.ingest("g", pa.table({"src": [1, 2, 3], "dst": [2, 3, 1]}))
        con.ingest("h", pa.table({"src": [5, 6], "dst": [6, 7]}))
    return path


def _edit(db: Path, fn) -> None:
    env = lmdb.open(str(db / "meta.lmdb"), max_dbs=10)
    try:
        with env.begin(write=True) as txn:
            fn(txn, env.open_db(b"catalog", txn=txn), env.open_db(b"meta", txn=txn))
    finally:
        env.close()


def test_a_missing_entry_is_damage_and_can_be_dropped(db):
    with graphdb.connect(db, read_only=True) as con:
        graph_id = con.catalog.get("g").graph_id
    _edit(db, lambda txn, catalog, meta: txn.delete(b"g", db=catalog))
    with graphdb.connect(db) as con:
        with pytest.raises(graphdb.CorruptDatabaseError, match="graph 'g'.*missing"):
            con.execute("SELECT * FROM bfs(g, 1)")
        with pytest.raises(graphdb.CorruptDatabaseError, match="graph 'g'"):
            con.execute("SHOW GRAPHS")
        assert con.execute("SELECT count(*) FROM h.edges").fetchall() == [(2,)]
        assert graph_id in [p.name for p in (db / "graphs").iterdir()]  # nothing deleted
        con.ingest("x", pa.table({"src": [1], "dst": [2]}))  # a load deletes nothing either
        assert graph_id in [p.name for p in (db / "graphs").iterdir()]
        con.execute("DROP GRAPH g")  # the ledger knows its version: its data is freed
        assert con.graphs() == ["h", "x"]
    assert graph_id not in [p.name for p in (db / "graphs").iterdir()]
    assert graphdb.connect(db).execute("PRAGMA integrity_check").fetchall() == [("ok",)]


def test_a_damaged_key_says_corrupt_not_does_not_exist(db):
    def rekey(txn, catalog, meta):
        raw = txn.get(b"g", db=catalog)
        txn.delete(b"g", db=catalog)
        txn.put(b"f", raw, db=catalog)  # one letter changed

    _edit(db, rekey)
    with graphdb.connect(db) as con:
        with pytest.raises(graphdb.CorruptDatabaseError, match="damaged key"):
            con.execute("SELECT * FROM bfs(g, 1)")
        assert con.execute("SELECT count(*) FROM h.edges").fetchall() == [(2,)]
        con.execute("DROP GRAPH g")  # the entry under the damaged key goes with it
        assert con.graphs() == ["h"]


def test_a_resealed_entry_edit_is_caught_by_the_ledger(db):
    def lie(txn, catalog, meta):
        data = json.loads(bytes(txn.get(b"g", db=catalog)))
        data.pop("seal")
        data["num_edges"] = 2  # and sealed again, as someone who knows the format would
        algorithm = default_algorithm()
        data["seal"] = [algorithm, checksum(_canonical(data), algorithm)]
        txn.put(b"g", json.dumps(data, sort_keys=True).encode(), db=catalog)

    _edit(db, lie)
    with graphdb.connect(db) as con:
        with pytest.raises(graphdb.CorruptDatabaseError, match="differs from the one committed"):
            con.execute("SELECT count(*) FROM g.edges")


def test_a_damaged_ledger_refuses_the_database(db):
    _edit(db, lambda txn, catalog, meta: txn.put(LEDGER_KEY, b"junk", db=meta))
    with graphdb.connect(db) as con:
        with pytest.raises(graphdb.CorruptDatabaseError, match="ledger"):
            con.execute("SELECT count(*) FROM h.edges")


def test_a_database_made_before_the_ledger_gets_one(db):
    marker = db / "graphdb.db"
    marker.write_text(marker.read_text().split("\n")[0] + "\n")  # no features: an old database

    def forget(txn, catalog, meta):
        for key in [k for k, _v in txn.cursor(db=meta) if bytes(k).startswith(b"catalog/led")]:
            txn.delete(key, db=meta)

    _edit(db, forget)
    with graphdb.connect(db, read_only=True) as con:  # read-only: used as it is
        assert con.graphs() == ["g", "h"]
    with graphdb.connect(db) as con:
        assert con.graphs() == ["g", "h"]
    assert "catalog ledger" in marker.read_text()
    _edit(db, lambda txn, catalog, meta: txn.delete(b"g", db=catalog))
    with graphdb.connect(db) as con:
        with pytest.raises(graphdb.CorruptDatabaseError, match="missing"):
            con.execute("SELECT * FROM g.edges")


def test_the_whole_database_check(db, tmp_path):
    with graphdb.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    done = subprocess.run([sys.executable, "-m", "graphdb", "check", str(db)],
                          capture_output=True, text=True, cwd=ROOT)
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr
    with graphdb.connect(db, read_only=True) as con:
        h = con.catalog.get("h").graph_id
    (db / "graphs" / h / "vertices.arrow").write_bytes(b"not arrow")
    (db / "graphs" / "stray").mkdir()
    _edit(db, lambda txn, catalog, meta: txn.delete(b"g", db=catalog))
    done = subprocess.run([sys.executable, "-m", "graphdb", "check", str(db)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.strip().splitlines()
    assert any("graph 'g'" in line and "missing" in line for line in lines), lines
    assert any(f"graphs/{h}/vertices.arrow" in line for line in lines), lines
    assert any("graphs/stray" in line for line in lines), lines


def test_a_check_that_crashes_is_reported_not_suffered(db, monkeypatch):
    from graphdb.integrity import TEST_CRASH_ENV

    monkeypatch.setenv(TEST_CRASH_ENV, "1")
    with graphdb.connect(db) as con:
        rows = con.execute("PRAGMA integrity_check").fetchall()
        assert len(rows) == 1 and "crashed the checking process (SIGSEGV)" in rows[0][0]
        assert con.execute("SELECT count(*) FROM g.edges").fetchall() == [(3,)]
