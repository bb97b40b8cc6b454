"""Reading an ingest's inputs: which columns are what, checks on every batch, ids to keys.

The edge file streams through :func:`read_edges` batch by batch into a :class:`SpoolSet` of
keys (one spool per parallel part of the input); nothing here holds more than a group of
batches. The vertex file (one row per vertex, so of
the order of the id dictionary) is read whole by :func:`read_vertices`.
"""

from __future__ import annotations

import difflib
import re
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pyarrow as pa

from graphdb.storage.lazy import pc

from .arrays import arrow_values, column_values
from .errors import IngestError, excerpt
from .idmap import IdSet
from .readers import TEXT_FORMATS, InputFile, InputFiles
from .spool import SpoolSet

__all__ = ["EdgeColumns", "ReadCounts", "group_rows_for", "narrow_ids", "pick_column",
           "read_vertices", "read_edges", "text_column_types"]

#: Rows handled together (at most); string ids are dictionary-encoded per group, so a group is
#: large enough that the per-group cost (a hash table of the dictionary so far) stays small.
GROUP_ROWS = 1 << 21


def group_rows_for(budget: int) -> int:
    """Rows per group: a group costs about 40 bytes a row while it is handled."""
    return int(min(GROUP_ROWS, max(1 << 12, budget // 256)))


def check_names(names: list[str], path: str, fmt: str) -> None:
    """Refuse a file whose columns are not told apart by their names (a CSV header
    ``src,src,weight``)."""
    seen: dict[str, int] = {}
    for position, name in enumerate(names, start=1):
        if name in seen:
            where = "the header names" if fmt in ("csv", "tsv") else "the file has"
            raise IngestError(f"{where} column '{name}' twice (columns {seen[name]} and "
                              f"{position}); rename one", file=path,
                              line=1 if fmt in ("csv", "tsv") else None)
        seen[name] = position


def pick_column(names: list[str], wanted: str | None, position: int, role: str, path: str
                ) -> str | None:
    if wanted is None:
        return names[position] if position < len(names) else None
    if wanted in names:
        return wanted
    if wanted.isdigit() and 1 <= int(wanted) <= len(names):
        return names[int(wanted) - 1]
    close = difflib.get_close_matches(wanted, names, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    raise IngestError(f"no column '{wanted}' for {role} (columns: {', '.join(names)}){hint}",
                      file=path)


#: ``--weight none``: an unweighted graph, whatever the columns are called.
NO_WEIGHT = "none"


def is_number(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t)


@dataclass
class EdgeColumns:
    src: str
    dst: str
    weight: str | None
    properties: list[str]

    @classmethod
    def choose(cls, schema: pa.Schema, path: str, src: str | None, dst: str | None,
               weight: str | None, fmt: str) -> "EdgeColumns":
        names = schema.names
        check_names(names, path, fmt)
        src, dst, weight = (_column_option(v, role, path) for v, role in
                            ((src, "src"), (dst, "dst"), (weight, "weight")))
        if len(names) < 2 and (src is None or dst is None):
            raise IngestError(
                f"an edge file needs at least two columns (source and destination); found "
                f"{len(names)}" + (" — is the delimiter right?" if fmt in ("csv", "tsv") else ""),
                file=path)
        s = pick_column(names, src, 0, "the source", path)
        d = pick_column(names, dst, 1, "the destination", path)
        for given, picked, role in ((src, s, "source"), (dst, d, "destination")):
            if given is None and picked.lower() == "weight":
                # a file without its destination column: say so, not that a weight is an id
                raise IngestError(
                    f"no {role} column: the columns are {', '.join(names)}, and '{picked}' is "
                    f"the weight; an edge file's first two columns are its endpoints (or "
                    f"name them with --src and --dst)", file=path)
        if weight is not None and (weight == "" or weight.lower() == NO_WEIGHT):
            w = None
        elif weight is not None:
            w = pick_column(names, weight, 2, "the weight", path)
        else:
            # Without --weight: the column named 'weight' (a headerless file's third column is
            # named so: SNAP and Graphalytics files define it as the weight), never a guess
            # by position: a CSV's third column may be a year, not a distance.
            named = [c for c in names if c.lower() == "weight" and c not in (s, d)]
            w = named[0] if named else None
        props = [c for c in names if c not in (s, d, w)]
        return cls(s, d, w, props)


def _column_option(value, role: str, path: str) -> str | None:
    """A column option as given: a name, or a 1-based position (an int, or digits)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise IngestError(f"{role} must be a column name or a 1-based position, not "
                      f"{type(value).__name__} {str(value)[:40]!r}", file=path)


def text_column_types(schema: pa.Schema, columns: EdgeColumns, id_type: str,
                      narrow: bool = False) -> dict:
    """The types to parse text columns as, from the first rows of the file: parsing with
    known types costs a third less than letting pyarrow guess block by block. A weight is
    parsed as a double (it is stored as one), ids as text when --id-type string says so, and
    as 32-bit integers with ``narrow`` (see :func:`narrow_ids`)."""
    types = {f.name: f.type for f in schema if not pa.types.is_null(f.type)}
    if columns.weight is not None and is_number(schema.field(columns.weight).type):
        types[columns.weight] = pa.float64()
    if id_type == "string":
        types[columns.src] = types[columns.dst] = pa.string()
    elif narrow:
        types[columns.src] = types[columns.dst] = pa.int32()
    return types


#: Ids of the first rows below this (in magnitude) are parsed as 32-bit integers.
NARROW_BELOW = 1 << 30


def narrow_ids(first: pa.RecordBatch, columns: EdgeColumns, id_type: str) -> bool:
    """Whether a text file's ids are parsed as 32-bit integers: its first rows' ids are
    integers well inside that range. Parsing 4-byte ids and keeping them so costs less all
    the way (RMAT20: 0.09 s less parsing, 0.03 s less sorting); an id beyond it later makes
    the reader raise NarrowIdsOverflow, and the input is read again with 64-bit ids."""
    if id_type == "string":
        return False
    for name in (columns.src, columns.dst):
        column = first.column(name)
        if not pa.types.is_integer(column.type):
            return False
        low, high = (v.as_py() for v in pc.min_max(column).values())
        if low is not None and (low <= -NARROW_BELOW or high >= NARROW_BELOW):
            return False
    return True


@dataclass
class ReadCounts:
    rows: int = 0  # edges read from the input
    self_loops: int = 0  # self loops kept
    self_loops_dropped: int = 0
    #: weights kept under --invalid-weights keep: not a number, infinite, negative
    weights_nan: int = 0
    weights_infinite: int = 0
    weights_negative: int = 0
    property_schema: pa.Schema | None = None
    files: list[str] = field(default_factory=list)


def _column(table: pa.Table, name: str) -> pa.Array:
    """A column as one array (a copy only when it has several chunks)."""
    column = table.column(name)
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _first_null(column: pa.Array) -> int | None:
    if column.null_count == 0:
        return None
    return pc.index(pc.is_null(column), True).as_py()


def _first_non_numeric(column: pa.Array) -> int | None:
    as_str = column.cast(pa.string())
    ok = pc.match_substring_regex(as_str, r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")
    idx = pc.index(ok.fill_null(False), False).as_py()
    return None if idx < 0 else idx


def read_vertices(source: InputFiles, id_column: str | None, ids: IdSet
                  ) -> tuple[np.ndarray, pa.Table]:
    """Keys of the vertex file's ids (added to ``ids``) and its property columns, file order."""
    batches, spans, total = [], [], 0
    for f, first_row, batch, _part in source.batches():
        batches.append(batch)
        spans.append((total, f, first_row))
        total += batch.num_rows
    table = pa.Table.from_batches(batches)
    path = source.files[0].shown
    check_names(table.column_names, path, source.files[0].format)
    name = pick_column(table.column_names, id_column, 0, "the vertex id", path)
    column = table.column(name).combine_chunks()

    def error_at(row: int, problem: str) -> IngestError:
        start, f, first_row = max((s for s in spans if s[0] <= row), key=lambda s: s[0])
        return f.error_at(first_row + row - start, problem)

    null = _first_null(column)
    if null is not None:
        raise error_at(null, f"missing vertex id in column '{name}'")
    try:
        keys = ids.keys(column, name=name, inferred=source.files[0].format in TEXT_FORMATS)
    except IngestError as exc:
        row = getattr(exc, "row", None)
        if row is None:
            raise IngestError(exc.problem, file=path) from None
        raise error_at(row, exc.problem) from None
    ids.add_keys(keys)  # integer ids: vertices whether or not an edge names them
    order = np.argsort(keys, kind="stable")
    repeated = np.flatnonzero(keys[order][1:] == keys[order][:-1])
    if len(repeated):
        row = int(order[repeated[0] + 1])
        raise error_at(row, f"vertex id {excerpt(column[row].as_py())} appears more than once "
                            f"(first at row {int(order[repeated[0]]) + 1})")
    return keys, table.drop_columns([name])


#: How often the read loop reports progress. Asking every part for its position takes the
#: file's lock, which its reader thread holds while it reads a block: asked for every batch,
#: that cost the consuming thread ~0.17 s on RMAT20.
PROGRESS_SECONDS = 0.1


@dataclass(frozen=True)
class ReadPolicy:
    drop_loops: bool = False  # self loops are not stored
    check_missing: str | None = None  # the vertex file every endpoint must be in
    keep_invalid_weights: bool = False  # NaN, infinite and negative weights are stored


def read_edges(source: InputFiles, columns_of: Callable[[pa.Schema, InputFile], EdgeColumns],
               ids: IdSet, spool: SpoolSet, *, drop_loops: bool, check_missing: str | None,
               property_sink: Callable[[pa.Table], None] | None,
               progress=None, group_rows: int = GROUP_ROWS,
               column_types: dict | None = None, invalid_weights: str = "error") -> ReadCounts:
    """Stream the edge file into ``spool`` as keys (``src``, ``dst``, ``weight``, ``row``);
    ``column_types`` fixes the types text columns are parsed as. Weights that are NaN,
    infinite or negative are refused unless ``invalid_weights`` is 'keep' (then counted)."""
    counts = ReadCounts(files=[f.shown for f in source.files])
    policy = ReadPolicy(drop_loops, check_missing, invalid_weights == "keep")
    next_report = 0.0
    groups: dict[int, tuple[InputFile, int, list[pa.RecordBatch]]] = {}
    columns: EdgeColumns | None = None

    def flush(part: int) -> None:
        f, first_row, batches = groups.pop(part)
        _edge_group(pa.Table.from_batches(batches), f, first_row, columns, ids, spool, part,
                    policy, property_sink, counts)

    for f, first_row, batch, part in source.batches(column_types):
        if columns is None:
            columns = columns_of(batch.schema, f)
        if part in groups and groups[part][0] is not f:
            flush(part)
        groups.setdefault(part, (f, first_row, []))[2].append(batch)
        # Integer ids are handled batch by batch; string ids in large groups (see GROUP_ROWS).
        if ids.kind != "string" or sum(b.num_rows for b in groups[part][2]) >= group_rows:
            flush(part)
        if progress is not None and time.monotonic() >= next_report:
            progress.advance(source.bytes_done(), counts.rows)
            next_report = time.monotonic() + PROGRESS_SECONDS
    for part in list(groups):
        flush(part)
    if progress is not None:
        progress.advance(source.bytes_done(), counts.rows)
    return counts


#: Integers up to this magnitude are exact in a weight (a 64-bit floating point number).
EXACT_WEIGHTS = 2**53
#: Rows of a group whose text is looked at again to tell whether a large weight was rounded.
RECHECKED_ROWS = 10_000


def _weights(wcol: pa.Array, f: InputFile, first_row: int, name: str) -> np.ndarray:
    """A weight column as float64, refused (naming the row) where a value is not a number or
    would not be stored exactly: weights are 64-bit floating point numbers, exact for integers
    up to 2^53."""
    if pa.types.is_dictionary(wcol.type):
        wcol = wcol.dictionary_decode()
    if not is_number(wcol.type):
        if not (pa.types.is_string(wcol.type) or pa.types.is_large_string(wcol.type)):
            raise IngestError(f"weight column '{name}' holds {wcol.type} values; a weight is a "
                              "number (pass --weight none to keep the column as an edge "
                              "property)", file=f.shown)
        bad = _first_non_numeric(wcol)
        shown = "" if bad is None else f": {excerpt(wcol[bad].as_py())}"
        raise f.error_at(first_row + (bad or 0), f"weight column '{name}' is not numeric{shown}")
    null = _first_null(wcol)
    if null is not None:
        raise f.error_at(first_row + null, f"missing weight in column '{name}'")
    if pa.types.is_integer(wcol.type):
        values = column_values(wcol)
        large = np.flatnonzero((values > EXACT_WEIGHTS) | (values < -EXACT_WEIGHTS))
        if len(large):
            with np.errstate(invalid="ignore"):
                back = values[large].astype(np.float64).astype(values.dtype)
            inexact = large[back != values[large]]
            if len(inexact):
                raise f.error_at(first_row + int(inexact[0]), _inexact(values[inexact[0]], name))
        return values.astype(np.float64)
    weight = column_values(wcol.cast(pa.float64()))
    if f.format in TEXT_FORMATS:  # the text reader parsed the weights as doubles: rounded?
        large = np.flatnonzero(np.abs(weight) >= EXACT_WEIGHTS)[:RECHECKED_ROWS]
        if len(large):
            texts = f.field_texts([first_row + int(r) for r in large], name)
            for row in large:
                text = texts.get(first_row + int(row), "")
                if re.fullmatch(r"[-+]?\d+", text or "") and int(text) != int(weight[row]):
                    raise f.error_at(first_row + int(row), _inexact(text, name))
    return weight


def _inexact(value, name: str) -> str:
    return (f"weight {value} in column '{name}' cannot be stored exactly: weights are 64-bit "
            "floating point numbers, exact for integers up to 2^53 (pass --weight none to keep "
            "the column as an integer edge property)")


#: What a weight is not allowed to be unless --invalid-weights keep: (name, test).
INVALID_WEIGHTS = (("nan", "not a number", np.isnan), ("infinite", "infinite", np.isinf),
                   ("negative", "negative", lambda w: w < 0))


def _check_weights(weight: np.ndarray, f: InputFile, first_row: int, column: str,
                   policy: ReadPolicy, counts: ReadCounts) -> None:
    """Refuse the first NaN, infinite or negative weight (algorithms like SSSP assume finite
    non-negative weights), or count them when they are to be kept."""
    if not len(weight) or (weight.min() >= 0 and np.isfinite(weight.max())):
        return  # the common case: one pass each for the minimum and the maximum
    for name, what, test in INVALID_WEIGHTS:
        bad = test(weight)
        if name == "negative":
            bad &= ~np.isinf(weight)  # -inf is counted as infinite
        found = int(np.count_nonzero(bad))
        if not found:
            continue
        if not policy.keep_invalid_weights:
            row = int(np.argmax(bad))
            raise f.error_at(first_row + row, f"weight {float(weight[row])!r} in column "
                             f"'{column}' is {what}; pass --invalid-weights keep to store such "
                             "weights")
        setattr(counts, f"weights_{name}", getattr(counts, f"weights_{name}") + found)


def _edge_group(table: pa.Table, f: InputFile, first_row: int, columns: EdgeColumns,
                ids: IdSet, spool: SpoolSet, part: int, policy: ReadPolicy,
                property_sink, counts: ReadCounts) -> None:
    drop_loops, check_missing = policy.drop_loops, policy.check_missing
    src, dst = _column(table, columns.src), _column(table, columns.dst)
    for column, role, name in ((src, "source", columns.src), (dst, "destination", columns.dst)):
        null = _first_null(column)
        if null is not None:
            raise f.error_at(first_row + null, f"missing {role} vertex id in column '{name}'")
    weight = None
    if columns.weight is not None:
        weight = _weights(_column(table, columns.weight), f, first_row, columns.weight)
        _check_weights(weight, f, first_row, columns.weight, policy, counts)
    try:
        add = check_missing is None
        inferred = f.format in TEXT_FORMATS
        src_keys = ids.keys(src, add=add, name=columns.src, inferred=inferred)
        dst_keys = ids.keys(dst, add=add, name=columns.dst, inferred=inferred)
    except IngestError as exc:
        row = getattr(exc, "row", None)
        if row is None:
            raise IngestError(exc.problem, file=f.shown) from None
        raise f.error_at(first_row + row, exc.problem) from None
    if check_missing is not None:
        for keys, column, role in ((src_keys, src, "source"), (dst_keys, dst, "destination")):
            missing = ids.missing(keys)
            if missing.any():
                row = int(np.argmax(missing))
                shown = excerpt(column[row].as_py())
                raise f.error_at(first_row + row, f"{role} vertex {shown} is not in the vertex "
                                 f"file {check_missing} (pass --missing-vertices add to add such "
                                 "vertices)")
    loops = src_keys == dst_keys
    n_loops = int(np.count_nonzero(loops))
    keep = None
    if drop_loops and n_loops:
        keep = ~loops
        ids.add_keys(src_keys[loops])  # a vertex whose only edges were dropped loops stays
        src_keys, dst_keys = src_keys[keep], dst_keys[keep]
        weight = None if weight is None else weight[keep]
        counts.self_loops_dropped += n_loops
    else:
        counts.self_loops += n_loops
    counts.rows += table.num_rows
    arrays = {"src": src_keys, "dst": dst_keys}
    if weight is not None:
        arrays["weight"] = weight
    if property_sink is not None:
        props = table.select(columns.properties)
        if keep is not None:
            props = props.filter(arrow_values(keep))
        # The row of an edge in the property file written alongside (kept edges only).
        arrays["row"] = np.arange(spool.rows, spool.rows + len(src_keys), dtype=np.int64)
        property_sink(props)
    spool.append(arrays, part)
