"""The user's vertex ids -> dense internal ids 0..V-1, in ascending order of the user's ids.

Ascending order is an invariant other code relies on (binary-search id lookup, CDLP ties).

While the input streams by, every id column is turned into int64 *keys*: integer ids are their own
keys; a string id's key is its position in a dictionary of the strings seen so far (first-seen
order). Edges are kept as keys (in memory or spilled to disk) until every id has been seen; then
:meth:`IdSet.finish` turns keys into internal ids with one lookup each:

* integer ids, dense (non-negative and a moderate maximum): a presence bitmap whose running count
  is the internal id (no sort at all: np.unique over 32 M ids costs seconds);
* integer ids, sparse (e.g. 64-bit hashes): sorted unique runs merged as they come, then a
  binary search;
* strings: the dictionary sorted once; a key's internal id is its rank.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import IngestError

__all__ = ["IdSet", "IdMapper"]

_INT64_MAX = np.iinfo(np.int64).max


def internal_dtype(n: int) -> np.dtype:
    return np.dtype(np.int32) if n < 2**31 else np.dtype(np.int64)


def sorted_search(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """``np.searchsorted(haystack, needles)``, several times faster for random needles: sorted
    needles let each search start where the previous one ended (and stay in cache)."""
    order = np.argsort(needles)
    found = np.empty(len(needles), dtype=np.int64)
    found[order] = np.searchsorted(haystack, needles[order])
    return found


class IdMapper:
    """Keys -> internal ids, and the sorted user ids (the ``id`` column of ``g.vertices``)."""

    def __init__(self, ids: pa.Array, lut: np.ndarray | None = None,
                 sorted_keys: np.ndarray | None = None):
        self.ids = ids
        self.n = len(ids)
        self._lut, self._sorted = lut, sorted_keys
        self.dtype = internal_dtype(self.n)
        # Ids that are exactly 0..V-1 (generated graphs, many datasets) map to themselves.
        self.identity = lut is None and sorted_keys is None

    def __call__(self, keys: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        if self.identity:
            if out is None:
                return keys.astype(self.dtype)
            out[...] = keys
            return out
        if self._lut is not None:
            return np.take(self._lut, keys, out=out)
        if out is None:
            out = np.empty(len(keys), dtype=self.dtype)
        out[...] = sorted_search(self._sorted, keys)
        return out

    @property
    def nbytes(self) -> int:
        arrays = [a for a in (self._lut, self._sorted) if a is not None]
        return sum(a.nbytes for a in arrays) + self.ids.nbytes


class IdSet:
    """The set of vertex ids seen so far, of one kind: ``int`` or ``string``."""

    def __init__(self, kind: str | None = None, dense_limit: int = 1 << 27,
                 pending_limit: int = 1 << 22):
        self.kind = kind  # None until the first ids arrive (or forced by --id-type)
        self.dense_limit = dense_limit  # largest id space kept as a bitmap
        self.pending_limit = pending_limit  # sparse ids: unmerged ids held at most
        self._present = np.zeros(0, dtype=bool)  # dense integer mode
        self._sorted: np.ndarray | None = None  # sparse integer mode: sorted unique ids
        self._pending: list[np.ndarray] = []
        self._pending_size = 0
        self._strings = pa.array([], pa.string())  # string mode: first-seen dictionary
        self.frozen = False  # no new ids (a vertex file and --missing-vertices error)

    # -- turning a column into keys ------------------------------------------------------------
    def column_kind(self, column: pa.Array) -> str:
        t = column.type
        if pa.types.is_integer(t):
            return "int"
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return "string"
        if pa.types.is_floating(t):
            as_int = pc.cast(column, pa.int64(), safe=False)
            if pc.all(pc.equal(pc.cast(as_int, t), column)).as_py() is not False:
                return "int"
        return "string"

    def keys(self, column: pa.Array, *, add: bool = True) -> np.ndarray:
        """int64 keys of a column of ids (no nulls); records the ids unless ``add`` is False."""
        kind = self.column_kind(column)
        if self.kind is None:
            self.kind = kind
        if self.kind == "string":
            return self._string_keys(column.cast(pa.string()), add)
        if kind == "string":
            text = column.cast(pa.string())
            integer = pc.match_substring_regex(text, r"^\s*[-+]?\d+\s*$").fill_null(False)
            row = max(pc.index(integer, False).as_py(), 0)
            error = IngestError(f"vertex id {text[row].as_py()!r} is text but the ids so far are "
                                "integers; load with --id-type string to read every id as text")
            error.row = row  # the caller names the line
            raise error
        values = self._int_values(column)
        if add and not self.frozen:
            self._add_ints(values)
        return values

    def _int_values(self, column: pa.Array) -> np.ndarray:
        if pa.types.is_uint64(column.type) and len(column) and pc.max(column).as_py() > _INT64_MAX:
            raise IngestError("vertex ids above 2^63-1 are not supported as integers; "
                              "load with --id-type string")
        return np.asarray(pc.cast(column, pa.int64(), safe=False).to_numpy(zero_copy_only=False))

    def _add_ints(self, values: np.ndarray) -> None:
        if not len(values):
            return
        if self._sorted is None:
            lo, hi = (v.as_py() for v in pc.min_max(values).values())  # one pass
            if lo >= 0 and hi < self.dense_limit:
                if hi >= len(self._present):
                    grown = np.zeros(max(hi + 1, 2 * len(self._present)), dtype=bool)
                    grown[: len(self._present)] = self._present
                    self._present = grown
                self._present[values] = True
                return
            # Ids too spread out for a bitmap: switch to sorted unique runs.
            self._sorted = np.flatnonzero(self._present).astype(np.int64)
            self._present = np.zeros(0, dtype=bool)
        run = pc.unique(pa.array(values)).to_numpy()  # a hash table: no sort per batch
        self._pending.append(run)
        self._pending_size += len(run)
        if self._pending_size > max(len(self._sorted), self.pending_limit):
            self._merge_pending()

    def _merge_pending(self) -> None:
        if self._pending:
            self._sorted = np.unique(np.concatenate([self._sorted] + self._pending))
            self._pending, self._pending_size = [], 0

    def _string_keys(self, column: pa.Array, add: bool) -> np.ndarray:
        encoded = pc.dictionary_encode(column)
        if isinstance(encoded, pa.ChunkedArray):
            encoded = encoded.combine_chunks()
        local = encoded.dictionary
        # One hash table of the dictionary per call: callers pass large chunks so this stays
        # a small share of the work.
        position = pc.index_in(local, value_set=self._strings)
        known = np.asarray(position.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
        new = known < 0
        if new.any():
            if not add or self.frozen:
                known[new] = -1
            else:
                known[new] = len(self._strings) + np.arange(int(new.sum()))
                self._strings = pa.concat_arrays([self._strings, local.filter(pa.array(new))])
        return known[encoded.indices.to_numpy(zero_copy_only=False)]

    # -- membership (vertex files with --missing-vertices error) ----------------------------------
    def missing(self, keys: np.ndarray) -> np.ndarray:
        """Mask of keys that are not in the set."""
        if self.kind == "string":
            return keys < 0
        if self._sorted is None:
            inside = (keys >= 0) & (keys < len(self._present))
            out = ~inside
            out[inside] = ~self._present[keys[inside]]
            return out
        self._merge_pending()
        pos = sorted_search(self._sorted, keys)
        pos[pos >= len(self._sorted)] = 0
        return self._sorted[pos] != keys if len(self._sorted) else np.ones(len(keys), bool)

    def __len__(self) -> int:
        if self.kind == "string":
            return len(self._strings)
        if self._sorted is None:
            return int(np.count_nonzero(self._present))
        self._merge_pending()
        return len(self._sorted)

    @property
    def nbytes(self) -> int:
        return (self._present.nbytes + self._strings.nbytes + self._pending_size * 8
                + (0 if self._sorted is None else self._sorted.nbytes))

    # -- the mapping ---------------------------------------------------------------------------
    def finish(self) -> IdMapper:
        if self.kind == "string":
            order = pc.sort_indices(self._strings).to_numpy()
            rank = np.empty(len(order), dtype=internal_dtype(len(order)))
            rank[order] = np.arange(len(order), dtype=rank.dtype)
            return IdMapper(self._strings.take(pa.array(order)), lut=rank)
        if self._sorted is None:
            n = int(np.count_nonzero(self._present))
            if n == len(self._present):
                return IdMapper(pa.array(np.arange(n, dtype=np.int64)))
            lut = np.cumsum(self._present, dtype=internal_dtype(n))
            lut -= 1  # the running count of present ids is the internal id
            ids = np.flatnonzero(self._present).astype(np.int64)
            return IdMapper(pa.array(ids, pa.int64()), lut=lut)
        self._merge_pending()
        return IdMapper(pa.array(self._sorted, pa.int64()), sorted_keys=self._sorted)
