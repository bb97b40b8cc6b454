"""The device cache's logic on the CPU, with a fake allocator standing in for CuPy."""

from __future__ import annotations

import numpy as np
import pytest

from graphdb.storage import (
    BufferManager,
    BufferPoolExhausted,
    DeviceCache,
    Environment,
    ItemKey,
    csr_from_edges,
    stats_table,
    write_topology,
)

PAGE = 1024


class FakeDevice:
    """Allocates 'device' buffers as numpy copies and records every transfer."""

    def __init__(self):
        self.copies = []

    def to_device(self, host_view):
        self.copies.append(len(host_view))
        return np.array(host_view, copy=True)

    @staticmethod
    def nbytes(buffer):
        return buffer.nbytes


@pytest.fixture
def host(tmp_path):
    env = Environment(tmp_path / "db", page_size=PAGE)
    rng = np.random.default_rng(3)
    off, tgt, _ = csr_from_edges(rng.integers(0, 300, 5000), rng.integers(0, 300, 5000), 300)
    env.write(lambda txn: write_topology(env, txn, "g", {"out_offsets": off, "out_targets": tgt}))
    bm = BufferManager(env, 8 * PAGE)
    yield bm
    bm.close()
    env.close()


def keys(n):
    return [ItemKey.page("g", "out", i) for i in range(n)]


def test_device_copies_equal_host_frames_and_are_counted(host):
    fake = FakeDevice()
    cache = DeviceCache(host, 3 * PAGE, allocator=fake)
    for key in keys(3):
        with cache.pin(key) as device, host.pin(key) as frame:
            np.testing.assert_array_equal(device, frame)
    assert cache.stats()["bytes_to_device"] == 3 * PAGE == host.stats()["bytes_to_device"]
    assert fake.copies == [PAGE] * 3


def test_lru_evicts_the_least_recently_used_and_hits_copy_nothing(host):
    fake = FakeDevice()
    cache = DeviceCache(host, 3 * PAGE, allocator=fake)
    k = keys(5)
    for key in (k[0], k[1], k[2], k[0], k[3]):  # k[1] is least recently used when k[3] comes
        with cache.pin(key):
            pass
    assert set(cache._entries) == {k[0], k[2], k[3]}
    s = cache.stats()
    assert (s["hits"], s["misses"], s["evictions"]) == (1, 4, 1)
    assert len(fake.copies) == 4


def test_pinned_device_items_stay_and_a_full_cache_says_so(host):
    cache = DeviceCache(host, 2 * PAGE, allocator=FakeDevice())
    k = keys(3)
    with cache.pin(k[0]), cache.pin(k[1]), pytest.raises(BufferPoolExhausted), cache.pin(k[2]):
        pass
    with cache.pin(k[2]):
        pass
    assert k[2] in cache._entries


def test_stats_table_has_a_row_per_pool(host):
    cache = DeviceCache(host, 2 * PAGE, allocator=FakeDevice())
    with cache.pin(keys(1)[0]):
        pass
    table = stats_table(host, cache)
    assert table.column("pool").to_pylist() == ["host", "device"]
    assert table.column("bytes_to_device").to_pylist() == [PAGE, PAGE]


@pytest.mark.gpu
def test_cupy_allocator_round_trip(host):
    import cupy

    cache = DeviceCache(host, 4 * PAGE)
    key = keys(1)[0]
    with cache.pin(key) as device, host.pin(key) as frame:
        np.testing.assert_array_equal(cupy.asnumpy(device), frame)


def test_scan_pins_every_item_in_order_and_reuses_device_copies(host):
    fake = FakeDevice()
    cache = DeviceCache(host, 8 * PAGE, allocator=fake)
    k = keys(5)
    first = [(key, bytes(device)) for key, device in cache.scan(k)]
    again = [(key, bytes(device)) for key, device in cache.scan(k)]
    assert [key for key, _ in first] == k and first == again
    for key, data in first:
        with host.pin(key) as frame:
            assert data == bytes(frame)
    assert len(fake.copies) == 5 and cache.stats()["hits"] == 5
