"""ALTER TABLE (parsed by :mod:`graphdb.query.table_sql`) bound into its plan,
:class:`~graphdb.executor.plan_tables.AlterTable`: ADD COLUMN (its type resolved by DuckDB, its
DEFAULT checked), DROP COLUMN, RENAME COLUMN a TO b and RENAME TO, which
:mod:`graphdb.executor.writes.alter_table` runs in the session's write transaction. Whether the
table and its columns exist is checked when it runs (a table this transaction made is there
only then)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from graphdb.catalog.tables import Column
from graphdb.executor.plan_tables import (
    AddColumn,
    AlterTable,
    DropColumn,
    RenameColumn,
    RenameTable,
)

from ..errors import InvalidInputError
from ..table_types import resolve_types
from .table_statements import resolve_default, table_name, valid_name

if TYPE_CHECKING:
    from ..session import Session
    from .table_sql import TableCommand as Statement

__all__ = ["alter_plan"]


def alter_plan(session: "Session", statement: "Statement") -> AlterTable:
    """The plan of ``ALTER TABLE [IF EXISTS] t action, ...``."""
    actions = tuple(_action(session, statement.name, action)
                    for action in statement.ast.args.get("actions") or [])
    return AlterTable(statement.name, actions, bool(statement.if_exists))


def _action(session: "Session", table: str, action: exp.Expression):
    if isinstance(action, exp.ColumnDef):  # ADD COLUMN
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
        if default is not None:
            resolve_default(session, default, canonical, table, action.name)
        return AddColumn(Column(action.name, canonical, nullable, default), arrow,
                         bool(action.args.get("exists")))
    if isinstance(action, exp.Drop):  # DROP COLUMN
        target = action.args["tables"][0].name if action.args.get("tables") else action.name
        return DropColumn(target, bool(action.args.get("exists")))
    if isinstance(action, exp.RenameColumn):
        return RenameColumn(action.this.name, action.args["to"].name)
    if isinstance(action, exp.AlterRename):
        return RenameTable(valid_name(table_name(action.this)))
    raise InvalidInputError(f"ALTER TABLE: unsupported action {action.sql()[:60]}; ADD COLUMN, "
                            "DROP COLUMN, RENAME COLUMN a TO b and RENAME TO are supported")
