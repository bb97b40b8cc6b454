"""Query parameters: ``?`` (positional) and ``$name`` / ``:name`` (named), bound before planning.

Values become literals in the AST, so the binder validates them exactly as if they had been
written in the query (an algorithm argument, a LIMIT, a comparison).
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from ..errors import BinderError, InvalidInputError
from .expressions import literal_value

__all__ = ["bind_parameters", "constant"]


def constant(node: exp.Expression, what: str) -> Any:
    """The Python value of a constant expression, or a BinderError naming ``what``."""
    try:
        return literal_value(node)
    except BinderError:
        raise BinderError(f"{what} must be a constant, got {node.sql()}") from None


def bind_parameters(ast: exp.Expression, parameters) -> exp.Expression:
    """Replace ``?`` (positional) and ``$name`` / ``:name`` (named) with literal values."""
    if parameters is None:
        parameters = ()
    positional = list(parameters) if isinstance(parameters, (list, tuple)) else None
    named = dict(parameters) if isinstance(parameters, dict) else None
    used = 0

    def value_for(name: str | None) -> exp.Expression:
        nonlocal used
        if name is None:
            if positional is None:
                raise InvalidInputError("the query uses '?' but parameters were given by name")
            if used >= len(positional):
                raise InvalidInputError(f"the query has more '?' placeholders than the "
                                        f"{len(positional)} parameters given")
            value = positional[used]
            used += 1
        else:
            if named is None or name not in named:
                raise InvalidInputError(f"no value given for parameter ${name}")
            value = named[name]
        if hasattr(value, "item"):  # numpy scalars
            value = value.item()
        return exp.convert(value)

    def replace(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Placeholder):
            return value_for(node.this or None)
        if isinstance(node, exp.Parameter):
            return value_for(node.name)
        if isinstance(node, exp.Column) and not node.table and node.name.startswith("$"):
            return value_for(node.name[1:])
        return node

    if not any(isinstance(n, (exp.Placeholder, exp.Parameter)) or (
            isinstance(n, exp.Column) and n.name.startswith("$")) for n in ast.walk()):
        if positional:
            raise InvalidInputError(f"{len(positional)} parameters given but the query has none")
        return ast
    bound = ast.transform(replace, copy=False)  # each execute parses afresh: no need to copy
    if positional is not None and used != len(positional):
        raise InvalidInputError(
            f"{len(positional)} parameters given but the query has {used} '?' placeholders")
    return bound
