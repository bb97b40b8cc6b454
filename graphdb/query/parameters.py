"""Query parameters: ``?`` (numbered by their position in the text), ``$1`` (by number) and
``$name`` (by name).

A parameter becomes a value where the binder needs one (a graph function's argument) and SQL
text everywhere else: :func:`sql_literal` writes a literal of the type DuckDB gives the Python
value as a prepared statement's parameter (an int as an integer literal, a float as a DOUBLE,
``DATE '2024-01-31'``), so DuckDB reads exactly the value given.
``x IN ?`` takes a list or tuple (``IN (1, 2, 3)``; an empty one matches nothing).
"""

from __future__ import annotations

import datetime
import decimal
import math
import uuid
from typing import Any

from sqlglot import exp

from ..errors import InvalidInputError
from .dialect import span

__all__ = ["Parameters", "placeholders", "sql_literal"]

def placeholders(ast: exp.Expression) -> list[exp.Expression]:
    """The parameter nodes of a statement, in the order they appear in its text."""
    found = [n for n in ast.walk() if isinstance(n, (exp.Placeholder, exp.Parameter))]
    return sorted(found, key=lambda n: (span(n) or (0, 0))[0])


class Parameters:
    """The values of one execution's parameters, by placeholder (its place in the text)."""

    def __init__(self, ast: exp.Expression | None, values: Any,
                 nodes: tuple[exp.Expression, ...] | None = None):
        if nodes is None:
            nodes = placeholders(ast) if ast is not None else ()
        if values is None:
            values = ()
        positional = list(values) if isinstance(values, (list, tuple)) else None
        named = dict(values) if isinstance(values, dict) else None
        if positional is None and named is None:
            raise InvalidInputError("parameters must be a list or tuple (for ?) or a dict (for "
                                    f"$name), not {type(values).__name__}")
        self._values: dict[int, Any] = {}
        question = 0
        numbered = set()
        for node in nodes:
            name = node.name if isinstance(node, (exp.Placeholder, exp.Parameter)) else ""
            if not name or name == "?":
                if positional is None:
                    raise InvalidInputError("the query uses '?' but parameters were given by "
                                            "name")
                if question >= len(positional):
                    raise InvalidInputError(f"the query has more '?' placeholders than the "
                                            f"{len(positional)} parameters given")
                value = positional[question]
                question += 1
            elif name.isdigit():
                if positional is None:
                    raise InvalidInputError(f"the query uses ${name} but parameters were given "
                                            "by name")
                number = int(name)
                if not 1 <= number <= len(positional):
                    raise InvalidInputError(f"no value given for parameter ${name} "
                                            f"({len(positional)} given)")
                value = positional[number - 1]
                numbered.add(number)
            else:
                if named is None or name not in named:
                    raise InvalidInputError(f"no value given for parameter ${name}")
                value = named[name]
            self._values[_key(node)] = _plain(value)
        if positional is not None:
            used = question + len(numbered)
            if question and numbered:
                raise InvalidInputError("a query takes '?' or $1, $2, ... parameters, not both")
            if not nodes and positional:
                raise InvalidInputError(f"{len(positional)} parameters given but the query has "
                                        "none")
            if used != len(positional) and not numbered:
                raise InvalidInputError(f"{len(positional)} parameters given but the query has "
                                        f"{used} '?' placeholders")

    def value(self, node: exp.Expression) -> Any:
        """The Python value of a placeholder node (or of a copy of it)."""
        return self._values[_key(node)]

    def sql(self, node: exp.Expression) -> str:
        """The placeholder as SQL text (a list after ``IN`` as the list of its values)."""
        value = self.value(node)
        parent = node.parent
        if isinstance(parent, exp.In) and parent.args.get("field") is node:
            if not isinstance(value, (list, tuple, set, frozenset)):
                raise InvalidInputError(f"x IN ? takes a list or tuple of values, not "
                                        f"{type(value).__name__}")
            if not value:
                return "(SELECT NULL WHERE false)"  # an empty list: IN is false, NOT IN true
            return "(" + ", ".join(sql_literal(v) for v in value) + ")"
        return sql_literal(value)


def _key(node: exp.Expression) -> int:
    where = span(node)
    return where[0] if where is not None else id(node)


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds; anything else as it is."""
    if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
        return value.item()
    return value


def sql_literal(value: Any) -> str:
    """``value`` as a DuckDB literal of its type."""
    value = _plain(value)
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)  # typed as DuckDB types a parameter: INTEGER while it fits, BIGINT...
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return f"CAST('{value}' AS DOUBLE)"
        return f"CAST({value!r} AS DOUBLE)"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise InvalidInputError(f"a DECIMAL parameter must be finite, got {value}")
        digits = max(-value.as_tuple().exponent, 0)
        return f"CAST('{value}' AS DECIMAL(38, {min(digits, 37)}))"
    if isinstance(value, datetime.datetime):
        kind = "TIMESTAMPTZ" if value.tzinfo is not None else "TIMESTAMP"
        return f"{kind} '{value.isoformat(sep=' ')}'"
    if isinstance(value, datetime.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, datetime.time):
        return f"TIME '{value.isoformat()}'"
    if isinstance(value, datetime.timedelta):
        micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
        return f"to_microseconds(CAST({micros} AS BIGINT))"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"unhex('{bytes(value).hex()}')"
    if isinstance(value, uuid.UUID):
        return f"CAST('{value}' AS UUID)"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(sql_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{sql_literal(str(k))}: {sql_literal(v)}"
                               for k, v in value.items()) + "}"
    raise InvalidInputError(f"a parameter of type {type(value).__name__} is not supported "
                            "(numbers, strings, booleans, None, dates and times, bytes, lists)")
