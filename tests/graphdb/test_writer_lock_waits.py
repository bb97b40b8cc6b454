"""Statements that need the writer lock wait for it, as INSERT, DELETE and UPDATE do.

CREATE GRAPH, DROP GRAPH, loads and VACUUM used to fail at once while another writer held the
lock, even when it was the same connection's background compaction (685 of 1,166 such
statements in one run), with the message "another process is writing". Now they wait (up to
the catalog's ``lock_timeout``, 30 s), and the message says who holds the lock.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa
import pytest

import graphdb

ROOT = Path(__file__).resolve().parents[2]


def test_ddl_beside_the_connections_own_background_compactions_never_fails(tmp_path):
    with graphdb.connect(tmp_path / "db") as con:
        con.execute("SET compaction_threshold = 0.01")
        con.execute("CREATE GRAPH w")
        con.execute("INSERT INTO w.edges SELECT i, i + 1 FROM range(5000) t(i)")
        total = 5000
        for i in range(40):
            # each insert leaves a delta past the threshold: a compaction starts behind it
            con.execute(f"INSERT INTO w.edges SELECT i, i + 2 FROM range({i * 300}, "
                        f"{(i + 1) * 300}) t(i)")
            total += 300
            con.execute(f"CREATE GRAPH t{i}")
            con.ingest(f"l{i}", pa.table({"src": [1, 2], "dst": [2, 3]}))
            con.execute(f"DROP GRAPH t{i}")
            con.execute(f"DROP GRAPH l{i}")
            if i % 10 == 9:
                con.execute("VACUUM")
        assert con.execute("SELECT count(*) FROM w.edges").fetchone() == (total,)
        errors = con.execute("SELECT compaction_error FROM graph_changes('w')").fetchone()
        assert errors == (None,)
        assert con.graphs() == ["w"]


HOLDER = """
    import sys, time
    sys.path.insert(0, {root!r})
    import graphdb
    con = graphdb.connect({db!r})
    con.execute("BEGIN")
    con.execute("INSERT INTO g.edges VALUES (7, 8)")  # holds the writer lock until COMMIT
    print("holding", flush=True)
    time.sleep({seconds})
    con.execute("COMMIT")
    con.close()
"""


def _hold(db: Path, seconds: float) -> subprocess.Popen:
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLDER.format(root=str(ROOT), db=str(db),
                                                              seconds=seconds))],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "holding", child.stderr.read()
    return child


# DROP GRAPH takes the lock as CREATE GRAPH does: in the slow tier
@pytest.mark.parametrize("statement", ["CREATE GRAPH other",
                                       pytest.param("DROP GRAPH spare", marks=pytest.mark.slow),
                                       "VACUUM", "load"])
def test_ddl_waits_for_another_process_that_is_writing(tmp_path, statement):
    db = tmp_path / "db"
    with graphdb.connect(db) as con:
        con.execute("CREATE GRAPH g")
        con.execute("CREATE GRAPH spare")
    child = _hold(db, 1.5)
    try:
        with graphdb.connect(db) as con:
            start = time.monotonic()
            if statement == "load":
                con.ingest("other", pa.table({"src": [1], "dst": [2]}))
            elif statement == "VACUUM":  # waits for the writer; may then find it still open
                try:
                    con.execute(statement)
                except graphdb.CatalogError as exc:
                    assert "has it open" in str(exc)
            else:
                con.execute(statement)
            waited = time.monotonic() - start
            assert con.execute("SELECT count(*) FROM g.edges").fetchone() == (1,)
    finally:
        _out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert waited > 0.5  # it waited for the other process's commit


def test_a_writer_that_does_not_finish_in_time_is_named(tmp_path):
    db = tmp_path / "db"
    with graphdb.connect(db) as con:
        con.execute("CREATE GRAPH g")
    child = _hold(db, 5)
    try:
        with graphdb.connect(db) as con:
            con.catalog.lock_timeout = 0.3
            with pytest.raises(graphdb.OperationalError,
                               match="another process is writing.*within 0.3 s"):
                con.execute("DROP GRAPH g")
    finally:
        child.kill()
        child.communicate()
    with graphdb.connect(db) as one, graphdb.connect(db) as two:
        one.execute("BEGIN")
        one.execute("INSERT INTO g.edges VALUES (1, 2)")
        two.catalog.lock_timeout = 0.2
        with pytest.raises(graphdb.OperationalError, match="another connection of this process"):
            two.execute("CREATE GRAPH h")
        one.execute("ROLLBACK")
        two.execute("CREATE GRAPH h")
        assert two.graphs() == ["g", "h"]
