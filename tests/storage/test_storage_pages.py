"""Slotted pages: round trips against the CSR they were built from, hubs, limits, checksums."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphdb.storage import checksum as checksum_module
from graphdb.storage.errors import CorruptData, StorageError
from graphdb.storage.pages import (
    HEADER_BYTES,
    LARGE,
    SMALL,
    PageLayout,
    decode_page,
    iter_pages,
    pages_of_vertices,
    plan_pages,
    rid_to_vertex,
    verify_page,
)


def random_csr(n: int, m: int, seed: int, hub_degree: int = 0):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    if hub_degree:
        src = np.concatenate([src, np.full(hub_degree, n // 2)])
        dst = np.concatenate([dst, rng.integers(0, n, hub_degree)])
    order = np.argsort(src, kind="stable")
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=offsets[1:])
    weights = rng.random(len(src))[order]
    return offsets, dst[order].astype(np.int32), weights


def decode_all(offsets, targets, weights, layout):
    """Build pages, decode every one of them, and return the edge list they describe."""
    plan = plan_pages(offsets, layout, weights is not None)
    # the plan's one per-vertex array is as narrow as the page count allows
    assert plan.vertex_pid.dtype == np.min_scalar_type(max(plan.num_pages - 1, 0))
    assert len(plan.vertex_pid) == len(offsets) - 1
    src, dst, w, headers = [], [], [], []
    for pid, page in iter_pages(offsets, targets, weights, plan):
        assert len(page) == layout.page_size
        decoded = decode_page(bytes(page))
        assert decoded.header.page_id == pid
        headers.append(decoded.header)
        src.append(decoded.sources())
        dst.append(rid_to_vertex(plan.page_first_vertex, decoded.rid_pid, decoded.rid_slot))
        if weights is not None:
            w.append(decoded.weights)
    cat = np.concatenate
    return plan, headers, cat(src), cat(dst), (cat(w) if weights is not None else None)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 300), m=st.integers(0, 3000), seed=st.integers(0, 2**16),
       weighted=st.booleans(), page_size=st.sampled_from([256, 512, 1024, 4096]),
       widths=st.sampled_from([(2, 2), (3, 3), (4, 2), (2, 4), (2, 3), (4, 4), (5, 4)]),
       hub=st.sampled_from([0, 700]))
def test_pages_describe_exactly_the_csr(n, m, seed, weighted, page_size, widths, hub):
    offsets, targets, weights = random_csr(n, m, seed, hub)
    weights = weights if weighted else None
    layout = PageLayout(page_size=page_size, pid_bytes=widths[0], slot_bytes=widths[1])
    plan, headers, src, dst, w = decode_all(offsets, targets, weights, layout)
    expected_src = np.repeat(np.arange(n), np.diff(offsets))
    np.testing.assert_array_equal(src, expected_src)
    np.testing.assert_array_equal(dst, targets)
    if weighted:
        np.testing.assert_array_equal(w, weights)
    # edge_start lines every page up with the CSR (edge properties follow the stored order)
    starts = [h.edge_start for h in headers]
    assert starts == sorted(starts) and (not starts or starts[0] == 0)
    # pages cover consecutive vertex ranges, in order
    assert np.all(np.diff(plan.page_first_vertex) >= 0)


def test_hub_spans_a_chain_of_large_pages_with_one_record_id():
    offsets, targets, weights = random_csr(50, 200, seed=1, hub_degree=1000)
    layout = PageLayout(page_size=512, pid_bytes=2, slot_bytes=2)
    plan, headers, _src, _dst, w = decode_all(offsets, targets, weights, layout)
    hub = 25
    chain = np.flatnonzero(plan.page_kind == LARGE)
    assert len(chain) >= 2 and np.all(plan.page_first_vertex[chain] == hub)
    assert [headers[p].chain_index for p in chain] == list(range(len(chain)))
    assert {headers[p].chain_length for p in chain} == {len(chain)}
    # the hub's record id is (first page of its chain, slot 0)
    pid, slot = plan.record_ids(np.array([hub]))
    assert pid[0] == chain[0] and slot[0] == 0
    assert sum(headers[p].num_edges for p in chain) == offsets[hub + 1] - offsets[hub]
    np.testing.assert_array_equal(w, weights)


def test_small_pages_hold_many_vertices_and_respect_the_slot_width():
    n = 2000
    offsets = np.arange(n + 1, dtype=np.int64)  # degree 1 everywhere
    targets = np.arange(n, dtype=np.int32)[::-1].copy()
    wide = plan_pages(offsets, PageLayout(page_size=65536, pid_bytes=2, slot_bytes=2), False)
    narrow = plan_pages(offsets, PageLayout(page_size=65536, pid_bytes=2, slot_bytes=1), False)
    assert wide.num_pages == 1 and set(wide.page_kind) == {SMALL}
    assert np.all(np.diff(narrow.page_first_vertex) <= 256) and narrow.num_pages == 8
    _, _, _, dst, _ = decode_all(offsets, targets, None, PageLayout(65536, 2, 1))
    np.testing.assert_array_equal(dst, targets)


def test_too_many_pages_for_the_page_id_width_is_a_clear_error():
    offsets = np.arange(0, 4 * 6000 + 1, 4, dtype=np.int64)  # 8 per page: 750 pages
    with pytest.raises(StorageError, match="page ids"):
        plan_pages(offsets, PageLayout(page_size=256, pid_bytes=1, slot_bytes=1), False)


def one_page():
    offsets, targets, weights = random_csr(20, 60, seed=3)
    layout = PageLayout(page_size=1024, pid_bytes=2, slot_bytes=2)
    plan = plan_pages(offsets, layout, True)
    return bytearray(next(iter_pages(offsets, targets, weights, plan))[1])


@pytest.mark.parametrize("position", [12, 40, HEADER_BYTES + 5, 700, 1023])
def test_any_flipped_byte_fails_the_checksum(position):
    page = one_page()
    verify_page(page, 0)
    page[position] ^= 0x10
    with pytest.raises(CorruptData):
        decode_page(bytes(page))


def test_wrong_magic_version_or_page_id_is_reported():
    page = one_page()
    with pytest.raises(CorruptData, match="says it is page 0"):
        verify_page(page, expected_pid=7)
    bad = bytearray(page)
    struct.pack_into("<H", bad, 4, 99)
    with pytest.raises(CorruptData, match="version 99"):
        verify_page(bad)
    bad = bytearray(page)
    bad[0:4] = b"XXXX"
    with pytest.raises(CorruptData, match="magic"):
        verify_page(bad)
    with pytest.raises(CorruptData):
        verify_page(page[:512])


def test_layout_validation():
    with pytest.raises(StorageError):
        PageLayout(page_size=100)
    with pytest.raises(StorageError):
        PageLayout(pid_bytes=0)


@pytest.mark.parametrize("algorithm", [checksum_module.CRC32, checksum_module.XXH3])
def test_pages_and_blocks_sealed_with_either_checksum_verify_and_catch_flips(monkeypatch,
                                                                             algorithm):
    if algorithm == checksum_module.XXH3:
        pytest.importorskip("xxhash")
    monkeypatch.setattr("graphdb.storage.pages.default_algorithm", lambda: algorithm)
    monkeypatch.setattr("graphdb.storage.blocks.default_algorithm", lambda: algorithm)
    page = one_page()
    assert verify_page(page).checksum_algorithm == algorithm
    page[300] ^= 4
    with pytest.raises(CorruptData):
        verify_page(page)
    from graphdb.storage.blocks import seal, unpack_block

    sealed = bytearray(seal(np.arange(100, dtype=np.uint8)))
    assert bytes(unpack_block(bytes(sealed), "b")) == bytes(range(100))
    sealed[7] ^= 1
    with pytest.raises(CorruptData):
        unpack_block(bytes(sealed), "b")


def test_unknown_checksum_algorithm_is_an_error():
    with pytest.raises(StorageError, match="unknown checksum"):
        checksum_module.checksum(b"abc", 99)


def test_without_xxhash_new_data_uses_crc32_and_xxh3_data_asks_for_the_package(monkeypatch):
    pytest.importorskip("xxhash")
    sealed = one_page()  # sealed with xxh3 here
    monkeypatch.setattr(checksum_module, "_xxhash", None)
    assert checksum_module.default_algorithm() == checksum_module.CRC32
    with pytest.raises(StorageError, match="install the 'xxhash' package"):
        verify_page(sealed)
    assert verify_page(one_page()).checksum_algorithm == checksum_module.CRC32


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), hub=st.sampled_from([0, 700]),
       picks=st.lists(st.integers(0, 119), max_size=12))
def test_pages_of_vertices_is_exactly_the_pages_whose_slots_hold_them(seed, hub, picks):
    offsets, targets, _ = random_csr(120, 600, seed, hub)
    layout = PageLayout(page_size=512, pid_bytes=2, slot_bytes=2)
    plan = plan_pages(offsets, layout, False)
    holders = {}
    for pid, page in iter_pages(offsets, targets, None, plan):
        for v in decode_page(bytes(page)).vertices.tolist():
            holders.setdefault(v, set()).add(pid)
    expected = sorted(set().union(*[holders[v] for v in picks])) if picks else []
    assert pages_of_vertices(plan.page_first_vertex, np.array(picks)).tolist() == expected
