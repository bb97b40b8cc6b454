"""The id dictionary in each of its modes, and the renumbering of raw ids in both its forms,
against a plain np.unique/searchsorted."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from graphdb.catalog.idmap import DenseKeys, IdMapper, IdSet, sorted_search
from graphdb.catalog.renumber import Renumber, mark_bits


@pytest.mark.parametrize("values, dense", [
    (np.arange(50), True),  # exactly 0..V-1
    (np.array([7, 3, 3, 1000, 42]), True),  # raw ids with gaps: renumbered by the sort
    (np.array([-5, 2**62, 17, -5, 2**40]), False),  # spread out: sorted runs, binary search
])
def test_integer_ids_are_raw_keys_or_mapped(values, dense):
    ids = IdSet(pending_limit=2)
    rng = np.random.default_rng(0)
    batches = [rng.permutation(values) for _ in range(3)]
    keys = [ids.keys(pa.array(b)) for b in batches]
    plan = ids.finish(lambda: iter(keys), sum(map(len, keys)), budget=1 << 30)
    expected = np.unique(values)
    if dense:
        assert plan == DenseKeys(int(values.max()) + 1)
        for b, k in zip(batches, keys, strict=True):
            np.testing.assert_array_equal(k, b)
        return
    assert isinstance(plan, IdMapper)
    assert plan.ids.to_pylist() == expected.tolist()
    for b, k in zip(batches, keys, strict=True):
        np.testing.assert_array_equal(plan(k), np.searchsorted(expected, b))


def test_ids_wider_than_the_limit_allows_are_mapped():
    ids = IdSet()
    keys = ids.keys(pa.array([0, 5_000_000]))
    assert isinstance(ids.finish(lambda: iter([keys]), 2, budget=1 << 20), IdMapper)


def test_string_keys_rank_in_sorted_order():
    ids = IdSet()
    k1 = ids.keys(pa.array(["pear", "apple", "pear"]))
    k2 = ids.keys(pa.array(["fig", "apple"]))
    mapper = ids.finish(lambda: iter([]), 5, budget=1 << 30)
    assert mapper.ids.to_pylist() == ["apple", "fig", "pear"]
    assert mapper(k1).tolist() == [2, 0, 2] and mapper(k2).tolist() == [1, 0]


def test_frozen_set_reports_missing_ids():
    ids = IdSet()
    ids.add_keys(ids.keys(pa.array([1, 2, 3])))
    ids.freeze()
    keys = ids.keys(pa.array([2, 9, -1]))
    assert ids.missing(keys).tolist() == [False, True, True]


def test_sorted_search_equals_searchsorted():
    rng = np.random.default_rng(2)
    hay = np.unique(rng.integers(0, 10**9, 5000))
    needles = hay[rng.integers(0, len(hay), 20000)]
    np.testing.assert_array_equal(sorted_search(hay, needles), np.searchsorted(hay, needles))


@pytest.mark.parametrize("span", [1, 63, 64, 65, 1000, 4097])
def test_lookup_table_and_rank_select_renumber_alike(span):
    rng = np.random.default_rng(span)
    keys = rng.integers(0, span, 3 * span)
    present = np.zeros(span, dtype=bool)
    present[keys] = True
    bits = np.zeros(-(-span // 64), dtype=np.uint64)
    mark_bits(bits, keys[: len(keys) // 2])
    mark_bits(bits, keys[len(keys) // 2:])
    expected = np.unique(keys)
    for renumber in (Renumber.from_present(present), Renumber.from_bits(bits, span)):
        assert renumber.n == len(expected) and renumber.identity == (len(expected) == span)
        np.testing.assert_array_equal(renumber(keys), np.searchsorted(expected, keys))
        np.testing.assert_array_equal(np.concatenate(list(renumber.keys(chunk=100))), expected)
        np.testing.assert_array_equal(renumber.present(0, span), present)
        a, b = span // 3, span - span // 5
        assert renumber.count(a, b) == int(present[a:b].sum())
