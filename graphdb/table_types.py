"""Column types of stored tables, as the relational engine (DuckDB) names and casts them.

A column is declared with any type DuckDB knows (``BIGINT``, ``DECIMAL(10, 2)``,
``VARCHAR``, ``DATE``, ``TIMESTAMP``, ``INTERVAL``, ``INTEGER[]``, ``STRUCT(a INT, b
VARCHAR)``, ...): DuckDB resolves the name to its canonical spelling and its Arrow type, which
is how the column is stored. Values written into a column are converted as DuckDB converts
them (``CAST``): directly in Arrow where the two agree exactly (an integer into a wider
integer, numbers into floats, text into text), through DuckDB otherwise (a float into an
integer rounds, a string into a date is parsed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from .errors import InvalidInputError, ProgrammingError, translate

if TYPE_CHECKING:
    from .session import Session

__all__ = ["conform", "duckdb_types", "resolve_types"]

_HUGE = "HUGEINT"


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def resolve_types(session: "Session", types: list[str]) -> tuple[list[pa.DataType], list[str]]:
    """(Arrow types, DuckDB's names) of SQL type names; ProgrammingError for an unknown one."""
    if not types:
        return [], []
    sql = "SELECT " + ", ".join(f"CAST(NULL AS {t}) AS c{i}, typeof(CAST(NULL AS {t})) AS t{i}"
                                for i, t in enumerate(types))
    try:
        table, _ = session.runner.sql.run(sql, {})
    except Exception as exc:
        error = translate(exc)
        raise ProgrammingError(f"unknown column type: {str(error)[:300]}") from None
    arrow, names = [], []
    for i in range(len(types)):
        name = table.column(f"t{i}")[0].as_py()
        kind = table.schema.field(f"c{i}").type
        if name == _HUGE:  # (the engine hands back a NULL HUGEINT as a 64-bit integer)
            kind = pa.decimal128(38, 0)
        arrow.append(kind)
        names.append(name)
    return arrow, names


def duckdb_types(session: "Session", table: pa.Table) -> list[str]:
    """DuckDB's names of the types of ``table``'s columns."""
    if not table.num_columns:
        return []
    result, _ = session.runner.sql.run(
        "SELECT " + ", ".join(f"typeof({_quote(n)})" for n in table.column_names)
        + " FROM __graphdb_types LIMIT 1", {"__graphdb_types": _one_null_row(table.schema)})
    return [result.column(i)[0].as_py() for i in range(result.num_columns)]


def _one_null_row(schema: pa.Schema) -> pa.Table:
    return pa.table([pa.nulls(1, f.type) for f in schema], schema=schema)


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


def conform(session: "Session", rows: pa.Table, schema: pa.Schema, declared: list[str],
            table: str) -> pa.Table:
    """``rows`` (the columns of ``schema``, in any types) converted to ``schema``'s types, as
    DuckDB's CAST converts them; a value that does not convert is an InvalidInputError."""
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
        sql = "SELECT " + ", ".join(f"CAST(c{i} AS {declared[i]}) AS c{i}" for i in slow) + \
            " FROM __graphdb_rows"
        try:
            cast, _ = session.runner.sql.run(sql, {"__graphdb_rows": source})
        except Exception as exc:
            raise InvalidInputError(f"table {table}: {translate(exc)}") from None
        for i in slow:
            column = cast.column(f"c{i}")
            if column.type != schema.field(i).type:
                column = column.cast(schema.field(i).type)
            columns[i] = column
    return pa.table(columns, schema=schema)
