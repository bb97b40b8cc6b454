"""Query results: Arrow first, with the PEP 249 fetch methods and DuckDB's conversions on top.

A :class:`Result` holds the rows of one statement. ``arrow()``, ``df()``, ``pl()`` convert all of
them; the ``fetch*`` methods (``fetchone/fetchmany/fetchall``, ``fetchdf``, ``fetchnumpy``,
``fetch_arrow_table``, ``fetch_record_batch``) return the rows not fetched yet, and consume them,
as a cursor does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from .errors import DataError, InterfaceError, NotSupportedError
from .types import TypeCode

__all__ = ["Result", "Cursor"]

#: Rows per batch of :meth:`Result.fetch_record_batch` (DuckDB's default).
ROWS_PER_BATCH = 1_000_000


def _needs(module: str, method: str):
    try:
        return __import__(module)
    except ImportError:
        raise NotSupportedError(f"{method}() needs {module} (pip install {module}); arrow() "
                                "returns the rows as a pyarrow.Table without it") from None


class Result:
    """The rows of one statement.

    Examples
    --------
    >>> import graphdb
    >>> with graphdb.connect() as con:
    ...     result = con.execute("SELECT 1 AS one, 'a' AS letter")
    ...     result.description[0][:2], result.fetchall()
    (('one', 'INTEGER'), [(1, 'a')])
    """

    def __init__(self, table: pa.Table, *, elapsed: float = 0.0, message: str | None = None,
                 kind: str = "select"):
        self._table = table
        self._position = 0
        self.elapsed = elapsed  #: seconds the statement took
        self.message = message  #: a status line for statements that return no rows
        #: what ran: 'select', 'explain' (one line of the plan per row), or a statement's kind
        self.kind = kind

    @property
    def columns(self) -> list[str]:
        """The column names.

        >>> import graphdb
        >>> graphdb.connect().execute("SELECT * FROM (VALUES (1, 'a'), (2, 'b')) t(n, s)").columns
        ['n', 's']
        """
        return list(self._table.column_names)

    @property
    def description(self) -> list[tuple]:
        """PEP 249: ``(name, type_code, None, None, precision, scale, None)`` per column; the
        type code is the SQL type name (``'BIGINT'``), equal to its group's type object
        (``graphdb.NUMBER``), with the Arrow type as ``type_code.arrow_type``.

        >>> import graphdb
        >>> [(name, code) for name, code, *_ in graphdb.connect().execute("SELECT * FROM (VALUES (1, 'a'), (2, 'b')) t(n, s)").description]
        [('n', 'INTEGER'), ('s', 'VARCHAR')]
        """
        out = []
        for f in self._table.schema:
            decimal = pa.types.is_decimal(f.type)
            out.append((f.name, TypeCode(f.type), None, None,
                        f.type.precision if decimal else None,
                        f.type.scale if decimal else None, None))
        return out

    @property
    def rowcount(self) -> int:
        """The number of rows of the result.

        >>> import graphdb
        >>> graphdb.connect().execute("SELECT * FROM (VALUES (1, 'a'), (2, 'b')) t(n, s)").rowcount
        2
        """
        return self._table.num_rows

    # -- all rows ---------------------------------------------------------------------------
    def arrow(self) -> pa.Table:
        """All rows as a ``pyarrow.Table``.

        >>> import graphdb
        >>> graphdb.connect().execute("SELECT 2 AS two").arrow().to_pylist()
        [{'two': 2}]
        """
        return self._table

    def df(self):
        """All rows as a pandas DataFrame (needs pandas).

        >>> import graphdb
        >>> graphdb.connect().execute("SELECT 2 AS two").df()["two"].tolist()
        [2]
        """
        _needs("pandas", "df")
        return self._table.to_pandas()

    def pl(self):
        """All rows as a polars DataFrame (needs polars).

        >>> import graphdb
        >>> graphdb.connect().execute("SELECT 2 AS two").pl()["two"].to_list()
        [2]
        """
        polars = _needs("polars", "pl")
        return polars.from_arrow(self._table)

    # -- rows not fetched yet ---------------------------------------------------------------
    def _rest(self) -> pa.Table:
        rest = self._table.slice(self._position)
        self._position = self._table.num_rows
        return rest

    def fetch_arrow_table(self) -> pa.Table:
        """The rows not fetched yet, as a ``pyarrow.Table``.

        >>> import graphdb
        >>> result = graphdb.connect().execute("SELECT * FROM (VALUES (1, 'a'), (2, 'b')) t(n, s)")
        >>> result.fetchone(), result.fetch_arrow_table().to_pylist()
        ((1, 'a'), [{'n': 2, 's': 'b'}])
        """
        return self._rest()

    def fetchdf(self):
        """The rows not fetched yet, as a pandas DataFrame (needs pandas).

        >>> import graphdb
        >>> graphdb.connect().execute("SELECT * FROM (VALUES (1, 'a'), (2, 'b')) t(n, s)").fetchdf()["s"].tolist()
        ['a', 'b']
        """
        _needs("pandas", "fetchdf")
        return self._rest().to_pandas()

    fetch_df = fetchdf

    def fetchnumpy(self) -> dict[str, np.ndarray]:
        """The rows not fetched yet, as ``{column: numpy array}``; a column with NULLs is a
        ``numpy.ma.MaskedArray`` (masked where NULL), strings are object arrays.

        >>> import graphdb
        >>> columns = graphdb.connect().execute("SELECT * FROM (VALUES (1), (NULL)) t(x)").fetchnumpy()
        >>> columns["x"].tolist(), columns["x"].mask.tolist()
        ([1, None], [False, True])
        """
        out = {}
        for name, column in zip(self._table.column_names, self._rest().columns):
            out[name] = _numpy(column)
        return out

    def fetch_record_batch(self, rows_per_batch: int = ROWS_PER_BATCH) -> pa.RecordBatchReader:
        """The rows not fetched yet, as a ``pyarrow.RecordBatchReader`` of batches of at most
        ``rows_per_batch`` rows, read one batch at a time.

        >>> import graphdb
        >>> con = graphdb.connect()
        >>> reader = con.execute("SELECT * FROM (VALUES (1), (2), (3)) t(x)").fetch_record_batch(2)
        >>> [batch.num_rows for batch in reader]
        [2, 1]
        """
        if int(rows_per_batch) < 1:
            raise InterfaceError("rows_per_batch must be at least 1")
        rest = self._rest()
        return pa.RecordBatchReader.from_batches(
            rest.schema, rest.to_batches(max_chunksize=int(rows_per_batch)))

    def close(self) -> None:
        """PEP 249: release the rows.

        >>> import graphdb
        >>> result = graphdb.connect().execute("SELECT * FROM (VALUES (1, 'a'), (2, 'b')) t(n, s)")
        >>> result.close()
        >>> result.fetchall()
        []
        """
        self._table = self._table.slice(0, 0)
        self._position = 0

    def _rows(self, start: int, stop: int) -> list[tuple[Any, ...]]:
        chunk = self._table.slice(start, max(0, stop - start))
        cols = []
        for name, column in zip(chunk.column_names, chunk.columns):
            try:
                cols.append(column.to_pylist())
            except (OverflowError, ValueError) as exc:  # a year past 9999, as DuckDB allows
                raise DataError(f"column {name!r} holds a value Python cannot represent "
                                f"({exc}): CAST it to VARCHAR, or read the rows with .arrow()"
                                ) from None
        return list(zip(*cols)) if cols else []

    def fetchone(self) -> tuple | None:
        """The next row as a tuple, or None when all rows were fetched.

        >>> import graphdb
        >>> graphdb.connect().execute("SELECT * FROM (VALUES (1, 'a'), (2, 'b')) t(n, s)").fetchone()
        (1, 'a')
        """
        rows = self.fetchmany(1)
        return rows[0] if rows else None

    def fetchmany(self, size: int = 1) -> list[tuple]:
        """The next ``size`` rows (fewer at the end).

        >>> import graphdb
        >>> graphdb.connect().execute("SELECT * FROM (VALUES (1, 'a'), (2, 'b')) t(n, s)").fetchmany(5)
        [(1, 'a'), (2, 'b')]
        """
        rows = self._rows(self._position, min(self._position + size, self._table.num_rows))
        self._position += len(rows)
        return rows

    def fetchall(self) -> list[tuple]:
        """The rows not fetched yet, as a list of tuples.

        >>> import graphdb
        >>> graphdb.connect().execute("SELECT * FROM (VALUES (1, 'a'), (2, 'b')) t(n, s)").fetchall()
        [(1, 'a'), (2, 'b')]
        """
        rows = self._rows(self._position, self._table.num_rows)
        self._position = self._table.num_rows
        return rows

    def __iter__(self):
        while (row := self.fetchone()) is not None:
            yield row

    def __len__(self) -> int:
        return self._table.num_rows

    def _repr_html_(self) -> str:
        """In a notebook: the first rows and the row count; for rows that describe a graph
        (src/dst columns, paths), a small drawing too (see :mod:`graphdb.explorer.notebook`).

        >>> import graphdb
        >>> html = graphdb.connect().execute("SELECT 1 AS src, 2 AS dst")._repr_html_()
        >>> "1 row × 2 columns" in html and "<iframe" in html
        True
        """
        from .explorer.notebook import result_html

        return result_html(self._table, self.message)

    def __repr__(self) -> str:
        return f"<graphdb.Result {self._table.num_rows} rows x {self._table.num_columns} columns>"


def _numpy(column: pa.ChunkedArray) -> np.ndarray:
    """A column as numpy, NULLs masked (an all-valid column is a plain array)."""
    if column.null_count == 0:
        return column.to_numpy()
    mask = column.is_null().to_numpy(zero_copy_only=False)
    t = column.type
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
        filled = column.fill_null(pa.scalar(False if pa.types.is_boolean(t) else 0, t))
        return np.ma.MaskedArray(filled.to_numpy(), mask=mask)
    return np.ma.MaskedArray(column.to_numpy(zero_copy_only=False), mask=mask)


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
        self._closed = False

    def execute(self, sql: str, parameters=None) -> "Cursor":
        """Run one statement (``?`` or ``$name`` parameters); returns the cursor itself.

        >>> import graphdb
        >>> graphdb.connect().cursor().execute("SELECT $x * 2 AS y", {"x": 21}).fetchall()
        [(42,)]
        """
        self._check_open()
        self._result = self.connection.execute(sql, parameters)
        return self

    def _check_open(self) -> None:
        if self._closed:
            raise InterfaceError("the cursor is closed")

    def executemany(self, sql: str, seq_of_parameters) -> "Cursor":
        """Run one statement once per parameter set; the cursor then holds the last result.

        >>> import graphdb
        >>> graphdb.connect().cursor().executemany("SELECT ? AS x", [[1], [2]]).fetchall()
        [(2,)]
        """
        self._check_open()
        self._result = self.connection.executemany(sql, seq_of_parameters)
        return self

    def _current(self) -> Result:
        self._check_open()
        if self._result is None:
            raise InterfaceError("no statement has been executed on this cursor")
        return self._result

    @property
    def description(self):
        """PEP 249: the last statement's columns (None before any).

        >>> import graphdb
        >>> graphdb.connect().cursor().execute("SELECT 1 AS one").description[0][:2]
        ('one', 'INTEGER')
        """
        return None if self._result is None else self._result.description

    @property
    def rowcount(self) -> int:
        """The last statement's number of rows (-1 before any).

        >>> import graphdb
        >>> graphdb.connect().cursor().rowcount
        -1
        """
        return -1 if self._result is None else self._result.rowcount

    def fetchmany(self, size: int | None = None):
        """The next ``size`` rows (default: ``arraysize``).

        >>> import graphdb
        >>> graphdb.connect().cursor().execute("SELECT * FROM (VALUES (1), (2)) t(x)").fetchmany()
        [(1,)]
        """
        return self._current().fetchmany(self.arraysize if size is None else size)

    def close(self) -> None:
        """PEP 249: close the cursor (its last result is let go; using it then raises
        InterfaceError). The connection stays open. ``with con.cursor() as cur:`` closes it at
        the end of the block.

        >>> import graphdb
        >>> cur = graphdb.connect().cursor().execute("SELECT 1")
        >>> cur.close()
        >>> cur.fetchall()
        Traceback (most recent call last):
        graphdb.errors.InterfaceError: the cursor is closed
        """
        self._result = None
        self._closed = True

    def __enter__(self) -> "Cursor":
        """``with con.cursor() as cur:``

        >>> import graphdb
        >>> with graphdb.connect().cursor() as cur:
        ...     cur.execute("SELECT 42 AS answer").fetchone()
        (42,)
        """
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def setinputsizes(self, sizes) -> None:
        """PEP 249: nothing to do (parameters need no declared sizes).

        >>> import graphdb
        >>> graphdb.connect().cursor().setinputsizes([None])
        """

    def setoutputsize(self, size, column=None) -> None:
        """PEP 249: nothing to do (results are Arrow columns).

        >>> import graphdb
        >>> graphdb.connect().cursor().setoutputsize(1000)
        """

    def __iter__(self):
        return iter(self._current())


def _forward(name: str):
    def method(self, *args, **kwargs):
        return getattr(self._current(), name)(*args, **kwargs)

    target = getattr(Result, name)
    method.__name__, method.__qualname__ = name, f"Cursor.{name}"
    method.__doc__, method.__wrapped__ = target.__doc__, target  # help() shows its signature
    return method


#: Result methods a cursor offers on its last statement's result.
for _name in ("fetchone", "fetchall", "arrow", "df", "pl", "fetchdf", "fetchnumpy",
              "fetch_arrow_table", "fetch_record_batch"):
    setattr(Cursor, _name, _forward(_name))
