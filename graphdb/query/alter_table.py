"""ALTER TABLE: ADD COLUMN, DROP COLUMN, RENAME COLUMN a TO b and RENAME TO (parsed by
:mod:`graphdb.query.table_sql`, run by
:func:`graphdb.query.table_statements.execute_table_statement`), each in the session's write
transaction; a table a property graph is built over is refused (the error names the graph).
A change of columns rewrites the table's live rows as a new generation, their row ids kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from graphdb.catalog.tables import Column, ForeignKey, TableEntry, rebased
from graphdb.catalog.tables.entries import schema_bytes
from graphdb.executor.writes.table_graphs import refuse_if_graph

from ..errors import CatalogError, InvalidInputError
from ..table_types import resolve_types
from .table_statements import (
    after_write,
    resolve_default,
    table_name,
    table_writes,
    valid_name,
    write_statement,
)

if TYPE_CHECKING:
    from ..session import Session
    from .table_sql import TableCommand as Statement

__all__: list[str] = []


def _refuse_if_graph(session: "Session", table: str, what: str) -> None:
    refuse_if_graph(session.catalog, table, what)


def _alter_table(session: "Session", statement: "Statement", parameters: Any):
    ast = statement.ast
    with write_statement(session):
        writes = table_writes(session)
        entry = writes.find(statement.name)
        if entry is None:
            if statement.if_exists:
                return pa.table({}), f"table '{statement.name}' does not exist; nothing altered"
            writes.entry(statement.name)
        _refuse_if_graph(session, entry.name, "alter")
        messages = []
        for action in ast.args.get("actions") or []:
            entry, message = _alter(session, entry, action)
            messages.append(message)
    after_write(session)
    return pa.table({}), "; ".join(messages)


def _rows_of(session: "Session", entry: TableEntry) -> pa.Table:
    return session.catalog.tables.view(entry).table


def _rewrite(session: "Session", entry: TableEntry, rows: pa.Table, **changes) -> TableEntry:
    """``entry`` as a new generation holding ``rows`` (its live rows changed: its schema and
    columns as changed), their row ids kept."""
    new = rebased(session.catalog, entry, rows, arrow_schema=schema_bytes(rows.schema), **changes)
    return table_writes(session).create(new, replace=True)


def _alter(session: "Session", entry: TableEntry, action) -> tuple[TableEntry, str]:
    names = [c.name for c in entry.columns]
    if isinstance(action, exp.ColumnDef):  # ADD COLUMN
        column = action.name
        if column.lower() in (n.lower() for n in names):
            if action.args.get("exists"):
                return entry, f"column {column} exists"
            raise CatalogError(f"table {entry.name} has a column '{column}' already")
        text = action.args["kind"].sql(dialect="duckdb")
        (arrow,), (canonical,) = resolve_types(session, [text])
        default, nullable = None, True
        for constraint in action.args.get("constraints") or []:
            kind = constraint.args.get("kind")
            if isinstance(kind, exp.DefaultColumnConstraint):
                default = kind.this.sql(dialect="duckdb")
            elif isinstance(kind, exp.NotNullColumnConstraint):
                nullable = False
            else:
                raise InvalidInputError(f"ALTER TABLE ... ADD COLUMN takes a type, DEFAULT and "
                                        f"NOT NULL, not {constraint.sql()}")
        rows = _rows_of(session, entry)
        if default is not None:
            resolve_default(session, default, canonical, entry.name, column)
            value, _ = session.runner.sql.run(
                f"SELECT CAST({default} AS {canonical}) AS v FROM range({rows.num_rows})", {})
            values = value.column(0).cast(arrow)
        else:
            values = pa.nulls(rows.num_rows, arrow)
        if not nullable and values.null_count:
            raise InvalidInputError(f"cannot add NOT NULL column {column} without a DEFAULT to "
                                    f"table {entry.name} with rows")
        rows = rows.append_column(pa.field(column, arrow), values)
        new = _rewrite(session, entry, rows, columns=entry.columns + (
            Column(column, canonical, nullable, default),))
        return new, f"added column {column} to table {entry.name}"
    if isinstance(action, exp.Drop):  # DROP COLUMN
        target = action.args["tables"][0].name if action.args.get("tables") else action.name
        found = [n for n in names if n.lower() == target.lower()]
        if not found:
            if action.args.get("exists"):
                return entry, f"column {target} does not exist"
            raise CatalogError(f"table {entry.name} has no column '{target}'")
        column = found[0]
        if column in entry.primary_key or any(column in u for u in entry.unique) or any(
                column in fk.columns for fk in entry.foreign_keys):
            raise CatalogError(f"cannot drop column {column} of table {entry.name}: a key or "
                               "constraint uses it")
        if len(names) == 1:
            raise CatalogError(f"cannot drop the only column of table {entry.name}")
        rows = _rows_of(session, entry).drop_columns([column])
        new = _rewrite(session, entry, rows,
                       columns=tuple(c for c in entry.columns if c.name != column))
        return new, f"dropped column {column} of table {entry.name}"
    if isinstance(action, exp.RenameColumn):
        old, to = action.this.name, action.args["to"].name
        found = [n for n in names if n.lower() == old.lower()]
        if not found:
            raise CatalogError(f"table {entry.name} has no column '{old}'")
        if to.lower() in (n.lower() for n in names if n != found[0]):
            raise CatalogError(f"table {entry.name} has a column '{to}' already")

        def rename(columns):
            return tuple(to if c == found[0] else c for c in columns)

        rows = _rows_of(session, entry)
        rows = rows.rename_columns([to if n == found[0] else n for n in rows.column_names])
        new = _rewrite(session, entry, rows, columns=tuple(
            Column(to, c.type, c.nullable, c.default) if c.name == found[0] else c
            for c in entry.columns), primary_key=rename(entry.primary_key),
            unique=tuple(rename(u) for u in entry.unique),
            foreign_keys=tuple(ForeignKey(rename(f.columns), f.table, f.references)
                               for f in entry.foreign_keys))
        return new, f"renamed column {found[0]} of table {entry.name} to {to}"
    if isinstance(action, exp.AlterRename):
        to = table_name(action.this)
        to = valid_name(to)
        writes = table_writes(session)
        if writes.find(to) is not None:
            raise CatalogError(f"table '{to}' already exists")
        writes.drop(entry.name)
        new = writes.create(entry.with_changes(name=to), fresh=False)
        return new, f"renamed table {entry.name} to {to}"
    raise InvalidInputError(f"ALTER TABLE: unsupported action {action.sql()[:60]}; ADD COLUMN, "
                            "DROP COLUMN, RENAME COLUMN a TO b and RENAME TO are supported")
