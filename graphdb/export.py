"""``COPY (query) TO 'file'``: a query's Arrow result written with pyarrow's writers.

Nothing here depends on how the query ran: it takes the result as an Arrow table, so the
statement keeps working whatever engine produces the rows.

Formats (``FORMAT``, else from the extension, else CSV as in DuckDB):

- ``parquet``: ``COMPRESSION`` snappy (default), zstd, gzip, lz4, brotli or none;
- ``csv``: ``HEADER`` (default true), ``DELIMITER`` (default ``,``, a tab for ``.tsv``); fields
  quoted only where needed; NULL is an empty field;
- ``json``: one object per line (newline-delimited JSON), or one array with ``ARRAY true``;
  infinities and NaN are written as ``null`` (JSON has no number for them).

A ``.gz`` extension compresses CSV and JSON with gzip. An existing file is replaced.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pyarrow as pa

from .errors import InvalidInputError, OperationalError
from .formatting import json_ready

__all__ = ["EXPORT_FORMATS", "write_table"]

EXPORT_FORMATS = ("parquet", "csv", "json")
_EXTENSIONS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "csv",
               ".json": "json", ".ndjson": "json", ".jsonl": "json"}


def _format(path: Path, options: dict[str, Any]) -> str:
    chosen = options.get("format")
    if chosen is not None:
        chosen = str(chosen).lower()
        if chosen not in EXPORT_FORMATS:
            raise InvalidInputError(f"COPY TO: FORMAT must be one of {', '.join(EXPORT_FORMATS)}, "
                                    f"not {chosen!r}")
        return chosen
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return _EXTENSIONS.get(suffixes[-1] if suffixes else "", "csv")


def _flag(options: dict, name: str, default: bool) -> bool:
    value = options.get(name, default)
    if not isinstance(value, bool):
        raise InvalidInputError(f"COPY TO: option {name.upper()} is TRUE or FALSE, not {value!r}")
    return value


def write_table(table: pa.Table, path: str, options: dict[str, Any]) -> int:
    """Write ``table`` to ``path`` as the options say; returns the number of rows written."""
    target = Path(path).expanduser()
    fmt = _format(target, options)
    unused = set(options) - {"format"} - {"parquet": {"compression"},
                                          "csv": {"header", "delimiter"},
                                          "json": {"array"}}[fmt]
    if unused:
        raise InvalidInputError(f"COPY TO: option {sorted(unused)[0].upper()} does not apply to "
                                f"FORMAT {fmt}")
    try:
        if fmt == "parquet":
            _parquet(table, target, options)
        else:
            compression = "gzip" if target.suffix.lower() == ".gz" else None
            with pa.output_stream(str(target), compression=compression) as stream:
                if fmt == "csv":
                    _csv(table, stream, target, options)
                else:
                    _json(table, stream, _flag(options, "array", False))
    except OSError as exc:
        raise OperationalError(f"COPY TO: cannot write {path}: {exc.strerror or exc}") from None
    return table.num_rows


def _parquet(table: pa.Table, target: Path, options: dict) -> None:
    import pyarrow.parquet as pq

    compression = str(options.get("compression", "snappy")).lower()
    if compression in ("none", "uncompressed"):
        compression = "none"
    try:
        pq.write_table(table, str(target), compression=compression)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError) as exc:
        raise InvalidInputError(f"COPY TO: cannot write Parquet: {exc}") from None


def _csv(table: pa.Table, stream, target: Path, options: dict) -> None:
    import pyarrow.csv as pacsv

    default = "\t" if ".tsv" in [s.lower() for s in target.suffixes] else ","
    delimiter = str(options.get("delimiter", default))
    delimiter = {"\\t": "\t", "tab": "\t"}.get(delimiter, delimiter)
    if len(delimiter) != 1:
        raise InvalidInputError(f"COPY TO: DELIMITER is one character, not {delimiter!r}")
    if _flag(options, "header", True):  # the names quoted only where needed, as the rows
        out = io.StringIO()
        csv.writer(out, delimiter=delimiter, lineterminator="\n").writerow(table.column_names)
        stream.write(out.getvalue().encode())
    write = pacsv.WriteOptions(include_header=False, delimiter=delimiter,
                               quoting_style="needed")
    try:
        pacsv.write_csv(table, stream, write_options=write)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise InvalidInputError(f"COPY TO: CSV cannot hold these columns ({exc}); use FORMAT "
                                "parquet or json") from None


def _json(table: pa.Table, stream, array: bool) -> None:
    first = True
    if array:
        stream.write(b"[\n")
    for batch in table.to_batches():
        for row in batch.to_pylist():
            text = json.dumps({k: json_ready(v) for k, v in row.items()}, allow_nan=False,
                              separators=(",", ":"), ensure_ascii=False)
            if array:
                text = ("" if first else ",\n") + "\t" + text
            else:
                text += "\n"
            stream.write(text.encode())
            first = False
    if array:
        stream.write(b"\n]\n" if not first else b"]\n")
