"""The result path on the device: per-vertex values to the query's Arrow table, and the
aggregates pushed down onto a graph operator, with only their rows crossing the bus.

``results.cu`` has the kernels (ordered compaction, gathers through the user's ids, the
reductions, histogram and radix selection); :mod:`graphdb.executor.results` the host side and
the ``xp`` reference the GPU tests check these against. Everything runs on raw kernels,
memsets and copies: no CuPy elementwise operation, so a query's first result does not import
``cupyx`` (see :mod:`graphdb.executor.device`).

One result is one device buffer (every column at a RESULT_ALIGN offset, :func:`column_layout`)
copied once into page-locked memory, whose Arrow arrays are views of it. The page-locked
buffers come from CuPy's pinned pool in power-of-two sizes, so a query of about the same size
reuses the buffer of an earlier result that was released (page-locking is slow: about 0.7 ms a
MiB), and a buffer goes back to the pool when the last Arrow array over it is gone.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pyarrow as pa

from ..abi import RESULT_DROP, RESULT_TILE
from ..algorithms.spec import Column, VertexValues
from ..arrays import to_arrow, to_numpy
from ..errors import ExecutionError
from ..gpu import runtime as rt
from ..ids import VertexIds
from ..results import Reduction, TopRows, column_layout, order_keys, wrap_columns

__all__ = ["RESULTS", "compact", "device_reduce", "device_table", "device_top", "gather",
           "to_host", "user_ids_on_device"]

THREADS = 256
#: Results smaller than this are copied into ordinary memory (a page-locked buffer of its own
#: would cost more to lock than the copy saves).
PINNED_MIN_BYTES = 1 << 20
_SIGN = 1 << 63
_D2H = 2  # cudaMemcpyDeviceToHost

#: ``results.cu``.
RESULTS = rt.CudaModule("operators/results.cu", (
    "graphdb_results_count<{id}>", "graphdb_results_count<double>",
    "graphdb_results_rows<{id}>", "graphdb_results_rows<double>",
    "graphdb_results_gather<{id},long long>", "graphdb_results_gather<double,double>",
    "graphdb_results_reduce<long long>", "graphdb_results_reduce<double>",
    "graphdb_results_histogram<{id}>",
    "graphdb_results_radix<long long>", "graphdb_results_radix<double>",
    "graphdb_results_select<long long>", "graphdb_results_select<double>",
))

_NULL = np.uint64(0)  # a null pointer argument


def _fn(name: str, *dtypes):
    return RESULTS.function(f"{name}<{','.join(rt.value_ctype(d) for d in dtypes)}>")


def _arg(array):
    return _NULL if array is None else array


def user_ids_on_device(graph, ids: VertexIds):
    """The user's (integer) ids of ``graph``'s vertices on the current device, int64, uploaded
    once per graph version and held by the residency owner beside the graph."""
    return graph.derived("device:user_ids", lambda: rt.cp().asarray(ids.numeric),
                         device=rt.device_name())


# -- compaction and gathers ---------------------------------------------------------------------
def compact(marks, drop: str, *, count_only: bool = False):
    """(rows, k): the ids of the entries of ``marks`` (int32, int64 or float64 device array)
    that ``drop`` keeps, ascending, as an int64 device array of k entries; (None, n) when every
    entry is kept; (None, k) with ``count_only``. One host round trip (the count, to size the
    rows)."""
    cp = rt.cp()
    n = int(marks.size)
    if drop == "none":
        return None, n
    tiles = -(-n // RESULT_TILE)
    if tiles == 0:
        return cp.empty(0, dtype=np.int64), 0
    code = np.int32(RESULT_DROP[drop])
    first = cp.empty(tiles + 1, dtype=np.int64)  # per tile, then the total
    grid = (rt.grid_for(tiles * THREADS, THREADS),)
    _fn("graphdb_results_count", marks.dtype)(grid, (THREADS,), (marks, np.int64(n), code,
                                                                   first))
    RESULTS.function("graphdb_results_scan")((1,), (1024,), (first, np.int64(tiles),
                                                             first[tiles:]))
    k = int(first[tiles:].get()[0])
    if count_only:
        return None, k
    rows = cp.empty(max(k, 1), dtype=np.int64)
    _fn("graphdb_results_rows", marks.dtype)(grid, (THREADS,), (marks, np.int64(n), code, first,
                                                                  rows))
    return rows[:k], k


def gather(values, rows, k: int, user_ids, out) -> None:
    """``out[j] = values[rows[j]]`` for j < k, converted to ``out``'s dtype (int64 or
    float64); ``values`` None: the vertex id itself; ``rows`` None: j; through ``user_ids``
    (int64 outputs) when given."""
    if k == 0:
        return
    source = np.dtype(np.int64) if values is None else values.dtype
    if out.dtype == np.float64 and source != np.float64:
        raise TypeError(f"a float64 output column from {source} values")
    if out.dtype == np.int64 and source.kind != "i":
        raise TypeError(f"an int64 output column from {source} values")
    _fn("graphdb_results_gather", source, out.dtype)(
        (rt.grid_for(k, THREADS),), (THREADS,),
        (_arg(values), _arg(rows), np.int64(k), _arg(user_ids), out))


def _out_dtype(column: Column) -> np.dtype:
    return np.dtype(np.float64 if pa.types.is_floating(column.type) else np.int64)


def _columns_buffer(k: int, dtypes: list[np.dtype]):
    """One device buffer for ``k`` rows of columns of ``dtypes`` and the column views."""
    cp = rt.cp()
    offsets, total = column_layout(k, [d.itemsize for d in dtypes])
    buf = cp.empty(max(total, 1), dtype=np.uint8)
    views = [buf[o:o + k * d.itemsize].view(d) for o, d in zip(offsets, dtypes, strict=True)]
    return buf, offsets, total, views


def to_host(buf, nbytes: int, stream) -> pa.Buffer:
    """The first ``nbytes`` of device buffer ``buf`` as an Arrow buffer on the host: one copy,
    into page-locked memory from PINNED_MIN_BYTES on (the Arrow buffer keeps it alive)."""
    cp = rt.cp()
    if nbytes < PINNED_MIN_BYTES:
        host = np.empty(max(nbytes, 1), dtype=np.uint8)
        if nbytes:
            cp.cuda.runtime.memcpyAsync(host.ctypes.data, buf.data.ptr, nbytes, _D2H,
                                        stream.ptr)
        stream.synchronize()
        return pa.py_buffer(host)[:nbytes]
    size = 1 << (nbytes - 1).bit_length()  # power-of-two classes: the pool reuses them
    memory = cp.cuda.alloc_pinned_memory(size)
    cp.cuda.runtime.memcpyAsync(memory.ptr, buf.data.ptr, nbytes, _D2H, stream.ptr)
    stream.synchronize()
    return pa.foreign_buffer(memory.ptr, nbytes, base=memory)


def _rows(pv: VertexValues, count_only: bool = False):
    if pv.reached is None:
        return None, pv.num_vertices
    return compact(pv.values[pv.reached], pv.drop, count_only=count_only)


def _fetch(k: int, parts: list[tuple[Any, Any, np.dtype, Any]], stream):
    """Gather columns (values, rows, out dtype, user ids) of k rows into one device buffer,
    copy it to the host once; the host buffer, offsets and bytes."""
    buf, offsets, total, views = _columns_buffer(k, [p[2] for p in parts])
    for (values, rows, _, user), out in zip(parts, views, strict=True):
        gather(values, rows, k, user, out)
    return to_host(buf, total, stream), offsets, total


def _map_strings(arrays: list[pa.Array], columns, ids: VertexIds) -> list[pa.Array]:
    """String ids are mapped on the host (vertex columns came back as internal ids)."""
    if not ids.strings:
        return arrays
    return [ids.user(to_numpy(a)) if c.vertex else a for a, c in zip(arrays, columns,
                                                                      strict=True)]


def _device_user_ids(ids: VertexIds, device_ids: Callable[[], Any]):
    return None if ids.identity or ids.strings else device_ids()


# -- the three kinds of result --------------------------------------------------------------------
def device_table(columns: tuple[Column, ...], pv: VertexValues, ids: VertexIds,
                 device_ids: Callable[[], Any], metrics: dict) -> pa.Table:
    """The rows of ``pv`` as the query's table: compaction, id mapping and the columns on the
    device, one copy of the result to the host."""
    stream = rt.operator_stream()
    with stream:
        rows, k = _rows(pv)
        user = _device_user_ids(ids, device_ids)
        parts = [(pv.values.get(c.name), rows, _out_dtype(c), user if c.vertex else None)
                 for c in columns]
        host, offsets, total = _fetch(k, parts, stream)
    metrics.update(result_rows=k, result_bytes=total)
    arrays = wrap_columns(host, k, [c.type for c in columns], offsets)
    return pa.table(_map_strings(arrays, columns, ids), names=[c.name for c in columns])


def _decode(key: int, dtype: np.dtype):
    """The value of an order key (results.cu: order_key, ascending)."""
    if dtype.kind == "f":
        bits = key & ~_SIGN if key & _SIGN else ~key & (2**64 - 1)
        return float(np.array([bits], dtype=np.uint64).view(np.float64)[0])
    return int(np.array([key ^ _SIGN], dtype=np.uint64).view(np.int64)[0])


def _compacted(pv: VertexValues, column: str, rows, k: int):
    """The values of ``column`` at ``rows`` (internal ids for vertex columns) as a dense int64
    or float64 device array."""
    cp = rt.cp()
    values = pv.values.get(column)
    dtype = np.dtype(np.float64 if values is not None and values.dtype.kind == "f" else np.int64)
    out = cp.empty(max(k, 1), dtype=dtype)[:k]
    gather(values, rows, k, None, out)
    return out


def device_reduce(reduction: Reduction, columns: tuple[Column, ...], pv: VertexValues,
                  ids: VertexIds, device_ids: Callable[[], Any], metrics: dict) -> pa.Table:
    """``reduction`` over the rows of ``pv`` on the device; only its rows come to the host."""
    cp = rt.cp()
    by_name = {c.name: c for c in columns}
    stream = rt.operator_stream()
    names, arrays = [], []
    counts_only = reduction.key is None and all(c is None or f in ("count", "count_all")
                                                for _, f, c in reduction.calls)
    with stream:
        rows, k = _rows(pv, count_only=counts_only)  # count(*) alone: no row ids
        if reduction.key is not None:
            key = pv.values[reduction.key]
            n = pv.num_vertices
            hist = cp.zeros(max(n, 1), dtype=np.uint64)
            outside = cp.zeros(1, dtype=np.uint64)
            if k:
                grid = (rt.grid_for(k, THREADS),)
                _fn("graphdb_results_histogram", key.dtype)(grid, (THREADS,), (
                    key, _arg(rows), np.int64(k), np.int64(n), hist, outside))
            if int(outside.get()[0]):
                raise ExecutionError(f"GROUP BY {reduction.key}: a value outside [0, |V|)")
            groups, g = compact(hist[:n].view(np.int64), "zero")
            vertex = by_name[reduction.key].vertex
            user = _device_user_ids(ids, device_ids) if vertex else None
            parts = [(None, groups, np.dtype(np.int64), user)]
            parts += [(hist[:n].view(np.int64), groups, np.dtype(np.int64), None)
                      for _ in reduction.calls]
            host, offsets, total = _fetch(g, parts, stream)
            arrays = wrap_columns(host, g, [pa.int64()] * len(parts), offsets)
            if vertex and ids.strings:
                arrays[0] = ids.user(to_numpy(arrays[0]))
            names = [reduction.key_name] + [output for output, _, _ in reduction.calls]
            metrics.update(result_rows=g, result_bytes=total)
            return pa.table(arrays, names=names)
        reduced: dict[str, tuple[int, int, Any, np.dtype]] = {}
        for _, function, column in reduction.calls:
            if column is None or function in ("count", "count_all") or column in reduced \
                    or k == 0:
                continue
            values = _compacted(pv, column, rows, k)
            acc = cp.asarray(np.array([2**64 - 1, 0, 0], dtype=np.uint64))
            _fn("graphdb_results_reduce", values.dtype)((rt.grid_for(k, THREADS),), (THREADS,),
                                                        (values, np.int64(k), acc))
            lo, hi, total = (int(x) for x in acc.get())
            sum_value = np.array([total], dtype=np.uint64).view(values.dtype)[0].item()
            reduced[column] = (lo, hi, sum_value, values.dtype)
    for output, function, column in reduction.calls:
        col = by_name.get(column) if column else None
        if function in ("count_all", "count"):
            value, type_ = k, pa.int64()
        else:
            type_ = pa.float64() if function == "mean" else col.type
            value = None
            if k:
                lo, hi, total, dtype = reduced[column]
                value = {"min": lambda: _decode(lo, dtype), "max": lambda: _decode(hi, dtype),
                         "sum": lambda: total, "mean": lambda: float(total) / k}[function]()
                if col.vertex:  # internal ids ascend with the user's ids
                    value = ids.user(np.array([value], dtype=np.int64))[0].as_py()
        names.append(output)
        arrays.append(pa.nulls(1, type_) if value is None else to_arrow([value], type_))
    metrics.update(result_rows=1, result_bytes=8 * len(names))
    return pa.table(arrays, names=names)


def _radix_select(values, k: int, want: int, descending: bool) -> tuple[int, int]:
    """(threshold key, ties): the ``want`` smallest order keys of ``values`` are those below the
    threshold and ``ties`` of those equal to it (8 passes of 8-bit digits, one host read each)."""
    cp = rt.cp()
    hist = cp.zeros(256, dtype=np.uint64)
    radix = _fn("graphdb_results_radix", values.dtype)
    grid = (rt.grid_for(k, THREADS),)
    prefix, mask, need = 0, 0, want
    for shift in range(56, -8, -8):
        hist.data.memset_async(0, hist.nbytes)
        radix(grid, (THREADS,), (values, np.int64(k), np.int32(descending), np.uint64(prefix),
                                 np.uint64(mask), np.int32(shift), hist))
        counts = hist.get().astype(np.int64)
        below = np.cumsum(counts) - counts
        digit = int(np.flatnonzero(below + counts >= need)[0])
        need -= int(below[digit])
        prefix |= digit << shift
        mask |= 0xFF << shift
    return prefix, need


def device_top(top: TopRows, columns: tuple[Column, ...], pv: VertexValues, ids: VertexIds,
               device_ids: Callable[[], Any], metrics: dict) -> pa.Table:
    """``ORDER BY column LIMIT`` over the rows of ``pv`` on the device: a radix selection of
    the first ``offset + limit`` rows, only those gathered and copied; sorted on the host."""
    cp = rt.cp()
    by_name = {c.name: c for c in columns}
    stream = rt.operator_stream()
    with stream:
        rows, k = _rows(pv)
        want = min(top.offset + top.limit, k)
        keys = _compacted(pv, top.column, rows, k)
        picked = cp.empty(max(want, 1), dtype=np.int64)[:want]
        if want:
            threshold, ties = _radix_select(keys, k, want, top.descending)
            counters = cp.zeros(2, dtype=np.uint64)
            _fn("graphdb_results_select", keys.dtype)(
                (rt.grid_for(k, THREADS),), (THREADS,),
                (keys, np.int64(k), np.int32(top.descending), np.uint64(threshold),
                 np.int64(want - ties), np.int64(ties), counters, picked))
        chosen = cp.empty(max(want, 1), dtype=np.int64)[:want]  # internal ids of the rows
        gather(rows, picked, want, None, chosen)
        user = _device_user_ids(ids, device_ids)
        parts = [(keys, picked, keys.dtype, None)]
        for _, column in top.outputs:
            col = by_name[column]
            parts.append((pv.values.get(column), chosen, _out_dtype(col),
                          user if col.vertex else None))
        host, offsets, total = _fetch(want, parts, stream)
    metrics.update(result_rows=want, result_bytes=total)
    types = [pa.from_numpy_dtype(keys.dtype)] + [by_name[c].type for _, c in top.outputs]
    arrays = wrap_columns(host, want, types, offsets)
    order = np.argsort(order_keys(np, to_numpy(arrays[0]), top.descending), kind="stable")
    order = order[top.offset:]
    cols = [by_name[c] for _, c in top.outputs]
    out = _map_strings([a.take(to_arrow(order)) for a in arrays[1:]], cols, ids)
    return pa.table(out, names=[name for name, _ in top.outputs])
