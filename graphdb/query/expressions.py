"""SQL scalar expressions (sqlglot AST) to pyarrow compute expressions.

A :class:`Translator` turns one expression into a ``pc.Expression`` over the column names of its
input. Column references are resolved by a :class:`~graphdb.query.scope.Scope`; a
``substitute`` hook lets the aggregate planner replace whole subtrees (``count(*)``, a GROUP BY
key) by the columns that hold them; subqueries are handed to ``subquery`` hooks that the select
planner provides, since they become joins below the operator using the expression.
"""

from __future__ import annotations

import difflib
from typing import Any, Callable

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from graphdb.executor.arrays import scalar, to_arrow

from ..errors import BinderError, NotSupportedError

__all__ = ["Translator", "output_name", "literal_value", "conjuncts", "AGGREGATES",
           "aggregate_name"]

_COMPARISONS: dict[type, Callable[[pc.Expression, pc.Expression], pc.Expression]] = {
    exp.EQ: lambda a, b: a == b,
    exp.NEQ: lambda a, b: a != b,
    exp.GT: lambda a, b: a > b,
    exp.GTE: lambda a, b: a >= b,
    exp.LT: lambda a, b: a < b,
    exp.LTE: lambda a, b: a <= b,
}

_ARITHMETIC = {exp.Add: "add_checked", exp.Sub: "subtract_checked", exp.Mul: "multiply_checked"}

#: SQL scalar functions -> Arrow compute functions taking the same positional arguments.
_FUNCTIONS = {
    "abs": "abs_checked", "sqrt": "sqrt_checked", "ln": "ln_checked", "log10": "log10_checked",
    "log2": "log2_checked", "exp": "exp", "floor": "floor", "ceil": "ceil", "ceiling": "ceil",
    "lower": "utf8_lower", "upper": "utf8_upper", "length": "utf8_length", "sign": "sign",
    "power": "power_checked", "pow": "power_checked", "coalesce": "coalesce",
    "least": "min_element_wise", "greatest": "max_element_wise", "trim": "utf8_trim_whitespace",
    "reverse": "utf8_reverse", "concat": "binary_join_element_wise", "trunc": "trunc",
}

#: SQL aggregate -> Arrow hash aggregate (without the ``hash_`` prefix).
AGGREGATES = {"count": "count", "sum": "sum", "avg": "mean", "mean": "mean", "min": "min",
              "max": "max", "stddev": "stddev", "stddev_samp": "stddev", "variance": "variance",
              "var_samp": "variance", "any_value": "first", "first": "first", "last": "last"}

_TYPES = {
    "INT": pa.int64(), "BIGINT": pa.int64(), "INTEGER": pa.int64(), "SMALLINT": pa.int64(),
    "TINYINT": pa.int64(), "DOUBLE": pa.float64(), "FLOAT": pa.float64(), "REAL": pa.float64(),
    "DECIMAL": pa.float64(), "TEXT": pa.string(), "VARCHAR": pa.string(), "CHAR": pa.string(),
    "BOOLEAN": pa.bool_(),
}


def output_name(node: exp.Expression) -> str:
    """The column name SQL gives a select-list expression."""
    if isinstance(node, exp.Alias):
        return node.alias
    if isinstance(node, exp.Column):
        return node.name
    return node.sql()


def aggregate_name(node: exp.Expression) -> str | None:
    """The lower-case SQL name if ``node`` is an aggregate call, else None."""
    if isinstance(node, exp.AggFunc):
        name = node.sql_name().lower()
        return {"avg": "avg", "count": "count"}.get(name, name)
    if isinstance(node, exp.Anonymous) and node.name.lower() in AGGREGATES:
        return node.name.lower()
    return None


def conjuncts(node: exp.Expression | None) -> list[exp.Expression]:
    """The AND-ed parts of a condition (none for None)."""
    if node is None:
        return []
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    if isinstance(node, exp.Paren):
        inner = conjuncts(node.this)
        return inner if len(inner) > 1 else [node]
    return [node]


def literal_value(node: exp.Expression) -> Any:
    """The Python value of a constant expression (literal, signed number, TRUE, NULL)."""
    if isinstance(node, exp.Paren):
        return literal_value(node.this)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        try:
            return int(node.this)
        except ValueError:
            return float(node.this)
    if isinstance(node, exp.Neg):
        value = literal_value(node.this)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value
    if isinstance(node, exp.Boolean):
        return node.this
    if isinstance(node, exp.Null):
        return None
    raise BinderError(f"expected a constant, got {node.sql()}")


class Translator:
    """Translates expressions of one scope.

    ``resolve(column)`` returns the input column name for a ``exp.Column``; ``substitute(node)``
    may return an expression for a whole subtree (or None); ``scalar_subquery(node)`` and
    ``in_subquery(expr_node, query)`` return the column that will hold their value.
    """

    def __init__(self, resolve: Callable[[exp.Column], str],
                 substitute: Callable[[exp.Expression], pc.Expression | None] | None = None,
                 scalar_subquery: Callable[[exp.Expression], str] | None = None,
                 in_subquery: Callable[[exp.Expression, exp.Expression], str] | None = None):
        self.resolve = resolve
        self.substitute = substitute
        self.scalar_subquery = scalar_subquery
        self.in_subquery = in_subquery

    def __call__(self, node: exp.Expression) -> pc.Expression:
        return self.to_arrow(node)

    def to_arrow(self, node: exp.Expression) -> pc.Expression:
        if self.substitute is not None:
            replaced = self.substitute(node)
            if replaced is not None:
                return replaced
        t = self.to_arrow
        if isinstance(node, (exp.Paren, exp.Alias)):
            return t(node.this)
        if isinstance(node, exp.Column):
            if isinstance(node.this, exp.Star):
                raise NotSupportedError(f"{node.sql()} is only allowed in the select list")
            return pc.field(self.resolve(node))
        if isinstance(node, (exp.Literal, exp.Boolean, exp.Null)):
            return _literal(literal_value(node))
        op = _COMPARISONS.get(type(node))
        if op is not None:
            return op(t(node.this), t(node.expression))
        if isinstance(node, exp.And):
            return t(node.this) & t(node.expression)
        if isinstance(node, exp.Or):
            return t(node.this) | t(node.expression)
        if isinstance(node, exp.Not):
            inner = node.this
            if isinstance(inner, exp.Is):
                return _call("is_valid", t(inner.this))
            return ~t(inner)
        if isinstance(node, exp.Is):
            if not isinstance(node.expression, exp.Null):
                raise NotSupportedError(f"IS {node.expression.sql()} is not supported; use IS NULL")
            return _call("is_null", t(node.this))
        if isinstance(node, exp.Neg):
            return _call("negate_checked", t(node.this))
        if isinstance(node, exp.Div):
            # SQL engines differ on integer division; like DuckDB's '/', this one is real-valued.
            # By zero it is NULL rather than inf/NaN or an error, as in DuckDB.
            divisor = t(node.expression)
            null = pc.scalar(scalar(None, pa.float64()))
            return _call("if_else", divisor == _literal(0), null,
                         _call("divide", t(node.this).cast(pa.float64()), divisor))
        if isinstance(node, exp.IntDiv):
            return _call("floor", _call("divide", t(node.this).cast(pa.float64()),
                                        t(node.expression))).cast(pa.int64())
        if isinstance(node, exp.Mod):
            a, b = t(node.this), t(node.expression)
            return _call("subtract_checked", a, _call("multiply_checked", b, _call(
                "trunc", _call("divide", a.cast(pa.float64()), b)).cast(pa.int64())))
        if type(node) in (exp.Add, exp.Sub, exp.Mul):
            return _call(_ARITHMETIC[type(node)], t(node.this), t(node.expression))
        if isinstance(node, exp.DPipe):
            return _call("binary_join_element_wise", t(node.this).cast(pa.string()),
                         t(node.expression).cast(pa.string()), _literal(""))
        if isinstance(node, exp.In):
            return self._in(node)
        if isinstance(node, exp.Between):
            x = t(node.this)
            return (x >= t(node.args["low"])) & (x <= t(node.args["high"]))
        if isinstance(node, (exp.Like, exp.ILike)):
            pattern = literal_value(node.expression)
            return _call("match_like", t(node.this), options=pc.MatchSubstringOptions(
                pattern, ignore_case=isinstance(node, exp.ILike)))
        if isinstance(node, exp.Cast):
            return self._cast(node)
        if isinstance(node, exp.Case):
            return self._case(node)
        if isinstance(node, exp.If):
            return _call("if_else", t(node.this), t(node.args["true"]),
                         t(node.args.get("false") or exp.Null()))
        if isinstance(node, exp.Round):
            digits = node.args.get("decimals")
            nd = int(literal_value(digits)) if digits is not None else 0
            return _call("round", t(node.this), options=pc.RoundOptions(nd))
        if isinstance(node, exp.Exists):
            raise NotSupportedError("EXISTS (subquery) is not supported; use "
                                    "x IN (SELECT ...) or a join")
        if isinstance(node, exp.Subquery) or isinstance(node, exp.Select):
            if self.scalar_subquery is None:
                raise NotSupportedError(f"a subquery is not allowed here: {node.sql()}")
            return pc.field(self.scalar_subquery(node))
        if isinstance(node, exp.Func):
            return self._function(node)
        raise NotSupportedError(f"expression not supported yet: {node.sql()}")

    def _in(self, node: exp.In) -> pc.Expression:
        query = node.args.get("query")
        if query is not None:
            if self.in_subquery is None:
                raise NotSupportedError(f"IN (subquery) is not allowed here: {node.sql()}")
            return pc.field(self.in_subquery(node.this, query))
        values = [literal_value(v) for v in node.expressions]
        return _call("is_in", self.to_arrow(node.this),
                     options=pc.SetLookupOptions(to_arrow(values)))

    def _cast(self, node: exp.Cast) -> pc.Expression:
        type_name = node.to.this.name if hasattr(node.to.this, "name") else str(node.to.this)
        target = _TYPES.get(type_name.upper())
        if target is None:
            raise NotSupportedError(f"CAST to {node.to.sql()} is not supported "
                                    f"(types: {', '.join(sorted(_TYPES))})")
        return self.to_arrow(node.this).cast(target)

    def _case(self, node: exp.Case) -> pc.Expression:
        subject = node.this
        default = node.args.get("default")
        result = self.to_arrow(default) if default is not None else _literal(None)
        for branch in reversed(node.args.get("ifs") or []):
            cond = branch.this if subject is None else exp.EQ(this=subject, expression=branch.this)
            result = _call("if_else", _call("coalesce", self.to_arrow(cond), _literal(False)),
                           self.to_arrow(branch.args["true"]), result)
        return result

    def _function(self, node: exp.Func) -> pc.Expression:
        name = aggregate_name(node)
        if name is not None:
            raise BinderError(f"aggregate function {name}() is not allowed here "
                              "(aggregates belong in the select list, HAVING or ORDER BY)")
        if isinstance(node, exp.Anonymous):
            name = node.name.lower()
        else:
            name = node.sql_name().lower()
        arrow_name = _FUNCTIONS.get(name)
        if arrow_name is None:
            close = difflib.get_close_matches(name, sorted(_FUNCTIONS), n=1)
            hint = f"; did you mean {close[0]}()?" if close else ""
            raise BinderError(f"unknown function {name}(){hint}")
        arg_nodes = function_args(node)
        if arrow_name in ("coalesce", "min_element_wise", "max_element_wise"):
            # An untyped NULL literal cannot meet a typed argument in Arrow; it adds nothing here.
            arg_nodes = [a for a in arg_nodes if not isinstance(a, exp.Null)] or arg_nodes[:1]
        args = [self.to_arrow(a) for a in arg_nodes]
        if arrow_name == "binary_join_element_wise":
            args = [a.cast(pa.string()) for a in args] + [_literal("")]
        return _call(arrow_name, *args)


def _literal(value) -> pc.Expression:
    """A constant in an expression (see executor.arrays: pc.scalar of a plain Python value
    would import pandas)."""
    return pc.scalar(scalar(value))


def _call(name: str, *args: pc.Expression, options=None) -> pc.Expression:
    return pc.Expression._call(name, list(args), options)


def function_args(node: exp.Func) -> list[exp.Expression]:
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
