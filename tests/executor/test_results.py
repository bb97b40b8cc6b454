"""The result path's host pieces (executor/results.py, VertexValues): which vertices are rows,
one buffer of aligned columns wrapped as Arrow, and the order keys the device ranks by; each
against numpy written another way."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from graphdb.executor.abi import RESULT_ALIGN, RESULT_DROP
from graphdb.executor.algorithms.spec import AlgorithmOutput, Column
from graphdb.executor.ids import VertexIds
from graphdb.executor.results import column_layout, order_keys, output_table, wrap_columns


def test_rows_of_per_vertex_values_by_each_rule():
    depth = np.array([0, -1, 3, -1, 2], dtype=np.int32)
    dist = np.array([0.0, np.inf, 2.5, -np.inf, np.inf])
    cases = {
        "negative": (depth, [0, 2, 4]),
        "pos_inf": (dist, [0, 2, 3]),
        "neg_inf": (dist, [0, 1, 2, 4]),
        "zero": (np.array([0, 5, 0, 1], dtype=np.int64), [1, 3]),
    }
    assert set(cases) | {"none"} == set(RESULT_DROP)
    for drop, (marks, rows) in cases.items():
        out = AlgorithmOutput.vertices({"x": marks}, reached="x", drop=drop)
        assert out.columns["vertex"].tolist() == rows
        assert out.columns["vertex"].dtype == np.int64
        np.testing.assert_array_equal(out.columns["x"], marks[rows])
    every = AlgorithmOutput.vertices({"x": depth})
    assert every.columns["vertex"].tolist() == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("rows", [0, 1, 7, 8, 9, 1000])
def test_aligned_columns_in_one_buffer_round_trip(rows):
    rng = np.random.default_rng(rows)
    columns = [rng.integers(-9, 9, rows).astype(np.int64), rng.random(rows),
               rng.integers(0, 5, rows).astype(np.int64)]
    offsets, total = column_layout(rows, [8, 8, 8])
    assert all(o % RESULT_ALIGN == 0 for o in offsets) and total % RESULT_ALIGN == 0
    assert total >= 24 * rows and offsets == sorted(offsets)
    raw = np.zeros(total, dtype=np.uint8)
    for values, at in zip(columns, offsets, strict=True):
        raw[at:at + values.nbytes] = values.view(np.uint8)
    arrays = wrap_columns(pa.py_buffer(raw), rows, [pa.int64(), pa.float64(), pa.int64()],
                          offsets)
    for array, values in zip(arrays, columns, strict=True):
        assert array.to_pylist() == values.tolist()


def test_order_keys_sort_like_the_values():
    ints = np.array([5, -3, 0, 2**62, -(2**62), 7, -1, 0], dtype=np.int64)
    floats = np.array([0.5, -0.0, 0.0, np.inf, -np.inf, -2.5, 1e-300, -1e300, 3.0, 0.5])
    for values in (ints, floats):
        for descending in (False, True):
            keys = order_keys(np, values, descending)
            assert keys.dtype == np.uint64
            by_key = values[np.argsort(keys, kind="stable")]
            want = np.sort(values)[::-1] if descending else np.sort(values)
            np.testing.assert_array_equal(by_key, want)


def test_output_table_maps_ids_of_every_vertex_column():
    """Per-vertex values to the user's table: position and vertex-valued columns mapped, the
    unreached left out, with integer and string ids."""
    component = np.array([0, 0, 2, 2, -1], dtype=np.int64)
    out = AlgorithmOutput.vertices({"component": component}, reached="component", drop="negative")
    columns = (Column("vertex", pa.int64(), vertex=True),
               Column("component", pa.int64(), vertex=True))
    for ids, mapped in ((pa.array([10, 20, 30, 40, 50]), [10, 10, 30, 30]),
                        (pa.array(["a", "b", "c", "d", "e"]), ["a", "a", "c", "c"])):
        vids = VertexIds(ids, "g", "string" if pa.types.is_string(ids.type) else "int64")
        metrics: dict = {}
        table = output_table(columns, out, vids, lambda: None, metrics)
        assert table.column("component").to_pylist() == mapped
        assert table.column("vertex").to_pylist() == ids.to_pylist()[:4]
