"""Replacement scans, as DuckDB's: a name in FROM that is no table may name a file or a Python
variable.

- A quoted name that looks like a path (``FROM 'people.csv'``, ``FROM "parts/*.parquet"``) is
  left in the statement for DuckDB, which reads the file by its extension (CSV, Parquet, JSON,
  compressed or globbed) relative to the current directory.
- An unquoted name that names a DataFrame (pandas, polars), an Arrow table, record batch or
  reader, or any object with ``__arrow_c_stream__`` in the scope of the code that called
  ``execute`` (its locals, then its globals: DuckDB's ``python_scan_all_frames = false``) is that
  table for the statement, read as it is when the statement runs.
"""

from __future__ import annotations

import re
import sys
from typing import Any

__all__ = ["is_file_name", "python_variable"]

_PATH = re.compile(r"[./\\*]")


def is_file_name(name: str, quoted: bool) -> bool:
    """Whether a table name is a file for DuckDB to read (quoted, with a dot or a slash)."""
    return quoted and bool(_PATH.search(name))


def _tabular(value: Any) -> bool:
    import pyarrow as pa

    if isinstance(value, (pa.Table, pa.RecordBatch, pa.RecordBatchReader)):
        return True
    module = type(value).__module__.split(".")[0]
    if module == "pandas":
        return hasattr(value, "columns") and hasattr(value, "iloc")
    if module == "polars":
        return hasattr(value, "columns") and (hasattr(value, "to_arrow")
                                               or hasattr(value, "collect"))
    return hasattr(value, "__arrow_c_stream__") and not isinstance(value, type)


def python_variable(name: str) -> Any | None:
    """The table-like Python value named ``name`` where graphdb was called from, or None."""
    frame = sys._getframe(1)
    while frame is not None and _in_graphdb(frame):
        frame = frame.f_back
    if frame is None or frame.f_globals.get("__name__", "") == "threading":
        return None  # a statement run by a worker thread (the shell): no caller's scope
    for scope in (frame.f_locals, frame.f_globals):
        value = scope.get(name)
        if value is not None and _tabular(value):
            return value
    return None


def _in_graphdb(frame) -> bool:
    module = frame.f_globals.get("__name__", "")
    return module == "graphdb" or module.startswith("graphdb.")
