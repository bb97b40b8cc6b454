"""The operations a version's state is carried over with (executor/overlay_host.py, the GPU's in
executor/overlay_gpu.py) against plain Python references: the delta rows spliced (compiled,
and vectorized as the GPU runs it, here with numpy), the deleted edges' entries matched in the
stored in-CSR, the merge of one array, and bit setting."""

from __future__ import annotations

import numpy as np
import pytest

from graphdb.executor.overlay import DeltaRows, HostOps, splice_xp

from .overlay_cases import match_reference, random_in_csr


def _rows_reference(rows: DeltaRows, n, removed, add_rows, add_targets, add_weights, add_edges):
    """Row lists: the old entries not removed, then the added ones of the row."""
    out = [[] for _ in range(n)]
    gone = set(removed.tolist())
    for r in range(len(rows.offsets) - 1):
        for k in range(rows.offsets[r], rows.offsets[r + 1]):
            if int(rows.edges[k]) not in gone:
                out[r].append((int(rows.targets[k]), float(rows.weights[k]), int(rows.edges[k])))
    for r, t, w, e in zip(add_rows, add_targets, add_weights, add_edges):
        out[r].append((int(t), float(w), int(e)))
    return out


def _as_lists(rows: DeltaRows):
    return [[(int(rows.targets[k]), float(rows.weights[k]), int(rows.edges[k]))
             for k in range(rows.offsets[r], rows.offsets[r + 1])]
            for r in range(len(rows.offsets) - 1)]


def _random_rows(rng, n, size):
    row = np.sort(rng.integers(0, n, size))
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(row, minlength=n), out=offsets[1:])
    edges = np.empty(size, dtype=np.int64)
    ids = rng.permutation(10 * size)[:size]
    for r in range(n):  # ascending edge ids within a row
        edges[offsets[r]:offsets[r + 1]] = np.sort(ids[offsets[r]:offsets[r + 1]])
    return DeltaRows(offsets, rng.integers(0, n, size).astype(np.int32),
                     rng.random(size), edges)


@pytest.mark.parametrize("seed", range(6))
def test_splice_compiled_vectorized_and_reference_agree(seed):
    rng = np.random.default_rng(seed)
    n_old = int(rng.integers(1, 60))
    rows = _random_rows(rng, n_old, int(rng.integers(0, 300)))
    n = n_old + int(rng.integers(0, 5))  # vertices added since
    removed = np.sort(rng.choice(rows.edges, min(len(rows.edges), int(rng.integers(0, 20))),
                                 replace=False)) if len(rows.edges) else np.zeros(0, np.int64)
    removed_rows = np.searchsorted(rows.offsets, np.flatnonzero(np.isin(rows.edges, removed)),
                                   side="right") - 1
    k = int(rng.integers(0, 30))
    add_rows = np.sort(rng.integers(0, n, k))
    add_edges = 10**6 + np.arange(k)  # newer than every old edge
    add_targets = rng.integers(0, n, k).astype(np.int32)
    add_weights = rng.random(k)
    want = _rows_reference(rows, n, removed, add_rows, add_targets, add_weights, add_edges)
    for splice in (lambda *a: HostOps.splice(a[0], a[1], a[2], removed_rows, *a[3:]),
                   lambda *a: splice_xp(np, *a)):
        got, dropped = splice(rows, n, removed, add_rows, add_targets, add_weights, add_edges)
        assert dropped == len(removed)
        assert _as_lists(got) == want
        assert got.targets.dtype == np.int32 and got.offsets.dtype == np.int64


def test_splice_with_nothing_to_do_only_grows_the_offsets():
    rows = DeltaRows(np.array([0, 1, 1]), np.array([1], np.int32), np.ones(1), np.array([4]))
    empty = np.zeros(0, np.int64)
    same, _ = HostOps.splice(rows, 2, empty, empty, empty, empty, empty, empty)
    assert same is rows
    grown, _ = HostOps.splice(rows, 4, empty, empty, empty, empty, empty, empty)
    assert grown.offsets.tolist() == [0, 1, 1, 1, 1]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("weighted", [True, False])
def test_match_in_takes_the_first_live_equal_entries(seed, weighted):
    rng = np.random.default_rng(seed)
    in_off, src, weights, u, v, w, skip = random_in_csr(rng, 60, 3000, weighted)
    got = HostOps.match_in(in_off, src, weights, u, v, w, skip)
    assert got.tolist() == match_reference(in_off, src, weights, u, v, w, skip)
    # one more deletion than a row has live entries of that edge, or one never there: refused
    row = int(v[0])
    live = [p for p in range(in_off[row], in_off[row + 1])
            if not (int(skip[p >> 6]) >> (p & 63)) & 1]
    every = np.array(live + live[:1])
    assert HostOps.match_in(in_off, src, weights, src[every].astype(np.int64),
                            np.full(len(every), row), None if weights is None
                            else weights[every], skip) is None
    assert HostOps.match_in(in_off, src, weights, np.array([10**6]), v[:1],
                            None if w is None else w[:1], None) is None


def test_merge_and_bits_on_the_host():
    base_off = np.array([0, 3, 3, 5])
    base_vals = np.array([10, 11, 12, 13, 14], dtype=np.int32)
    tomb = np.zeros(1, dtype=np.uint64)
    assert HostOps.set_bits(tomb, np.array([1, 4])) == 0
    assert HostOps.set_bits(tomb, np.array([4])) == 1  # set already
    doff = np.array([0, 1, 1, 1, 3])
    dvals = np.array([20, 21, 22], dtype=np.int32)
    offsets = np.array([0, 3, 3, 4, 6])  # 4 rows: the last added since the base
    merged = HostOps.merge(offsets, 3, base_off, base_vals, tomb, doff, dvals)
    assert merged.tolist() == [10, 12, 20, 13, 21, 22]
    assert HostOps.merge(offsets + np.array([0, 0, 0, 0, 1]), 3, base_off, base_vals, tomb,
                         doff, dvals) is None
    mapped = HostOps.map_bits(None, np.array([4, 3, 2, 1, 0]), np.array([0, 2]), 5)
    assert mapped.tolist() == [(1 << 4) | (1 << 2)]


@pytest.mark.parametrize("seed", range(4))
def test_match_by_source_alone_where_it_decides(seed):
    """Deletions that take every live entry of their (row, source) are matched without
    weights, to the weighted match's very entries; one that leaves a live parallel entry
    asks for the weights ((None, False)); a deletion with no entry is (None, True)."""
    rng = np.random.default_rng(seed)
    in_off, src, weights, u, v, w, skip = random_in_csr(rng, 60, 3000, True)
    rows = np.repeat(np.arange(len(in_off) - 1), np.diff(in_off))
    live = np.array([not (int(skip[p >> 6]) >> (p & 63)) & 1 for p in range(len(src))])
    groups = rng.choice(np.flatnonzero(live), 40)  # every live entry of these (row, source)
    chosen = np.isin(rows * 10**6 + src, rows[groups] * 10**6 + src[groups]) & live
    u, v, w = src[chosen].astype(np.int64), rows[chosen], weights[chosen]
    found, exact = HostOps.match_in_sources(in_off, src, u, v, skip)
    assert exact and found.tolist() == HostOps.match_in(in_off, src, weights, u, v, w,
                                                        skip).tolist()
    assert sorted(found.tolist()) == np.flatnonzero(chosen).tolist()
    one = np.flatnonzero(chosen)[0]
    twin = np.flatnonzero(chosen & (rows == rows[one]) & (src == src[one]))
    if len(twin) > 1:  # all but one of a group: the weights decide
        less = ~np.isin(np.flatnonzero(chosen), twin[:1])
        assert HostOps.match_in_sources(in_off, src, u[less], v[less], skip) == (None, False)
    assert HostOps.match_in_sources(in_off, src, np.array([10**6]), v[:1], None) == \
        (None, True)
