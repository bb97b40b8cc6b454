"""ANY / ANY SHORTEST's dense (row, vertex) marks on the host against the sorted-key merge they
replace for few start rows: the same walks, in the same order, on random multigraphs."""

from __future__ import annotations

import numpy as np
import pytest

from graphdb.executor import paths


def _step(offsets, targets, keep_edge):
    def step(verts):
        starts, ends = offsets[verts], offsets[verts + 1]
        counts = ends - starts
        idx = np.repeat(np.arange(verts.size), counts)
        slots = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts - starts,
                                                         counts)
        kept = keep_edge[slots]
        return idx[kept], targets[slots][kept].astype(np.int64), slots[kept]
    return step


@pytest.mark.parametrize("seed", range(30))
def test_dense_marks_pick_the_walks_the_sorted_merge_picks(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    m = int(rng.integers(0, 5 * n))
    src = np.sort(rng.integers(0, n, m))
    offsets = np.searchsorted(src, np.arange(n + 1))
    targets = rng.integers(0, n, m)
    step = _step(offsets, targets, rng.random(m) < 0.8)
    start = rng.integers(0, n, int(rng.integers(1, 4)))
    low, high = int(rng.integers(0, 2)), int(rng.integers(1, 7))
    ends = rng.random(n) < 0.3 if seed % 2 else None
    dense_limit = paths.DENSE_PAIRS
    for want in (False, True):
        got = {}
        for limit in (dense_limit, 0):
            monkeypatch.setattr(paths, "DENSE_PAIRS", limit)
            got[limit] = paths.match_paths(step, start, low, high, n, np, mode="any", k=1,
                                           want_walks=want, ends=ends)
        dense, merged = got[dense_limit], got[0]
        for field in ("row", "end", "length", "vertices", "edges"):
            a, b = getattr(dense, field), getattr(merged, field)
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_array_equal(a, b)
