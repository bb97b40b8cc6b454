"""Query results: Arrow first, with the PEP 249 fetch methods on top."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

__all__ = ["Result"]


class Result:
    """The rows of one statement. ``arrow()`` gives them as a ``pyarrow.Table``."""

    def __init__(self, table: pa.Table, *, elapsed: float = 0.0, message: str | None = None):
        self._table = table
        self._position = 0
        self.elapsed = elapsed  #: seconds the statement took
        self.message = message  #: a status line for statements that return no rows

    @property
    def columns(self) -> list[str]:
        return list(self._table.column_names)

    @property
    def description(self) -> list[tuple]:
        """PEP 249: (name, type_code, None, None, None, None, None) per column."""
        return [(f.name, str(f.type), None, None, None, None, None) for f in self._table.schema]

    @property
    def rowcount(self) -> int:
        return self._table.num_rows

    def arrow(self) -> pa.Table:
        return self._table

    def df(self):
        """The rows as a pandas DataFrame (needs pandas)."""
        return self._table.to_pandas()

    def _rows(self, start: int, stop: int) -> list[tuple[Any, ...]]:
        chunk = self._table.slice(start, max(0, stop - start))
        cols = [c.to_pylist() for c in chunk.columns]
        return list(zip(*cols)) if cols else []

    def fetchone(self) -> tuple | None:
        rows = self.fetchmany(1)
        return rows[0] if rows else None

    def fetchmany(self, size: int = 1) -> list[tuple]:
        rows = self._rows(self._position, min(self._position + size, self._table.num_rows))
        self._position += len(rows)
        return rows

    def fetchall(self) -> list[tuple]:
        rows = self._rows(self._position, self._table.num_rows)
        self._position = self._table.num_rows
        return rows

    def __iter__(self):
        while (row := self.fetchone()) is not None:
            yield row

    def __len__(self) -> int:
        return self._table.num_rows

    def __repr__(self) -> str:
        return f"<graphdb.Result {self._table.num_rows} rows x {self._table.num_columns} columns>"
