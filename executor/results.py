"""The result path: a graph operator's output to the Arrow table a query gets.

An implementation returns rows (numpy columns) or one value per vertex
(:class:`~graphdb.executor.algorithms.spec.VertexValues`, numpy or CuPy). From there:

- host rows and host per-vertex values: the reached vertices are picked
  (:meth:`~graphdb.executor.algorithms.spec.VertexValues.rows`), the
  internal ids mapped to the user's (:meth:`VertexIds.user`: a numpy gather, nothing for
  identity ids) and the columns wrapped as Arrow without copies;
- per-vertex values on a GPU: the same steps on the device
  (:mod:`graphdb.executor.operators.results_gpu`): an ordered compaction of the reached
  vertices, the id mapping against the id column held on the device by the residency owner, the
  output columns written into one device buffer, one copy over the bus into page-locked memory,
  and Arrow arrays over that memory (no host pass at all);
- a pushed-down aggregate (:class:`Reduction`, :class:`TopRows`, put on the graph operator by
  the physical planner) is computed where the values are, and only its rows move.

The host functions here are written for numpy and CuPy alike (``xp``): the GPU tests run them
with CuPy as the reference of the kernels, the CPU runs use them with numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pyarrow as pa

from .abi import RESULT_ALIGN
from .algorithms.spec import AlgorithmOutput, Column
from .arrays import to_arrow
from .ids import VertexIds

__all__ = [
    "PUSHABLE", "Reduction", "TopRows", "column_layout", "finish", "host_rows", "order_keys",
    "output_table", "reduce_rows", "top_rows", "wrap_columns",
]

#: Aggregate functions a graph operator can compute where its values are (others stay
#: relational): count(*), count(col), min, max, sum, mean.
PUSHABLE = ("count_all", "count", "min", "max", "sum", "mean")


# -- rows of an output ---------------------------------------------------------------------------
def host_rows(output: AlgorithmOutput, columns: tuple[Column, ...]) -> dict[str, Any]:
    """The rows of ``output`` as arrays by column name, vertex ids internal; per-vertex values
    compacted by :meth:`VertexValues.rows` (numpy, or CuPy for device values: the reference of
    the compaction kernels), converted to the columns' int64 / float64."""
    if output.per_vertex is None:
        return dict(output.columns)
    rows = output.per_vertex.rows()
    return {c.name: rows[c.name].astype(_numpy_type(c.type), copy=False) for c in columns}


def _numpy_type(type_: pa.DataType) -> np.dtype:
    return np.dtype(np.float64 if pa.types.is_floating(type_) else np.int64)


# -- one buffer, Arrow columns over it ----------------------------------------------------------
def column_layout(rows: int, itemsizes: list[int]) -> tuple[list[int], int]:
    """Byte offsets of columns of ``rows`` entries of ``itemsizes`` bytes laid out one after
    the other in one buffer, each at a multiple of RESULT_ALIGN; and the buffer's size."""
    offsets, at = [], 0
    for size in itemsizes:
        offsets.append(at)
        at += -(-rows * size // RESULT_ALIGN) * RESULT_ALIGN
    return offsets, at


def wrap_columns(buffer: pa.Buffer, rows: int, types: list[pa.DataType],
                 offsets: list[int]) -> list[pa.Array]:
    """Arrow arrays over the columns that ``column_layout`` placed in ``buffer`` (no copy)."""
    return [pa.Array.from_buffers(t, rows, [None, buffer.slice(o, rows * t.bit_width // 8)])
            for t, o in zip(types, offsets, strict=True)]


# -- rows to the user's table -------------------------------------------------------------------
def output_table(columns: tuple[Column, ...], output: AlgorithmOutput, ids: VertexIds,
                 device_ids: Callable[[], Any], metrics: dict) -> pa.Table:
    """The query's table of ``output``: the reached rows, the user's ids, Arrow columns; on the
    device for device values (``device_ids()`` gives the id column there)."""
    pv = output.per_vertex
    if pv is not None and pv.on_device:
        from .operators.results_gpu import device_table

        return device_table(columns, pv, ids, device_ids, metrics)
    rows = host_rows(output, columns)
    arrays = [ids.user(rows[c.name]) if c.vertex else to_arrow(np.asarray(rows[c.name]), c.type)
              for c in columns]
    return pa.table(arrays, names=[c.name for c in columns])


def finish(columns: tuple[Column, ...], output: AlgorithmOutput, ids: VertexIds,
           device_ids: Callable[[], Any], metrics: dict, *, reduction: "Reduction | None" = None,
           top: "TopRows | None" = None) -> pa.Table:
    """The table a graph operator hands the query: its rows (:func:`output_table`), or the
    aggregate (``reduction``) or top rows (``top``) pushed down onto it, computed where the
    values are."""
    if reduction is None and top is None:
        return output_table(columns, output, ids, device_ids, metrics)
    pv = output.per_vertex
    if pv is not None and pv.on_device:
        from .operators import results_gpu

        if reduction is not None:
            return results_gpu.device_reduce(reduction, columns, pv, ids, device_ids, metrics)
        return results_gpu.device_top(top, columns, pv, ids, device_ids, metrics)
    rows = host_rows(output, columns)
    count = len(next(iter(rows.values()))) if rows else 0
    if reduction is not None:
        table = reduce_rows(np, reduction, rows, count, columns, ids)
    else:
        table = top_rows(np, top, rows, columns, ids)
    metrics.update(result_rows=table.num_rows)
    return table


# -- pushed-down aggregates ---------------------------------------------------------------------
@dataclass(frozen=True)
class Reduction:
    """An aggregate computed by the graph operator itself (pushed down by the physical
    planner): ``GROUP BY key`` (an output column, or None) with ``calls`` of (output name,
    function in :data:`PUSHABLE`, output column or None for count(*)). Its table has the key
    (named ``key_name``) and then one column per call, as the relational aggregate's."""

    key: str | None
    key_name: str | None
    calls: tuple[tuple[str, str, str | None], ...]

    def describe(self) -> str:
        calls = ", ".join(f"{'count' if f == 'count_all' else f}({c or '*'})"
                          for _, f, c in self.calls)
        return calls + (f" GROUP BY {self.key}" if self.key else "")


@dataclass(frozen=True)
class TopRows:
    """``ORDER BY column [DESC] LIMIT limit OFFSET offset`` computed by the graph operator
    (pushed down): ``outputs`` are (output name, output column) of the rows it returns."""

    column: str
    descending: bool
    limit: int
    offset: int
    outputs: tuple[tuple[str, str], ...]

    def describe(self) -> str:
        return (f"top {self.offset + self.limit} by {self.column} "
                f"{'DESC' if self.descending else 'ASC'}")


def _result_type(function: str, column: Column | None) -> pa.DataType:
    if function in ("count_all", "count"):
        return pa.int64()
    if function == "mean":
        return pa.float64()
    return column.type


def reduce_rows(xp, reduction: Reduction, rows: dict[str, Any], count: int,
                columns: tuple[Column, ...], ids: VertexIds) -> pa.Table:
    """The table of ``reduction`` over the rows (``xp`` arrays by output column, vertex columns
    internal ids; ``count`` of them): host numpy or device CuPy (the GPU tests' reference)."""
    by_name = {c.name: c for c in columns}
    names, arrays = [], []
    if reduction.key is not None:
        key_col = by_name[reduction.key]
        keys, counts = xp.unique(rows[reduction.key], return_counts=True)
        keys, counts = _host(keys).astype(np.int64), _host(counts).astype(np.int64)
        names.append(reduction.key_name)
        arrays.append(ids.user(keys) if key_col.vertex else to_arrow(keys, pa.int64()))
        for output, _, _ in reduction.calls:  # count(*) and count(col) only
            names.append(output)
            arrays.append(to_arrow(counts, pa.int64()))
        return pa.table(arrays, names=names)
    for output, function, column in reduction.calls:
        col = by_name.get(column) if column else None
        type_ = _result_type(function, col)
        if function in ("count_all", "count"):
            value = count
        elif count == 0:
            value = None
        else:
            values = rows[column]
            if function == "min":
                value = _scalar(values.min())
            elif function == "max":
                value = _scalar(values.max())
            elif function == "sum":
                value = _scalar(values.sum())
            else:  # mean
                value = float(values.sum(dtype=np.float64)) / count
            if col.vertex and value is not None:  # ids ascend with internal ids
                value = ids.user(np.array([value], dtype=np.int64))[0].as_py()
        names.append(output)
        arrays.append(pa.nulls(1, type_) if value is None else to_arrow([value], type_))
    return pa.table(arrays, names=names)


def _host(a) -> np.ndarray:
    return a.get() if hasattr(a, "get") else np.asarray(a)


def _scalar(x):
    x = _host(x)
    return x.item() if hasattr(x, "item") else x


def order_keys(xp, values, descending: bool):
    """Unsigned 64-bit keys that sort like ``values`` (int64 or float64, no NaN), reversed for
    ``descending``: what the device's radix selection ranks (``results.cu``: order_key)."""
    if values.dtype.kind == "f":
        bits = values.astype(np.float64).view(np.uint64)
        negative = (bits >> np.uint64(63)).astype(bool)
        keys = xp.where(negative, ~bits, bits | np.uint64(1 << 63))
    else:
        keys = values.astype(np.int64).view(np.uint64) ^ np.uint64(1 << 63)
    return ~keys if descending else keys


def top_rows(xp, top: TopRows, rows: dict[str, Any], columns: tuple[Column, ...],
             ids: VertexIds) -> pa.Table:
    """The table of ``top`` over the rows (``xp`` arrays by output column): the first
    ``offset + limit`` rows in the order asked (ties in row order), then the offset cut."""
    by_name = {c.name: c for c in columns}
    keys = order_keys(xp, rows[top.column], top.descending)
    order = xp.argsort(keys, kind="stable")[: top.offset + top.limit][top.offset:]
    names = [name for name, _ in top.outputs]
    arrays = []
    for _, column in top.outputs:
        col = by_name[column]
        picked = _host(rows[column][order])
        arrays.append(ids.user(picked.astype(np.int64)) if col.vertex
                      else to_arrow(picked.astype(_numpy_type(col.type)), col.type))
    return pa.table(arrays, names=names)
