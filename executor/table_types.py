"""Values written into a stored table's columns, converted to the columns' types as the
relational engine (DuckDB) converts them (``CAST``): directly in Arrow where the two agree
exactly (an integer into a wider integer, numbers into floats, text into text), through DuckDB
otherwise (a float into an integer rounds, a string into a date is parsed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from .errors import InvalidArgument, SQLError

if TYPE_CHECKING:
    from .relational import SQLEngine

__all__ = ["conform"]


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
