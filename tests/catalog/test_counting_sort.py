"""The compiled counting sort against numpy's stable argsort and scipy's, and the ingest with the
compiled kernels (sort and pages) against the ingest without them, in memory and spilled."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphdb.catalog import csrbuild
from graphdb.catalog.csrbuild import COUNTING_SORT, stable_order
from graphdb.storage import page_kernel
from graphdb.storage.compiled import MIN_EDGES, MIN_MEMORY, Kernel, preload
from graphdb.storage.pages import decode_page
from graphdb.storage.topology import DIRECTIONS, read_page, topology_info
from tests.catalog.ingest_helpers import load
from tests.catalog.test_ingest_external import TINY, _random_edges, _stored

KERNELS = (COUNTING_SORT, page_kernel.RECORDS)
pytestmark = pytest.mark.skipif(not all(k.load() for k in KERNELS),
                                reason="numba is not installed")


def _reference(keys, n, payload, other):
    order = np.argsort(keys, kind="stable")
    return (np.bincount(keys, minlength=n), other[order],
            None if payload is None else payload[order])


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 200), m=st.integers(0, 2000), seed=st.integers(0, 2**16),
       payload=st.sampled_from([None, "weight", "row"]), hub=st.booleans())
def test_counting_sort_is_numpys_stable_argsort(n, m, seed, payload, hub):
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, n, m).astype(np.int32)
    if hub:  # one key with most of the edges, the others rare
        keys[rng.random(m) < 0.8] = n // 2
    other = rng.integers(0, 10**6, m).astype(np.int32)
    carried = {None: None, "weight": rng.random(m),
               "row": rng.permutation(m).astype(np.int64)}[payload]
    degrees, out, moved = stable_order(keys, n, carried, other)  # compiled: loaded above
    want = _reference(keys, n, carried, other)
    np.testing.assert_array_equal(degrees, want[0])
    assert degrees.dtype == np.int64 and out.dtype == np.int32
    np.testing.assert_array_equal(out, want[1])
    if payload is None:
        assert moved is None
    else:
        np.testing.assert_array_equal(moved, want[2])
        assert moved.dtype == carried.dtype


@pytest.mark.parametrize("payload", [None, "weight"])
def test_counting_sort_matches_scipy_path(monkeypatch, payload):
    rng = np.random.default_rng(5)
    n, m = 1000, 50_000
    keys = rng.integers(0, n, m).astype(np.int32)
    other = rng.integers(0, n, m).astype(np.int32)
    carried = None if payload is None else rng.random(m)
    compiled = stable_order(keys, n, carried, other)
    monkeypatch.setattr(COUNTING_SORT, "get", lambda: None)
    assert csrbuild._sparsetools() is not None
    scipy = stable_order(keys, n, carried, other)
    for a, b in zip(compiled, scipy, strict=True):
        if a is None:
            assert b is None
        else:
            np.testing.assert_array_equal(a, b)


def _kernels(monkeypatch, used: list | None) -> None:
    """Every sort and page build through the compiled kernels, counting the calls into
    ``used``; or (None) through numpy and scipy."""
    for kernel in KERNELS:
        compiled = kernel.load()

        def get(compiled=compiled):
            if used is None:
                return None
            used.append(compiled)
            return compiled

        monkeypatch.setattr(kernel, "get", get)


def _pages(catalog, entry):
    env = catalog.env
    out = []
    with env.read_txn() as txn:
        for direction in DIRECTIONS[: 2 if entry.directed else 1]:
            info = topology_info(env, txn, entry.graph_id, direction)
            out += [bytes(read_page(env, txn, entry.graph_id, direction, pid))
                    for pid in range(info["pages"])]
    return out


@pytest.mark.parametrize("options", [{}, {"undirected": True}, {"props": True}])
@pytest.mark.parametrize("memory_limit", [None, TINY])
def test_ingest_with_kernels_stores_what_it_stores_without(tmp_path, monkeypatch, options,
                                                           memory_limit):
    """Same CSR arrays (so same order within every vertex), same pages, byte for byte; with a
    tiny memory limit the sort runs per spilled bucket."""
    options = dict(options)
    props = options.pop("props", False)
    path, _, _ = _random_edges(tmp_path, 40_000, 2_000, seed=11, props=props)
    used = []
    with monkeypatch.context() as patch:
        _kernels(patch, used)
        with_cat, with_k = load(tmp_path / "db", path, name="k", memory_limit=memory_limit,
                                **options)
    assert set(map(id, used)) == {id(k.load()) for k in KERNELS}
    with monkeypatch.context() as patch:
        _kernels(patch, None)
        without_cat, without = load(tmp_path / "db", path, name="np",
                                    memory_limit=memory_limit, **options)
    a, b = _stored(with_cat, with_k), _stored(without_cat, without)
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    pages = _pages(with_cat, with_k)
    assert pages == _pages(without_cat, without)
    assert decode_page(pages[0]).header.num_edges > 0
    if props:
        assert with_cat.edge_table(with_k).equals(without_cat.edge_table(without))


def test_preload_loads_for_large_ingests_within_the_memory_limit():
    calls = []
    kernel = Kernel(lambda x: x, warm=lambda compiled: calls.append(compiled(7)))
    assert kernel.get() is None  # not loaded: numpy's turn, whatever the work
    assert preload(MIN_EDGES - 1, MIN_MEMORY, kernel) is None  # too small to pay for numba
    assert preload(MIN_EDGES, MIN_MEMORY - 1, kernel) is None  # too little memory for numba
    assert kernel.get() is None and calls == []
    preload(MIN_EDGES, MIN_MEMORY, kernel).join()
    assert calls == [7]  # warmed before it is handed out
    assert kernel.get()(3) == 3
    assert preload(10**9, MIN_MEMORY, kernel) is None  # nothing left to load


def test_a_small_ingest_does_not_load_numba(tmp_path):
    """Below MIN_EDGES an ingest in a fresh process keeps to numpy and scipy: numba's import
    would cost more than the kernels save."""
    edges = tmp_path / "e.csv"
    edges.write_text("src,dst\n" + "".join(f"{i},{(7 * i) % 1000}\n" for i in range(3000)))
    code = ("import sys, graphdb; con = graphdb.connect(sys.argv[1]); "
            "con.ingest('g', sys.argv[2]); "
            "assert 'numba' not in sys.modules, 'numba loaded by a small ingest'")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "db"), str(edges)], check=True,
                   cwd=Path(__file__).resolve().parents[2], timeout=120)
