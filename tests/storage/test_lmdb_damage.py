"""Damage to LMDB's own pages: never a crash, never a database that reads as smaller.

LMDB has no page checksums and follows what its pages say. The audit found two zeroed bytes in
a catalog leaf making ``SHOW GRAPHS`` answer ``[]`` (and the next load deleting every graph
directory), and one flipped bit in a leaf's node-offset array segfaulting the first statement.
Here every tree page of a database (meta, branch and leaf pages of every sub-database, the
free-page lists) is damaged in the ways that did that, and more: each copy is then opened and
queried in a child process (a crash is counted, not suffered), and must either be refused
(CorruptDatabaseError naming meta.lmdb/data.mdb) or answer exactly what the intact one does.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import graphdb
from graphdb.storage.errors import CorruptData
from graphdb.storage.lmdb_verify import verify_file
from tests._copies import copy_database

ROOT = Path(__file__).resolve().parents[2]
QUERIES = ["SHOW GRAPHS", "SELECT count(*), sum(src) FROM a.edges",
           "SELECT * FROM bfs(b, 1) ORDER BY vertex", "SELECT count(*) FROM m3.edges"]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    import os

    saved = os.environ.get("GRAPHDB_INITIAL_MAP_SIZE")
    os.environ["GRAPHDB_INITIAL_MAP_SIZE"] = str(2 << 20)
    try:
        db = tmp_path_factory.mktemp("lmdb") / "db"
        with graphdb.connect(db, page_size=4096) as con:
            con.execute("CREATE GRAPH a")
            con.executemany("INSERT INTO a.edges VALUES (?, ?)",
                            [(i, (i * 13) % 300) for i in range(600)])
            import pyarrow as pa

            con.ingest("b", pa.table({"src": list(range(500)),
                                      "dst": [(i * 7 + 3) % 500 for i in range(500)]}))
            for i in range(12):  # a catalog of several pages, with a branch page
                con.execute(f"CREATE GRAPH m{i}")
                con.execute(f"INSERT INTO m{i}.edges VALUES ({i}, {i + 1})")
            answers = [[list(r) for r in con.execute(q).fetchall()] for q in QUERIES]
    finally:
        if saved is None:
            os.environ.pop("GRAPHDB_INITIAL_MAP_SIZE", None)
        else:
            os.environ["GRAPHDB_INITIAL_MAP_SIZE"] = saved
    return db, json.loads(json.dumps(answers, default=str))


WORKER = """
    import json, sys
    sys.path.insert(0, {root!r})
    import graphdb
    for line in sys.stdin:
        out = {{}}
        try:
            with graphdb.connect(line.strip()) as con:
                out["answers"] = [[list(r) for r in con.execute(q).fetchall()] for q in {queries!r}]
        except graphdb.CorruptDatabaseError as exc:
            out["refused"] = str(exc)
        except Exception as exc:
            out["raw"] = type(exc).__name__ + ": " + str(exc)
        print(json.dumps(out, default=str), flush=True)
"""


def _outcomes(copies: list[Path]) -> list[dict]:
    """Each copy opened and queried in a worker process (restarted after a crash)."""
    results, todo = [], list(copies)
    while todo:
        worker = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(WORKER.format(root=str(ROOT),
                                                                 queries=QUERIES))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        worker.stdin.write("".join(f"{c}\n" for c in todo))
        worker.stdin.close()
        for line in worker.stdout:
            results.append(json.loads(line))
            todo.pop(0)
        worker.wait()
        if todo:  # it died on todo[0]
            results.append({"crash": worker.returncode})
            todo.pop(0)
    return results


def _damaged_copies(db: Path, work: Path, damages) -> list[tuple[str, Path]]:
    copies = []
    for i, (what, page, offset, data) in enumerate(damages):
        copy = work / f"c{i}"
        copy_database(db, copy)
        psize = verify_file(db / "meta.lmdb" / "data.mdb").page_size
        with open(copy / "meta.lmdb" / "data.mdb", "r+b") as f:
            f.seek(page * psize + offset)
            f.write(data)
        copies.append((what, copy))
    return copies


def _tree_pages(db: Path) -> dict[str, list[int]]:
    return verify_file(db / "meta.lmdb" / "data.mdb", full=True).tree_pages


def _check(base, work: Path, damages) -> None:
    db, answers = base
    copies = _damaged_copies(db, work, damages)
    graphs = sorted(p.name for p in (db / "graphs").iterdir())
    for (what, copy), outcome in zip(copies, _outcomes([c for _w, c in copies])):
        assert "crash" not in outcome, f"{what}: the process died ({outcome})"
        assert "raw" not in outcome, f"{what}: {outcome['raw']}"
        if "refused" in outcome:
            assert "meta.lmdb/data.mdb" in outcome["refused"], outcome
        else:
            assert outcome["answers"] == answers, f"{what}: a wrong answer"
        assert sorted(p.name for p in (copy / "graphs").iterdir()) == graphs, what


def test_zeroed_bytes_in_a_catalog_page_never_read_as_an_empty_catalog(base, tmp_path):
    """The audit's case: two zeroed bytes in a catalog leaf (its free-space bounds) made the
    catalog read as empty, and the next load removed every graph directory."""
    pages = _tree_pages(base[0])["catalog"]
    damages = [(f"catalog page {p}, bytes {o}..{o + 1}", p, o, b"\0\0")
               for p in pages for o in (12, 14, 16, 18)]
    _check(base, tmp_path, damages)
    db = base[0]
    copy = tmp_path / "load"
    copy_database(db, copy)
    with open(copy / "meta.lmdb" / "data.mdb", "r+b") as f:
        f.seek(pages[-1] * 4096 + 12)
        f.write(b"\0\0")
    with pytest.raises(graphdb.CorruptDatabaseError):
        graphdb.connect(copy)
    assert sorted(p.name for p in (copy / "graphs").iterdir()) == \
        sorted(p.name for p in (db / "graphs").iterdir())


def test_a_flipped_bit_in_a_node_offset_array_never_crashes(base, tmp_path):
    """The audit's case: a flipped bit in a leaf's node-offset array segfaulted."""
    rng = random.Random(5)
    damages = []
    for tree, pages in _tree_pages(base[0]).items():
        for page in pages:
            for _ in range(3):
                offset = 16 + rng.randrange(8)  # the first node offsets
                bit = 1 << rng.randrange(8)
                damages.append((f"{tree} page {page}, byte {offset} ^ {bit}", page, offset,
                                None if False else bytes([bit])))
    db = base[0]
    psize = verify_file(db / "meta.lmdb" / "data.mdb").page_size
    raw = (db / "meta.lmdb" / "data.mdb").read_bytes()[: 64 * psize]
    flipped = [(w, p, o, bytes([raw[p * psize + o] ^ d[0]])) for w, p, o, d in damages]
    _check(base, tmp_path, flipped)


@pytest.mark.slow
def test_random_damage_to_every_tree_page(base, tmp_path):
    rng = random.Random(11)
    db = base[0]
    psize = verify_file(db / "meta.lmdb" / "data.mdb").page_size
    raw = (db / "meta.lmdb" / "data.mdb").read_bytes()
    damages = []
    for pages in _tree_pages(db).values():
        for page in pages + [0, 1]:
            for _ in range(6):
                kind = rng.choice(["bit", "zero2", "zero16"])
                offset = rng.randrange(psize - 16)
                if kind == "bit":
                    data = bytes([raw[page * psize + offset] ^ (1 << rng.randrange(8))])
                else:
                    data = b"\0" * (2 if kind == "zero2" else 16)
                damages.append((f"{kind} at page {page} + {offset}", page, offset, data))
    _check(base, tmp_path, damages)


def test_the_check_reads_no_page_outside_the_file(tmp_path):
    """A file cut short, a meta page pointing past the end: refused by reading our own bytes."""
    db = tmp_path / "db"
    with graphdb.connect(db) as con:
        con.execute("CREATE GRAPH g")
    data = db / "meta.lmdb" / "data.mdb"
    report = verify_file(data)
    with open(data, "r+b") as f:
        f.seek(136)  # meta page 0's last page (after its header and the fields before it)
        f.write((10**9).to_bytes(8, "little"))
        f.seek(report.page_size + 136)
        f.write((10**9).to_bytes(8, "little"))
    with pytest.raises(CorruptData, match="last page"):
        verify_file(data)
    with pytest.raises(graphdb.CorruptDatabaseError, match="data.mdb"):
        graphdb.connect(db)


@pytest.mark.parametrize("change", ["two back", "a high bit"])
def test_a_damaged_transaction_id_never_opens_an_older_snapshot(tmp_path, change):
    """LMDB opens the meta page with the higher transaction id: one whose id lost a bit would
    silently open the previous commit (a database one write older)."""
    db = tmp_path / "db"
    with graphdb.connect(db) as con:
        con.execute("CREATE GRAPH g")
        for i in range(4):
            con.execute(f"INSERT INTO g.edges VALUES ({i}, {i + 1})")
    data = db / "meta.lmdb" / "data.mdb"
    report = verify_file(data)
    txnid = report.txnid
    latest = txnid & 1  # commit t writes meta page t & 1
    new = txnid - 2 if change == "two back" else txnid ^ (1 << 40)
    with open(data, "r+b") as f:
        f.seek(latest * report.page_size + 144)  # the page header, then the meta's fields
        assert int.from_bytes(f.read(8), "little") == txnid
        f.seek(latest * report.page_size + 144)
        f.write(new.to_bytes(8, "little"))
    with pytest.raises(CorruptData, match="transaction"):
        verify_file(data)
    with pytest.raises(graphdb.CorruptDatabaseError, match="data.mdb"):
        graphdb.connect(db)
