"""CSR construction under a memory budget: a counting sort by source-vertex bucket.

1. One pass over the edges counts each vertex's degree.
2. The vertex range is cut into buckets of consecutive vertices whose edges fit the budget.
3. With one bucket (the graph fits), the edges are sorted in memory. Otherwise a second pass
   distributes the edges to one temporary file per bucket, and each bucket, in vertex order, is
   loaded, sorted and appended to the output files: the output is written sequentially and every
   step holds at most one bucket (plus one input chunk) in memory, whatever the graph's size.

Within a vertex, edges keep their input order (a stable counting sort), unless duplicates are
merged: then they are ordered by the other endpoint, and each group of equal edges becomes one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from graphdb.storage.compiled import Kernel

from .spool import Spool

__all__ = ["CSR", "COUNTING_SORT", "build_csr", "csr_chunks", "read_range", "MERGE_WEIGHTS",
           "stable_order"]

#: How the weight of merged duplicate edges is chosen.
MERGE_WEIGHTS = ("min", "max", "sum", "first")


def _sparsetools():
    """scipy's sparsetools, whose COO->CSR conversion is an O(E + V) stable counting sort in C;
    None without scipy (a pure numpy path remains). Imported on first use: importing scipy.sparse
    costs ~100 ms, which ``import graphdb`` should not pay."""
    try:
        from scipy.sparse import _sparsetools as tools
    except ImportError:  # pragma: no cover - scipy is a dependency
        return None
    return tools


@dataclass
class CSR:
    offsets: np.ndarray  # int64, V + 1
    targets: np.ndarray  # int32 (int64 when V >= 2^31); may be np.memmap
    weights: np.ndarray | None
    rows: np.ndarray | None  # the input row of each stored edge (edge property alignment)
    merged: int = 0  # duplicate edges merged away

    def edge_range(self, start: int, stop: int) -> dict[str, np.ndarray]:
        """Edges [start, stop) as fresh arrays."""
        out = {"targets": read_range(self.targets, start, stop)}
        if self.weights is not None:
            out["weights"] = read_range(self.weights, start, stop)
        return out


def read_range(array: np.ndarray, start: int, stop: int) -> np.ndarray:
    """``array[start:stop]``; read from a memory map's file with plain I/O, so the pages of a
    big array do not stay mapped (and counted as resident) once they have been read."""
    if isinstance(array, np.memmap) and array.filename is not None:
        return np.fromfile(array.filename, dtype=array.dtype, count=stop - start,
                           offset=array.offset + start * array.itemsize)
    return array[start:stop]


def _counting_sort(keys, other, payload, offsets, other_out, payload_out):
    """The compiled loop of :func:`stable_order`: degrees counted into ``offsets[1:]`` (zeroed
    by the caller), made offsets, then ``other`` (and ``payload``, unless it is empty) scattered
    to each key's next free position, in input order. Indices are unsigned: numba emits a
    wraparound branch for every signed index (see :mod:`graphdb.executor.algorithms._kernels`)."""
    one = np.uint64(1)
    carry = len(payload) > 0
    for i in range(len(keys)):
        offsets[np.uint64(keys[i]) + one] += 1
    for v in range(len(offsets) - 1):
        offsets[v + 1] += offsets[v]
    fill = offsets[:-1].copy()
    for i in range(len(keys)):
        k = np.uint64(keys[i])
        at = fill[k]
        other_out[at] = other[i]
        if carry:
            payload_out[at] = payload[i]
        fill[k] = at + 1


def _warm_sort(compiled) -> None:
    """int32 keys and ids, with nothing, float64 weights or int64 rows to carry."""
    ids = np.zeros(1, np.int32)
    for payload in (np.zeros(0, np.int8), np.zeros(1, np.float64), np.zeros(1, np.int64)):
        compiled(ids, ids, payload, np.zeros(2, np.int64), np.empty(1, np.int32),
                 np.empty(len(payload), payload.dtype))


#: The compiled :func:`_counting_sort`: 0.18 s where scipy's took 0.27-0.32 s to sort RMAT20's
#: 16.8 M edges (both directions at once, one per core); it carries no payload when there is
#: none, where scipy has to scatter one.
COUNTING_SORT = Kernel(_counting_sort, _warm_sort)


def stable_order(keys: np.ndarray, n: int, payload: np.ndarray | None, other: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(degrees, other, payload) rearranged in ascending ``keys`` (0..n-1), ties in input order;
    ``payload`` may be None (nothing to carry)."""
    dtype = np.int64 if max(n, len(keys)) >= 2**31 else np.int32
    keys = keys.astype(dtype, copy=False)
    other = other.astype(dtype, copy=False)
    compiled = COUNTING_SORT.get()
    if compiled is not None:
        offsets = np.zeros(n + 1, dtype=np.int64)
        other_out = np.empty(len(keys), dtype=dtype)
        carried = np.zeros(0, np.int8) if payload is None else payload
        payload_out = np.empty(len(carried), dtype=carried.dtype)
        compiled(keys, other, carried, offsets, other_out, payload_out)
        return np.diff(offsets), other_out, None if payload is None else payload_out
    carried = np.zeros(len(keys), dtype=np.int8) if payload is None else payload
    tools = _sparsetools() if carried.dtype.kind in "biuf" else None
    if tools is not None:
        offsets = np.empty(n + 1, dtype=dtype)
        other_out = np.empty(len(keys), dtype=dtype)
        payload_out = np.empty(len(keys), dtype=carried.dtype)
        tools.coo_tocsr(n, max(n, 1), len(keys), keys, other, carried, offsets,
                        other_out, payload_out)
        return (np.diff(offsets).astype(np.int64), other_out,
                None if payload is None else payload_out)
    order = np.argsort(keys, kind="stable")
    return (np.bincount(keys, minlength=n).astype(np.int64), other[order],
            None if payload is None else payload[order])


def _sort_bucket(edges: dict[str, np.ndarray], v0: int, v1: int, merge: str | None,
                 out_dtype) -> tuple[np.ndarray, dict[str, np.ndarray], int]:
    """Sort one bucket's edges by key; returns (degrees of v0..v1-1, sorted columns, merged)."""
    keys = edges["key"] - v0 if v0 else edges["key"]
    n = v1 - v0
    extra = [c for c in ("weight", "row") if c in edges]
    if merge is None:
        if len(extra) == 1:
            payload = edges[extra[0]]
        elif extra:
            payload = np.arange(len(keys), dtype=np.int64)
        else:
            payload = None
        degrees, other, payload = stable_order(keys, n, payload, edges["other"])
        out = {"other": other.astype(out_dtype, copy=False)}
        if len(extra) == 1:
            out[extra[0]] = payload
        elif extra:
            for c in extra:
                out[c] = edges[c][payload]
        return degrees, out, 0
    order = np.lexsort((edges["other"], keys))
    keys, other = keys[order], edges["other"][order]
    first = np.ones(len(keys), dtype=bool)
    first[1:] = (keys[1:] != keys[:-1]) | (other[1:] != other[:-1])
    starts = np.flatnonzero(first)
    out = {"other": other[starts].astype(out_dtype, copy=False)}
    if "row" in edges:
        # Properties of a merged edge are those of its first occurrence in the input.
        rows = edges["row"][order]
        out["row"] = np.minimum.reduceat(rows, starts) if len(starts) else rows[:0]
    if "weight" in edges:
        w = edges["weight"][order]
        if not len(starts):
            out["weight"] = w[:0]
        elif merge == "first":
            # lexsort is stable: the first of a group is the earliest in the input.
            out["weight"] = w[starts]
        else:
            ufunc = {"min": np.minimum, "max": np.maximum, "sum": np.add}[merge]
            out["weight"] = ufunc.reduceat(w, starts)
    degrees = np.bincount(keys[starts], minlength=n).astype(np.int64)
    return degrees, out, len(keys) - len(starts)


def _bucket_bounds(degrees: np.ndarray, cap: int) -> np.ndarray:
    """Vertex boundaries [b0=0, b1, ..., V] of buckets holding at most ``cap`` edges each (a
    single vertex with more edges than that gets a bucket of its own). ``degrees`` is turned
    into its running sum in place (no second array of 8 bytes per vertex)."""
    n = len(degrees)
    ends = np.cumsum(degrees, out=degrees)
    bounds = [0]
    while bounds[-1] < n:
        start = bounds[-1]
        base = ends[start - 1] if start else 0
        stop = int(np.searchsorted(ends, base + cap, side="right"))
        bounds.append(max(stop, start + 1))
    return np.array(bounds, dtype=np.int64)


def _count_keys(degrees: np.ndarray, keys: np.ndarray) -> None:
    """``degrees += bincount(keys)``, without bincount's array of 8 bytes per vertex when a
    chunk holds fewer keys than there are vertices (an external sort's first pass): there
    ``np.add.at`` is also the faster (0.9 against 2.8 ms for 174 k keys over 2 M vertices)."""
    if len(keys) >= len(degrees):
        degrees += np.bincount(keys, minlength=len(degrees))
    else:
        np.add.at(degrees, keys, 1)


class _Offsets:
    """CSR offsets written as they become known, vertex ranges in order: in memory, or, when
    their 8 bytes per vertex exceed ``spill_bytes``, to a file that is read back as a memory
    map (what the commit writes from, and unmaps as it goes: storage.topology). A graph's
    offsets then count against the memory limit like its edges do."""

    PIECE = 1 << 20  # vertices of zero degree written at a time

    def __init__(self, n: int, path: Path, spill_bytes: int):
        self.n, self.path, self.total, self.at = n, path, 0, 1
        self.array = np.zeros(n + 1, dtype=np.int64) if 8 * (n + 1) <= spill_bytes else None
        self.file = None
        if self.array is None:
            self.file = open(path, "wb")
            self.file.write(np.zeros(1, dtype=np.int64).tobytes())

    def add(self, degrees: np.ndarray) -> None:
        """The degrees of the next ``len(degrees)`` vertices."""
        ends = np.cumsum(degrees, dtype=np.int64)
        ends += self.total
        if len(ends):
            self.total = int(ends[-1])
        if self.array is not None:
            self.array[self.at:self.at + len(ends)] = ends
        else:
            self.file.write(ends.tobytes())
        self.at += len(ends)

    def skip(self, count: int) -> None:
        """The next ``count`` vertices have no edges."""
        for start in range(0, count, self.PIECE):
            self.add(np.zeros(min(self.PIECE, count - start), dtype=np.int64))

    def finish(self) -> np.ndarray:
        assert self.at == self.n + 1, (self.at, self.n)
        if self.array is not None:
            return self.array
        self.file.close()
        return np.memmap(self.path, dtype=np.int64, mode="r", shape=(self.n + 1,))

    def discard(self) -> None:
        if self.file is not None and not self.file.closed:
            self.file.close()
            self.path.unlink(missing_ok=True)


def build_csr(chunks: Callable[[], Iterator[dict[str, np.ndarray]]], n: int, *,
              weighted: bool, with_rows: bool, merge: str | None, budget_bytes: int,
              tmpdir: Path, name: str, num_edges: int | None = None) -> CSR:
    """The CSR of the edges ``chunks()`` yields (it is called up to twice, each time yielding
    the same dicts of ``key`` (the list the edge goes to), ``other``, ``weight``, ``row``).
    ``num_edges``, when known, lets a graph that fits skip the degree-counting pass."""
    out_dtype = np.int32 if n < 2**31 else np.int64
    columns = {"key": out_dtype, "other": out_dtype}
    if weighted:
        columns["weight"] = np.float64
    if with_rows:
        columns["row"] = np.int64
    row_bytes = sum(np.dtype(d).itemsize for d in columns.values())

    # A bucket is held about three times over while sorted (input, order, output).
    cap = max(1, budget_bytes // (3 * row_bytes + 8))
    if num_edges is not None and num_edges <= cap:
        bounds = np.array([0, n], dtype=np.int64)
    else:
        degrees = np.zeros(n, dtype=np.int64)
        for chunk in chunks():
            _count_keys(degrees, chunk["key"])
        bounds = _bucket_bounds(degrees, cap)
        del degrees

    output = Spool(tmpdir, f"{name}.csr", {c: d for c, d in columns.items() if c != "key"},
                   budget_bytes=budget_bytes // 3)
    # Offsets are written bucket by bucket, in vertex order (to a file under a small budget).
    offsets = _Offsets(n, tmpdir / f"{name}.offsets", budget_bytes // 8)
    try:
        merged = _sort_into(chunks, n, bounds, columns, merge, out_dtype, tmpdir, name, offsets,
                            output)
    except BaseException:
        offsets.discard()
        raise
    result = output.memmaps()
    return CSR(offsets.finish(), result["other"], result.get("weight"), result.get("row"),
               merged)


def _sort_into(chunks, n: int, bounds: np.ndarray, columns: dict, merge: str | None,
               out_dtype, tmpdir: Path, name: str, offsets: _Offsets, output: Spool) -> int:
    """Sort the edges bucket by bucket into ``output`` and their degrees into ``offsets``;
    returns how many duplicate edges were merged away."""
    merged = 0
    if len(bounds) <= 2:
        everything = [c for c in chunks()]
        edges = {c: (everything[0][c] if len(everything) == 1 else
                     np.concatenate([e[c] for e in everything])) for c in columns}
        del everything
        deg, sorted_cols, merged = _sort_bucket(edges, 0, n, merge, out_dtype)
        del edges
        offsets.add(deg)
        output.append(sorted_cols)
    else:
        buckets = [Spool(tmpdir, f"{name}.bucket{b}", columns, budget_bytes=0)
                   for b in range(len(bounds) - 1)]
        # Bucket of each vertex, narrow enough for numpy's radix sort (16-bit keys) below.
        narrow = np.uint16 if len(buckets) <= 1 << 16 else np.int64
        bucket_of = np.repeat(np.arange(len(buckets), dtype=narrow), np.diff(bounds))
        try:
            for chunk in chunks():
                which = bucket_of[chunk["key"]]
                order = np.argsort(which, kind="stable")
                cuts = np.searchsorted(which[order], np.arange(len(buckets) + 1))
                for b in np.flatnonzero(np.diff(cuts)):
                    pick = order[cuts[b]:cuts[b + 1]]
                    buckets[b].append({c: chunk[c][pick] for c in columns})
            for b, bucket in enumerate(buckets):
                v0, v1 = int(bounds[b]), int(bounds[b + 1])
                if bucket.rows:
                    edges = next(bucket.chunks(bucket.rows))
                    deg, sorted_cols, m = _sort_bucket(edges, v0, v1, merge, out_dtype)
                    offsets.add(deg)
                    output.append(sorted_cols)
                    merged += m
                else:
                    offsets.skip(v1 - v0)
                bucket.discard()
        finally:
            for bucket in buckets:
                bucket.discard()
        del bucket_of
    return merged


def csr_chunks(csr: CSR, max_edges: int) -> Iterator[dict[str, np.ndarray]]:
    """The edges of ``csr`` as (``key`` = target, ``other`` = source) chunks of whole vertices:
    the input of the reverse (in-edge) CSR."""
    n = len(csr.offsets) - 1
    v = 0
    while v < n:
        start = int(csr.offsets[v])
        stop_v = int(np.searchsorted(csr.offsets, start + max_edges, side="right")) - 1
        stop_v = min(max(stop_v, v + 1), n)
        stop = int(csr.offsets[stop_v])
        part = csr.edge_range(start, stop)
        sources = np.repeat(np.arange(v, stop_v, dtype=csr.targets.dtype),
                            np.diff(csr.offsets[v:stop_v + 1]))
        chunk = {"key": part["targets"], "other": sources}
        if "weights" in part:
            chunk["weight"] = part["weights"]
        yield chunk
        v = stop_v
