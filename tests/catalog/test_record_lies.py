"""Records of the catalog and the block store that lie, sealed and recorded again: every lie is
refused or harmless.

A checksum catches damage; a record changed by someone who knows the format (or by a bug) and
sealed again, its ledger record updated too, passes every checksum. Hypothesis writes a value
(integers at the edges of 64 bits, floats that are not numbers, strings that climb out of the
directory, other JSON types) into one field of one record: any field of a graph's catalog entry
(its counts, flags, id type, files, delta counters, statistics), a field of an array's record
(dtype, length, block size), the storage layout, the catalog's ledger. Every query of the graph
must then fail with CorruptDatabaseError, or answer exactly what the intact database answers:
never a raw exception, never a wrong answer, never a file outside the database touched.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import lmdb
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphdb
from graphdb.catalog import ledger
from graphdb.catalog.records import canonical as _canonical
from graphdb.storage.blocks import seal, unpack_block
from graphdb.storage.checksum import checksum, default_algorithm
from tests._copies import copy_database

QUERIES = [
    "SELECT count(*), sum(src), sum(dst), sum(weight) FROM g.edges",
    "SELECT * FROM g.edges ORDER BY src, dst",
    "SELECT * FROM g.vertices ORDER BY id",
    "SELECT * FROM bfs(g, 1) ORDER BY vertex",
    "SELECT * FROM sssp(g, 1) ORDER BY vertex",
    "SELECT * FROM wcc(g) ORDER BY vertex",
    "SELECT * FROM neighbors(g, 2, 'in') ORDER BY neighbor",
    "SELECT count(*) FROM GRAPH_TABLE (g MATCH (a)-[e]->(b) COLUMNS (a.id AS a, b.id AS b))",
    "SELECT count(*) FROM h.edges",
]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    saved = os.environ.get("GRAPHDB_INITIAL_MAP_SIZE")
    os.environ["GRAPHDB_INITIAL_MAP_SIZE"] = str(2 << 20)
    try:
        root = tmp_path_factory.mktemp("lies")
        db = root / "db"
        rng = np.random.default_rng(4)
        src, dst = rng.integers(0, 40, 160), rng.integers(0, 40, 160)
        with graphdb.connect(db, page_size=4096) as con:
            con.ingest("g", pa.table({"src": src, "dst": dst,
                                      "weight": (src % 5 + 1).astype(float),
                                      "label": [f"e{i % 3}" for i in range(160)]}))
            con.execute("INSERT INTO g.edges VALUES (41, 1, 2.5, 'new')")  # a delta too
            con.ingest("h", pa.table({"src": [1, 2], "dst": [2, 3]}))
            answers = [con.execute(q).fetchall() for q in QUERIES]
    finally:
        if saved is None:
            os.environ.pop("GRAPHDB_INITIAL_MAP_SIZE", None)
        else:
            os.environ["GRAPHDB_INITIAL_MAP_SIZE"] = saved
    return db, answers


class _Env:
    """What catalog.ledger needs of an environment, over a raw LMDB one."""

    def __init__(self, env, txn):
        self.env, self.txn = env, txn

    def db(self, name: str):
        return self.env.open_db(name.encode(), txn=self.txn)


def _open(db: Path):
    size = (db / "meta.lmdb" / "data.mdb").stat().st_size
    return lmdb.open(str(db / "meta.lmdb"), max_dbs=10, map_size=max(size, 64 << 20))


def _put_entry(db: Path, change) -> None:
    """Change graph g's catalog entry, seal it and record it in the ledger again."""
    env = _open(db)
    try:
        with env.begin(write=True) as txn:
            shim = _Env(env, txn)
            data = json.loads(bytes(txn.get(b"g", db=shim.db("catalog"))))
            change(data)
            data.pop("seal", None)
            algorithm = default_algorithm()
            data["seal"] = [algorithm, checksum(_canonical(data), algorithm)]
            ledger.put_entry(shim, txn, "g", json.dumps(data, sort_keys=True).encode())
    finally:
        env.close()


def _put_sealed(db: Path, sub: str, key: bytes, change) -> None:
    """Change the sealed text record ``key`` of sub-database ``sub``, and seal it again."""
    env = _open(db)
    try:
        with env.begin(write=True) as txn:
            handle = env.open_db(sub.encode(), txn=txn)
            text = bytes(unpack_block(bytes(txn.get(key, db=handle)), "edit")).decode()
            new = change(text).encode()
            txn.put(key, bytes(seal(np.frombuffer(new, np.uint8))), db=handle)
    finally:
        env.close()


def _leaves(data, path=()):
    if isinstance(data, dict):
        for key, value in data.items():
            if key != "seal":
                yield from _leaves(value, path + (key,))
    yield path


def _entry(db: Path) -> dict:
    env = _open(db)
    try:
        with env.begin() as txn:
            return json.loads(bytes(txn.get(b"g", db=env.open_db(b"catalog", txn=txn))))
    finally:
        env.close()


LIES = st.one_of(
    st.sampled_from([0, 1, -1, 2, 3, 2**31 - 1, 2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63,
                     -(2**63), 2**64, 10**30]),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0.5, -0.0, 1e308, float("nan"), float("inf"), float("-inf")]),
    st.sampled_from(["", "x", "../../victim", "/etc", "int64", "string", "int32", "uint64",
                     "double", "edges.arrow", "0" * 32, "g", "a" * 5000]),
    st.sampled_from([None, True, False, [], {}, [1, 2], {"bytes": 1}]),
)


def _run(db: Path) -> list:
    try:
        with graphdb.connect(db) as con:
            out = []
            for q in QUERIES:
                try:
                    out.append(con.execute(q).fetchall())
                except graphdb.CorruptDatabaseError:
                    out.append("corrupt")
            return out
    except graphdb.CorruptDatabaseError:
        return ["corrupt"] * len(QUERIES)


def _check(base, tmp: Path, lie) -> None:
    db, answers = base
    copy = tmp / "copy"
    if copy.exists():
        shutil.rmtree(copy)
    copy_database(db, copy)
    outside = tmp / "victim"
    lie(copy)
    got = _run(copy)
    for query, expected, answer in zip(QUERIES, answers, got):
        if answer != "corrupt":
            assert answer == expected, f"{query}: a wrong answer"
    assert not outside.exists()


SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


@SETTINGS
@given(data=st.data())
def test_a_lie_in_any_field_of_a_catalog_entry(base, tmp_path, data):
    paths = sorted(p for p in _leaves(_entry(base[0])) if p)
    path = data.draw(st.sampled_from(paths), label="field")
    value = data.draw(st.one_of(LIES, st.just("__remove__")), label="lie")

    def change(entry):
        node = entry
        for key in path[:-1]:
            node = node[key]
        if value == "__remove__":
            node.pop(path[-1])
        else:
            node[path[-1]] = value

    _check(base, tmp_path, lambda db: _put_entry(db, change))


ARRAYS = ["out_offsets", "out_targets", "out_weights", "in_offsets", "in_targets",
          "in_weights"]


@SETTINGS
@given(data=st.data())
def test_a_lie_in_an_array_record(base, tmp_path, data):
    array = data.draw(st.sampled_from(ARRAYS), label="array")
    field = data.draw(st.integers(0, 2), label="field")
    value = data.draw(st.one_of(
        st.sampled_from(["<i4", "<i8", "<u4", "<u8", "<f8", "<f4", "|u1", "|O", "<U4", "V8",
                         "", "0", "-1", "1", "2", "3", "4096", "2097152", "9" * 25, "nan",
                         "-9223372036854775808", "18446744073709551616"]),
        st.integers(-(2**64), 2**64).map(str)), label="lie")
    graph_id = _entry(base[0])["graph_id"]

    def change(text):
        parts = text.split(":")
        parts[field] = value
        return ":".join(parts)

    _check(base, tmp_path, lambda db: _put_sealed(db, "blocks",
                                                  f"{graph_id}/{array}/meta".encode(), change))


@SETTINGS
@given(field=st.sampled_from(["page_size", "pid_bytes", "slot_bytes"]), value=LIES)
def test_a_lie_in_the_storage_layout(base, tmp_path, field, value):
    def lie(db):
        env = _open(db)
        try:
            with env.begin(write=True) as txn:
                meta = env.open_db(b"meta", txn=txn)
                layout = json.loads(bytes(txn.get(b"storage/layout", db=meta)))
                layout[field] = value
                txn.put(b"storage/layout", json.dumps(layout).encode(), db=meta)
        finally:
            env.close()

    _check(base, tmp_path, lie)


@SETTINGS
@given(key=st.sampled_from([b"catalog/ledger", b"catalog/ledger/g", b"catalog/ledger/h"]),
       field=st.integers(0, 2), value=LIES.map(str))
def test_a_lie_in_the_ledger(base, tmp_path, key, field, value):
    def change(text):
        parts = text.split(":")
        parts[field] = value
        return ":".join(parts)

    _check(base, tmp_path, lambda db: _put_sealed(db, "meta", key, change))
