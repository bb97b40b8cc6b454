"""The operations a version's state is carried over with (executor/overlay_host.py, the GPU's in
executor/overlay_gpu.py) against plain Python references: the delta rows spliced (compiled,
and vectorized as the GPU runs it, here with numpy), the base transposed (compiled counting
sort, and the GPU's stable sort with numpy), the merge of one array, and bit setting."""

from __future__ import annotations

import numpy as np
import pytest

from graphdb.executor.overlay import DeltaRows, HostOps, splice_xp
from graphdb.executor.overlay_gpu import DeviceOps


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


@pytest.mark.parametrize("seed", range(3))
def test_transpose_compiled_and_the_gpus_sort_agree(seed):
    rng = np.random.default_rng(seed)
    n, m = 50, 400
    src = np.sort(rng.integers(0, n, m))
    dst = rng.integers(0, n, m).astype(np.int32)
    out_off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=out_off[1:])
    in_off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=n), out=in_off[1:])
    for ops in (HostOps, DeviceOps(np)):
        sources, where = ops.transpose(out_off, dst, in_off)
        assert sorted(where.tolist()) == list(range(m))
        np.testing.assert_array_equal(sources[where], src)  # each edge at its in-position
        for v in range(n):  # in its target's row, sources ascending
            row = sources[in_off[v]:in_off[v + 1]]
            assert (np.diff(row) >= 0).all()
            assert ((where >= in_off[v]) & (where < in_off[v + 1]) == (dst == v)).all()
        assert ops.transpose(out_off, dst, in_off + np.arange(n + 1)) is None


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
