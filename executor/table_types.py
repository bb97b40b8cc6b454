"""Values written into a stored table's columns, converted to the columns' types as the
relational engine (DuckDB) converts them (``CAST``): directly in Arrow where the two agree
exactly (an integer into a wider integer, numbers into floats, text into text), through DuckDB
otherwise (a float into an integer rounds, a string into a date is parsed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from .errors import InvalidArgument, SQLError

if TYPE_CHECKING:
    from graphdb.catalog.tables import TableEntry

    from .relational import SQLEngine

__all__ = ["conform", "duckdb_types", "entry_of_rows"]


def _direct(source: pa.DataType, target: pa.DataType) -> bool:
    """Whether Arrow's safe cast from ``source`` to ``target`` is DuckDB's CAST exactly."""
    if source == target or pa.types.is_null(source):
        return True
    if pa.types.is_integer(source):
        return pa.types.is_integer(target) or pa.types.is_floating(target)
    if pa.types.is_floating(source):
        return pa.types.is_floating(target)
    if pa.types.is_string(source) or pa.types.is_large_string(source):
        return pa.types.is_string(target) or pa.types.is_large_string(target)
    return False


def _exact_double(source: pa.DataType, target: pa.DataType) -> bool:
    """Whether ``source`` is a decimal whose values convert to ``target`` (a float) exactly as
    DuckDB's CAST converts them: its unscaled integers and its power of ten are both exact
    doubles (at most 15 digits), so the one division is correctly rounded in both engines.
    (Arrow's own cast of a decimal to a double is not correctly rounded.)"""
    return pa.types.is_decimal(source) and pa.types.is_float64(target) and \
        source.precision <= 15 and source.bit_width == 128


def _decimals_to_double(column: pa.ChunkedArray, target: pa.DataType) -> pa.ChunkedArray:
    """A decimal column of at most 15 digits as doubles (see :func:`_exact_double`): the low
    64 bits of each 128-bit value are its unscaled integer."""
    scale = float(10 ** column.type.scale)
    chunks = []
    for chunk in column.chunks:
        data = np.frombuffer(chunk.buffers()[1], dtype=np.int64)
        unscaled = data[2 * chunk.offset:2 * (chunk.offset + len(chunk)):2]
        values = unscaled.astype(np.float64) / scale
        mask = np.asarray(chunk.is_null()) if chunk.null_count else None
        chunks.append(pa.array(values, pa.float64(), mask=mask))
    return pa.chunked_array(chunks, target)


def conform(sql: "SQLEngine", rows: pa.Table, schema: pa.Schema, declared: list[str],
            table: str) -> pa.Table:
    """``rows`` (the columns of ``schema``, in any types) converted to ``schema``'s types, as
    DuckDB's CAST (run by ``sql``) converts them; a value that does not convert is an
    :class:`~.errors.InvalidArgument` (the front end's InvalidInputError)."""
    columns, slow = [], []
    for i, field in enumerate(schema):
        column = rows.column(field.name)
        if column.type == field.type:
            columns.append(column)
            continue
        if _exact_double(column.type, field.type):
            columns.append(_decimals_to_double(column, field.type))
            continue
        if _direct(column.type, field.type):
            try:
                columns.append(column.cast(field.type))
                continue
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                pass
        columns.append(None)
        slow.append(i)
    if slow:
        source = pa.table({f"c{i}": rows.column(schema.field(i).name) for i in slow})
        query = "SELECT " + ", ".join(f"CAST(c{i} AS {declared[i]}) AS c{i}" for i in slow) \
            + " FROM __graphdb_rows"
        try:
            cast, _ = sql.run(query, {"__graphdb_rows": source})
        except SQLError as exc:
            raise InvalidArgument(f"table {table}: {exc}") from None
        for i in slow:
            column = cast.column(f"c{i}")
            if column.type != schema.field(i).type:
                column = column.cast(schema.field(i).type)
            columns[i] = column
    return pa.table(columns, schema=schema)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def duckdb_types(sql: "SQLEngine", table: pa.Table) -> list[str]:
    """DuckDB's names of the types of ``table``'s columns."""
    if not table.num_columns:
        return []
    result, _ = sql.run(
        "SELECT " + ", ".join(f"typeof({_quote(n)})" for n in table.column_names)
        + " FROM __graphdb_types LIMIT 1",
        {"__graphdb_types": pa.table([pa.nulls(1, f.type) for f in table.schema],
                                     schema=table.schema)})
    return [result.column(i)[0].as_py() for i in range(result.num_columns)]


def entry_of_rows(sql: "SQLEngine", name: str, rows: pa.Table, source: str,
                  primary_key: tuple[str, ...] = ()) -> "TableEntry":
    """The entry of a new table holding ``rows`` (its columns and types as they are; its
    generation not made yet)."""
    import time

    from graphdb.catalog.tables import Column, TableEntry
    from graphdb.catalog.tables.entries import schema_bytes

    names = rows.column_names
    if len({n.lower() for n in names}) != len(names):
        raise InvalidArgument(f"table {name}: two columns have the same name "
                              f"({', '.join(names)})")
    if any(not n for n in names):
        raise InvalidArgument(f"table {name}: a column has no name")
    types = duckdb_types(sql, rows)
    schema = pa.schema([pa.field(f.name, f.type) for f in rows.schema])
    columns = tuple(Column(n, t, n not in primary_key) for n, t in zip(names, types))
    return TableEntry(name=name, table_id="0" * 32, arrow_schema=schema_bytes(schema),
                      columns=columns, created=time.time(), primary_key=primary_key,
                      source=source)
