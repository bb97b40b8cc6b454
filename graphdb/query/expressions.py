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
           "aggregate_name", "scalar_functions", "aggregate_functions"]

_COMPARISONS: dict[type, Callable[[pc.Expression, pc.Expression], pc.Expression]] = {
    exp.EQ: lambda a, b: a == b,
    exp.NEQ: lambda a, b: a != b,
    exp.GT: lambda a, b: a > b,
    exp.GTE: lambda a, b: a >= b,
    exp.LT: lambda a, b: a < b,
    exp.LTE: lambda a, b: a <= b,
}

_ARITHMETIC = {exp.Add: "add_checked", exp.Sub: "subtract_checked", exp.Mul: "multiply_checked"}

#: SQL scalar functions: name -> (Arrow compute function taking the same positional arguments,
#: signature, description). ``functions()`` lists them from here.
_FUNCTIONS = {
    "abs": ("abs_checked", "abs(x)", "absolute value"),
    "sqrt": ("sqrt_checked", "sqrt(x)", "square root"),
    "ln": ("ln_checked", "ln(x)", "natural logarithm"),
    "log10": ("log10_checked", "log10(x)", "base-10 logarithm"),
    "log2": ("log2_checked", "log2(x)", "base-2 logarithm"),
    "exp": ("exp", "exp(x)", "e to the power x"),
    "floor": ("floor", "floor(x)", "largest integer not above x"),
    "ceil": ("ceil", "ceil(x)", "smallest integer not below x"),
    "ceiling": ("ceil", "ceiling(x)", "smallest integer not below x (same as ceil)"),
    "trunc": ("trunc", "trunc(x)", "x with its fraction dropped (towards zero)"),
    "sign": ("sign", "sign(x)", "-1, 0 or 1 as x is negative, zero or positive"),
    "power": ("power_checked", "power(x, y)", "x to the power y"),
    "pow": ("power_checked", "pow(x, y)", "x to the power y (same as power)"),
    "lower": ("utf8_lower", "lower(s)", "the string in lower case"),
    "upper": ("utf8_upper", "upper(s)", "the string in upper case"),
    "length": ("utf8_length", "length(s)", "number of characters of the string"),
    "trim": ("utf8_trim_whitespace", "trim(s)", "the string without leading and trailing "
             "white space"),
    "reverse": ("utf8_reverse", "reverse(s)", "the string's characters in reverse order"),
    "concat": ("binary_join_element_wise", "concat(s, ...)", "the arguments as text, joined "
               "(also s || t)"),
    "coalesce": ("coalesce", "coalesce(x, ...)", "the first argument that is not NULL"),
    "least": ("min_element_wise", "least(x, ...)", "the smallest argument (NULLs skipped)"),
    "greatest": ("max_element_wise", "greatest(x, ...)", "the largest argument (NULLs "
                 "skipped)"),
}

#: Scalar functions translated by hand (not one Arrow function each): signature, description.
_SPECIAL_FUNCTIONS = {
    "log": ("log([b, ] x)", "logarithm of x to base b (default 10)"),
    "round": ("round(x [, digits])", "x rounded to digits decimals (default 0), half to even"),
    "if": ("if(condition, a, b)", "a where the condition holds, else b"),
    "version": ("version()", "the graphdb version, as graphdb --version prints it"),
}

#: SQL aggregate -> Arrow hash aggregate (without the ``hash_`` prefix).
AGGREGATES = {"count": "count", "sum": "sum", "avg": "mean", "mean": "mean", "min": "min",
              "max": "max", "stddev": "stddev", "stddev_samp": "stddev", "variance": "variance",
              "var_samp": "variance", "any_value": "first", "first": "first", "last": "last"}

#: Aggregates: signature, description (``functions()`` lists them from here).
AGGREGATE_DOCS = {
    "count": ("count(*) | count(x) | count(DISTINCT x)",
              "number of rows, of non-NULL values, or of distinct non-NULL values"),
    "sum": ("sum(x)", "sum of the non-NULL values"),
    "avg": ("avg(x)", "mean of the non-NULL values"),
    "mean": ("mean(x)", "mean of the non-NULL values (same as avg)"),
    "min": ("min(x)", "smallest value"),
    "max": ("max(x)", "largest value"),
    "stddev": ("stddev(x)", "sample standard deviation"),
    "stddev_samp": ("stddev_samp(x)", "sample standard deviation (same as stddev)"),
    "variance": ("variance(x)", "sample variance"),
    "var_samp": ("var_samp(x)", "sample variance (same as variance)"),
    "any_value": ("any_value(x)", "one of the group's values"),
    "first": ("first(x)", "the group's first value"),
    "last": ("last(x)", "the group's last value"),
}


def scalar_functions() -> list[tuple[str, str, str]]:
    """(name, signature, description) of every scalar function, by name."""
    rows = [(n, sig, doc) for n, (_, sig, doc) in _FUNCTIONS.items()]
    rows += [(n, sig, doc) for n, (sig, doc) in _SPECIAL_FUNCTIONS.items()]
    return sorted(rows)


def aggregate_functions() -> list[tuple[str, str, str]]:
    """(name, signature, description) of every aggregate, by name."""
    return sorted((n, sig, doc) for n, (sig, doc) in AGGREGATE_DOCS.items())


_TYPES = {
    "INT": pa.int64(), "BIGINT": pa.int64(), "INTEGER": pa.int64(), "SMALLINT": pa.int64(),
    "TINYINT": pa.int64(), "DOUBLE": pa.float64(), "FLOAT": pa.float64(), "REAL": pa.float64(),
    "DECIMAL": pa.float64(), "TEXT": pa.string(), "VARCHAR": pa.string(), "CHAR": pa.string(),
    "BOOLEAN": pa.bool_(),
}


#: Digits round() takes: a float64 holds no more than about 300 decimal orders of magnitude
#: (Arrow reports an overflow past that).
MAX_ROUND_DIGITS = 300


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
            if isinstance(node.this, exp.Literal) and not node.this.is_string:
                return _literal(literal_value(node))  # -9223372036854775808 is a BIGINT
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
        if isinstance(node, exp.Log):  # log10(x), log2(x), log(x), log(b, x)
            if node.expression is None:  # log(x) is base 10, as in DuckDB and PostgreSQL
                return _call("log10_checked", t(node.this))
            base = node.this
            named = {10: "log10_checked", 2: "log2_checked"}
            if isinstance(base, exp.Literal) and not base.is_string and \
                    literal_value(base) in named:
                return _call(named[literal_value(base)], t(node.expression))
            return _call("divide", _call("ln_checked", t(node.expression).cast(pa.float64())),
                         _call("ln_checked", t(base).cast(pa.float64())))
        if isinstance(node, exp.Round):
            return self._round(node)
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

    def _round(self, node: exp.Round) -> pc.Expression:
        digits = node.args.get("decimals")
        nd = 0 if digits is None else literal_value(digits)
        if nd is None:  # round(x, NULL) is NULL, as in DuckDB and PostgreSQL
            return _literal(None).cast(pa.float64())
        if not isinstance(nd, int) or isinstance(nd, bool) or not -MAX_ROUND_DIGITS <= nd \
                <= MAX_ROUND_DIGITS:
            raise BinderError(f"round(): the number of digits must be an integer constant "
                              f"between -{MAX_ROUND_DIGITS} and {MAX_ROUND_DIGITS}, got "
                              f"{digits.sql()}")
        return _call("round", self.to_arrow(node.this), options=pc.RoundOptions(nd))

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
        if name == "version":
            if function_args(node):
                raise BinderError("version() takes no arguments")
            from .._version import __version__

            return _literal(__version__)
        arrow_name = _FUNCTIONS.get(name, (None,))[0]
        if arrow_name is None:
            known = sorted(set(_FUNCTIONS) | set(_SPECIAL_FUNCTIONS))
            close = difflib.get_close_matches(name, known, n=1)
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


#: The range of SQL's BIGINT, the type integer constants take.
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def checked_constant(value):
    """``value`` if SQL can hold it: integers are BIGINT, so one beyond int64 is refused."""
    if isinstance(value, int) and not isinstance(value, bool) and \
            not INT64_MIN <= value <= INT64_MAX:
        raise BinderError(f"integer {value} is out of range for BIGINT (-2^63 .. 2^63-1); "
                          "write it with a decimal point or exponent for a DOUBLE")
    return value


def _literal(value) -> pc.Expression:
    """A constant in an expression (see executor.arrays: pc.scalar of a plain Python value
    would import pandas)."""
    return pc.scalar(scalar(checked_constant(value)))


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
