"""The id dictionary in each of its modes, against a plain np.unique/searchsorted."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from graphdb.catalog.idmap import IdSet, sorted_search


@pytest.mark.parametrize("values", [
    np.arange(50),  # exactly 0..V-1: identity
    np.array([7, 3, 3, 1000, 42]),  # dense bitmap
    np.array([-5, 2**62, 17, -5, 2**40]),  # sparse: sorted runs
])
def test_integer_modes_match_unique(values):
    ids = IdSet(dense_limit=1 << 12, pending_limit=2)
    rng = np.random.default_rng(0)
    batches = [rng.permutation(values) for _ in range(3)]
    keys = [ids.keys(pa.array(b)) for b in batches]
    mapper = ids.finish()
    expected = np.unique(values)
    assert mapper.ids.to_pylist() == expected.tolist()
    for b, k in zip(batches, keys, strict=True):
        np.testing.assert_array_equal(mapper(k), np.searchsorted(expected, b))


def test_string_keys_rank_in_sorted_order():
    ids = IdSet()
    k1 = ids.keys(pa.array(["pear", "apple", "pear"]))
    k2 = ids.keys(pa.array(["fig", "apple"]))
    mapper = ids.finish()
    assert mapper.ids.to_pylist() == ["apple", "fig", "pear"]
    assert mapper(k1).tolist() == [2, 0, 2] and mapper(k2).tolist() == [1, 0]


def test_frozen_set_reports_missing_ids():
    ids = IdSet()
    ids.keys(pa.array([1, 2, 3]))
    ids.frozen = True
    keys = ids.keys(pa.array([2, 9, -1]))
    assert ids.missing(keys).tolist() == [False, True, True]


def test_sorted_search_equals_searchsorted():
    rng = np.random.default_rng(2)
    hay = np.unique(rng.integers(0, 10**9, 5000))
    needles = hay[rng.integers(0, len(hay), 20000)]
    np.testing.assert_array_equal(sorted_search(hay, needles), np.searchsorted(hay, needles))
