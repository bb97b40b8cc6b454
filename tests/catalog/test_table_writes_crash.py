"""SIGKILL in the middle of table writes: reopened, a table is exactly as after the last commit
reported or the one in flight, and once a writer has looked nothing is left of anything
unfinished (no directory or delta record of a generation no entry names)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import graphdb
from graphdb.storage import Environment

ROOT = Path(__file__).resolve().parents[2]


def _spawn(code: str) -> subprocess.Popen:
    script = f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + textwrap.dedent(code)
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))


WRITER = """
    import graphdb
    import graphdb.query.table_statements as ts
    ts.MIN_COMPACT = 40  # rewrite the base generation often
    con = graphdb.connect({db!r})
    i = 0
    while True:
        i += 1
        if i % 7 == 0:
            con.execute("BEGIN")
            for k in range(5):
                con.execute("INSERT INTO t VALUES (?, ?)", [1000 * i + k, f"x{{k}}"])
            con.execute("COMMIT")
        elif i % 5 == 0:
            con.execute("DELETE FROM t WHERE k = ?", [i - 1])
        elif i % 11 == 0:
            con.execute("CREATE OR REPLACE TABLE side AS SELECT k FROM t")
        elif i % 13 == 0:
            con.execute("UPDATE t SET v = v || '!' WHERE k = ?", [i - 2])
        else:
            con.execute("INSERT INTO t VALUES (?, ?)", [i, "y"])
        print(i, flush=True)
"""


def expected(steps: int) -> dict[int, str]:
    rows = {0: "start"}
    for i in range(1, steps + 1):
        if i % 7 == 0:
            rows.update({1000 * i + k: f"x{k}" for k in range(5)})
        elif i % 5 == 0:
            rows.pop(i - 1, None)
        elif i % 11 == 0:
            pass
        elif i % 13 == 0:
            if i - 2 in rows:
                rows[i - 2] += "!"
        else:
            rows[i] = "y"
    return rows


def stored(db: Path) -> tuple[set[str], dict[str, int]]:
    """(generation ids a directory or a delta record names, delta records per id)."""
    env = Environment(db, read_only=True)
    records: dict[str, int] = {}
    try:
        with env.read_txn() as txn:
            for key, _ in txn.cursor(db=env.db("deltas")):
                table_id = bytes(key).decode().split("/")[0]
                records[table_id] = records.get(table_id, 0) + 1
    finally:
        env.close()
    return {d.name for d in (db / "graphs").iterdir()} | set(records), records


# round 0 kills at one random moment in the default run; more moments in the slow tier
@pytest.mark.parametrize("round_", [0, *(pytest.param(r, marks=pytest.mark.slow)
                                         for r in (1, 2, 3))])
def test_killed_table_writer_leaves_the_last_commit(tmp_path, round_):
    db = tmp_path / "db"
    with graphdb.connect(db) as con:
        con.execute("CREATE TABLE t (k BIGINT PRIMARY KEY, v VARCHAR NOT NULL)")
        con.execute("INSERT INTO t VALUES (0, 'start')")
    child = _spawn(WRITER.format(db=str(db)))
    first = child.stdout.readline()
    time.sleep(random.Random(round_).uniform(0.3, 2.0))
    child.send_signal(signal.SIGKILL)
    out, err = child.communicate()
    done = [int(line) for line in (first + out).split()]
    assert done, err
    with graphdb.connect(db, read_only=True) as con:
        got = dict(con.execute("SELECT k, v FROM t").fetchall())
    assert got in (expected(done[-1]), expected(done[-1] + 1)), done[-1]
    with graphdb.connect(db) as con:  # the next writer tidies
        con.execute("CREATE TABLE tidy (x INTEGER)")
        con.execute("DROP TABLE tidy")
        con.execute("INSERT INTO t VALUES (-1, 'after')")
        live = {con.catalog.table(n).table_id: con.catalog.table(n)
                for n in con.catalog.tables_now().names()}
    ids, records = stored(db)
    assert ids <= set(live), (ids, set(live))
    for table_id, entry in live.items():
        assert records.get(table_id, 0) == entry.version


CONCURRENT_WRITER = """
    import graphdb
    con = graphdb.connect({db!r})
    for i in range({count}):
        if i % 10 == 9:
            con.execute("BEGIN")
            con.execute("INSERT INTO t VALUES (?, ?)", [{base} + i, "txn"])
            con.execute("UPDATE t SET v = v || '+' WHERE k = ?", [{base} + i - 1])
            con.execute("COMMIT")
        else:
            con.execute("INSERT INTO t VALUES (?, ?)", [{base} + i, "w"])
    print("done", flush=True)
"""

CONCURRENT_READER = """
    import graphdb, json, time
    con = graphdb.connect({db!r}, read_only=True)
    counts = []
    end = time.monotonic() + {seconds}
    while time.monotonic() < end:
        n, distinct = con.execute("SELECT count(*), count(DISTINCT k) FROM t").fetchone()
        assert n == distinct, (n, distinct)  # an UPDATE is never seen half done
        counts.append(n)
    print(json.dumps(counts), flush=True)
"""


def test_writers_take_turns_and_readers_see_whole_commits(tmp_path):
    db = tmp_path / "db"
    with graphdb.connect(db) as con:
        con.execute("CREATE TABLE t (k BIGINT PRIMARY KEY, v VARCHAR NOT NULL)")
    writers = [_spawn(CONCURRENT_WRITER.format(db=str(db), count=60, base=base))
               for base in (0, 100000)]
    readers = [_spawn(CONCURRENT_READER.format(db=str(db), seconds=3))]
    for child in writers:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0 and "done" in out, err
    for child in readers:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        counts = __import__("json").loads(out)
        assert counts == sorted(counts)  # inserts only: the count never goes back
    with graphdb.connect(db, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM t").fetchone() == (120,)
        assert con.execute("SELECT count(*) FROM t WHERE v LIKE '%+'").fetchone() == (12,)
