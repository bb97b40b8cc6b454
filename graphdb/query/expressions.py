"""SQL scalar expressions (sqlglot AST) to pyarrow compute expressions."""

from __future__ import annotations

import difflib
from typing import Callable

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import BinderError, NotSupportedError

__all__ = ["to_arrow", "output_name", "column_error"]

_COMPARISONS: dict[type, Callable[[pc.Expression, pc.Expression], pc.Expression]] = {
    exp.EQ: lambda a, b: a == b,
    exp.NEQ: lambda a, b: a != b,
    exp.GT: lambda a, b: a > b,
    exp.GTE: lambda a, b: a >= b,
    exp.LT: lambda a, b: a < b,
    exp.LTE: lambda a, b: a <= b,
}

_ARITHMETIC = {
    exp.Add: "add_checked",
    exp.Sub: "subtract_checked",
    exp.Mul: "multiply_checked",
}

#: SQL scalar functions -> Arrow compute functions taking the same positional arguments.
_FUNCTIONS = {
    "abs": "abs_checked", "sqrt": "sqrt_checked", "ln": "ln_checked", "log10": "log10_checked",
    "exp": "exp", "floor": "floor", "ceil": "ceil", "ceiling": "ceil", "lower": "utf8_lower",
    "upper": "utf8_upper", "length": "utf8_length", "sign": "sign", "power": "power_checked",
    "pow": "power_checked", "coalesce": "coalesce", "least": "min_element_wise",
    "greatest": "max_element_wise",
}

_TYPES = {
    "INT": pa.int64(), "BIGINT": pa.int64(), "INTEGER": pa.int64(), "SMALLINT": pa.int64(),
    "DOUBLE": pa.float64(), "FLOAT": pa.float64(), "REAL": pa.float64(), "DECIMAL": pa.float64(),
    "TEXT": pa.string(), "VARCHAR": pa.string(), "BOOLEAN": pa.bool_(),
}


def column_error(name: str, columns: list[str]) -> BinderError:
    close = difflib.get_close_matches(name, columns, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return BinderError(f"unknown column '{name}' (columns: {', '.join(columns)}){hint}")


def output_name(node: exp.Expression) -> str:
    """The column name SQL gives a select-list expression."""
    if isinstance(node, exp.Alias):
        return node.alias
    if isinstance(node, exp.Column):
        return node.name
    return node.sql()


def to_arrow(node: exp.Expression, columns: list[str]) -> pc.Expression:
    """Translate one scalar expression; ``columns`` are the names in scope."""
    if isinstance(node, exp.Paren):
        return to_arrow(node.this, columns)
    if isinstance(node, exp.Alias):
        return to_arrow(node.this, columns)
    if isinstance(node, exp.Column):
        name = node.name
        if name not in columns:
            folded = [c for c in columns if c.lower() == name.lower()]
            if len(folded) != 1:
                raise column_error(name, columns)
            name = folded[0]
        return pc.field(name)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return pc.scalar(node.this)
        text = node.this
        try:
            return pc.scalar(int(text))
        except ValueError:
            return pc.scalar(float(text))
    if isinstance(node, exp.Boolean):
        return pc.scalar(node.this)
    if isinstance(node, exp.Null):
        return pc.scalar(None)
    op = _COMPARISONS.get(type(node))
    if op is not None:
        return op(to_arrow(node.this, columns), to_arrow(node.expression, columns))
    if isinstance(node, exp.And):
        return to_arrow(node.this, columns) & to_arrow(node.expression, columns)
    if isinstance(node, exp.Or):
        return to_arrow(node.this, columns) | to_arrow(node.expression, columns)
    if isinstance(node, exp.Not):
        inner = node.this
        if isinstance(inner, exp.Is):
            return pc.Expression._call("is_valid", [to_arrow(inner.this, columns)])
        return ~to_arrow(inner, columns)
    if isinstance(node, exp.Is):
        if not isinstance(node.expression, exp.Null):
            raise NotSupportedError(f"IS {node.expression.sql()} is not supported; use IS NULL")
        return pc.Expression._call("is_null", [to_arrow(node.this, columns)])
    if isinstance(node, exp.Neg):
        return pc.Expression._call("negate_checked", [to_arrow(node.this, columns)])
    if isinstance(node, exp.Div):
        a = to_arrow(node.this, columns).cast(pa.float64())
        return pc.Expression._call("divide", [a, to_arrow(node.expression, columns)])
    if type(node) in _ARITHMETIC:
        return pc.Expression._call(_ARITHMETIC[type(node)],
                                   [to_arrow(node.this, columns), to_arrow(node.expression, columns)])
    if isinstance(node, exp.In):
        if node.args.get("query") is not None:
            raise NotSupportedError("IN (subquery) is not supported yet")
        values = [_literal_value(v) for v in node.expressions]
        return pc.Expression._call("is_in", [to_arrow(node.this, columns)],
                                   pc.SetLookupOptions(pa.array(values)))
    if isinstance(node, exp.Between):
        x = to_arrow(node.this, columns)
        return (x >= to_arrow(node.args["low"], columns)) & (x <= to_arrow(node.args["high"], columns))
    if isinstance(node, exp.Cast):
        target = _TYPES.get(node.to.this.name if hasattr(node.to.this, "name") else str(node.to.this))
        if target is None:
            raise NotSupportedError(f"CAST to {node.to.sql()} is not supported")
        return to_arrow(node.this, columns).cast(target)
    if isinstance(node, exp.Round):
        digits = node.args.get("decimals")
        nd = int(_literal_value(digits)) if digits is not None else 0
        return pc.Expression._call("round", [to_arrow(node.this, columns)], pc.RoundOptions(nd))
    if isinstance(node, exp.Func):
        name = (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
        if isinstance(node, exp.AggFunc):
            raise NotSupportedError(f"aggregate function {name.upper()}() is not supported yet")
        arrow_name = _FUNCTIONS.get(name)
        if arrow_name is None:
            known = sorted(_FUNCTIONS)
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]}()?" if close else ""
            raise BinderError(f"unknown function {name}(){hint}")
        args = [to_arrow(a, columns) for a in _function_args(node)]
        return pc.Expression._call(arrow_name, args)
    raise NotSupportedError(f"expression not supported yet: {node.sql()}")


def _function_args(node: exp.Func) -> list[exp.Expression]:
    if isinstance(node, exp.Anonymous):
        return list(node.expressions)
    args = []
    for key in node.arg_types:
        value = node.args.get(key)
        if isinstance(value, list):
            args.extend(value)
        elif isinstance(value, exp.Expression):
            args.append(value)
    return args


def _literal_value(node: exp.Expression):
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        try:
            return int(node.this)
        except ValueError:
            return float(node.this)
    if isinstance(node, exp.Neg):
        return -_literal_value(node.this)
    if isinstance(node, exp.Boolean):
        return node.this
    if isinstance(node, exp.Null):
        return None
    raise NotSupportedError(f"expected a constant, got {node.sql()}")
