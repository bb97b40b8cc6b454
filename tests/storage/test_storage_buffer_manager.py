"""The buffer manager: correct bytes, counters, CLOCK eviction, pins, prefetch, corruption."""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest

from graphdb.storage import (
    BufferManager,
    BufferPoolExhausted,
    CorruptData,
    Environment,
    ItemKey,
    csr_from_edges,
    decode_page,
    stats_table,
    write_topology,
)
from graphdb.storage.topology import page_key, read_page

PAGE = 1024


@pytest.fixture
def env(tmp_path):
    e = Environment(tmp_path / "db", page_size=PAGE)
    rng = np.random.default_rng(11)
    n = 400
    src, dst = rng.integers(0, n, 6000), rng.integers(0, n, 6000)
    off, tgt, w = csr_from_edges(src, dst, n, rng.random(6000))
    arrays = {"out_offsets": off, "out_targets": tgt, "out_weights": w}
    e.write(lambda txn: write_topology(e, txn, "g", arrays, pages=True))
    e.arrays = arrays
    yield e
    e.close()


def num_pages(bm):
    return bm.page_count("g", "out")


def test_pinned_pages_are_the_stored_bytes(env):
    bm = BufferManager(env, 8 * PAGE)
    with env.read_txn() as txn:
        stored = [bytes(read_page(env, txn, "g", "out", p)) for p in range(num_pages(bm))]
    for key, view in bm.scan(bm.page_keys("g", "out")):
        assert bytes(view) == stored[key.n]
        assert not view.flags.writeable
    bm.close()


def test_arrays_and_ranges_through_the_pool_equal_the_written_arrays(env):
    bm = BufferManager(env, 4 * PAGE)
    for name, values in env.arrays.items():
        np.testing.assert_array_equal(bm.read_array("g", name), values)
    t = env.arrays["out_targets"]
    for a, b in [(0, 1), (100, 900), (250, 256), (5990, 7000), (3000, 3000)]:
        np.testing.assert_array_equal(bm.read_range("g", "out_targets", a, b), t[a:b])
    bm.close()


def test_counters_hits_misses_and_evictions(env):
    bm = BufferManager(env, 4 * PAGE, prefetch_threads=1)
    key = ItemKey.page("g", "out", 0)
    with bm.pin(key):
        pass
    with bm.pin(key):
        pass
    s = bm.stats()
    assert (s["misses"], s["hits"], s["evictions"]) == (1, 1, 0)
    assert s["bytes_read"] == PAGE
    keys = bm.page_keys("g", "out")
    assert len(keys) > 8
    for key in keys:  # no prefetch: every page is a miss; 4 frames force evictions
        with bm.pin(key):
            pass
    s = bm.stats()
    assert s["evictions"] >= len(keys) - 4 and s["frames_used"] <= 4
    assert s["bytes_read"] == (s["misses"] + s["prefetched"]) * PAGE
    table = stats_table(bm)
    assert table.num_rows == 1 and table.column("evictions")[0].as_py() == s["evictions"]
    bm.close()


def test_clock_gives_recently_used_frames_a_second_chance(env):
    bm = BufferManager(env, 3 * PAGE)
    k = [ItemKey.page("g", "out", i) for i in range(5)]
    for key in k[:3]:
        with bm.pin(key):
            pass
    # The sweep clears every ref bit and evicts frame 0 (page 0); page 1 is used again after
    # that, so the next sweep skips it and evicts page 2 instead.
    with bm.pin(k[3]):
        pass
    with bm.pin(k[1]):
        pass
    with bm.pin(k[4]):
        pass
    resident = {key.n for key in bm._table}
    assert resident == {1, 3, 4}
    bm.close()


def test_pinned_frames_are_never_evicted_and_a_full_pool_says_so(env):
    bm = BufferManager(env, 2 * PAGE)
    k = [ItemKey.page("g", "out", i) for i in range(3)]
    with bm.pin(k[0]) as first, bm.pin(k[1]):
        snapshot = bytes(first)
        with pytest.raises(BufferPoolExhausted), bm.pin(k[2]):
            pass
        assert bytes(first) == snapshot
    with bm.pin(k[2]):  # unpinned: now there is room
        pass
    bm.close()


def test_prefetch_loads_in_the_background(env):
    bm = BufferManager(env, 16 * PAGE)
    keys = bm.page_keys("g", "out", range(6))
    for future in bm.prefetch(keys):
        future.result()
    assert bm.stats()["prefetched"] == 6
    for key in keys:
        with bm.pin(key):
            pass
    s = bm.stats()
    assert s["hits"] == 6 and s["misses"] == 0
    bm.close()


def test_many_threads_pinning_a_small_pool_read_correct_bytes(env):
    bm = BufferManager(env, 6 * PAGE)
    pages = bm.page_keys("g", "out")
    with env.read_txn() as txn:
        stored = {k: bytes(read_page(env, txn, "g", "out", k.n)) for k in pages}
    errors = []

    def worker(seed):
        rng = np.random.default_rng(seed)
        for i in rng.integers(0, len(pages), 200):
            try:
                with bm.pin(pages[i]) as view:
                    if bytes(view) != stored[pages[i]]:
                        errors.append("wrong bytes")
            except BufferPoolExhausted:
                pass  # 4 threads x 1 pin each fit in 6 frames, but tolerate the race
    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors
    bm.close()


def test_a_corrupted_page_is_reported_never_returned(env):
    key = page_key("g", "out", 2)

    def flip(txn):  # a raw write below the page format, as a bad disk would
        raw = bytearray(txn.get(key, db=env.db("pages")))
        raw[PAGE // 2] ^= 0xFF
        txn.put(key, bytes(raw), db=env.db("pages"))

    env.write(flip)
    bm = BufferManager(env, 4 * PAGE)
    with pytest.raises(CorruptData, match="checksum"), bm.pin(ItemKey.page("g", "out", 2)):
        pytest.fail("corrupt bytes were handed out")
    with pytest.raises(CorruptData):  # not cached: asked again, reported again
        with bm.pin(ItemKey.page("g", "out", 2)):
            pass
    with bm.pin(ItemKey.page("g", "out", 1)) as view:  # neighbours are fine
        decode_page(view)
    assert bm.stats()["frames_used"] == 1
    bm.close()


def test_missing_item_is_an_error(env):
    bm = BufferManager(env, 4 * PAGE)
    with pytest.raises(CorruptData, match="missing"):
        with bm.pin(ItemKey.block("g", "out_targets", 999)):
            pass
    bm.close()


def test_forget_and_resize(env):
    bm = BufferManager(env, 8 * PAGE)
    bm.read_range("g", "out_offsets", 0, len(env.arrays["out_offsets"]))  # through frames
    assert bm.stats()["frames_used"] > 0
    bm.forget("g")
    assert bm.stats()["frames_used"] == 0
    bm.resize(3 * PAGE)
    assert bm.stats()["frames"] == 3
    np.testing.assert_array_equal(bm.read_array("g", "out_targets"), env.arrays["out_targets"])
    with pytest.raises(Exception, match="too small"):
        bm.resize(PAGE)
    bm.close()


def test_a_bulk_scan_recycles_a_ring_and_keeps_what_the_pool_had_cached(env):
    bm = BufferManager(env, 12 * PAGE)
    hot = [ItemKey.block("g", "out_offsets", n) for n in range(2)]
    for key in hot:
        with bm.pin(key):
            pass
    pages = bm.page_keys("g", "out")
    assert len(pages) > 12
    with env.read_txn() as txn:
        stored = [bytes(read_page(env, txn, "g", "out", k.n)) for k in pages]
    seen = [bytes(view) for _key, view in bm.scan(pages, window=3)]
    assert seen == stored
    assert bm.stats()["frames_used"] <= 2 + 3 + 2  # the hot blocks and one ring of window + 2
    before = bm.stats()["hits"]
    for key in hot:  # still cached: the scan did not sweep them out
        with bm.pin(key):
            pass
    assert bm.stats()["hits"] == before + 2
    assert bm.stats()["evictions"] >= len(pages) - 5
    bm.close()


def test_scans_read_ahead_only_once_loads_wait_on_the_disk(env, monkeypatch):
    bm = BufferManager(env, 8 * PAGE)
    pages = bm.page_keys("g", "out")
    for _ in bm.scan(pages):  # from the page cache: loads are memory speed, no read-ahead
        pass
    assert bm.stats()["prefetched"] == 0
    load = BufferManager._load

    def disk_speed(self, key, out):  # 1 ms a page: a load that waits on a device
        time.sleep(1e-3)
        return load(self, key, out)

    monkeypatch.setattr(BufferManager, "_load", disk_speed)
    bm.forget("g")
    seen = [key for key, _ in bm.scan(pages)]
    assert seen == pages
    assert bm.stats()["prefetched"] > 0
    bm.close()


def test_bulk_scans_and_random_pins_from_many_threads_agree_with_lmdb(env):
    bm = BufferManager(env, 10 * PAGE)
    pages = bm.page_keys("g", "out")
    blocks = [ItemKey.block("g", "out_targets", n) for n in range(6)]
    with env.read_txn() as txn:
        stored = {k: bytes(read_page(env, txn, "g", "out", k.n)) for k in pages}
    targets = env.arrays["out_targets"]
    errors = []

    def scanner(window):
        try:
            for _ in range(5):
                if [bytes(v) for _k, v in bm.scan(pages, window)] != [stored[k] for k in pages]:
                    errors.append("scan")
        except Exception as exc:  # noqa: BLE001 - reported below, with the thread's name
            errors.append(repr(exc))

    def pinner(seed):
        rng = np.random.default_rng(seed)
        for i in rng.integers(0, len(blocks), 100):
            try:
                with bm.pin(blocks[i]) as view:
                    per = PAGE // 4
                    if not np.array_equal(view.view(np.int32), targets[i * per:(i + 1) * per]):
                        errors.append("block")
            except BufferPoolExhausted:
                pass
    threads = [threading.Thread(target=scanner, args=(w,)) for w in (None, 1, 2)]
    threads += [threading.Thread(target=pinner, args=(s,)) for s in range(2)]
    [t.start() for t in threads]
    [t.join(timeout=60) for t in threads]
    assert not any(t.is_alive() for t in threads), "deadlock"
    assert not errors
    bm.close()


def _rss_file_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssFile:"):
                return int(line.split()[1])
    raise AssertionError("no RssFile in /proc/self/status")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_scan_larger_than_the_pool_does_not_keep_the_mapped_file_resident(tmp_path):
    """Pages copied into frames are dropped from the map: RSS is the pool, not the graph."""
    page = 256 << 10
    e = Environment(tmp_path / "db", page_size=page)
    rng = np.random.default_rng(5)
    n, m = 1 << 16, 3 << 20
    off, tgt, _ = csr_from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n, None)
    e.write(lambda txn: write_topology(e, txn, "g", {"out_offsets": off, "out_targets": tgt},
                                       pages=True))
    e.close()  # a fresh map: nothing of the file is resident through it yet
    e = Environment(tmp_path / "db", page_size=page)
    bm = BufferManager(e, 4 * page)
    keys = bm.page_keys("g", "out")
    stored_bytes = len(keys) * page
    assert stored_bytes > 10 * 4 * page  # many times the pool
    before = _rss_file_kb()
    first = None
    for key, view in bm.scan(keys, window=2):
        if key.n == 0:
            first = bytes(view)
    grown = (_rss_file_kb() - before) * 1024
    assert grown < stored_bytes // 4, (grown, stored_bytes)
    with e.read_txn() as txn:  # the released map still reads the same bytes
        assert bytes(read_page(e, txn, "g", "out", 0)) == first
    bm.close()
    e.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_writing_a_graph_larger_than_the_release_window_keeps_little_of_it_resident(
        tmp_path, monkeypatch):
    """With writemap, what a write transaction puts sits in the file mapping: the topology
    writer unmaps it as it goes, and the commit does not map it all again."""
    import graphdb.storage.topology as topology

    monkeypatch.setattr(topology, "RELEASE_EVERY", 4 << 20)
    e = Environment(tmp_path / "db", page_size=256 << 10)
    rng = np.random.default_rng(6)
    n, m = 1 << 16, 6 << 20
    off, tgt, _ = csr_from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n, None)
    before = _rss_file_kb()
    stats = e.write(lambda txn: write_topology(e, txn, "g", {"out_offsets": off,
                                                             "out_targets": tgt}, pages=True))
    written = stats["block_bytes"] + stats["page_bytes"]
    grown = (_rss_file_kb() - before) * 1024
    assert written > 40 << 20
    assert grown < written // 4, (grown, written)
    bm = BufferManager(e, 4 << 20)  # and what was written reads back
    np.testing.assert_array_equal(bm.read_array("g", "out_targets"), tgt)
    bm.close()
    e.close()
