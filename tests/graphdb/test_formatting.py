"""Tables fitted to a width: every line fits (in terminal cells: wide characters count
double), numbers are never cut, text is cut with '…', and when even that is too wide the
middle columns are left out and the footer says so."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest
from rich.cells import cell_len

import graphdb
from graphdb.formatting import format_value, render

TABLE = pa.table({
    "vertex": [1, 22, 333],
    "name": ["ada", "a very long name that goes on and on", "日本語の名前です"],
    "rank": [123456789.0, 1 / 3, math.inf],
    "note": ["x" * 30, None, "z"],
})


@pytest.mark.parametrize("mode", ["table", "box"])
@pytest.mark.parametrize("width", [30, 40, 50, 60, 80, 200])
def test_lines_fit_and_numbers_are_whole(mode, width):
    text = render(TABLE, mode, max_width=width)
    body = text.splitlines()[:-1]  # the footer is prose
    assert max(cell_len(line) for line in body) <= width
    shown = [v for line in body for v in line.replace("│", " ").split()]
    for value in TABLE.column("vertex").to_pylist():
        assert str(value) in shown  # the first column is always kept, numbers never cut
    if "left out" not in text:
        assert format_value(1 / 3) in shown and "123456789.0" in shown


def test_middle_columns_are_left_out_first():
    wide = pa.table({f"column_{i}": [i] for i in range(12)})
    text = render(wide, "table", max_width=60)
    header = text.splitlines()[0].split("│")
    assert header[0].strip() == "column_0" and header[-1].strip() == "column_11"
    assert "…" in [h.strip() for h in header]
    assert text.splitlines()[-1].startswith(" (1 row; ") and "columns left out" in text


def test_numbers_print_as_written():
    assert [format_value(v) for v in (123456789.0, 0.5, 1e-9, 1.5e20, math.inf, None)] == [
        "123456789.0", "0.5", "1e-09", "1.5e+20", "inf", "NULL"]


@pytest.mark.parametrize("interval", ["1 day", "14 months 2 days 3 hours 0.5 seconds", "0 days",
                                      "-90 minutes", "-1 year", "2 hours 1 microsecond"])
def test_intervals_print_as_duckdb_writes_them(interval):
    """An INTERVAL shows as DuckDB's own text of it (the shell, JSON), not Arrow's triple."""
    duckdb = pytest.importorskip("duckdb")
    with graphdb.connect() as con:
        value = con.execute(f"SELECT INTERVAL '{interval}'").fetchone()[0]
    expected = duckdb.connect().execute(f"SELECT CAST(INTERVAL '{interval}' AS VARCHAR)")
    assert format_value(value) == expected.fetchone()[0]
