"""graphdb.executor.arrays: numpy <-> Arrow without pandas, checked against pyarrow's own conversion."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from graphdb.executor.arrays import to_arrow, to_numpy

NUMERIC = st.sampled_from([np.int8, np.int32, np.int64, np.uint16, np.uint64, np.float32,
                           np.float64, np.bool_])


@given(hnp.arrays(NUMERIC, st.integers(0, 200)))
def test_numpy_arrays_convert_like_pyarrow(values):
    got, expected = to_arrow(values), pa.array(values)
    assert got.type == expected.type and got.null_count == expected.null_count == 0
    np.testing.assert_array_equal(got.to_numpy(zero_copy_only=False), values)  # NaN == NaN
    np.testing.assert_array_equal(to_numpy(got), values)
    if len(values) > 2:
        np.testing.assert_array_equal(to_numpy(got.slice(1)), values[1:])


@given(hnp.arrays(np.int64, st.integers(0, 50), elements=st.integers(-2**31, 2**31 - 1)))
def test_requested_types_are_cast_to(values):
    for type_ in (pa.int32(), pa.float64(), pa.int64()):
        assert to_arrow(values, type_).equals(pa.array(values, type=type_))


def test_views_byte_order_and_python_lists():
    values = np.arange(20, dtype=np.int64)
    assert to_arrow(values[::3]).to_pylist() == list(range(0, 20, 3))  # strided view
    assert to_arrow(values.astype(">i4")).equals(pa.array(values, pa.int32()))
    assert to_arrow([1, 2, 3], pa.int64()).equals(pa.array([1, 2, 3], pa.int64()))
    assert to_arrow([True, False]).equals(pa.array([True, False]))
    assert to_arrow([], pa.int64()).equals(pa.array([], pa.int64()))
    assert to_arrow(["a", "", "héllo"]).equals(pa.array(["a", "", "héllo"]))
    assert to_arrow(["a", None]).equals(pa.array(["a", None]))  # nulls: pyarrow's path
    with pytest.raises(OverflowError):  # beyond int64: pyarrow's verdict, as with pa.array
        to_arrow([2**70])


@pytest.mark.parametrize("column", [
    pa.array([3, 1, 2], pa.int32()),
    pa.array([1.5, 2.5]),
    pa.chunked_array([pa.array([1, 2]), pa.array([3])]),
    pa.chunked_array([pa.array([7, 8, 9])]).slice(1),
    pa.array([1, None, 3]),
    pa.array(["x", "y"]),
    pa.array([True, False, True] * 5).slice(3),
    pa.array([True, None]),
])
def test_to_numpy_matches_pyarrow(column):
    expected = column.to_numpy(zero_copy_only=False)
    got = to_numpy(column)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
