"""Properties that are expressions over their table's columns (SQL/PGQ's derived properties,
``PROPERTIES (price * 2 AS cost, 'order' AS kind)``).

A property graph is a view over its tables, so such a property is what its expression gives for
the row as it is now: it is worked out (by the relational engine, DuckDB) for the rows a
``CREATE PROPERTY GRAPH`` reads and again for every row a later INSERT, UPDATE or COPY writes to
the table, and stored like a property read from a column. In the graph's schema the property
reads a hidden column, :func:`column_name`, that the element's ``computed`` pairs
(hidden column, expression) define.

An expression reads only its own row: aggregates, window functions and subqueries are refused
when the graph is created (a row's value would depend on other rows, which no write of that row
reaches).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from .errors import InvalidArgument

if TYPE_CHECKING:
    from .relational import SQLEngine

__all__ = ["COMPUTED", "Expression", "column_name", "with_computed"]

#: How the names of the hidden columns of computed properties start.
COMPUTED = "__computed_"

#: The name the rows are registered under while an expression is worked out.
_ROWS = "__graphdb_element_rows"
_POSITION = "__graphdb_position"


@dataclass(frozen=True)
class Expression:
    """A property's expression (DuckDB SQL over its table's columns), as written."""

    sql: str


def column_name(prop: str) -> str:
    """The hidden column of table rows holding computed property ``prop``."""
    return f"{COMPUTED}{prop.lower()}"


def with_computed(engine: "SQLEngine", rows: pa.Table, computed) -> pa.Table:
    """``rows`` with a column per (hidden column, expression) pair of ``computed`` added, each
    the expression's value for its row."""
    computed = [(name, sql) for name, sql in computed if name not in rows.column_names]
    if not computed:
        return rows
    listed = ", ".join(f"({sql}) AS {_quoted(name)}" for name, sql in computed)
    sql = f"SELECT {listed} FROM {_ROWS} ORDER BY {_POSITION}"
    numbered = rows.append_column(_POSITION, pa.array(range(rows.num_rows), pa.int64()))
    try:
        values, _ = engine.run(sql, {_ROWS: numbered})
    except Exception as exc:  # DuckDB's binder: an unknown column, a wrong type
        shown = "; ".join(s for _, s in computed)
        first = str(exc).split("\n")[0]
        columns = ", ".join(c for c in rows.column_names if not c.startswith("__"))
        raise InvalidArgument(f"property expression {shown}: {first} (the table's columns: "
                              f"{columns})") from None
    if values.num_rows != rows.num_rows:
        raise InvalidArgument(f"property expression {computed[0][1]}: a property's expression "
                              "reads its own row only (no aggregates)")
    for (name, _), column in zip(computed, values.columns):
        rows = rows.append_column(name, column)
    return rows


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
