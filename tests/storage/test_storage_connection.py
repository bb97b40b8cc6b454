"""The buffer pool as users see it: connect(buffer_pool_size=), SET/RESET, buffer_stats(), and a
query over a graph larger than the pool."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

import graphdb
from graphdb.generators import rmat

PAGE = 4096


def write_edges(path, src, dst):
    with open(path, "w") as f:
        f.write("src,dst\n" + "\n".join(f"{a},{b}" for a, b in zip(src.tolist(), dst.tolist())))
    return path


def test_query_over_a_graph_larger_than_the_pool_is_correct_and_bounded(tmp_path):
    """A whole-graph operator reads its arrays once each, straight into what it keeps (not
    through the frames): the pool stays within its capacity whatever the graph's size."""
    src, dst = rmat(12, seed=9)  # 65k edges: about 600 kB of CSR blocks
    edges = write_edges(tmp_path / "e.csv", src, dst)
    pool = 8 * PAGE
    with graphdb.connect(tmp_path / "db", page_size=PAGE, buffer_pool_size=pool) as con:
        con.ingest("g", edges)
        described = dict(con.execute("DESCRIBE g").fetchall())
        assert int(described["block_bytes"]) > 10 * pool
        source = int(src[0])
        rows = con.execute(f"SELECT * FROM bfs('g', source => {source})").fetchall()
        stats = con.buffer_stats().to_pylist()[0]
    # Independent answer: scipy's unweighted shortest paths over the user's ids.
    ids = np.unique(np.concatenate([src, dst]))
    s, d = np.searchsorted(ids, src), np.searchsorted(ids, dst)
    matrix = sp.csr_array((np.ones(len(s)), (s, d)), shape=(len(ids), len(ids)))
    hops = shortest_path(matrix, unweighted=True, indices=int(np.searchsorted(ids, source)))
    reached = np.isfinite(hops)
    expected = sorted(zip(ids[reached].tolist(), hops[reached].astype(int).tolist()))
    assert sorted(rows) == expected
    assert stats["capacity_bytes"] <= pool and stats["frames_used"] <= pool // PAGE
    assert stats["bytes_read"] >= 4 * len(src)  # at least the out-CSR targets went through it


def test_set_and_reset_buffer_pool_size(tmp_path):
    with graphdb.connect(tmp_path / "db", page_size=PAGE, buffer_pool_size="64KiB") as con:
        assert con.buffer_stats().column("capacity_bytes")[0].as_py() == 64 * 1024
        con.execute("SET buffer_pool_size = '256KiB'")
        assert con.settings.buffer_pool_size == 256 * 1024
        assert con.buffer_stats().column("frames")[0].as_py() == 64
        with pytest.raises(graphdb.InvalidInputError):
            con.execute("SET buffer_pool_size = 'lots'")
        with pytest.raises(graphdb.OperationalError, match="too small"):
            con.execute("SET buffer_pool_size = '1KB'")
        assert con.settings.buffer_pool_size == 256 * 1024  # a failed SET changes nothing


def test_reset_buffer_pool_size(tmp_path):
    with graphdb.connect(tmp_path / "db", page_size=PAGE, buffer_pool_size="64KiB") as con:
        con.execute("RESET buffer_pool_size")
        assert con.settings.buffer_pool_size is None
        assert con.buffer_stats().column("capacity_bytes")[0].as_py() > 64 * 1024
        # The same counters through SQL.
        rows = con.execute("SELECT capacity_bytes FROM buffer_stats()").fetchall()
        assert rows == [(con.buffer_stats().column("capacity_bytes")[0].as_py(),)]


def test_buffer_stats_schema_and_drop_removes_pages(tmp_path):
    src, dst = rmat(8, seed=2)
    edges = write_edges(tmp_path / "e.csv", src, dst)
    with graphdb.connect(tmp_path / "db", page_size=PAGE) as con:
        con.ingest("g", edges)
        con.ingest("g", edges, replace=True, undirected=True)
        con.execute("SELECT * FROM pagerank('g')").fetchall()
        table = con.buffer_stats()
        assert table.column_names[:4] == ["pool", "capacity_bytes", "frame_bytes", "frames"]
        assert table.column("bytes_read")[0].as_py() > 0
        con.catalog.drop("g")
        env = con.catalog.env
        with env.read_txn() as txn:
            for name in ("blocks", "pages"):
                assert list(txn.cursor(db=env.db(name))) == []


def test_a_corrupted_block_fails_the_query_with_corrupt_data(tmp_path):
    src, dst = rmat(8, seed=3)
    edges = write_edges(tmp_path / "e.csv", src, dst)
    with graphdb.connect(tmp_path / "db", page_size=PAGE) as con:
        con.ingest("g", edges)
        entry = con.catalog.get("g")
        env = con.catalog.env
        from graphdb.storage.blocks import block_key

        key = block_key(entry.graph_id, "out_targets", 0)

        def flip(txn):  # a raw write below the block format, as a bad disk would
            raw = bytearray(txn.get(key, db=env.db("blocks")))
            raw[10] ^= 0x40
            txn.put(key, bytes(raw), db=env.db("blocks"))

        env.write(flip)
        with pytest.raises(graphdb.DatabaseError, match="corrupt data.*checksum"):
            con.execute("SELECT * FROM wcc('g')").fetchall()  # reads out_targets


def test_a_refused_pool_size_at_connect_leaves_the_database_openable(tmp_path):
    with pytest.raises(graphdb.OperationalError, match="too small"):
        graphdb.connect(tmp_path / "db", page_size=PAGE, buffer_pool_size=100)
    with graphdb.connect(tmp_path / "db", buffer_pool_size="1MB") as con:
        assert con.graphs() == []
