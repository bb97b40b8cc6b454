"""A full disk: clear DiskFull errors naming the space, nothing committed by halves, and a drop
that makes room for the next load.

Two ways to fill a disk without a small filesystem: a child process whose file size limit
(RLIMIT_FSIZE) is the database file's length, so LMDB can write only into pages the file
already has (the pages a drop freed); and a small tmpfs, where this machine lets us mount one
(the end-to-end cases; skipped elsewhere).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import graphdb

ROOT = Path(__file__).resolve().parents[2]


def _edges(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({"src": rng.integers(0, 50_000, n), "dst": rng.integers(0, 50_000, n),
                     "weight": rng.random(n)})


def _child(code: str, limit: int) -> subprocess.CompletedProcess:
    script = textwrap.dedent(f"""
        import resource, signal, sys
        sys.path.insert(0, {str(ROOT)!r})
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit: EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
    """) + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)


def test_a_drop_makes_room_for_the_next_load_when_the_file_cannot_grow(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHDB_INITIAL_MAP_SIZE", str(4 << 20))
    db = tmp_path / "db"
    with pa.ipc.new_file(str(tmp_path / "big.arrow"), _edges(1, 0).schema) as w:
        w.write_table(_edges(300_000, 1))
    with graphdb.connect(db) as con:
        con.ingest("small", _edges(500, 2))
        con.ingest("big", tmp_path / "big.arrow")
        expected = con.execute("SELECT count(*), sum(src) FROM big.edges").fetchone()
    length = (db / "meta.lmdb" / "data.mdb").stat().st_size
    result = _child(f"""
        import graphdb
        con = graphdb.connect({str(db)!r})
        try:  # more than the file holds: refused, nothing committed
            con.execute("CREATE GRAPH w")
            con.execute("INSERT INTO w.edges SELECT i, i + 1 FROM range(2000000) t(i)")
            print("inserted")
        except graphdb.OperationalError as exc:
            print("refused:", exc)
        print(con.execute("SELECT count(*) FROM w.edges").fetchone())
        con.execute("DROP GRAPH big")
        con.ingest("again", {str(tmp_path / "big.arrow")!r})
        print(con.execute("SELECT count(*), sum(src) FROM again.edges").fetchone())
        print(con.graphs())
    """, limit=length)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("refused: ") and "disk" in lines[0], lines
    assert lines[1] == "(0,)"  # nothing of the refused insert
    assert lines[2] == repr(expected)  # loaded into the pages the drop freed
    assert lines[3] == "['again', 'small', 'w']"
    assert (db / "meta.lmdb" / "data.mdb").stat().st_size == length
    with graphdb.connect(db) as con:  # and all of it is there afterwards
        assert con.execute("SELECT count(*), sum(src) FROM again.edges").fetchone() == expected


def test_vacuum_without_room_for_its_copy_says_so_and_a_drop_skips_it(tmp_path, monkeypatch):
    import graphdb.storage.env as env_module

    db = tmp_path / "db"
    with graphdb.connect(db) as con:
        con.ingest("small", _edges(500, 2))
        con.ingest("big", _edges(200_000, 3))
        monkeypatch.setattr(env_module, "free_bytes", lambda path: 1 << 10)
        con.execute("DROP GRAPH big")  # its compaction is skipped: no error after the commit
        assert con.graphs() == ["small"]
        with pytest.raises(graphdb.OperationalError, match="VACUUM copies the live data"):
            con.execute("VACUUM")
        monkeypatch.undo()
        con.execute("VACUUM")
        assert con.execute("SELECT count(*) FROM small.edges").fetchone() == (500,)


@pytest.fixture
def small_disk(tmp_path):
    """A 48 MiB tmpfs, where mounting one is allowed (root in a container); else skipped."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48M", "tmpfs", str(mount)],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _fill(disk: Path) -> Path:
    filler = disk / f"filler-{uuid.uuid4().hex}"
    with open(filler, "wb") as f:
        try:
            while True:
                f.write(b"\0" * (1 << 20))
                f.flush()
        except OSError:
            pass
    return filler


def test_on_a_full_disk_every_write_says_so_and_the_database_stays_whole(small_disk,
                                                                         monkeypatch):
    monkeypatch.setenv("GRAPHDB_INITIAL_MAP_SIZE", str(4 << 20))
    db = small_disk / "db"
    with graphdb.connect(db) as con:
        con.ingest("small", _edges(500, 2))
        con.ingest("big", _edges(300_000, 4))
        con.execute("CREATE GRAPH w")
        con.execute("INSERT INTO w.edges SELECT i, i + 1 FROM range(30000) t(i)")
        before = con.execute("SELECT count(*), sum(src) FROM w.edges").fetchone()
        filler = _fill(small_disk)
        try:  # nothing to do (compacted in the background already), or no room for it
            con.execute("CHECKPOINT w")
        except graphdb.OperationalError as exc:
            assert "the disk is full" in str(exc)
        with pytest.raises(graphdb.OperationalError, match="the disk is full"):
            con.execute("INSERT INTO w.edges SELECT i, i + 1 FROM range(400000) t(i)")
        assert con.execute("SELECT count(*), sum(src) FROM w.edges").fetchone() == before
        con.execute("DROP GRAPH big")  # no error from the compaction after it
        assert con.graphs() == ["small", "w"]
    filler.unlink()
    with graphdb.connect(db) as con:
        assert con.execute("SELECT count(*), sum(src) FROM w.edges").fetchone() == before
        con.execute("CHECKPOINT w")
        assert con.execute("SELECT count(*), sum(src) FROM w.edges").fetchone() == before


def test_a_spill_to_a_full_temp_folder_names_it(small_disk, tmp_path):
    edges = tmp_path / "edges.csv"
    import pyarrow.csv as pacsv

    pacsv.write_csv(_edges(200_000, 5).select(["src", "dst"]), edges)
    filler = _fill(small_disk)
    os.truncate(filler, max(0, filler.stat().st_size - (1 << 20)))  # 1 MiB left
    with graphdb.connect(tmp_path / "db") as con:
        with pytest.raises(graphdb.OperationalError, match="temp folder") as caught:
            con.ingest("g", edges, memory_limit="1MiB", temp_dir=small_disk)
        assert str(small_disk) in str(caught.value)
        assert con.graphs() == []
