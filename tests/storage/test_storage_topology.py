"""Both stored forms of a graph written in one transaction, and deleted together."""

from __future__ import annotations

import numpy as np
import pytest

from graphdb.storage import (
    Environment,
    StorageError,
    csr_from_edges,
    decode_page,
    delete_topology,
    topology_info,
    write_topology,
)
from graphdb.storage.blocks import get_array
from graphdb.storage.topology import read_page


@pytest.fixture
def env(tmp_path):
    e = Environment(tmp_path / "db", page_size=1024)
    yield e
    e.close()


def arrays_for(src, dst, n, weights=None):
    off, tgt, w = csr_from_edges(src, dst, n, weights)
    out = {"out_offsets": off, "out_targets": tgt}
    if w is not None:
        out["out_weights"] = w
    return out


def test_csr_from_edges_is_a_stable_sort_by_key():
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 100, 5000), rng.integers(0, 100, 5000)
    w = rng.random(5000)
    off, tgt, ww = csr_from_edges(src, dst, 120, w)
    order = np.argsort(src, kind="stable")
    np.testing.assert_array_equal(tgt, dst[order])
    np.testing.assert_array_equal(ww, w[order])
    np.testing.assert_array_equal(np.diff(off), np.bincount(src, minlength=120))
    assert off.dtype == np.int64 and tgt.dtype == np.int32


def test_pages_and_blocks_describe_the_same_graph(env):
    rng = np.random.default_rng(7)
    n = 300
    src = np.concatenate([rng.integers(0, n, 4000), np.full(500, 17)])  # vertex 17 is a hub
    dst = rng.integers(0, n, len(src))
    w = rng.random(len(src))
    arrays = arrays_for(src, dst, n, w)
    stats = env.write(lambda txn: write_topology(env, txn, "g1", arrays, pages=True))
    assert stats["pages"] > 1 and stats["large_pages"] >= 1 and stats["page_size"] == 1024
    with env.read_txn() as txn:
        first = get_array(txn, env.db("blocks"), "g1", "out_page_first_vertex")
        info = topology_info(env, txn, "g1", "out")
        assert info["pages"] == len(first) == stats["pages"]
        seen_src, seen_dst, seen_w = [], [], []
        for pid in range(info["pages"]):
            page = decode_page(bytes(read_page(env, txn, "g1", "out", pid)))
            seen_src.append(page.sources())
            seen_dst.append(first[page.rid_pid] + page.rid_slot)
            seen_w.append(page.weights)
        offsets = get_array(txn, env.db("blocks"), "g1", "out_offsets")
    order = np.argsort(src, kind="stable")
    np.testing.assert_array_equal(np.concatenate(seen_src), src[order])
    np.testing.assert_array_equal(np.concatenate(seen_dst), dst[order])
    np.testing.assert_array_equal(np.concatenate(seen_w), w[order])
    np.testing.assert_array_equal(offsets, arrays["out_offsets"])


def count_keys(env, graph_id):
    total = 0
    with env.read_txn() as txn:
        for name in ("blocks", "pages", "meta"):
            for key, _ in txn.cursor(db=env.db(name)):
                text = bytes(key).decode()
                total += text.startswith((f"{graph_id}/", f"topology/{graph_id}/"))
    return total


def test_delete_topology_removes_blocks_pages_and_metadata_of_one_graph_only(env):
    rng = np.random.default_rng(1)
    for gid in ("a", "b"):
        arrays = arrays_for(rng.integers(0, 50, 800), rng.integers(0, 50, 800), 50)
        env.write(lambda txn, gid=gid, arrays=arrays: write_topology(env, txn, gid, arrays,
                                                                     pages=True))
    assert count_keys(env, "a") > 5
    env.write(lambda txn: delete_topology(env, txn, "a"))
    assert count_keys(env, "a") == 0 and count_keys(env, "b") > 5
    with env.read_txn() as txn, pytest.raises(StorageError):
        topology_info(env, txn, "a", "out")


def test_page_size_is_chosen_once_per_database(tmp_path):
    Environment(tmp_path / "db", page_size=8192).close()
    again = Environment(tmp_path / "db")
    assert again.layout.page_size == 8192
    again.close()
    with pytest.raises(StorageError, match="page_size 8192"):
        Environment(tmp_path / "db", page_size=4096)


def test_memmapped_csr_arrays_give_the_same_stored_bytes(env, tmp_path):
    rng = np.random.default_rng(9)
    arrays = arrays_for(rng.integers(0, 200, 3000), rng.integers(0, 200, 3000), 200,
                        rng.random(3000))
    mapped = {}
    for name, values in arrays.items():
        mm = np.memmap(tmp_path / f"{name}.bin", dtype=values.dtype, mode="w+",
                       shape=values.shape)
        mm[:] = values
        mm.flush()
        mapped[name] = np.memmap(tmp_path / f"{name}.bin", dtype=values.dtype, mode="r",
                                 shape=values.shape)
    env.write(lambda txn: write_topology(env, txn, "mem", arrays, pages=True))
    env.write(lambda txn: write_topology(env, txn, "map", mapped, pages=True))
    with env.read_txn() as txn:
        for name in ("blocks", "pages"):
            def stored(gid):
                return [(bytes(k)[len(gid):], bytes(v)) for k, v in txn.cursor(db=env.db(name))
                        if bytes(k).startswith(gid.encode())]
            assert stored("mem/") == stored("map/") != []


def test_record_id_widths_are_chosen_per_database(tmp_path):
    from graphdb.storage import PageLayout

    layout = PageLayout(page_size=2048, pid_bytes=4, slot_bytes=2)
    env = Environment(tmp_path / "db", layout=layout)
    arrays = arrays_for(np.arange(500) % 37, np.arange(500) % 41, 50)
    env.write(lambda txn: write_topology(env, txn, "g", arrays, pages=True))
    env.close()
    env = Environment(tmp_path / "db")
    assert env.layout == layout
    with env.read_txn() as txn:
        info = topology_info(env, txn, "g", "out")
        header = decode_page(bytes(read_page(env, txn, "g", "out", 0))).header
    assert (info["pid_bytes"], info["slot_bytes"]) == (4, 2) == (header.pid_bytes,
                                                               header.slot_bytes)
    env.close()
    with pytest.raises(StorageError, match="record ids 4\\+2"):
        Environment(tmp_path / "db", layout=PageLayout(page_size=2048))


def _directed_arrays(seed=11, n=400, m=6000):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.random(m)
    arrays = {f"out_{k}": v for k, v in zip(("offsets", "targets", "weights"),
                                            csr_from_edges(src, dst, n, w))}
    arrays.update({f"in_{k}": v for k, v in zip(("offsets", "targets", "weights"),
                                                csr_from_edges(dst, src, n, w))})
    return arrays


def _stored_pages(env, graph_id):
    with env.read_txn() as txn:
        cursor = txn.cursor(db=env.db("pages"))
        prefix = f"{graph_id}/".encode()
        cursor.set_range(prefix)
        return {bytes(k)[len(prefix):]: bytes(v) for k, v in cursor
                if bytes(k).startswith(prefix)}


def test_pages_are_the_same_with_zero_one_or_two_builder_threads(env, monkeypatch):
    import graphdb.storage.topology as topology

    arrays = _directed_arrays()
    stored = []
    for threads in (0, 1, 2):
        monkeypatch.setattr(topology, "PAGE_THREADS", threads)
        gid = f"g{threads}"
        env.write(lambda txn, gid=gid: write_topology(env, txn, gid, arrays, pages=True))
        stored.append(_stored_pages(env, gid))
    assert stored[0] == stored[1] == stored[2] and len(stored[0]) > 10
    for key, page in stored[0].items():
        decode_page(page)  # verifies the checksum
        assert key.startswith((b"out/", b"in/"))


def test_a_failing_page_builder_fails_the_write_and_stops_its_threads(env, monkeypatch):
    import threading

    import graphdb.storage.topology as topology

    def broken(offsets, targets, weights, plan, buffers=0):
        yield 0, np.zeros(plan.layout.page_size, dtype=np.uint8)
        raise RuntimeError("builder broke")

    monkeypatch.setattr(topology, "iter_pages", broken)
    before = threading.active_count()
    with pytest.raises(RuntimeError, match="builder broke"):
        env.write(lambda txn: write_topology(env, txn, "g", _directed_arrays(), pages=True))
    assert threading.active_count() == before
    assert _stored_pages(env, "g") == {}  # the transaction was aborted
