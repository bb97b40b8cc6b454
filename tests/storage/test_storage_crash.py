"""Crash safety and concurrency across processes: SIGKILL mid-ingest, readers during a write,
two writers. Each child is a fresh Python process working on the same database directory."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import graphdb
from graphdb.generators import rmat
from graphdb.storage import Environment
from graphdb.storage.topology import TEST_PAUSE_ENV

ROOT = Path(__file__).resolve().parents[2]


def write_edges(path: Path, src, dst) -> Path:
    with open(path, "w") as f:
        f.write("src,dst\n")
        f.write("\n".join(f"{a},{b}" for a, b in zip(src.tolist(), dst.tolist())))
        f.write("\n")
    return path


def child(code: str, env: dict | None = None, **kwargs) -> subprocess.Popen:
    script = f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + textwrap.dedent(code)
    return subprocess.Popen([sys.executable, "-c", script], env={**os.environ, **(env or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def wait_for(path: Path, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    while not path.exists():
        if proc.poll() is not None:
            raise AssertionError(f"child exited early: {proc.communicate()}")
        if time.time() > deadline:
            proc.kill()
            raise AssertionError("child never reached the pause point")
        time.sleep(0.05)


def committed_ids_and_keys(db: Path):
    """Graph ids of committed entries, and every graph id that any stored key mentions."""
    env = Environment(db, read_only=True)
    from graphdb.catalog import Catalog

    try:
        committed = {e.graph_id for e in Catalog(env).entries()}
        mentioned = set()
        with env.read_txn() as txn:
            for name in ("blocks", "pages", "meta"):
                for key, _ in txn.cursor(db=env.db(name)):
                    text = bytes(key).decode()
                    if text.startswith(("storage/", "catalog/")):
                        continue  # database-wide settings and the catalog's ledger
                    if text.startswith(("topology/", "pending/")):
                        mentioned.add(text.split("/")[1])
                    elif "/" in text:
                        mentioned.add(text.split("/")[0])
    finally:
        env.close()
    return committed, mentioned


def pagerank_of(db: Path, graph: str) -> list:
    with graphdb.connect(db) as con:
        return con.execute(f"SELECT * FROM pagerank('{graph}') ORDER BY vertex").fetchall()


@pytest.fixture
def setting(tmp_path):
    db = tmp_path / "db"
    small = write_edges(tmp_path / "small.csv", *rmat(8, seed=4))
    big = write_edges(tmp_path / "big.csv", *rmat(13, seed=5))
    with graphdb.connect(db, page_size=16384) as con:
        con.ingest("small", small)
    return db, small, big, pagerank_of(db, "small")


def test_kill_mid_ingest_leaves_no_trace_while_readers_and_a_second_writer_behave(
        tmp_path, setting):
    db, small, big, expected = setting
    marker = tmp_path / "paused"
    # Opened before the writer's commit transaction: a read-write open waits for that
    # transaction (py-lmdb opens sub-databases in a write transaction); read-only opens do not.
    second = graphdb.connect(db)
    writer = child(f"""
        import graphdb
        with graphdb.connect({str(db)!r}) as con:
            con.ingest("big", {str(big)!r})
        print("committed")
    """, env={TEST_PAUSE_ENV: str(marker)})
    wait_for(marker, writer)  # blocks of 'big' are in its open write transaction

    # A second process reads (and opens the database) while the writer holds the write lock.
    reader = child(f"""
        import graphdb
        with graphdb.connect({str(db)!r}, read_only=True) as con:
            print(con.graphs())
            print(con.execute("SELECT * FROM pagerank('small') ORDER BY vertex").fetchall())
    """)
    out, err = reader.communicate(timeout=120)
    assert reader.returncode == 0, err
    assert out.splitlines()[0] == "['small']"
    assert out.splitlines()[1] == repr(expected)

    # A second writer waits for the writer lock (here: one second), then gets a clear error
    # naming another process, never interleaving.
    second.catalog.lock_timeout = 1.0
    with pytest.raises(graphdb.OperationalError, match="another process is writing.*within 1 s"):
        second.ingest("other", small)
    assert second.execute("SELECT * FROM pagerank('small') ORDER BY vertex").fetchall() == expected
    second.close()

    os.kill(writer.pid, signal.SIGKILL)
    writer.communicate()
    assert writer.returncode == -signal.SIGKILL

    # Reopened: earlier graph intact, no entry, block, page or metadata of the killed ingest.
    assert pagerank_of(db, "small") == expected
    committed, mentioned = committed_ids_and_keys(db)
    assert len(committed) == 1
    leftovers = {d.name for d in (db / "graphs").iterdir()} - committed
    assert len(leftovers) == 1  # the killed ingest's Arrow directory, until the next writer,
    assert mentioned == committed | leftovers  # named by its pending record alone

    with graphdb.connect(db) as con:
        con.ingest("again", small)
        assert con.graphs() == ["again", "small"]
    committed, mentioned = committed_ids_and_keys(db)
    assert {d.name for d in (db / "graphs").iterdir()} == committed == mentioned


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.2, 0.6, 1.0, 1.5, 2.5])
def test_kill_at_arbitrary_moments(tmp_path, setting, delay):
    db, small, big, expected = setting
    writer = child(f"""
        import graphdb
        with graphdb.connect({str(db)!r}) as con:
            con.ingest("big", {str(big)!r})
    """)
    time.sleep(delay)
    writer.send_signal(signal.SIGKILL)
    writer.communicate()
    assert pagerank_of(db, "small") == expected
    with graphdb.connect(db) as con:
        names = con.graphs()
        assert names in (["small"], ["big", "small"])
        if "big" in names:  # it committed before the kill: then it is whole
            src, dst = rmat(13, seed=5)
            assert con.execute("DESCRIBE big").fetchall()[4] == ("edges", str(len(src)))
    committed, mentioned = committed_ids_and_keys(db)
    assert mentioned == committed


def test_concurrent_reader_process_sees_a_consistent_catalog_during_ingests(tmp_path, setting):
    db, small, big, expected = setting
    reader = child(f"""
        import time, graphdb
        seen = set()
        deadline = time.time() + 60
        with graphdb.connect({str(db)!r}, read_only=True) as con:
            while time.time() < deadline:
                names = tuple(con.graphs())
                seen.add(names)
                for name in names:  # every visible graph answers
                    con.execute(f"SELECT * FROM pagerank('{{name}}') LIMIT 1").fetchall()
                if "big" in names:
                    break
        print(sorted(seen))
    """)
    with graphdb.connect(db) as con:
        con.ingest("big", big)
    out, err = reader.communicate(timeout=120)
    assert reader.returncode == 0, err
    assert out.strip() in ("[('big', 'small')]", "[('big', 'small'), ('small',)]")
