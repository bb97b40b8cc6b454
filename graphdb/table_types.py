"""Column types of stored tables, as the relational engine (DuckDB) names and casts them.

A column is declared with any type DuckDB knows (``BIGINT``, ``DECIMAL(10, 2)``,
``VARCHAR``, ``DATE``, ``TIMESTAMP``, ``INTERVAL``, ``INTEGER[]``, ``STRUCT(a INT, b
VARCHAR)``, ...): DuckDB resolves the name to its canonical spelling and its Arrow type, which
is how the column is stored. Values written into a column are converted as DuckDB converts
them (``CAST``): directly in Arrow where the two agree exactly (an integer into a wider
integer, numbers into floats, text into text), through DuckDB otherwise (a float into an
integer rounds, a string into a date is parsed): :mod:`graphdb.executor.table_types`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from .errors import ProgrammingError, translate

if TYPE_CHECKING:
    from .session import Session

__all__ = ["resolve_types"]

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
