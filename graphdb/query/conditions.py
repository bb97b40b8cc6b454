"""Conditions: the AND-ed parts of a WHERE (the binder, patterns and key lookups split them)."""

from __future__ import annotations

from sqlglot import exp

__all__ = ["conjuncts"]


def conjuncts(node: exp.Expression | None) -> list[exp.Expression]:
    """The AND-ed parts of a condition (none for None), looking into parentheses."""
    if node is None:
        return []
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    return [node]
