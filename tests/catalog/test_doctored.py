"""Damaged and doctored databases: a corpus of edits, each refused or raising
CorruptDatabaseError, never a wrong answer, a crash or a deletion.

Every case edits a fresh copy of one database (two graphs: ``g`` directed, weighted, integer ids,
an edge property; ``s`` undirected with string ids): catalog JSON (with and without
recomputing its seal, as someone who knows the format would), array records and blocks
(re-sealed with valid checksums, so only the invariants can catch them), the directory layout,
and the Arrow files. Then every query either fails with CorruptDatabaseError or returns exactly
what the intact database returns, and at least one fails.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import lmdb
import numpy as np
import pytest

import graphdb
from graphdb.catalog.records import canonical
from graphdb.storage.blocks import block_key, seal, unpack_block
from graphdb.storage.checksum import checksum, default_algorithm
from tests._copies import copy_database

QUERIES = {
    "g": [
        "SELECT * FROM bfs(g, 1) ORDER BY vertex",
        "SELECT * FROM wcc(g) ORDER BY vertex",
        "SELECT vertex, round(rank, 9) FROM pagerank(g) ORDER BY vertex",
        "SELECT * FROM sssp(g, 1) ORDER BY vertex",
        "SELECT count(*), sum(weight), min(label) FROM g.edges",
        "SELECT * FROM g.vertices ORDER BY id",
        "SELECT * FROM GRAPH_TABLE (g MATCH (a)-[e]->(b) WHERE a.id = 1 "
        "COLUMNS (b.id AS x, e.label AS l)) ORDER BY x, l",
        "SELECT * FROM neighbors(g, 3, 'in') ORDER BY neighbor",
    ],
    "s": [
        "SELECT * FROM bfs(s, 'v1') ORDER BY vertex",
        "SELECT * FROM wcc(s) ORDER BY vertex",
        "SELECT * FROM s.vertices ORDER BY id",
        "SELECT count(*) FROM s.edges",
    ],
}


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    # A small map: the data file is as long as the map (LMDB's writemap), and every case copies it
    saved = os.environ.get("GRAPHDB_INITIAL_MAP_SIZE")
    os.environ["GRAPHDB_INITIAL_MAP_SIZE"] = str(2 << 20)
    yield _build(tmp_path_factory.mktemp("doctored"))
    if saved is None:
        del os.environ["GRAPHDB_INITIAL_MAP_SIZE"]
    else:
        os.environ["GRAPHDB_INITIAL_MAP_SIZE"] = saved


def _build(root: Path):
    rng = np.random.default_rng(7)
    n, m = 60, 400
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    with open(root / "g.csv", "w") as f:
        f.write("src,dst,weight,label\n")
        for a, b in zip(src.tolist(), dst.tolist()):
            f.write(f"{a},{b},{1 + (a * 7 + b) % 5},e{a % 3}\n")
    with open(root / "s.csv", "w") as f:
        f.write("src,dst\n")
        for a, b in zip(src[:200].tolist(), dst[:200].tolist()):
            f.write(f"v{a},v{b}\n")
    db = root / "db"
    with graphdb.connect(db, page_size=4096) as con:
        con.ingest("g", root / "g.csv")
        con.ingest("s", root / "s.csv", undirected=True)
        answers = {q: con.execute(q).fetchall() for qs in QUERIES.values() for q in qs}
    return db, answers


# -- editing a copy, below graphdb ----------------------------------------------------------------
class Raw:
    """The copy's LMDB environment opened directly (what a hex editor or a script would do)."""

    def __init__(self, db: Path):
        size = (db / "meta.lmdb" / "data.mdb").stat().st_size
        self.env = lmdb.open(str(db / "meta.lmdb"), max_dbs=8, map_size=max(size, 64 << 20))
        self.dbs = {n: self.env.open_db(n.encode()) for n in ("catalog", "blocks", "meta")}

    def get(self, db: str, key: bytes) -> bytes:
        with self.env.begin(db=self.dbs[db]) as txn:
            return bytes(txn.get(key))

    def put(self, db: str, key: bytes, value) -> None:
        with self.env.begin(write=True, db=self.dbs[db]) as txn:
            txn.put(key, bytes(value))

    def delete(self, db: str, key: bytes) -> None:
        with self.env.begin(write=True, db=self.dbs[db]) as txn:
            txn.delete(key)

    def close(self):
        self.env.close()


def entry(db: Path, name: str) -> dict:
    raw = Raw(db)
    try:
        return json.loads(raw.get("catalog", name.encode()))
    finally:
        raw.close()


def edit_entry(db: Path, name: str, change, reseal: bool = True, text=None) -> None:
    raw = Raw(db)
    data = json.loads(raw.get("catalog", name.encode()))
    change(data)
    if reseal:
        data.pop("seal", None)
        algorithm = default_algorithm()
        data["seal"] = [algorithm, checksum(canonical(data), algorithm)]
    raw.put("catalog", name.encode(), text if text is not None else json.dumps(data).encode())
    raw.close()


def edit_block(db: Path, name: str, array: str, n: int, change, dtype, reseal=True) -> None:
    gid = entry(db, name)["graph_id"]
    raw = Raw(db)
    key = block_key(gid, array, n)
    value = bytearray(raw.get("blocks", key))
    if reseal:
        values = np.frombuffer(bytes(unpack_block(bytes(value), "edit")), dtype=dtype).copy()
        change(values)
        value = seal(values.view(np.uint8))
    else:
        change(value)
    raw.put("blocks", key, value)
    raw.close()


def edit_record(db: Path, name: str, array: str, change, reseal=True) -> None:
    gid = entry(db, name)["graph_id"]
    raw = Raw(db)
    key = f"{gid}/{array}/meta".encode()
    text = bytes(unpack_block(raw.get("blocks", key), "edit")).decode()
    new = change(text).encode()
    raw.put("blocks", key, seal(np.frombuffer(new, np.uint8)) if reseal else new)
    raw.close()


def flip_bits(path: Path, count: int, seed: int) -> None:
    data = bytearray(path.read_bytes())
    rng = np.random.default_rng(seed)
    for at in rng.integers(0, len(data), count):
        data[int(at)] ^= 1 << int(rng.integers(0, 8))
    path.write_bytes(bytes(data))


def arrow(db: Path, name: str, file: str) -> Path:
    return db / "graphs" / entry(db, name)["graph_id"] / file


def _set(key, value):
    return lambda d: d.__setitem__(key, value)


V = 60  # vertices of g (ids 0..59 all occur with this seed? the entry says; edits use it)

CASES = {
    # catalog entries
    "graph id escapes (resealed)": lambda db: edit_entry(db, "g", _set("graph_id", "../../victim")),
    "graph id absolute (resealed)": lambda db: edit_entry(
        db, "g", _set("graph_id", str(db.parent / "victim"))),
    "graph id edited, seal kept": lambda db: edit_entry(
        db, "g", _set("graph_id", "0" * 32), reseal=False),
    "directed flipped": lambda db: edit_entry(db, "g", _set("directed", False)),
    "undirected flipped": lambda db: edit_entry(db, "s", _set("directed", True)),
    "weighted flipped": lambda db: edit_entry(db, "g", _set("weighted", False)),
    "num_vertices lies": lambda db: edit_entry(
        db, "g", lambda d: d.__setitem__("num_vertices", d["num_vertices"] + 1)),
    "num_edges lies": lambda db: edit_entry(
        db, "g", lambda d: d.__setitem__("num_edges", d["num_edges"] - 1)),
    "id type flipped": lambda db: edit_entry(db, "s", _set("id_type", "int64")),
    "file checksum edited": lambda db: edit_entry(
        db, "g", lambda d: d["files"]["vertices.arrow"].__setitem__("checksum", 12345)),
    "file record removed": lambda db: edit_entry(
        db, "g", lambda d: d["files"].pop("edges.arrow")),
    "seal removed": lambda db: edit_entry(db, "g", lambda d: d.pop("seal"), reseal=False),
    "not JSON": lambda db: edit_entry(db, "g", lambda d: None, text=b"{graph"),
    "name differs from key": lambda db: edit_entry(db, "g", _set("name", "other")),
    "negative count": lambda db: edit_entry(db, "g", _set("num_edges", -5)),
    # blocks and array records, re-sealed with valid checksums
    "block bytes flipped": lambda db: edit_block(
        db, "g", "out_targets", 0, lambda v: v.__setitem__(9, v[9] ^ 0x10), None, reseal=False),
    "target out of range": lambda db: edit_block(
        db, "g", "out_targets", 0, lambda v: v.__setitem__(3, V + 1000), np.int32),
    "target negative": lambda db: edit_block(
        db, "g", "in_targets", 0, lambda v: v.__setitem__(0, -1), np.int32),
    "offsets decrease": lambda db: edit_block(
        db, "g", "out_offsets", 0, lambda v: v.__setitem__(5, v[5] + 50), np.int64),
    "last offset lies": lambda db: edit_block(
        db, "g", "out_offsets", 0, lambda v: v.__setitem__(len(v) - 1, v[-1] - 1), np.int64),
    "weights block flipped": lambda db: edit_block(
        db, "g", "out_weights", 0, lambda v: v.__setitem__(20, v[20] ^ 1), None, reseal=False),
    "record dtype flipped (seal kept)": lambda db: edit_record(
        db, "g", "out_targets", lambda t: t.replace("<i4", "<i8"), reseal=False),
    "record dtype flipped (resealed)": lambda db: edit_record(
        db, "g", "out_targets", lambda t: t.replace("<i4", "<u4")),
    "record length lies": lambda db: edit_record(
        db, "g", "out_targets", lambda t: ":".join([t.split(":")[0], "10", t.split(":")[2]])),
    "record names an object dtype": lambda db: edit_record(
        db, "g", "in_offsets", lambda t: "|O:" + ":".join(t.split(":")[1:])),
    "block missing": lambda db: _delete_block(db, "g", "out_targets", 0),
    # Arrow files
    "vertices.arrow: 10 bit flips": lambda db: flip_bits(arrow(db, "g", "vertices.arrow"), 10, 1),
    "vertices.arrow truncated": lambda db: _truncate(arrow(db, "g", "vertices.arrow")),
    "vertices.arrow deleted": lambda db: arrow(db, "g", "vertices.arrow").unlink(),
    "edges.arrow: one bit": lambda db: flip_bits(arrow(db, "g", "edges.arrow"), 1, 2),
    "string ids: one byte": lambda db: flip_bits(arrow(db, "s", "vertices.arrow"), 1, 3),
    "an unrecorded edges.arrow": lambda db: shutil.copy(
        arrow(db, "g", "edges.arrow"), arrow(db, "s", "vertices.arrow").parent / "edges.arrow"),
    # layout
    "graphs/ is a link elsewhere": lambda db: _relink(db / "graphs"),
    "a graph directory is a link": lambda db: _relink(arrow(db, "g", "vertices.arrow").parent),
}


#: Edits that make the database refuse to open at all (a link at one of its fixed names).
REFUSED_AT_OPEN = {"graphs/ is a link elsewhere"}


def _delete_block(db, name, array, n):
    key = block_key(entry(db, name)["graph_id"], array, n)
    raw = Raw(db)
    raw.delete("blocks", key)
    raw.close()


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _relink(path: Path) -> None:
    """Move ``path`` out of the database (into ``work/elsewhere``) and leave a symbolic link to
    it in its place."""
    work = next(p for p in path.parents if p.name == "work")
    target = work / "elsewhere" / path.name
    copy_database(path, target)
    shutil.rmtree(path)
    path.symlink_to(target)


def copy_with_victim(base_db: Path, tmp_path: Path) -> tuple[Path, Path]:
    db = tmp_path / "work" / "db"
    copy_database(base_db, db, symlinks=True)
    victim = tmp_path / "work" / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me")
    return db, victim


@pytest.mark.parametrize("case", list(CASES))
def test_every_edit_is_caught_never_answered_wrongly(base, tmp_path, case):
    base_db, answers = base
    db, victim = copy_with_victim(base_db, tmp_path)
    CASES[case](db)
    outside = sorted(str(p) for p in (tmp_path / "work").rglob("*")
                     if db not in p.parents and p != db)
    caught = []
    if case in REFUSED_AT_OPEN:  # the whole database is refused, naming the link
        with pytest.raises(graphdb.CorruptDatabaseError, match="symbolic link"):
            graphdb.connect(db)
        assert (victim / "precious.txt").read_text() == "keep me"
        return
    with graphdb.connect(db) as con:
        for queries in QUERIES.values():
            for query in queries:
                try:
                    rows = con.execute(query).fetchall()
                except graphdb.CorruptDatabaseError as exc:
                    caught.append(str(exc))
                    assert "corrupt database" in str(exc)
                    continue
                assert rows == answers[query], f"{case}: wrong answer to {query}"
    assert caught, f"{case}: no query noticed"
    assert all("graph '" in c or "graphs/" in c for c in caught), caught
    with graphdb.connect(db) as con:  # dropping a damaged graph removes nothing outside
        for name in ("g", "s"):
            try:
                con.execute(f"DROP GRAPH {name}")
            except graphdb.CorruptDatabaseError:
                pass
    assert (victim / "precious.txt").read_text() == "keep me"
    assert sorted(str(p) for p in (tmp_path / "work").rglob("*")
                  if db not in p.parents and p != db) == outside  # nothing outside removed


@pytest.mark.parametrize("damage", ["emptied", "deleted", "halved"])
def test_a_missing_or_cut_data_file_is_refused_not_made_new(base, tmp_path, damage):
    base_db, _answers = base
    db, _victim = copy_with_victim(base_db, tmp_path)
    data = db / "meta.lmdb" / "data.mdb"
    graphs = sorted(p.name for p in (db / "graphs").iterdir())
    if damage == "emptied":
        data.write_bytes(b"")
    elif damage == "deleted":
        data.unlink()
    else:  # half of what the last commit uses (the file is longer: it is the map's length)
        env = lmdb.open(str(data.parent), readonly=True, lock=False)
        used = (env.info()["last_pgno"] + 1) * env.stat()["psize"]
        env.close()
        data.write_bytes(data.read_bytes()[: used // 2])
    for attempt in range(2):  # also the second time: nothing was created or cleaned up
        with pytest.raises(graphdb.CorruptDatabaseError, match="data.mdb"):
            graphdb.connect(db, read_only=bool(attempt))
    assert sorted(p.name for p in (db / "graphs").iterdir()) == graphs


def test_a_database_without_its_marker_is_not_taken_for_an_empty_one(base, tmp_path):
    base_db, _answers = base
    db, _victim = copy_with_victim(base_db, tmp_path)
    (db / "graphdb.db").unlink()
    graphs = sorted(p.name for p in (db / "graphs").iterdir())
    with pytest.raises(graphdb.OperationalError, match="not a graphdb database"):
        graphdb.connect(db)
    assert sorted(p.name for p in (db / "graphs").iterdir()) == graphs


def test_a_doctored_id_then_drop_deletes_nothing_and_frees_the_key(base, tmp_path):
    base_db, answers = base
    db, victim = copy_with_victim(base_db, tmp_path)
    real = entry(db, "g")["graph_id"]
    edit_entry(db, "g", _set("graph_id", "../../victim"))
    with graphdb.connect(db) as con:
        with pytest.raises(graphdb.CorruptDatabaseError, match="not a generated id"):
            con.execute("SELECT * FROM bfs(g, 1)")
        con.execute("DROP GRAPH g")
        assert con.graphs() == ["s"]
        assert con.execute(QUERIES["s"][0]).fetchall() == answers[QUERIES["s"][0]]
    assert (victim / "precious.txt").read_text() == "keep me"
    assert (db / "graphs" / real).is_dir()  # nothing names it now: never guessed at
