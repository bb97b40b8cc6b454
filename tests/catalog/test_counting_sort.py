"""The compiled counting sort against numpy's stable argsort and the numpy radix path, and the
ingest with the compiled kernels (sort and pages) against the ingest without them, in memory and
spilled."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphdb.catalog import counting
from graphdb.catalog.counting import COUNT_KEYS, SCATTER, stable_order
from graphdb.storage import page_kernel
from graphdb.storage.compiled import MIN_EDGES, MIN_MEMORY, Kernel, preload
from graphdb.storage.pages import decode_page
from graphdb.storage.topology import DIRECTIONS, read_page, topology_info
from tests.catalog.ingest_helpers import load
from tests.catalog.test_ingest_external import TINY, _random_edges, _stored

KERNELS = (COUNT_KEYS, SCATTER, page_kernel.RECORDS)


@pytest.fixture(scope="module", autouse=True)
def _kernels_loaded():
    """The kernels compiled (or read from the cache) by the worker that runs this file, before
    its first test: not at collection, which every xdist worker does (a cold cache compiled
    them once a worker)."""
    if not all(k.load() for k in KERNELS):
        pytest.skip("numba is not installed")


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
@pytest.mark.parametrize("n", [1000, 70_000, 3_000_000])
def test_counting_sort_matches_the_numpy_path(monkeypatch, payload, n):
    """Keys of one 16-bit digit, of two, and wider than 2^16 by far: numpy's radix digits."""
    rng = np.random.default_rng(5)
    m = 50_000
    keys = rng.integers(0, n, m).astype(np.int64)
    other = rng.integers(0, n, m).astype(np.int32)
    carried = None if payload is None else rng.random(m)
    compiled = stable_order(keys, n, carried, other)
    monkeypatch.setattr(COUNT_KEYS, "get", lambda: None)
    monkeypatch.setattr(SCATTER, "get", lambda: None)
    radix = stable_order(keys, n, carried, other)
    for a, b in zip(compiled, radix, strict=True):
        if a is None:
            assert b is None
        else:
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(counting.stable_argsort(keys, n),
                                  np.argsort(keys, kind="stable"))


def _kernels(monkeypatch, used: list | None) -> None:
    """Every sort and page build through the compiled kernels, counting the calls into
    ``used``; or (None) through numpy."""
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
    """Same CSR arrays (so same order within every vertex), same pages (built after the
    commit, from the stored blocks), byte for byte; with a tiny memory limit the sort runs per
    spilled bucket."""
    options = dict(options)
    props = options.pop("props", False)
    path, _, _ = _random_edges(tmp_path, 40_000, 2_000, seed=11, props=props)
    used = []
    with monkeypatch.context() as patch:
        _kernels(patch, used)
        with_cat, with_k = load(tmp_path / "db", path, name="k", memory_limit=memory_limit,
                                pages=True, **options)
    assert set(map(id, used)) == {id(k.load()) for k in KERNELS}
    with monkeypatch.context() as patch:
        _kernels(patch, None)
        without_cat, without = load(tmp_path / "db", path, name="np",
                                    memory_limit=memory_limit, pages=True, **options)
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


def test_a_small_ingest_loads_neither_numba_nor_scipy(tmp_path):
    """Below MIN_EDGES an ingest in a fresh process keeps to numpy: numba's import
    would cost more than the kernels save. Neither the in-memory nor the bucketed sort needs
    scipy (12 MB resident, which a small memory limit cannot spare), and the ingest converts
    between Arrow and numpy without pyarrow's pandas probe (45 MB)."""
    edges = tmp_path / "e.csv"
    edges.write_text("src,dst\n" + "".join(f"{i},{(7 * i) % 1000}\n" for i in range(3000)))
    code = ("import sys, graphdb; con = graphdb.connect(sys.argv[1]); "
            "con.ingest('g', sys.argv[2]); con.ingest('h', sys.argv[2], memory_limit='1MiB'); "
            "assert 'numba' not in sys.modules, 'numba loaded by a small ingest'; "
            "assert 'scipy' not in sys.modules, 'scipy loaded by an ingest'; "
            "assert 'pandas' not in sys.modules, 'pandas loaded by an ingest'")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "db"), str(edges)], check=True,
                   cwd=Path(__file__).resolve().parents[2], timeout=120)


@pytest.mark.parametrize("threads", [2, 3, 8])
def test_count_and_scatter_on_several_threads_equal_one(threads):
    """Each thread counts and places the keys of its own range: the same degrees and the same
    order as one thread, hub keys and empty ranges included."""
    rng = np.random.default_rng(threads)
    n = 5000
    chunks = []
    for _ in range(7):
        keys = rng.integers(0, n, 3000)
        keys[:1000] = 17  # a hub: one range holds most edges
        chunks.append({"key": keys, "other": rng.integers(0, n, 3000),
                       "payload": rng.random(3000)})
    counts = [counting.count_keys((c["key"] for c in chunks), 0, n, t) for t in (1, threads)]
    np.testing.assert_array_equal(counts[0], counts[1])
    lut = rng.permutation(n).astype(np.int32)
    placed = []
    for t in (1, threads):
        fill = np.zeros(n, dtype=np.int64)
        np.cumsum(counts[0][:-1], out=fill[1:])
        out, payload = np.empty(21000, np.int32), np.empty(21000)
        counting.scatter(chunks, 0, fill, lut, out, payload, t)
        placed.append((out, payload))
    np.testing.assert_array_equal(placed[0][0], placed[1][0])
    np.testing.assert_array_equal(placed[0][1], placed[1][1])
    keys = np.concatenate([c["key"] for c in chunks])
    order = np.argsort(keys, kind="stable")
    others = np.concatenate([c["other"] for c in chunks])
    np.testing.assert_array_equal(placed[0][0], lut[others[order]])
