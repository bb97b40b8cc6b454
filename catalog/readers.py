"""Readers for edge and vertex files: CSV, TSV, SNAP text, LDBC Graphalytics, Parquet.

All parsing goes through pyarrow's multi-threaded readers. When a reader rejects a file, the
file is scanned once more, line by line, only to name the line and the problem in the error.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from .errors import IngestError

__all__ = ["FORMATS", "EdgeInput", "detect_format", "read_edges", "read_vertices"]

FORMATS = ("auto", "csv", "tsv", "txt", "graphalytics", "parquet")

_BY_EXTENSION = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".txt": "txt",
    ".e": "graphalytics",
    ".v": "graphalytics",
    ".parquet": "parquet",
    ".pq": "parquet",
}


@dataclass
class EdgeInput:
    src: pa.ChunkedArray
    dst: pa.ChunkedArray
    weight: np.ndarray | None
    columns: list[str]  # the names the endpoint/weight columns had in the file


def detect_format(path: str | os.PathLike, fmt: str = "auto") -> str:
    fmt = fmt.lower()
    if fmt not in FORMATS:
        raise IngestError(f"unknown format '{fmt}' (choose one of {', '.join(FORMATS)})", file=str(path))
    if fmt != "auto":
        return fmt
    ext = Path(path).suffix.lower()
    if ext not in _BY_EXTENSION:
        raise IngestError(
            f"cannot tell the format from the extension '{ext or '(none)'}'; "
            f"pass --format ({', '.join(FORMATS[1:])})",
            file=str(path),
        )
    return _BY_EXTENSION[ext]


def _check_readable(path: str) -> None:
    p = Path(path)
    if not p.exists():
        raise IngestError("file does not exist", file=path)
    if p.is_dir():
        raise IngestError("is a directory, not a file", file=path)
    if not os.access(p, os.R_OK):
        raise IngestError("file is not readable (permission denied)", file=path)
    if p.stat().st_size == 0:
        raise IngestError("file is empty", file=path)


def _text_layout(path: str, fmt: str) -> tuple[str, bool, int]:
    """(delimiter, has_header, leading lines to skip) of a text format."""
    if fmt == "csv":
        return ",", True, 0
    if fmt == "tsv":
        return "\t", True, 0
    # SNAP text and Graphalytics: no header; SNAP files start with '#' comment lines.
    skip = 0
    delimiter = " "
    with open(path, "rb") as f:
        for raw in f:
            line = raw.strip()
            if not line or line.startswith(b"#"):
                skip += 1
                continue
            delimiter = "\t" if b"\t" in raw else " "
            break
        else:
            raise IngestError("file has no data lines (only comments or blank lines)", file=path)
    return delimiter, False, skip


def _read_text(path: str, fmt: str) -> pa.Table:
    delimiter, header, skip = _text_layout(path, fmt)
    read_options = pacsv.ReadOptions(skip_rows=skip, autogenerate_column_names=not header,
                                     block_size=16 << 20)
    parse_options = pacsv.ParseOptions(delimiter=delimiter)
    try:
        table = pacsv.read_csv(path, read_options=read_options, parse_options=parse_options)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        line, problem = _locate_problem(path, delimiter, header, skip)
        raise IngestError(problem or _arrow_message(exc), file=path, line=line) from None
    if not header:
        names = ["src", "dst", "weight"][: table.num_columns]
        names += [f"column{i + 1}" for i in range(len(names), table.num_columns)]
        table = table.rename_columns(names)
    if table.num_rows == 0:
        raise IngestError("file has a header but no rows", file=path)
    return table


def _arrow_message(exc: Exception) -> str:
    return str(exc).replace("CSV parse error: ", "").strip()


def _locate_problem(path: str, delimiter: str, header: bool, skip: int) -> tuple[int | None, str | None]:
    """Find the first line with a different field count than the first data line."""
    expected = None
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, start=1):
            if number <= skip:
                continue
            text = line.rstrip("\r\n")
            if not text:
                return number, "empty line"
            fields = text.split(delimiter)
            if expected is None:
                expected = len(fields)
                continue
            if len(fields) != expected:
                return number, (f"expected {expected} fields separated by {delimiter!r}, "
                                f"found {len(fields)}: {text[:80]!r}")
    return None, None


def _read_table(path: str, fmt: str) -> pa.Table:
    _check_readable(path)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except (pa.ArrowInvalid, OSError) as exc:
            raise IngestError(f"not a readable Parquet file: {exc}", file=path) from None
        if table.num_rows == 0:
            raise IngestError("file has no rows", file=path)
        return table
    return _read_text(path, fmt)


def _pick(table: pa.Table, wanted: str | None, position: int, role: str, path: str) -> str | None:
    names = table.column_names
    if wanted is None:
        return names[position] if position < len(names) else None
    if wanted in names:
        return wanted
    if wanted.isdigit() and 1 <= int(wanted) <= len(names):
        return names[int(wanted) - 1]
    import difflib

    close = difflib.get_close_matches(wanted, names, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    raise IngestError(
        f"no column '{wanted}' for {role} (columns: {', '.join(names)}){hint}", file=path
    )


def _ids(column: pa.ChunkedArray, role: str, path: str) -> pa.ChunkedArray:
    t = column.type
    if pa.types.is_integer(t):
        return column.cast(pa.int64())
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return column.cast(pa.string())
    if pa.types.is_floating(t):
        as_int = column.cast(pa.int64(), safe=False)
        if pc.all(pc.equal(as_int.cast(t), column)).as_py() is not False:
            return as_int
    if pa.types.is_null(t):
        raise IngestError(f"the {role} column is empty", file=path)
    return column.cast(pa.string())


def _null_line(column: pa.ChunkedArray, header: bool) -> int | None:
    if column.null_count == 0:
        return None
    first = pc.index(pc.is_null(column), True).as_py()
    return first + (2 if header else 1)


def read_edges(path: str, fmt: str = "auto", *, src: str | None = None, dst: str | None = None,
               weight: str | None = None) -> EdgeInput:
    """Read an edge list. Without column names the first two columns are the endpoints and a
    third numeric column, if present, is the weight."""
    fmt = detect_format(path, fmt)
    table = _read_table(path, fmt)
    header = fmt in ("csv", "tsv")
    if table.num_columns < 2 and (src is None or dst is None):
        raise IngestError(
            f"an edge file needs at least two columns (source and destination); found "
            f"{table.num_columns}" + (" — is the delimiter right?" if fmt in ("csv", "tsv") else ""),
            file=path,
        )
    src_name = _pick(table, src, 0, "the source", path)
    dst_name = _pick(table, dst, 1, "the destination", path)
    if weight is not None:
        weight_name = _pick(table, weight, 2, "the weight", path)
    else:
        third = _pick(table, None, 2, "the weight", path)
        weight_name = third if third is not None and _is_number(table[third].type) else None
    for name, role in ((src_name, "source"), (dst_name, "destination")):
        line = _null_line(table[name], header)
        if line is not None:
            raise IngestError(f"missing {role} vertex id in column '{name}'", file=path, line=line)
    weights = None
    if weight_name is not None:
        col = table[weight_name]
        if not _is_number(col.type):
            bad = _first_non_numeric(col)
            line = None if bad is None else bad + (2 if header else 1)
            raise IngestError(f"weight column '{weight_name}' is not numeric"
                              + ("" if bad is None else f": {col[bad].as_py()!r}"),
                              file=path, line=line)
        line = _null_line(col, header)
        if line is not None:
            raise IngestError(f"missing weight in column '{weight_name}'", file=path, line=line)
        weights = col.cast(pa.float64()).to_numpy()
    columns = [src_name, dst_name] + ([weight_name] if weight_name else [])
    return EdgeInput(_ids(table[src_name], "source", path), _ids(table[dst_name], "destination", path),
                     weights, columns)


def _is_number(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t)


def _first_non_numeric(col: pa.ChunkedArray) -> int | None:
    as_str = col.cast(pa.string())
    ok = pc.match_substring_regex(as_str, r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")
    idx = pc.index(ok, False).as_py()
    return None if idx < 0 else idx


def read_vertices(path: str, fmt: str = "auto") -> pa.ChunkedArray:
    """Read a vertex file: the first column is the vertex id (more columns are properties,
    kept for a later release)."""
    fmt = detect_format(path, fmt)
    table = _read_table(path, fmt)
    line = _null_line(table.column(0), fmt in ("csv", "tsv"))
    if line is not None:
        raise IngestError("missing vertex id", file=path, line=line)
    return _ids(table.column(0), "vertex id", path)
