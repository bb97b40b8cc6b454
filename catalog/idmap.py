"""The user's vertex ids -> dense internal ids 0..V-1, in ascending order of the user's ids.

Ascending order is an invariant other code relies on (binary-search id lookup, CDLP ties).

While the input streams by, every id column is turned into int64 *keys*: integer ids are their own
keys; a string id's key is its position in a dictionary of the strings seen so far (first-seen
order). Edges are kept as keys (in memory or spilled to disk); once every id has been seen,
:meth:`IdSet.finish` says how keys become internal ids:

* integer ids that are non-negative and not spread out much wider than there can be vertices
  (generated graphs, most datasets): nothing is collected while reading but the smallest and
  largest id. The edges are sorted by the raw id itself and the ids that never occur are dropped
  afterwards (:mod:`graphdb.catalog.renumber`): a :class:`DenseKeys`;
* integer ids spread out (e.g. 64-bit hashes, negative ids): the distinct ids are collected from
  the spooled keys afterwards (sorted unique runs, merged as they come), then each key is found
  by binary search: an :class:`IdMapper`;
* strings: the dictionary sorted once; a key's internal id is its rank: an :class:`IdMapper`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from graphdb.storage.lazy import pc

from .arrays import arrow_values, column_values
from .errors import IngestError, excerpt
from .renumber import internal_dtype

__all__ = ["DenseKeys", "IdMapper", "IdSet", "dense_span_limit", "sorted_search"]

_INT64_MAX = np.iinfo(np.int64).max


def sorted_search(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """``np.searchsorted(haystack, needles)``, several times faster for random needles: sorted
    needles let each search start where the previous one ended (and stay in cache)."""
    order = np.argsort(needles)
    found = np.empty(len(needles), dtype=np.int64)
    found[order] = np.searchsorted(haystack, needles[order])
    return found


def dense_span_limit(rows: int, budget: int) -> int:
    """The largest raw-id range sorted by raw id: a few times the vertices ``rows`` edges (and
    vertex rows) can have, and no more than the memory limit can hold a bit and a running count
    per id of (0.19 bytes per id, in a quarter of the limit)."""
    return min(max(1 << 16, 4 * (2 * rows + 1)), max(1 << 16, int(budget * 4 // 3)))


@dataclass(frozen=True)
class DenseKeys:
    """Keys are the raw integer ids, all in ``0..span-1``; the sort renumbers them."""

    span: int


def _encoded(column: pa.Array) -> pa.DictionaryArray:
    """A string column dictionary-encoded (its distinct values, and an index per row)."""
    encoded = pc.dictionary_encode(column)
    return encoded.combine_chunks() if isinstance(encoded, pa.ChunkedArray) else encoded


#: A value a text reader would take for a number.
_NUMBER = r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$"


def _kind_name(t: pa.DataType) -> str:
    if pa.types.is_struct(t):
        return "structs"
    if pa.types.is_map(t):
        return "maps"
    if pa.types.is_union(t):
        return "unions"
    return "lists"


def _refuse(column: pa.Array, bad: pa.Array, message: str) -> None:
    """Raise ``message`` (the value quoted in it) for the first row where ``bad`` holds; the
    error carries the row, which the caller turns into a line."""
    row = pc.index(bad.fill_null(False), True).as_py()
    if row >= 0:
        value = column[row].as_py()
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # 1.8446744073709552e+19 as the integer it stands for
        error = IngestError(message.format(excerpt(value)))
        error.row = row
        raise error


class IdMapper:
    """Keys -> internal ids, and the sorted user ids (the ``id`` column of ``g.vertices``)."""

    def __init__(self, ids: pa.Array, lut: np.ndarray | None = None,
                 sorted_keys: np.ndarray | None = None):
        self.ids = ids
        self.n = len(ids)
        self._lut, self._sorted = lut, sorted_keys
        self.dtype = internal_dtype(self.n)

    def __call__(self, keys: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        if self._lut is not None:
            return np.take(self._lut, keys, out=out)
        if out is None:
            out = np.empty(len(keys), dtype=self.dtype)
        out[...] = sorted_search(self._sorted, keys)
        return out

    @property
    def lut(self) -> np.ndarray | None:
        """The lookup table from key to internal id (string ids), if that is the form."""
        return self._lut

    @property
    def nbytes(self) -> int:
        arrays = [a for a in (self._lut, self._sorted) if a is not None]
        return sum(a.nbytes for a in arrays) + self.ids.nbytes


class _SortedRuns:
    """Distinct integers collected run by run: each run deduplicated by a hash table, runs
    merged into one sorted array once they outweigh it (or ``pending_limit``)."""

    def __init__(self, pending_limit: int):
        self.pending_limit = pending_limit
        self.sorted = np.zeros(0, dtype=np.int64)
        self._pending: list[np.ndarray] = []
        self._pending_size = 0

    def add(self, values: np.ndarray) -> None:
        if not len(values):
            return
        run = column_values(pc.unique(arrow_values(values)))  # a hash table: no sort per batch
        self._pending.append(run)
        self._pending_size += len(run)
        if self._pending_size > max(len(self.sorted), self.pending_limit):
            self.merge()

    def merge(self) -> np.ndarray:
        if self._pending:
            self.sorted = np.unique(np.concatenate([self.sorted] + self._pending))
            self._pending, self._pending_size = [], 0
        return self.sorted


class IdSet:
    """The ids seen so far, of one kind: ``int`` or ``string``."""

    def __init__(self, kind: str | None = None, pending_limit: int = 1 << 22):
        self.kind = kind  # None until the first ids arrive (or forced by --id-type)
        self.forced = kind  # --id-type int or string: how to read ids of other types
        self.pending_limit = pending_limit  # spread-out ids: unmerged ids held at most
        self.lo = self.hi = None  # integer mode: smallest and largest id seen
        self._strings = pa.nulls(0, pa.string())  # string mode: first-seen dictionary
        self._members: np.ndarray | None = None  # frozen integer mode: the vertex file's ids
        self._extra: list[np.ndarray] = []  # integer ids seen outside the spooled edges
        self.frozen = False  # no new ids (a vertex file and --missing-vertices error)

    # -- turning a column into keys ------------------------------------------------------------
    def column_kind(self, column: pa.Array, name: str = "") -> str:
        """'int' or 'string': what the ids of ``column`` are read as. A load never changes the
        ids' type without being asked: floating-point, temporal, boolean, decimal and binary
        columns are refused unless ``--id-type`` says how to read them (nested types always)."""
        t = column.type
        where = f" in column '{name}'" if name else ""
        if pa.types.is_nested(t) or pa.types.is_union(t):
            raise IngestError(f"vertex ids{where} are {_kind_name(t)} ({t}); an id is one "
                              "integer or one string")
        if self.forced == "string":
            return "string"
        if pa.types.is_integer(t):
            return "int"
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return "string"
        if pa.types.is_floating(t):
            _refuse(column, pc.invert(pc.is_finite(column)),
                    "vertex id {} is not a number that can name a vertex")
            _refuse(column, pc.not_equal(pc.floor(column), column),
                    "vertex id {} is not an integer; vertex ids are integers or text (load with "
                    "--id-type string to read every id as text)")
            _refuse(column, pc.greater_equal(pc.abs(column), pa.scalar(2.0**63)),
                    "vertex id {} is beyond the range of 64-bit integer ids; load with "
                    "--id-type string to read every id as text")
            _refuse(column, pc.greater_equal(pc.abs(column), pa.scalar(2.0**53)),
                    "vertex id {} is too large to be read exactly as a number; load with "
                    "--id-type string")
            if self.forced == "int":
                return "int"
            raise IngestError(f"vertex ids{where} are floating-point numbers ({t}); load with "
                              "--id-type int to read them as integer ids, or --id-type string "
                              "to read them as text")
        if self.forced == "int" and pa.types.is_decimal(t) and t.scale == 0:
            return "int"
        raise IngestError(f"vertex ids{where} are {t} values; vertex ids are integers or text: "
                          "load with --id-type string to read them as text")

    def keys(self, column: pa.Array, *, add: bool = True, name: str = "",
             inferred: bool = False) -> np.ndarray:
        """int64 keys of a column of ids (no nulls); records the ids unless ``add`` is False.
        ``inferred``: the column's type was guessed by a text reader from what the file
        writes, so a text column there must not hold numbers too (and the reverse)."""
        if pa.types.is_dictionary(column.type):
            column = column.dictionary_decode()
        kind = self.column_kind(column, name)
        encoded = None
        if kind == "string" and inferred and self.forced is None:
            encoded = _encoded(column)  # (once: the keys below take the same encoding)
            self._check_unmixed(column, encoded)
        if self.kind is None:
            self.kind = kind
        if self.kind == "string" and kind == "int" and inferred and self.forced is None:
            error = IngestError(f"vertex ids{f' in column {name!r}' if name else ''} are "
                                "numbers, but the ids before them are text; ids that mix "
                                "numbers and text load only with --id-type string (every id "
                                "read as text)")
            error.row = 0
            raise error
        if self.kind == "string":
            if encoded is None:
                try:
                    encoded = _encoded(column.cast(pa.string()))
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise IngestError(f"vertex ids in column '{name}' cannot be read as text "
                                      f"({str(exc).splitlines()[0]})") from None
            return self._string_keys(encoded, add)
        if kind == "string":
            text = column.cast(pa.string())
            integer = pc.match_substring_regex(text, r"^\s*[-+]?\d+\s*$").fill_null(False)
            row = max(pc.index(integer, False).as_py(), 0)
            error = IngestError(f"vertex id {excerpt(text[row].as_py())} is text but the ids so "
                                "far are integers; load with --id-type string to read every id "
                                "as text")
            error.row = row  # the caller names the line
            raise error
        values = self._int_values(column)
        if add and not self.frozen and len(values):
            lo, hi = int(values.min()), int(values.max())
            self.lo = lo if self.lo is None else min(self.lo, lo)
            self.hi = hi if self.hi is None else max(self.hi, hi)
        return values

    def _check_unmixed(self, column: pa.Array, encoded: pa.DictionaryArray) -> None:
        """Refuse a text reader's string column of ids that mixes numbers and text (a reader
        takes a column for text when one value is): the first id that differs from the first
        id's kind (or from integer ids read before) is named. Each distinct id is looked at
        once (the column's dictionary), not each row."""
        if not len(column):
            return
        values, indices = encoded.dictionary, encoded.indices
        number = column_values(pc.match_substring_regex(values, _NUMBER).fill_null(False))
        broken = column_values(pc.match_substring_regex(values, r"[\r\n]").fill_null(False))
        first_is_number = bool(number[indices[0].as_py()])
        if self.kind == "int" or (self.kind is None and first_is_number):
            bad, problem = ~number, ("vertex id {} is text, but the ids before it are numbers; "
                                     "a column that mixes numbers and text loads only with "
                                     "--id-type string (every id read as text)")
        else:
            bad, problem = number, ("vertex id {} is a number, but the ids before it are text; "
                                    "a column that mixes numbers and text loads only with "
                                    "--id-type string (every id read as text)")
        for wrong, message in ((broken, "vertex id {} holds a line break: is a quote left "
                                        "open?"), (bad, problem)):
            if wrong.any():
                rows = pc.is_in(indices, value_set=arrow_values(np.flatnonzero(wrong).astype(
                    column_values(indices).dtype)))
                _refuse(column, rows, message)

    def _int_values(self, column: pa.Array) -> np.ndarray:
        if pa.types.is_uint64(column.type) and len(column):
            _refuse(column, pc.greater(column, pa.scalar(_INT64_MAX, pa.uint64())),
                    "vertex id {} is above 2^63-1, the largest integer id; load with "
                    "--id-type string")
        if pa.types.is_int32(column.type):  # ids parsed narrow: kept so (catalog.inputs)
            return column_values(column)
        return column_values(pc.cast(column, pa.int64(), safe=False))

    def add_keys(self, keys: np.ndarray) -> None:
        """Integer ids that are vertices but are not among the spooled edges' keys (a vertex
        file's, the endpoints of dropped self loops)."""
        if self.kind == "string" or not len(keys):
            return
        keys = np.asarray(keys, dtype=np.int64)
        self._extra.append(np.unique(keys))
        lo, hi = int(keys.min()), int(keys.max())
        self.lo = lo if self.lo is None else min(self.lo, lo)
        self.hi = hi if self.hi is None else max(self.hi, hi)

    def extra_keys(self) -> Iterator[np.ndarray]:
        yield from self._extra

    def _string_keys(self, encoded: pa.DictionaryArray, add: bool) -> np.ndarray:
        local = encoded.dictionary
        # One hash table of the dictionary per call: callers pass large chunks so this stays
        # a small share of the work.
        position = pc.index_in(local, value_set=self._strings)
        known = column_values(position, any_nulls=True).astype(np.int64)  # and so ...
        known[~column_values(pc.is_valid(position))] = -1  # ... new strings get none
        new = known < 0
        if new.any():
            if not add or self.frozen:
                known[new] = -1
            else:
                known[new] = len(self._strings) + np.arange(int(new.sum()))
                self._strings = pa.concat_arrays([self._strings, local.filter(arrow_values(new))])
        return known[column_values(encoded.indices)]

    # -- membership (vertex files with --missing-vertices error) ----------------------------------
    def freeze(self) -> None:
        """No new ids from now on: the ids so far (a vertex file's) are the vertices."""
        self.frozen = True
        if self.kind != "string":
            self._members = np.unique(np.concatenate(self._extra)) if self._extra else \
                np.zeros(0, np.int64)

    def missing(self, keys: np.ndarray) -> np.ndarray:
        """Mask of keys that are not in the (frozen) set."""
        if self.kind == "string":
            return keys < 0
        members = self._members
        if not len(members):
            return np.ones(len(keys), dtype=bool)
        pos = sorted_search(members, keys)
        pos[pos >= len(members)] = 0
        return members[pos] != keys

    def __len__(self) -> int:
        if self.kind == "string":
            return len(self._strings)
        return 0 if self.lo is None else 1  # some ids, not counted (see finish)

    # -- the mapping ---------------------------------------------------------------------------
    def finish(self, key_chunks: Callable[[], Iterator[np.ndarray]], rows: int,
               budget: int) -> DenseKeys | IdMapper:
        """How keys become internal ids; ``key_chunks()`` yields every spooled key column
        chunk (read again only for spread-out integer ids) and ``rows`` counts them."""
        if self.kind == "string":
            order = column_values(pc.sort_indices(self._strings))
            rank = np.empty(len(order), dtype=internal_dtype(len(order)))
            rank[order] = np.arange(len(order), dtype=rank.dtype)
            return IdMapper(self._strings.take(arrow_values(order)), lut=rank)
        if self.lo >= 0 and self.hi < dense_span_limit(rows, budget):
            return DenseKeys(self.hi + 1)
        if self._members is not None:  # frozen: the vertex file's ids are all the ids
            distinct = self._members
        else:
            runs = _SortedRuns(self.pending_limit)
            for keys in key_chunks():
                runs.add(keys)
            for keys in self._extra:
                runs.add(keys)
            distinct = runs.merge()
        return IdMapper(arrow_values(distinct.astype(np.int64, copy=False)),
                        sorted_keys=distinct)
