"""The LMDB map growing under a big write (here and in another process), and the executor's
piecewise reads (vertex ranges, pages) through the buffer pool."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

import graphdb
from graphdb.executor.graph import StoredGraph
from graphdb.generators import rmat
from graphdb.storage import Environment, decode_page, put_array

ROOT = Path(__file__).resolve().parents[2]


def test_a_write_larger_than_the_map_grows_it_and_another_process_adopts_it(tmp_path,
                                                                             monkeypatch):
    monkeypatch.setenv("GRAPHDB_INITIAL_MAP_SIZE", str(1 << 20))
    reader = Environment(tmp_path / "db")  # opened before the map grows
    first = reader.stat()["map_size"]
    code = f"""
import sys; sys.path.insert(0, {str(ROOT)!r})
import numpy as np
from graphdb.storage import Environment, put_array
env = Environment({str(tmp_path / 'db')!r})
values = np.arange(1_000_000, dtype=np.int64)  # 8 MB into a 1 MB map
env.write(lambda txn: put_array(txn, env.db("blocks"), "g", "x", values, 1 << 16))
print(env.stat()["map_size"])
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env={**__import__("os").environ})
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) >= 8 << 20 > first
    from graphdb.storage.blocks import get_range

    with reader.read_txn() as txn:  # the other process grew the file: adopted, not an error
        np.testing.assert_array_equal(get_range(txn, reader.db("blocks"), "g", "x", 10, 20),
                                      np.arange(10, 20))
    values = np.arange(2_000_000, dtype=np.int64)
    reader.write(lambda txn: put_array(txn, reader.db("blocks"), "g", "y", values, 1 << 16))
    reader.close()


def write_edges(path, src, dst):
    with open(path, "w") as f:
        f.write("src,dst\n" + "\n".join(f"{a},{b}" for a, b in zip(src.tolist(), dst.tolist())))
    return path


def test_stored_graph_ranges_and_pages_match_the_whole_csr(tmp_path):
    src, dst = rmat(10, seed=8)
    edges = write_edges(tmp_path / "e.csv", src, dst)
    with graphdb.connect(tmp_path / "db", page_size=4096, buffer_pool_size=64 * 4096) as con:
        con.ingest("g", edges, pages=True)
        graph = con.session.runner.graph(con.catalog.get("g"))
        assert isinstance(graph, StoredGraph)
        for direction, whole in (("out", graph.out_csr), ("in", graph.in_csr)):
            for a, b in [(0, 1), (3, 300), (500, graph.num_vertices)]:
                part = graph.edge_range(a, b, direction)
                lo, hi = whole.offsets[a], whole.offsets[b]
                np.testing.assert_array_equal(part.offsets, whole.offsets[a : b + 1] - lo)
                np.testing.assert_array_equal(part.targets, whole.targets[lo:hi])
            table = graph.page_table(direction)
            sources, targets = [], []
            for key, view in graph.pages(direction):
                page = decode_page(view)
                assert page.header.page_id == key.n
                sources.append(page.sources())
                targets.append(table[page.rid_pid] + page.rid_slot)
            np.testing.assert_array_equal(np.concatenate(sources), whole.sources())
            np.testing.assert_array_equal(np.concatenate(targets), whole.targets)
            # one BFS-like step from pages alone: stream only the frontier's pages (GTS)
            frontier = np.array([0, 5, 77, graph.num_vertices - 1])
            step = set()
            for _key, view in graph.pages(direction, graph.pages_of(frontier, direction)):
                page = decode_page(view)
                mine = np.isin(page.sources(), frontier)
                step |= set((table[page.rid_pid] + page.rid_slot)[mine].tolist())
            expected = set(np.concatenate([whole.targets[whole.offsets[v]:whole.offsets[v + 1]]
                                           for v in frontier]).tolist())
            assert step == expected


def test_a_topology_larger_than_the_map_grows_it_once_before_writing(tmp_path, monkeypatch):
    from graphdb.storage import csr_from_edges, write_topology

    monkeypatch.setenv("GRAPHDB_INITIAL_MAP_SIZE", str(1 << 20))
    env = Environment(tmp_path / "db", page_size=65536)
    src, dst = rmat(16, seed=1)
    off, tgt, _ = csr_from_edges(src, dst, 1 << 16)
    calls = []

    def commit(txn):
        calls.append(env.map_headroom())
        return write_topology(env, txn, "g", {"out_offsets": off, "out_targets": tgt},
                              pages=True)

    stats = env.write(commit)
    assert len(calls) == 2  # refused up front once, then written in one go
    assert stats["page_bytes"] + stats["block_bytes"] <= calls[1]
    env.close()
