"""Links planted in a database directory are refused, never followed: nothing outside is read,
written or created.

The audit found LMDB overwriting the file ``meta.lmdb/lock.mdb`` pointed at, dangling
``leases.lock`` and ``open.lock`` links creating files outside, a linked
``graphs/<id>/vertices.arrow`` read without complaint, ``writer.lock`` and ``graphdb.db`` links
followed, and a ``meta.lmdb.compact`` link giving a raw FileExistsError on DROP or load.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

import graphdb
from tests._copies import copy_database, sparse_copy

FIXED = ["graphdb.db", "meta.lmdb/lock.mdb", "meta.lmdb/data.mdb", "leases.lock", "open.lock",
         "writer.lock", "meta.lmdb.compact", "graphdb.db.tmp", "graphs", "meta.lmdb"]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    db = tmp_path_factory.mktemp("links") / "db"
    with graphdb.connect(db) as con:
        con.ingest("g", pa.table({"src": [1, 2, 3], "dst": [2, 3, 1], "label": ["a", "b", "c"]}))
        con.execute("CREATE GRAPH w")
        con.execute("INSERT INTO w.edges VALUES (1, 2)")
    return db


def _setup(base: Path, tmp_path: Path) -> tuple[Path, Path]:
    db = tmp_path / "db"
    copy_database(base, db)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me")
    return db, victim


def _outside(tmp_path: Path, db: Path) -> dict:
    return {str(p): hashlib.sha1(p.read_bytes()).hexdigest() for p in tmp_path.rglob("*")
            if p.is_file() and db not in p.parents}


def _use(db: Path) -> list[str]:
    """Open, query, write, drop, vacuum: what each raised (graphdb's errors only)."""
    errors = []
    try:
        con = graphdb.connect(db)
    except graphdb.CorruptDatabaseError as exc:
        return [str(exc)]
    with con:
        for statement in ["SELECT count(*) FROM g.edges", "SELECT * FROM g.vertices",
                          "SELECT count(*) FROM w.edges", "INSERT INTO w.edges VALUES (5, 6)",
                          "CREATE GRAPH extra", "DROP GRAPH extra", "VACUUM"]:
            try:
                con.execute(statement).fetchall()
            except graphdb.Error as exc:
                errors.append(str(exc))
    return errors


@pytest.mark.parametrize("name", FIXED)
@pytest.mark.parametrize("how", ["to a victim file", "dangling"])
def test_a_link_at_a_fixed_name_refuses_the_database(base, tmp_path, name, how):
    db, victim = _setup(base, tmp_path)
    path = db / name
    target = victim / "precious.txt" if how == "to a victim file" else victim / "nothing-here"
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
    path.symlink_to(target)
    before = _outside(tmp_path, db)
    errors = _use(db)
    assert errors and "symbolic link" in errors[0] and name.split("/")[0] in errors[0], errors
    assert _outside(tmp_path, db) == before  # nothing outside changed or appeared
    assert not (victim / "nothing-here").exists()
    assert (victim / "precious.txt").read_text() == "keep me"


@pytest.mark.parametrize("name", ["meta.lmdb/lock.mdb", "meta.lmdb/data.mdb"])
def test_a_second_hard_link_to_a_file_lmdb_writes_is_refused(base, tmp_path, name):
    db, victim = _setup(base, tmp_path)
    outside = victim / "copy"
    sparse_copy(db / name, outside)
    (db / name).unlink()
    os.link(outside, db / name)
    before = outside.read_bytes()
    with pytest.raises(graphdb.CorruptDatabaseError, match="another hard link"):
        graphdb.connect(db)
    assert outside.read_bytes() == before


def test_a_linked_arrow_file_is_never_read(base, tmp_path):
    db, victim = _setup(base, tmp_path)
    with graphdb.connect(db, read_only=True) as con:
        file = db / "graphs" / con.catalog.get("g").graph_id / "vertices.arrow"
    copy = victim / "vertices.arrow"
    sparse_copy(file, copy)  # the same bytes: its checksum would pass
    file.unlink()
    file.symlink_to(copy)
    with graphdb.connect(db) as con:
        with pytest.raises(graphdb.CorruptDatabaseError, match="symbolic link"):
            con.execute("SELECT * FROM g.vertices").fetchall()
        assert con.execute("SELECT count(*) FROM w.edges").fetchall() == [(1,)]


def test_a_link_planted_while_open_is_refused_where_it_is_met(base, tmp_path):
    db, victim = _setup(base, tmp_path)
    with graphdb.connect(db) as con:
        con.execute("CREATE GRAPH big")
        con.execute("INSERT INTO big.edges SELECT i, i + 1 FROM range(20000) t(i)")
        (db / "meta.lmdb.compact").symlink_to(victim / "nothing")
        con.execute("DROP GRAPH big")  # its automatic compaction is skipped, no error
        with pytest.raises(graphdb.CorruptDatabaseError, match="meta.lmdb.compact"):
            con.execute("VACUUM")
        (db / "writer.lock").unlink()
        (db / "writer.lock").symlink_to(victim / "lock")
        with pytest.raises(graphdb.CorruptDatabaseError, match="writer.lock"):
            con.execute("CREATE GRAPH other")
    assert sorted(p.name for p in victim.iterdir()) == ["precious.txt"]
