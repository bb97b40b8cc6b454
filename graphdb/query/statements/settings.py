"""SET, RESET and SHOW: the session's settings, and what the database and engine have."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from graphdb.executor.errors import SQLError
from graphdb.executor.plan import PlanNode, ShowGraphs, ValuesScan

from ...errors import BinderError
from ...settings import Settings
from .. import grammar
from ..tables import constant
from . import Handler

if TYPE_CHECKING:
    from graphdb.executor.snapshot import StatementCatalog

    from ...session import Session
    from ..parser import Statement

__all__ = ["HANDLERS", "engine_setting", "set_item"]


def set_item(ast: exp.Expression) -> tuple[str, Any]:
    """(setting name, value) of ``SET name = value``; an unquoted word is taken as a string."""
    item = ast.expressions[0].this
    name = (item.this.name if hasattr(item.this, "name") else item.this.sql()).lower()
    if isinstance(item.expression, (exp.Column, exp.Var)):  # SET device = cpu
        return name, item.expression.name
    known, value = constant(item.expression)
    if not known:
        raise BinderError(f"SET {name} must be a constant, got {item.expression.sql()}")
    return name, value


def engine_setting(session: "Session", name: str, text: str) -> bool:
    """Run SET/RESET ``text`` of one of DuckDB's own settings (those its errors advise, such as
    ``error_on_division_by_zero``) on the session's relational engine; False when ``name`` is
    graphdb's, or DuckDB has no setting ``name`` either (graphdb's error then names its own)."""
    if name in Settings.names():
        return False
    try:
        session.runner.sql.set_option(text)
    except SQLError as exc:
        if exc.kind in ("catalog", "binder", "parser"):
            return False
        raise
    return True


class Set(Handler):
    kind = "set"

    def execute(self, session: "Session", statement: "Statement", parameters: Any
                ) -> tuple[pa.Table, str | None]:
        name, value = set_item(statement.ast)
        if engine_setting(session, name, statement.text):
            return pa.table({}), f"{name} = {value} (a setting of the relational engine, DuckDB)"
        return pa.table({}), session.set(name, value)


class Reset(Handler):
    kind = "reset"

    def execute(self, session: "Session", statement: "Statement", parameters: Any
                ) -> tuple[pa.Table, str | None]:
        name = statement.ast.name.lower()
        if name != "all" and engine_setting(session, name, statement.text):
            return pa.table({}), f"{name} reset"
        return pa.table({}), session.reset(statement.ast.name)


class ShowGraphsHandler(Handler):
    kind = "show_graphs"
    explainable = True

    def plan(self, session: "Session", statement: "Statement", parameters: Any,
             snapshot: "StatementCatalog") -> PlanNode:
        return ShowGraphs()


class ShowTable(Handler):
    """``SHOW SETTINGS`` and ``SHOW FUNCTIONS``: the table of ``settings()``, ``functions()``."""

    explainable = True

    def __init__(self, name: str):
        self.name = name
        self.kind = f"show_{name}"

    def plan(self, session: "Session", statement: "Statement", parameters: Any,
             snapshot: "StatementCatalog") -> PlanNode:
        return ValuesScan(self.name, getattr(session, f"{self.name}_table")())


HANDLERS = {exp.Set: Set(), grammar.Reset: Reset(), grammar.ShowGraphs: ShowGraphsHandler(),
            grammar.ShowSettings: ShowTable("settings"),
            grammar.ShowFunctions: ShowTable("functions")}
