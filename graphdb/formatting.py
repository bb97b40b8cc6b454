"""Printing results: tables for people (fitted to a width), CSV and JSON for programs.

Modes (the shell's ``.mode``, ``graphdb query --format``):

- ``table``: columns separated by ``│`` under a ``─┼─`` rule, then ``(N rows)``;
- ``box``: the same in a full frame (as DuckDB's default);
- ``line``: one ``column = value`` line per column, a blank line between rows;
- ``csv``: a header, then rows (floats at full precision, NULL as an empty field);
- ``json``: an array of objects, one per line; infinities and NaN are ``null``, as JSON has
  no numbers for them;
- ``markdown``: a pipe table.

Tables fit ``max_width`` columns: cells too long end in ``…``, and when even short columns do
not fit, middle columns are left out (as DuckDB does) and the footer says how many. Past
``max_rows`` rows, the first and last rows are shown around a ``…`` row. Numbers print as
written: ``123456789.0``, ``0.000123``; never ``1.23457e+08``.
"""

from __future__ import annotations

import base64
import csv
import datetime
import decimal
import io
import json
import math
from typing import Any

import pyarrow as pa
from rich.cells import cell_len, set_cell_size

__all__ = ["FORMATS", "render", "format_value", "json_ready"]

FORMATS = ("table", "box", "line", "csv", "json", "markdown")

#: Cells are shortened to this many characters at least before columns are left out.
MIN_CELL = 8
_GAP = 3  # ' │ ' between columns


def interval_text(value: Any) -> str:
    """An INTERVAL (Arrow's month-day-nano triple) as DuckDB writes it: ``1 year 2 months 3
    days 04:05:06``."""
    months, days, nanos = value.months, value.days, value.nanoseconds
    parts = []
    for count, unit in ((months // 12 if months >= 0 else -(-months // 12), "year"),
                        (months % 12 if months >= 0 else -(-months % 12), "month"),
                        (days, "day")):
        if count:
            parts.append(f"{count} {unit}{'s' if abs(count) != 1 else ''}")
    if nanos or not parts:
        sign = "-" if nanos < 0 else ""
        seconds, rest = divmod(abs(nanos), 10**9)
        clock = f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        parts.append(clock + (f".{rest:09d}".rstrip("0") if rest else ""))
    return " ".join(parts)


def format_value(value: Any) -> str:
    """A value as a table shows it."""
    if value is None:
        return "NULL"
    if isinstance(value, pa.MonthDayNano):
        return interval_text(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, bytes):
        return "\\x" + value.hex()
    return str(value)


def _float(x: float) -> str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if math.isnan(x):
        return "nan"
    text = repr(x)
    if "e" not in text:
        return text
    if x.is_integer() and abs(x) < 1e16:
        return f"{x:.1f}"
    if 1e-4 <= abs(x) < 1e16:
        import numpy as np

        return np.format_float_positional(x, unique=True, trim="0")
    return text


def json_ready(value: Any) -> Any:
    """A value as JSON can hold it: infinities and NaN as null, times as ISO 8601 text,
    bytes as base64, decimals as numbers."""
    if isinstance(value, float):
        return None if math.isinf(value) or math.isnan(value) else value
    if isinstance(value, (datetime.date, datetime.time, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, pa.MonthDayNano):
        return interval_text(value)
    if isinstance(value, decimal.Decimal):
        return float(value) if value.is_finite() else None
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if value and isinstance(value[0], tuple) and len(value[0]) == 2:  # an Arrow map
            return {str(k): json_ready(v) for k, v in value}
        return [json_ready(v) for v in value]
    return value


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # full precision for programs
    return value


def _is_numeric(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)


def render(table: pa.Table, fmt: str = "table", *, max_rows: int | None = None,
           max_width: int | None = None) -> str:
    """``table`` as text in mode ``fmt`` (see the module docstring); ``max_rows`` and
    ``max_width`` (None: all) apply to the table, box and line modes."""
    fmt = fmt.lower()
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(table.column_names)
        for row in zip(*(c.to_pylist() for c in table.columns)):
            writer.writerow([_csv_cell(v) for v in row])
        return out.getvalue()
    if fmt == "json":
        rows = [json.dumps({k: json_ready(v) for k, v in row.items()}, allow_nan=False,
                           default=str, ensure_ascii=False) for row in table.to_pylist()]
        return "[" + ",\n".join(rows) + "]\n"
    if fmt == "markdown":
        return _markdown(table)
    if fmt == "line":
        return _lines(table, max_rows)
    if fmt in ("table", "box"):
        return _fitted(table, boxed=fmt == "box", max_rows=max_rows, max_width=max_width)
    raise ValueError(f"unknown output mode {fmt!r} (modes: {', '.join(FORMATS)})")


def _shown_rows(table: pa.Table, max_rows: int | None) -> tuple[list[list[str]], int | None]:
    """The cells of the rows shown, and where the '…' row goes (None: every row shown)."""
    total = table.num_rows
    if max_rows is None or total <= max_rows:
        parts, gap = [table], None
    else:
        head = (max_rows + 1) // 2
        parts, gap = [table.slice(0, head), table.slice(total - (max_rows - head))], head
    rows: list[list[str]] = []
    for part in parts:
        columns = [[format_value(v) for v in c.to_pylist()] for c in part.columns]
        rows.extend([list(r) for r in zip(*columns)] if columns else [[]] * part.num_rows)
    return rows, gap


def _layout(names: list[str], widths: list[int], numeric: list[bool], boxed: bool,
            max_width: int | None) -> tuple[list[int], list[int]]:
    """(indices of the columns shown, their widths) within ``max_width``. Numbers keep their
    width; text shrinks to :data:`MIN_CELL` (or its header) at the least; if that is still too
    wide, columns are taken from both ends inwards and the middle ones left out."""
    n = len(names)
    overhead = (4 if boxed else 2) - _GAP  # the edges, less the gap before the first column
    if max_width is None or sum(widths) + _GAP * n + overhead <= max_width:
        return list(range(n)), list(widths)
    least = [w if num else min(w, max(MIN_CELL, len(name)))
             for name, w, num in zip(names, widths, numeric)]
    keep = list(range(n))
    if sum(least) + _GAP * n + overhead > max_width:
        left, right, used = [], [], overhead + 1 + _GAP  # with the '…' column
        lo, hi, side = 0, n - 1, 0
        while lo <= hi:
            i = lo if side == 0 else hi
            if used + least[i] + _GAP > max_width:
                break
            used += least[i] + _GAP
            if side == 0:
                left.append(i)
                lo += 1
            else:
                right.append(i)
                hi -= 1
            side = 1 - side
        keep = (left + right[::-1]) or [0]
    room = max_width - overhead - _GAP * (len(keep) + (len(keep) < n)) - (len(keep) < n)
    shown = [least[i] for i in keep]
    # Give the room left to the shrunk columns, the narrowest first (water filling).
    order = sorted(range(len(keep)), key=lambda j: widths[keep[j]])
    spare = room - sum(shown)
    for rank, j in enumerate(order):
        share = spare // (len(order) - rank) if spare > 0 else 0
        grow = min(widths[keep[j]] - shown[j], share)
        shown[j] += grow
        spare -= grow
    return keep, shown


def _fit(text: str, width: int, right: bool) -> str:
    """``text`` in exactly ``width`` terminal cells: cut with '…' or padded (rich measures
    the cells, so wide characters count double)."""
    size = cell_len(text)
    if size > width:
        text, size = set_cell_size(text, width - 1) + "…", width
    pad = " " * (width - size)
    return pad + text if right else text + pad


def _fitted(table: pa.Table, *, boxed: bool, max_rows: int | None,
            max_width: int | None) -> str:
    names = list(table.column_names)
    numeric = [_is_numeric(f.type) for f in table.schema]
    rows, gap = _shown_rows(table, max_rows)
    widths = [max([cell_len(n)] + [cell_len(r[i]) for r in rows]) for i, n in enumerate(names)]
    keep, shown = _layout(names, widths, numeric, boxed, max_width)
    # (source column or None for the '…' of left-out columns, width, right-aligned)
    columns: list[tuple[int | None, int, bool]] = [(i, w, numeric[i]) for i, w in zip(keep, shown)]
    split = next((p for p in range(1, len(keep)) if keep[p] != keep[p - 1] + 1),
                 None if len(keep) == len(names) else len(keep))
    if split is not None:
        columns.insert(split, (None, 1, False))

    def line(cells: list[str] | None) -> str:
        """A row of ``cells`` (the header for ``names``, '…' everywhere for None)."""
        texts = [_fit("…" if i is None or cells is None else cells[i], w, right)
                 for i, w, right in columns]
        text = ("│ " + " │ ".join(texts) + " │") if boxed else (" " + " │ ".join(texts))
        return text.rstrip()

    def rule(left: str, middle: str, right: str) -> str:
        return left + middle.join("─" * (w + 2) for _, w, _ in columns) + right

    lines = [rule("┌", "┬", "┐")] if boxed else []
    lines += [line(names), rule("├", "┼", "┤") if boxed else rule("", "┼", "")]
    for n, cells in enumerate(rows):
        if n == gap:
            lines.append(line(None))
        lines.append(line(cells))
    if gap is not None and gap == len(rows):
        lines.append(line(None))
    if boxed:
        lines.append(rule("└", "┴", "┘"))
    total = table.num_rows
    footer = f"{total:,} row{'s' if total != 1 else ''}"
    if len(rows) < total:
        footer += f", {len(rows)} shown"
    hidden = len(names) - len(keep)
    if hidden:
        footer += f"; {hidden} of {len(names)} columns left out to fit the width"
    lines.append(f" ({footer})")
    return "\n".join(lines) + "\n"


def _lines(table: pa.Table, max_rows: int | None) -> str:
    names = table.column_names
    width = max((len(n) for n in names), default=0)
    rows, gap = _shown_rows(table, max_rows)
    blocks = []
    for n, row in enumerate(rows):
        if n == gap:
            blocks.append("…")
        blocks.append("\n".join(f"{name.rjust(width)} = {value}"
                                for name, value in zip(names, row)))
    return "\n\n".join(blocks) + ("\n" if blocks else "")


def _markdown(table: pa.Table) -> str:
    names = table.column_names
    columns = [[format_value(v).replace("|", "\\|") for v in c.to_pylist()]
               for c in table.columns]
    widths = [max([len(n)] + [len(v) for v in col]) for n, col in zip(names, columns)]
    right = [_is_numeric(f.type) for f in table.schema]

    def line(cells):
        return "| " + " | ".join(c.rjust(w) if r else c.ljust(w)
                                 for c, w, r in zip(cells, widths, right)) + " |"

    rule = "|" + "|".join(("-" * (w + 1) + ":") if r else ("-" * (w + 2))
                          for w, r in zip(widths, right)) + "|"
    return "\n".join([line(names), rule] + [line(r) for r in zip(*columns)]) + "\n"
