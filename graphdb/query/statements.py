"""The parts of SET and DESCRIBE statements, read from the AST (sqlglot stays in this package)."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from ..errors import BinderError
from .tables import constant

__all__ = ["set_item", "describe_target"]


def set_item(ast: exp.Expression) -> tuple[str, Any]:
    """(setting name, value) of ``SET name = value``; an unquoted word is taken as a string."""
    item = ast.expressions[0].this
    name = (item.this.name if hasattr(item.this, "name") else item.this.sql()).lower()
    if isinstance(item.expression, exp.Column):  # SET device = cpu
        return name, item.expression.name
    known, value = constant(item.expression)
    if not known:
        raise BinderError(f"SET {name} must be a constant, got {item.expression.sql()}")
    return name, value


def describe_target(ast: exp.Expression, text: str) -> tuple[str, Any]:
    """('graph', name), ('table', 'g.edges' SQL) or ('query', its text) of a DESCRIBE
    statement (``text``)."""
    target = ast.this
    if isinstance(target, exp.Table) and target.args.get("db") is not None:
        return "table", target.sql(dialect="duckdb")
    if isinstance(target, exp.Query):
        return "query", text.split(None, 1)[1]
    return "graph", target.name
