"""Printing results: aligned tables for people, CSV and JSON for programs."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

import pyarrow as pa

__all__ = ["FORMATS", "render"]

FORMATS = ("table", "csv", "json", "markdown")


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return f"{value:.6g}" if abs(value) < 1e16 else repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


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


def render(table: pa.Table, fmt: str = "table", *, max_rows: int | None = None) -> str:
    fmt = fmt.lower()
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(table.column_names)
        for row in zip(*(c.to_pylist() for c in table.columns)):
            writer.writerow([_csv_cell(v) for v in row])
        return out.getvalue()
    if fmt == "json":
        rows = table.to_pylist()
        return json.dumps(rows, default=str, allow_nan=True) + "\n"
    return _aligned(table, markdown=fmt == "markdown", max_rows=max_rows)


def _aligned(table: pa.Table, *, markdown: bool, max_rows: int | None) -> str:
    names = table.column_names
    total = table.num_rows
    shown = table if max_rows is None or total <= max_rows else table.slice(0, max_rows)
    columns = [[_cell(v) for v in col.to_pylist()] for col in shown.columns]
    widths = [max([len(n)] + [len(v) for v in col]) for n, col in zip(names, columns)]
    right = [_is_numeric(f.type) for f in table.schema]

    def line(cells):
        parts = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)]
        return ("| " + " | ".join(parts) + " |") if markdown else " " + " │ ".join(parts)

    sep = ("|" + "|".join("-" * (w + 2) for w in widths) + "|") if markdown else \
        "─" + "─┼─".join("─" * w for w in widths) + "─"
    lines = [line(names), sep]
    lines.extend(line(row) for row in zip(*columns))
    lines = [ln.rstrip() for ln in lines]
    if not markdown:
        if shown.num_rows < total:
            lines.append(f" … {total - shown.num_rows} more rows ({total} in all)")
        else:
            lines.append(f" ({total} row{'s' if total != 1 else ''})")
    return "\n".join(lines) + "\n"
