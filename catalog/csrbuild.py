"""CSR construction under a memory budget: a counting sort by key, in memory or in buckets.

The input is an ingest's spooled edges: chunks of ``src`` and ``dst`` *keys* (raw integer ids,
or internal ids already), optional ``weight`` and input ``row``, in input order. The output is
the out-CSR and, for a directed graph, the in-CSR, and the :class:`Renumber` from keys to
internal ids (the keys that occur, in ascending order: a CSR sorted by key is sorted by
internal id, so the sort needs no mapped keys and only the targets are renumbered).

1. Presence: which keys occur. In memory it falls out of the degree count of each direction;
   otherwise one pass over the spool marks a bit per key.
2. Each direction (out: by source; in: by destination; an undirected graph's one direction has
   every edge both ways, forward edges first) is sorted:

   * **in memory** (the spool was never spilled and the output fits): degrees counted, then
     every edge scattered straight to its place, target renumbered on the way
     (:mod:`graphdb.catalog.counting`); the two directions run at once, one per core;
   * **in buckets** otherwise: a histogram of the keys (per key, or per group of keys where the
     key range is wide) cuts the range into buckets whose edges (and keys) fit the budget; a
     pass distributes the edges to one file per bucket, and the buckets are sorted in key order,
     each in memory, and appended to the output files. A bucket still too large (a group of
     keys holding a hub) is bucketed again by its own keys; a single key's edges stream through
     (their order is the input's) unless duplicates merge.

Within a vertex, edges keep their input order (a stable counting sort), unless duplicates are
merged: then they are ordered by the other endpoint, and each group of equal edges becomes one.
Nothing here holds an array of the size of the key range except, in memory, the degree counts
and lookup table, and in buckets, the presence bitmap (:mod:`graphdb.catalog.renumber`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .counting import count_keys, scatter, stable_order
from .renumber import Renumber, internal_dtype, mark_bits
from .spool import Spool

__all__ = ["CSR", "EdgeSource", "MERGE_WEIGHTS", "Topology", "build_topology", "csr_chunks",
           "read_range"]

#: How the weight of merged duplicate edges is chosen.
MERGE_WEIGHTS = ("min", "max", "sum", "first")
#: The bucketed sort's histogram of keys takes at most 1/HISTOGRAM_SHARE of its budget (a bin
#: counts a group of keys where the range has more keys than that): besides the presence
#: bitmap, its one array over the key range.
HISTOGRAM_SHARE = 16


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


@dataclass
class Topology:
    out: CSR
    reverse: CSR | None  # the in-CSR of a directed graph
    renumber: Renumber  # keys -> internal ids


@dataclass
class EdgeSource:
    """Spooled edges: ``chunks()`` yields dicts of ``src``, ``dst`` (keys) and optionally
    ``weight`` and ``row``, in input order, every time it is called."""

    chunks: Callable[[], Iterator[dict[str, np.ndarray]]]
    rows: int
    in_memory: bool  # the chunks are held in memory (no re-reading from disk)


def read_range(array: np.ndarray, start: int, stop: int) -> np.ndarray:
    """``array[start:stop]``; read from a memory map's file with plain I/O, so the pages of a
    big array do not stay mapped (and counted as resident) once they have been read."""
    if isinstance(array, np.memmap) and array.filename is not None:
        return np.fromfile(array.filename, dtype=array.dtype, count=stop - start,
                           offset=array.offset + start * array.itemsize)
    return array[start:stop]


# -- the edges of one direction --------------------------------------------------------------


def _direction(source: EdgeSource, key: str, undirected: bool, carry: dict | None = None):
    """A callable yielding ``key``/``other`` chunks of one direction, with the columns of
    ``carry`` (``{name in the chunk: spooled column}``): keyed by ``key`` ('src' or 'dst'); an
    undirected graph's edges forward, then every edge again reversed (a self loop only once).
    Forward edges first: the stored order then does not depend on the chunk size."""
    other = "dst" if key == "src" else "src"
    carry = carry or {}

    def chunks():
        for reverse in (False, True) if undirected else (False,):
            for chunk in source.chunks():
                k, o = (chunk[other], chunk[key]) if reverse else (chunk[key], chunk[other])
                out = {"key": k, "other": o}
                out.update((name, chunk[column]) for name, column in carry.items())
                if reverse:
                    back = k != o
                    out = {c: v[back] for c, v in out.items()}
                yield out

    return chunks


def _payload_columns(weighted: bool, with_rows: bool) -> list[str]:
    return (["weight"] if weighted else []) + (["row"] if with_rows else [])


def build_topology(source: EdgeSource, span: int, *, undirected: bool, weighted: bool,
                   with_rows: bool, merge: str | None, budget_bytes: int, tmpdir: Path,
                   renumber: bool = True,
                   extra_keys: Callable[[], Iterator[np.ndarray]] | None = None) -> Topology:
    """The CSR(s) of the edges of ``source``, whose keys are ``0..span-1``.

    ``renumber``: keys that never occur are dropped (raw ids; ``extra_keys`` yields keys that
    are vertices without any edge, e.g. a vertex file's); otherwise every key is a vertex.
    ``budget_bytes``: the memory the sort may use (the spool, if held in memory, is on top)."""
    payloads = _payload_columns(weighted, with_rows)
    stored = source.rows * (2 if undirected else 1)
    target_bytes = internal_dtype(span).itemsize
    out_row = target_bytes + 8 * len(payloads)
    directions = 1 if undirected else 2
    fits = stored * out_row * directions + span * (8 * directions + 5) <= budget_bytes
    sort = _Sort(span, undirected, weighted, with_rows, merge, budget_bytes, tmpdir)
    if source.in_memory and fits:
        return sort.in_memory(source, renumber, extra_keys)
    return sort.bucketed(source, renumber, extra_keys)


class _Sort:
    def __init__(self, span, undirected, weighted, with_rows, merge, budget_bytes, tmpdir):
        self.span, self.undirected, self.merge = span, undirected, merge
        self.weighted, self.with_rows = weighted, with_rows
        self.budget, self.tmpdir = budget_bytes, Path(tmpdir)

    # -- in memory -------------------------------------------------------------------------
    def in_memory(self, source: EdgeSource, renumbering: bool, extra_keys) -> Topology:
        held = list(source.chunks())
        source = EdgeSource(lambda: iter(held), source.rows, True)
        keys = ["src"] if self.undirected else ["src", "dst"]
        span = self.span

        # The directions side by side, each on its share of the cores (ranges of keys).
        threads = max(1, (os.cpu_count() or 1) // len(keys))

        def degrees(key: str) -> np.ndarray:
            chunks = _direction(source, key, self.undirected)()
            return count_keys((c["key"] for c in chunks), 0, span, threads)

        with ThreadPoolExecutor(len(keys)) as pool:
            counts = list(pool.map(degrees, keys))
        renumber = Renumber.everything(span)
        if renumbering:
            present = counts[0] > 0
            if len(counts) > 1:
                present |= counts[1] > 0
            for extra in extra_keys() if extra_keys is not None else ():
                present[extra] = True
            renumber = Renumber.from_present(present)
        if self.merge is not None:
            del counts
            out = self._merged_in_memory(source, renumber)
            return Topology(out, None if self.undirected else self._reverse_of(out, renumber.n),
                            renumber)

        def place(work) -> CSR:
            key, degree = work
            return self._scatter(source, key, degree, renumber, threads)

        with ThreadPoolExecutor(len(keys)) as pool:
            csrs = list(pool.map(place, zip(keys, counts)))
        return Topology(csrs[0], csrs[1] if len(csrs) > 1 else None, renumber)

    def _scatter(self, source: EdgeSource, key: str, degree: np.ndarray,
                 renumber: Renumber, threads: int = 1) -> CSR:
        """One direction placed by the counting sort's scatter (degrees per key given)."""
        offsets = np.zeros(renumber.n + 1, dtype=np.int64)
        np.cumsum(degree if renumber.identity else degree[renumber.present(0, self.span)],
                  out=offsets[1:])
        total = int(offsets[-1])
        # Each key's first position; 4 bytes where they suffice (the scatter reads and writes
        # this array at random: half the bytes, ~10% less time on RMAT20).
        starts = np.zeros(self.span, dtype=np.int32 if total < 2**31 else np.int64)
        np.cumsum(degree[:-1], out=starts[1:])
        del degree
        # Input rows align edge properties with the out-CSR only.
        columns = _payload_columns(self.weighted, self.with_rows and key == "src") or [None]
        targets = np.empty(total, dtype=renumber.dtype)
        out = {}
        # The scatter carries one payload: with weights and rows both, it runs twice.
        for i, column in enumerate(columns):
            fill = starts if i == len(columns) - 1 else starts.copy()
            values = None if column is None else np.empty(total, _DTYPES[column])
            carry = {} if column is None else {"payload": column}
            scatter(_direction(source, key, self.undirected, carry)(), 0, fill, renumber.lut,
                    targets, values, threads)
            if column is not None:
                out[column] = values
        return CSR(offsets, targets, out.get("weight"), out.get("row"))

    def _merged_in_memory(self, source: EdgeSource, renumber: Renumber) -> CSR:
        columns = _payload_columns(self.weighted, self.with_rows)
        edges = {"key": [], "other": []}
        edges.update((c, []) for c in columns)
        for chunk in _direction(source, "src", self.undirected, {c: c for c in columns})():
            for c, v in chunk.items():
                edges[c].append(v)
        edges = {c: np.concatenate(v) if v else np.zeros(0, np.int64) for c, v in edges.items()}
        degrees, cols, merged = _sort_bucket(edges, 0, self.span, self.merge)
        del edges
        offsets = np.zeros(renumber.n + 1, dtype=np.int64)
        keep = renumber.present(0, self.span)
        np.cumsum(degrees[keep], out=offsets[1:])
        return CSR(offsets, renumber(cols["other"]), cols.get("weight"), cols.get("row"),
                   merged)

    def _reverse_of(self, out: CSR, n: int) -> CSR:
        """The in-CSR of a merged out-CSR (merged duplicates must vanish from both)."""
        chunk_edges = max(1 << 12, self.budget // 64)
        source = EdgeSource(lambda: ({"src": c["key"], "dst": c["other"], **(
            {"weight": c["weight"]} if "weight" in c else {})} for c in csr_chunks(
                out, chunk_edges)), len(out.targets), False)
        sort = _Sort(n, False, self.weighted, False, None, self.budget, self.tmpdir)
        # Keyed by the target of each out-edge (its 'src' here), input order = out-CSR order.
        return sort._one_direction(source, "src", Renumber.everything(n), name="in")

    # -- in buckets ------------------------------------------------------------------------
    def bucketed(self, source: EdgeSource, renumbering: bool, extra_keys) -> Topology:
        renumber = Renumber.everything(self.span)
        if renumbering:
            bits = np.zeros(-(-self.span // 64) or 1, dtype=np.uint64)
            for chunk in source.chunks():
                mark_bits(bits, chunk["src"])
                mark_bits(bits, chunk["dst"])
            for extra in extra_keys() if extra_keys is not None else ():
                mark_bits(bits, extra)
            renumber = Renumber.from_bits(bits, self.span)
        out = self._one_direction(source, "src", renumber, name="out")
        reverse = None
        if not self.undirected:
            if self.merge is None:
                reverse = self._one_direction(source, "dst", renumber, name="in",
                                              with_rows=False)
            else:
                reverse = self._reverse_of(out, renumber.n)
        return Topology(out, reverse, renumber)

    def _one_direction(self, source: EdgeSource, key: str, renumber: Renumber, name: str,
                       with_rows: bool | None = None) -> CSR:
        with_rows = self.with_rows if with_rows is None else with_rows
        columns = {"key": np.int64, "other": np.int64}
        for c in _payload_columns(self.weighted, with_rows):
            columns[c] = _DTYPES[c]
        row_bytes = sum(np.dtype(d).itemsize for d in columns.values())
        cap = max(1, self.budget // (3 * row_bytes + 8 * 4))  # a bucket is held ~3 times
        out_columns = {"other": renumber.dtype}
        out_columns.update((c, d) for c, d in columns.items() if c not in ("key", "other"))
        output = Spool(self.tmpdir, f"{name}.csr", out_columns, budget_bytes=self.budget // 3)
        offsets = _Offsets(renumber.n, self.tmpdir / f"{name}.offsets", self.budget // 8)
        chunks = _direction(source, key, self.undirected if key == "src" else False,
                            {c: c for c in columns if c not in ("key", "other")})
        rows = source.rows * (2 if self.undirected and key == "src" else 1)
        try:
            merged = _Buckets(self, columns, cap, renumber, offsets, output, name).sort(
                chunks, rows, 0, self.span)
        except BaseException:
            offsets.discard()
            output.discard()
            raise
        result = output.memmaps()
        return CSR(offsets.finish(), result["other"], result.get("weight"), result.get("row"),
                   merged)


_DTYPES = {"weight": np.dtype(np.float64), "row": np.dtype(np.int64)}


class _Buckets:
    """The bucketed sort of one direction: histogram, distribution, buckets in key order."""

    def __init__(self, sort: _Sort, columns: dict, cap: int, renumber: Renumber,
                 offsets: "_Offsets", output: Spool, name: str):
        self.owner, self.columns, self.cap, self.renumber = sort, columns, cap, renumber
        self.offsets, self.output, self.name = offsets, output, name
        self.bins = max(1 << 10, sort.budget // (HISTOGRAM_SHARE * 8))
        self.merged = 0
        self.serial = 0

    def sort(self, chunks, rows: int, lo: int, hi: int) -> int:
        """Sort the edges of ``chunks()`` (keys in ``lo..hi-1``) into the output."""
        if (rows <= self.cap and hi - lo <= self.cap) or (hi - lo == 1 and self.owner.merge):
            # (merging one vertex's duplicates holds its edges, however many)
            self._leaf(chunks, lo, hi)
        elif hi - lo == 1:
            self._stream(chunks, lo, rows)
        else:
            self._split(chunks, lo, hi)
        return self.merged

    def _split(self, chunks, lo: int, hi: int) -> None:
        group = max(1, -(-(hi - lo) // self.bins))

        def bins_of(keys: np.ndarray) -> np.ndarray:
            keys = keys - lo if lo else keys
            return keys // group if group > 1 else keys

        histogram = count_keys((bins_of(c["key"]) for c in chunks()), 0, -(-(hi - lo) // group))
        edges = _bucket_bounds(histogram, self.cap, max(1, self.cap // group))
        del histogram
        count = len(edges) - 1
        # The bucket of every bin, narrow enough for numpy's radix sort (16-bit keys) below.
        bucket_of = np.repeat(np.arange(count, dtype=np.uint16 if count <= 1 << 16 else np.int64),
                              np.diff(edges))
        bounds = edges * group + lo
        bounds[-1] = hi
        self.serial += 1
        buckets = [Spool(self.owner.tmpdir, f"{self.name}.b{self.serial}.{b}", self.columns,
                         budget_bytes=0) for b in range(count)]
        try:
            for chunk in chunks():
                which = bucket_of[bins_of(chunk["key"])]
                order = np.argsort(which, kind="stable")
                cuts = np.zeros(count + 1, dtype=np.int64)
                np.cumsum(np.bincount(which, minlength=count), out=cuts[1:])
                del which
                moved = {c: chunk[c][order] for c in self.columns}  # bucket after bucket
                del order
                for b in np.flatnonzero(np.diff(cuts)):
                    buckets[b].append({c: v[cuts[b]:cuts[b + 1]] for c, v in moved.items()})
                del moved
            for b, bucket in enumerate(buckets):
                v0, v1 = int(bounds[b]), int(bounds[b + 1])
                if bucket.rows:
                    step = max(1 << 12, self.cap // 4)
                    self.sort(lambda bucket=bucket, step=step: bucket.chunks(step), bucket.rows,
                              v0, v1)
                else:
                    self.offsets.skip(self.renumber.count(v0, v1))
                bucket.discard()
        finally:
            for bucket in buckets:
                bucket.discard()

    def _leaf(self, chunks, lo: int, hi: int) -> None:
        held = list(chunks())
        edges = {c: (held[0][c] if len(held) == 1 else np.concatenate([h[c] for h in held]))
                 for c in self.columns} if held else {c: np.zeros(0, d)
                                                      for c, d in self.columns.items()}
        del held
        degrees, cols, merged = _sort_bucket(edges, lo, hi, self.owner.merge)
        del edges
        self.merged += merged
        self.offsets.add(degrees[self.renumber.present(lo, hi)])
        cols["other"] = self.renumber(cols["other"])
        self.output.append(cols)

    def _stream(self, chunks, key: int, rows: int) -> None:
        """One key's edges, more than a bucket holds: in input order, renumbered."""
        self.offsets.add(np.array([rows], dtype=np.int64))
        for chunk in chunks():
            cols = {c: v for c, v in chunk.items() if c != "key"}
            cols["other"] = self.renumber(cols["other"])
            self.output.append(cols)


def _sort_bucket(edges: dict[str, np.ndarray], v0: int, v1: int, merge: str | None
                 ) -> tuple[np.ndarray, dict[str, np.ndarray], int]:
    """Sort one bucket's edges by key; returns (degrees of v0..v1-1, sorted columns, merged).
    ``other`` keeps its dtype (keys: the caller renumbers)."""
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
        out = {"other": other}
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
    out = {"other": other[starts]}
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


def _bucket_bounds(counts: np.ndarray, cap: int, width: int) -> np.ndarray:
    """Bin boundaries [0, b1, ..., len(counts)] of buckets holding at most ``cap`` edges and
    ``width`` bins each (a single bin with more edges than that gets a bucket of its own).
    ``counts`` is turned into its running sum in place."""
    n = len(counts)
    ends = np.cumsum(counts, out=counts)
    bounds = [0]
    while bounds[-1] < n:
        start = bounds[-1]
        base = ends[start - 1] if start else 0
        stop = int(np.searchsorted(ends, base + cap, side="right"))
        bounds.append(min(max(stop, start + 1), start + width, n))
    return np.array(bounds, dtype=np.int64)


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
                            np.diff(read_range(csr.offsets, v, stop_v + 1)))
        chunk = {"key": part["targets"], "other": sources}
        if "weights" in part:
            chunk["weight"] = part["weights"]
        yield chunk
        v = stop_v
