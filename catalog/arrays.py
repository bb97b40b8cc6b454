"""Arrow <-> numpy for an ingest's columns, without pyarrow's pandas probe.

``Array.to_numpy``, ``np.asarray(array)`` and ``pa.array`` import pandas the first time they run
in a process where it is installed: ~45 MiB resident and ~0.4 s that an ingest (which never sees
a pandas object) would pay, the memory counting against ``--memory-limit``'s overhead. Numeric
and boolean columns without nulls need no conversion: their buffers are viewed as they are.
Anything else goes to pyarrow.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

__all__ = ["column_values", "arrow_values"]


def column_values(array: pa.Array, any_nulls: bool = False) -> np.ndarray:
    """The values of a numeric or boolean Arrow array without nulls, as numpy (a view of its
    buffer; booleans unpacked). ``any_nulls``: the array may have nulls, whose slots the caller
    overwrites (their values are whatever the buffer holds)."""
    t = array.type
    if (any_nulls or array.null_count == 0) and (pa.types.is_integer(t) or
                                                 pa.types.is_floating(t)):
        kind = "f" if pa.types.is_floating(t) else "i" if pa.types.is_signed_integer(t) else "u"
        dtype = np.dtype(f"<{kind}{t.bit_width // 8}")
        return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array),
                             offset=array.offset * dtype.itemsize)
    if array.null_count == 0 and pa.types.is_boolean(t):
        bits = np.frombuffer(array.buffers()[1], dtype=np.uint8)
        return np.unpackbits(bits, bitorder="little", count=array.offset + len(array))[
            array.offset:].astype(bool)
    return array.to_numpy(zero_copy_only=False)


def arrow_values(values: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """A 1-d numeric or boolean numpy array as an Arrow array (its buffer wrapped, booleans
    packed); ``valid``: which values are not null (default: all)."""
    values = np.asarray(values)
    bitmap = None if valid is None else pa.py_buffer(np.packbits(valid, bitorder="little"))
    if values.dtype.kind == "b":
        packed = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [bitmap, pa.py_buffer(packed)])
    if values.dtype.kind in "iuf" and values.dtype.isnative:
        values = np.ascontiguousarray(values)
        return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values),
                                     [bitmap, pa.py_buffer(values)])
    return pa.array(values, mask=None if valid is None else ~valid)
