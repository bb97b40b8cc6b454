"""A killed ingest's spill files: SIGKILL a child ingest at each phase, with its temporary files
inside the database and under --temp-dir; the next open of the database removes the former, the
next ingest using that temp directory the latter, and a running ingest's are never touched."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

import graphdb
from graphdb.catalog.cleanup import TEMP_PREFIX, holding, remove_stale_temp
from graphdb.generators import rmat
from graphdb.storage.topology import TEST_PAUSE_ENV
from tests.storage.test_storage_crash import child, wait_for, write_edges

# A Progress that stops the ingest (marker file, then sleep) when it reaches a phase; "read"
# stops it at the first progress report past 20,000 rows: some of the input read and spilled.
PAUSING = """
import os, sys, time, graphdb
from graphdb.catalog.progress import Progress
phase, marker = sys.argv[1], sys.argv[2]

class Pause(Progress):
    def __init__(self):
        self.current = None
    def stop(self):
        open(marker, "w").write(str(os.getpid()))
        time.sleep(60)
    def phase(self, name, total=None):
        self.current = name
        if name == phase != "read":
            self.stop()
    def advance(self, done, rows=None):
        if phase == "read" == self.current and rows and rows >= 20000:
            self.stop()

with graphdb.connect(sys.argv[3]) as con:
    con.ingest("big", sys.argv[4], memory_limit="1MiB", temp_dir=sys.argv[5] or None,
               progress=Pause())
"""


def spill_files(db: Path, temp: Path | None) -> list[Path]:
    places = [temp] if temp is not None else [p / "tmp" for p in (db / "graphs").iterdir()]
    return [f for place in places if place.exists() for f in place.rglob("*") if f.is_file()]


@pytest.fixture
def setting(tmp_path):
    db = tmp_path / "db"
    small = write_edges(tmp_path / "small.csv", *rmat(8, seed=4))
    big = write_edges(tmp_path / "big.csv", *rmat(14, seed=5))  # 262 k edges: spilled at 1 MiB
    with graphdb.connect(db) as con:
        con.ingest("small", small)
        expected = con.execute("SELECT * FROM bfs(small, 1) ORDER BY vertex").fetchall()
    return db, small, big, expected


PHASES = ["read", "sort", "commit", "inside-commit"]


# every phase with the database's own spill folder and a kill at commit with temp_directory's
# by default; temp_directory's in the other phases in the slow tier (its cleanup is the same)
@pytest.mark.parametrize("phase, use_temp_dir", [
    *((phase, False) for phase in PHASES), ("commit", True),
    *(pytest.param(phase, True, marks=pytest.mark.slow) for phase in PHASES if phase != "commit"),
])
def test_spill_files_of_a_killed_ingest_are_removed(tmp_path, setting, phase, use_temp_dir):
    db, small, big, expected = setting
    temp = tmp_path / "spill" if use_temp_dir else None
    if temp is not None:
        temp.mkdir()
    marker = tmp_path / "paused"
    env = {TEST_PAUSE_ENV: str(marker)} if phase == "inside-commit" else {}
    args = [phase, str(marker), str(db), str(big), str(temp or "")]
    script = "import sys; sys.argv[1:] = " + repr(args) + "\n" + PAUSING
    writer = child(script, env=env)
    wait_for(marker, writer)
    os.kill(writer.pid, signal.SIGKILL)
    writer.communicate()
    if phase in ("read", "sort"):
        assert spill_files(db, temp), "the killed ingest should have left spill files"
    if temp is not None:
        assert [p.name.startswith(TEMP_PREFIX) for p in temp.iterdir()] == [True]

    with graphdb.connect(db) as con:  # the next open: the database's spill folders go
        assert not spill_files(db, None)
        assert con.graphs() == ["small"]
        assert con.execute("SELECT * FROM bfs(small, 1) ORDER BY vertex").fetchall() == expected
        # the next ingest (with that temp directory: its folders go) is the next writer: the
        # killed ingest's graph directory, named by its pending record, goes too
        con.ingest("again", small, temp_dir=temp, memory_limit="1MiB")
        if temp is not None:
            assert list(temp.iterdir()) == []
        assert con.graphs() == ["again", "small"]
        assert len(list((db / "graphs").iterdir())) == 2


def test_an_unreadable_catalog_never_leads_to_deleting_graphs(tmp_path):
    """The catalog's entries lost (as when damage to an LMDB page makes it read as empty): the
    next writer must not take the graphs' directories for a killed ingest's leftovers."""
    import lmdb

    db = tmp_path / "db"
    edges = write_edges(tmp_path / "e.csv", *rmat(8, seed=4))
    with graphdb.connect(db) as con:
        for name in ("a", "b", "c"):
            con.ingest(name, edges)
    before = sorted(p.name for p in (db / "graphs").iterdir())
    assert len(before) == 3
    env = lmdb.open(str(db / "meta.lmdb"), max_dbs=16, subdir=True)
    with env.begin(write=True) as txn:
        catalog = env.open_db(b"catalog", txn=txn)
        for key in [bytes(k) for k, _v in txn.cursor(db=catalog)]:
            txn.delete(key, db=catalog)
    env.close()
    with graphdb.connect(db) as con:  # the open, a load and a drop: every writer's cleanup
        con.ingest("d", edges)
        con.execute("DROP GRAPH d")
    assert sorted(p.name for p in (db / "graphs").iterdir()) == before


def test_a_running_ingests_temp_folder_is_left_alone(tmp_path):
    folder = tmp_path / f"{TEMP_PREFIX}live"
    with holding(folder):
        (folder / "spill.bin").write_bytes(b"x")
        assert remove_stale_temp(tmp_path) == [] and folder.exists()
    assert remove_stale_temp(tmp_path) == [folder] and not folder.exists()
