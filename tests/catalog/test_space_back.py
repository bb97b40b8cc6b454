"""Space back: DROP GRAPH, --replace and VACUUM shrink the database file (copy-compaction),
never while another process has the database open, and a compaction killed before its swap
leaves the database as it was. A graph takes at most 1.2x its CSR arrays."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

import graphdb
from graphdb.generators import rmat
from graphdb.storage.compact import COPY_DIR, TEST_PAUSE_ENV
from graphdb.storage.env import WRITE_HEADROOM
from tests.storage.test_storage_crash import child, wait_for, write_edges


def disk_bytes(db: Path) -> int:
    """What the database occupies on disk (allocated blocks: the LMDB file is sparse)."""
    return sum(p.stat().st_blocks * 512 for p in db.rglob("*") if p.is_file())


@pytest.fixture
def edges(tmp_path):  # 262 k edges: 2.3 MB of CSR blocks
    return write_edges(tmp_path / "e.csv", *rmat(14, seed=6))


def bfs(con, graph="g"):
    return con.execute(f"SELECT * FROM bfs({graph}, 3) ORDER BY vertex").fetchall()


def test_drop_and_replace_give_the_space_back(tmp_path, edges):
    small = write_edges(tmp_path / "small.csv", *rmat(8, seed=1))
    db = tmp_path / "db"
    # On disk: the pages in use, and the disk allocated ahead of the next write (storage.env).
    ahead = WRITE_HEADROOM + (512 << 10)
    with graphdb.connect(db) as con:
        con.ingest("g", edges)
        one = con.catalog.env.space().used_bytes
        con.ingest("h", edges)
        expected = bfs(con)
        assert disk_bytes(db) > 2 * one
        con.execute("DROP GRAPH h")
        after = con.catalog.env.space()
        assert after.free_bytes == 0 and after.used_bytes <= one * 1.05
        assert disk_bytes(db) <= after.used_bytes + ahead
        assert bfs(con) == expected  # what stays is intact
        con.ingest("g", small, replace=True)  # the large version's space goes too
        after = con.catalog.env.space()
        assert after.used_bytes < 0.1 * one and disk_bytes(db) <= after.used_bytes + ahead


def test_vacuum_compacts_whatever_is_free(tmp_path, edges):
    with graphdb.connect(tmp_path / "db") as con:
        con.ingest("g", edges)
        con.ingest("h", edges)
        con.ingest("k", edges)
        con.execute("DROP GRAPH h")  # a third free: not enough to compact on its own
        assert con.catalog.env.space().free_share > 0.2
        message = con.execute("VACUUM").message
        assert "compacted" in message
        assert con.catalog.env.space().free_bytes == 0
        assert bfs(con, "g") == bfs(con, "k")


def test_no_compaction_while_another_process_has_the_database_open(tmp_path, edges):
    db = tmp_path / "db"
    with graphdb.connect(db) as con:
        con.ingest("g", edges)
        con.ingest("h", edges)
    marker = tmp_path / "opened"
    reader = child(f"""
        import time, graphdb
        con = graphdb.connect({str(db)!r}, read_only=True)
        open({str(marker)!r}, "w").write("x")
        time.sleep(60)
    """)
    wait_for(marker, reader)
    try:
        with graphdb.connect(db) as con:
            con.execute("DROP GRAPH h")  # dropped, but the file is left as it is
            assert con.catalog.env.space().free_share > 0.4
            with pytest.raises(graphdb.Error, match="another process"):
                con.execute("VACUUM")
            expected = bfs(con)
    finally:
        reader.kill()
        reader.communicate()
    with graphdb.connect(db) as con:
        con.execute("VACUUM")
        assert con.catalog.env.space().free_bytes == 0 and bfs(con) == expected


def test_a_killed_compaction_leaves_the_database_as_it_was(tmp_path, edges):
    db = tmp_path / "db"
    with graphdb.connect(db) as con:
        con.ingest("g", edges)
        con.ingest("h", edges)
        expected = bfs(con)
    marker = tmp_path / "paused"
    dropper = child(f"""
        import graphdb
        with graphdb.connect({str(db)!r}) as con:
            con.execute("DROP GRAPH h")
    """, env={TEST_PAUSE_ENV: str(marker)})
    wait_for(marker, dropper)  # the compacted copy is written, the swap not done
    assert (db / COPY_DIR / "data.mdb").exists()
    os.kill(dropper.pid, signal.SIGKILL)
    dropper.communicate()
    with graphdb.connect(db) as con:  # the drop committed; the copy is gone; nothing lost
        assert not (db / COPY_DIR).exists()
        assert con.graphs() == ["g"] and bfs(con) == expected
        con.execute("VACUUM")
        assert con.catalog.env.space().free_bytes == 0 and bfs(con) == expected


def test_a_graph_takes_at_most_1_2_times_its_csr_arrays(tmp_path):
    edges = write_edges(tmp_path / "e.csv", *rmat(16, seed=2))
    db = tmp_path / "db"
    with graphdb.connect(db) as con:
        empty = con.catalog.env.space().used_bytes
        con.ingest("g", edges)
        entry = con.catalog.get("g")
        stored = con.catalog.env.space().used_bytes - empty
        files = sum(p.stat().st_size for p in (db / "graphs").rglob("*") if p.is_file())
    assert stored + files <= 1.2 * entry.stats["csr_bytes"], (stored, files, entry.stats)
