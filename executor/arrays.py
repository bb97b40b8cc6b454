"""numpy <-> Arrow for the columns queries build, without pyarrow's pandas probe.

``pa.array``, ``Array.to_numpy`` and ``pa.scalar`` import pandas, when it is installed, the
first time they run in a process (pyarrow checks whether the input is a pandas object): 0.4 s
on the H100 host's image, paid by the first query of every ``graphdb query`` process although
no pandas object is involved. Numeric and boolean columns need no conversion at all: these
helpers wrap numpy's buffer as an Arrow array and back (zero-copy, as ``pa.array`` of a numpy
array is), and hand anything else (strings, nulls, Python objects) to pyarrow.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

__all__ = ["scalar", "to_arrow", "to_numpy", "to_table"]


def to_arrow(values, type: pa.DataType | None = None) -> pa.Array:
    """``pa.array(values, type)`` without importing pandas, for a 1-d numeric or boolean numpy
    array, a list of numbers or a list of strings; anything else goes to ``pa.array``."""
    if isinstance(values, (list, tuple)):
        if values and all(isinstance(v, str) for v in values):
            return _strings(values, type)
        if all(isinstance(v, (bool, int, float)) for v in values):
            try:
                values = np.asarray(values, dtype=None if values else np.int64)
            except OverflowError:  # beyond 64 bits: pyarrow says what it makes of them
                return pa.array(values, type=type)
    if not isinstance(values, np.ndarray) or values.ndim != 1 or values.dtype.kind not in "biuf":
        return pa.array(values, type=type)
    wanted = None if type is None else _numpy_dtype(type)
    if wanted is not None and values.dtype != wanted and values.dtype.kind != "b":
        values = values.astype(wanted)  # numpy's conversion: several times Arrow's cast's speed
    n = len(values)
    if values.dtype.kind == "b":
        packed = np.packbits(values, bitorder="little")
        array = pa.Array.from_buffers(pa.bool_(), n, [None, pa.py_buffer(packed)])
    else:
        values = np.ascontiguousarray(values)
        if not values.dtype.isnative:
            values = values.astype(values.dtype.newbyteorder("="))
        array = pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), n,
                                      [None, pa.py_buffer(values)])
    return array if type is None or array.type == type else array.cast(type)


def to_table(columns: dict) -> pa.Table:
    """``pa.table(columns)`` for a dict of Arrow arrays, numpy arrays and Python lists, without
    importing pandas (an empty list keeps pyarrow's null type, as ``pa.table`` gives it)."""
    return pa.table({name: values if isinstance(values, (pa.Array, pa.ChunkedArray))
                     or (isinstance(values, list) and not values) else to_arrow(values)
                     for name, values in columns.items()})


def scalar(value, type: pa.DataType | None = None) -> pa.Scalar:
    """``pa.scalar(value, type)`` without importing pandas, for None, numbers and strings (wrap
    it in ``pc.scalar`` for an expression: given a Scalar, that does not convert either)."""
    if value is None:
        return pa.nulls(1, type or pa.null())[0]
    if isinstance(value, (bool, int, float, str)):
        return to_arrow([value], type)[0]
    return pa.scalar(value, type=type)


def _strings(values, type: pa.DataType | None) -> pa.Array:
    encoded = [v.encode() for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    array = pa.Array.from_buffers(pa.large_string(), len(encoded),
                                  [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])
    return array.cast(type or pa.string())


def _numpy_dtype(kind: pa.DataType) -> np.dtype | None:
    """The numpy dtype of an Arrow integer or floating type (not ``to_pandas_dtype()``: that
    asks pandas for its version); None for any other type."""
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        return None
    letter = ("f" if pa.types.is_floating(kind)
              else "u" if pa.types.is_unsigned_integer(kind) else "i")
    return np.dtype(f"{letter}{kind.bit_width // 8}")


def to_numpy(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The values of a numeric Arrow column without nulls as a numpy array (zero-copy where
    the column is one chunk); other columns through ``to_numpy(zero_copy_only=False)``."""
    if isinstance(column, pa.ChunkedArray):
        column = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    kind = column.type
    if column.null_count == 0 and pa.types.is_boolean(kind):
        bits = np.frombuffer(column.buffers()[1], dtype=np.uint8)
        return np.unpackbits(bits, count=column.offset + len(column),
                             bitorder="little")[column.offset:].astype(bool)
    dtype = _numpy_dtype(kind)
    if column.null_count == 0 and dtype is not None:
        return np.frombuffer(column.buffers()[1], dtype=dtype, count=len(column),
                             offset=column.offset * dtype.itemsize)
    return column.to_numpy(zero_copy_only=False)
