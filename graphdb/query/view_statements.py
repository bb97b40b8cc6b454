"""CREATE/DROP VIEW and CREATE/DROP SCHEMA (parsed by :mod:`graphdb.query.table_sql`) bound into
their plans (:mod:`graphdb.executor.plan_tables`), run by
:mod:`graphdb.executor.writes.namespaces`.

A view keeps its query's text and is expanded where a query names it; its query is bound here
(it must run now, over what exists). Schemas are namespaces for tables (``s.t``). Both are
stored at once, outside any transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphdb.catalog.tables import valid_table_name
from graphdb.executor.plan import PlanNode
from graphdb.executor.plan_tables import CreateSchema, CreateView, DropSchema, DropView
from graphdb.executor.table_types import duckdb_types

from ..errors import InvalidInputError
from .table_statements import check_schema, valid_name
from .values import run_text

if TYPE_CHECKING:
    from ..session import Session
    from .table_sql import TableCommand as Statement

__all__ = ["namespace_plan"]


def namespace_plan(session: "Session", statement: "Statement") -> PlanNode:
    """The plan of CREATE/DROP VIEW or SCHEMA."""
    options = statement.options
    kind = statement.kind
    if kind == "create_view":
        return _create_view(session, statement)
    if kind == "drop_view":
        return DropView(tuple(options["names"]), bool(statement.if_exists))
    if kind == "create_schema":
        name = statement.name
        if not valid_table_name(name) or "." in name:
            raise InvalidInputError(f"invalid schema name '{name[:80]}'")
        return CreateSchema(name, bool(statement.if_exists))
    return DropSchema(tuple(options["names"]), bool(statement.if_exists),
                      bool(options["cascade"]))


def _create_view(session: "Session", statement: "Statement") -> CreateView:
    options = statement.options
    name = valid_name(statement.name)
    check_schema(session, name)
    existing = session.catalog.tables_now().find_view(name)
    if existing is not None and not options["replace"] and options["if_not_exists"]:
        return CreateView(name, options["query"], if_not_exists=True)  # it reports "exists"
    result = run_text(session, options["query"] + " LIMIT 0")  # it must bind now
    columns = tuple(options["columns"])
    if columns and len(columns) > result.num_columns:
        raise InvalidInputError(f"view {name} names {len(columns)} columns; its query gives "
                                f"{result.num_columns}")
    names = list(columns) + result.column_names[len(columns):]
    output = tuple(zip(names, duckdb_types(session.runner.sql, result)))
    return CreateView(name, options["query"], columns, output, replace=options["replace"],
                      if_not_exists=options["if_not_exists"])
