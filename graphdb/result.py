"""Query results: Arrow first, with the PEP 249 fetch methods on top."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from .errors import InterfaceError, NotSupportedError

__all__ = ["Result", "Cursor"]


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
        try:
            import pandas  # noqa: F401
        except ImportError:
            raise NotSupportedError("df() needs pandas (pip install pandas); arrow() returns "
                                    "the rows as a pyarrow.Table without it") from None
        return self._table.to_pandas()

    def close(self) -> None:
        """PEP 249: release the rows."""
        self._table = self._table.slice(0, 0)
        self._position = 0

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


class Cursor:
    """PEP 249 cursor: ``execute`` then ``fetchone``/``fetchmany``/``fetchall``.

    Examples
    --------
    >>> import graphdb
    >>> with graphdb.connect() as con:
    ...     cur = con.cursor()
    ...     cur.execute("SELECT 1 AS one").fetchall()
    [(1,)]
    """

    arraysize = 1

    def __init__(self, connection):
        self.connection = connection
        self._result: Result | None = None

    def execute(self, sql: str, parameters=None) -> "Cursor":
        self._result = self.connection.execute(sql, parameters)
        return self

    def executemany(self, sql: str, seq_of_parameters) -> "Cursor":
        for parameters in seq_of_parameters:
            self.execute(sql, parameters)
        return self

    def _current(self) -> Result:
        if self._result is None:
            raise InterfaceError("no statement has been executed on this cursor")
        return self._result

    @property
    def description(self):
        return None if self._result is None else self._result.description

    @property
    def rowcount(self) -> int:
        return -1 if self._result is None else self._result.rowcount

    def fetchone(self):
        return self._current().fetchone()

    def fetchmany(self, size: int | None = None):
        return self._current().fetchmany(self.arraysize if size is None else size)

    def fetchall(self):
        return self._current().fetchall()

    def arrow(self) -> pa.Table:
        return self._current().arrow()

    def df(self):
        return self._current().df()

    def close(self) -> None:
        self._result = None

    def setinputsizes(self, sizes) -> None:  # PEP 249, nothing to do
        pass

    def setoutputsize(self, size, column=None) -> None:  # PEP 249, nothing to do
        pass

    def __iter__(self):
        return iter(self._current())
