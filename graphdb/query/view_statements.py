"""CREATE/DROP VIEW and CREATE/DROP SCHEMA (parsed by :mod:`graphdb.query.table_sql`, run by
:func:`graphdb.query.table_statements.execute_table_statement`).

Views keep their query's text and are expanded where a query names them; schemas are
namespaces for tables (``s.t``). Both are stored at once, outside any transaction.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from graphdb.catalog.tables import MAIN, ViewEntry, split_name, valid_table_name
from graphdb.catalog.tables.store import TABLES_DB, table_key
from graphdb.executor.table_types import duckdb_types
from graphdb.executor.writes.table_graphs import refuse_if_graph

from ..errors import CatalogError, InvalidInputError
from .table_statements import check_schema, valid_name
from .values import run_text

if TYPE_CHECKING:
    from ..session import Session
    from .table_sql import TableCommand as Statement

__all__: list[str] = []


def _put(session: "Session", key: bytes, value: bytes | None) -> None:
    env = session.catalog.env
    db = env.db(TABLES_DB)
    if session.transaction.writer.in_transaction:
        raise InvalidInputError("CREATE/DROP VIEW and SCHEMA run outside a transaction: "
                                "COMMIT or ROLLBACK first")

    def commit(txn):
        if value is None:
            txn.delete(key, db=db)
        else:
            txn.put(key, value, db=db)

    with env.writer_lock():
        env.write(commit)


def _create_view(session: "Session", statement: "Statement", parameters: Any):
    options = statement.options
    name = valid_name(statement.name)
    check_schema(session, name)
    tables = session.catalog.tables_now()
    existing = tables.find_view(name)
    if existing is not None and not options["replace"]:
        if options["if_not_exists"]:
            return pa.table({}), f"view '{existing.name}' exists; nothing created"
        raise CatalogError(f"view '{existing.name}' already exists: CREATE OR REPLACE VIEW")
    if tables.find(name) is not None:
        raise CatalogError(f"'{name}' is a table; a view needs another name")
    result = run_text(session, options["query"] + " LIMIT 0")  # it must bind now
    columns = tuple(options["columns"])
    if columns and len(columns) > result.num_columns:
        raise InvalidInputError(f"view {name} names {len(columns)} columns; its query gives "
                                f"{result.num_columns}")
    names = list(columns) + result.column_names[len(columns):]
    output = tuple(zip(names, duckdb_types(session.runner.sql, result)))
    if existing is not None:
        _put(session, table_key(existing.name, b"v/"), None)
    _put(session, table_key(name, b"v/"),
         ViewEntry(name, options["query"], columns, output).to_json())
    return pa.table({}), f"created view '{name}'"


def _drop_view(session: "Session", statement: "Statement", parameters: Any):
    dropped = []
    for name in statement.options["names"]:
        view = session.catalog.tables_now().find_view(name)
        if view is None:
            if statement.if_exists:
                continue
            raise CatalogError(f"view '{name}' does not exist")
        _put(session, table_key(view.name, b"v/"), None)
        dropped.append(view.name)
    return pa.table({}), ("dropped view " + ", ".join(dropped)) if dropped else "no view dropped"


def _create_schema(session: "Session", statement: "Statement", parameters: Any):
    name = statement.name
    if not valid_table_name(name) or "." in name:
        raise InvalidInputError(f"invalid schema name '{name[:80]}'")
    known = [s for s in session.catalog.tables_now().schemas() if s.lower() == name.lower()]
    if known or name.lower() in (MAIN, "information_schema"):
        if statement.if_exists:
            return pa.table({}), f"schema '{name}' exists; nothing created"
        raise CatalogError(f"schema '{name}' already exists")
    from graphdb.catalog.tables.entries import seal_json

    _put(session, table_key(name, b"s/"), seal_json({"created": time.time()}))
    return pa.table({}), f"created schema '{name}'"


def _drop_schema(session: "Session", statement: "Statement", parameters: Any):
    tables = session.catalog.tables_now()
    dropped = []
    for name in statement.options["names"]:
        known = [s for s in tables.schemas() if s.lower() == name.lower()]
        if not known:
            if statement.if_exists:
                continue
            raise CatalogError(f"schema '{name}' does not exist")
        inside = [t for t in tables.names() if split_name(t)[0].lower() == name.lower()] + [
            v for v in tables.view_names() if split_name(v)[0].lower() == name.lower()]
        if inside and not statement.options["cascade"]:
            raise CatalogError(f"schema '{known[0]}' is not empty ({', '.join(inside)}); DROP "
                               f"SCHEMA {known[0]} CASCADE drops them too")
        for item in inside:
            if tables.find(item) is not None:
                with session.transaction.writer.statement():
                    refuse_if_graph(session.catalog, item, "drop")
                    session.transaction.writer.tables.drop(item)
            else:
                _put(session, table_key(item, b"v/"), None)
        _put(session, table_key(known[0], b"s/"), None)
        dropped.append(known[0])
    return pa.table({}), ("dropped schema " + ", ".join(dropped)) if dropped else \
        "no schema dropped"
