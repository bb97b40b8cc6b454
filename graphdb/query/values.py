"""The rows of ``VALUES``: literals and parameters read directly (no query engine), any other
expression computed by the query engine; parameters bound into a statement's tree; a query run
for a write. Shared by the writes to graphs' tables (:mod:`.statements.write`) and to stored
tables (:mod:`graphdb.query.table_writes`)."""

from __future__ import annotations

import decimal
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from ..errors import BinderError, InvalidInputError
from .fast_values import FastValues, number
from .parameters import Parameters

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["NotConstant", "bind", "bind_parameters", "constant_value", "insert_rows_of",
           "is_simple", "rows_table", "run_select", "run_text", "values_table"]


def bind_parameters(ast: exp.Expression, parameters: Any) -> exp.Expression:
    """A copy of ``ast`` with its parameters (``?``, ``$1``, ``$name``) replaced by their
    values as literals."""
    import sqlglot

    values = Parameters(ast, parameters)

    def replace(node: exp.Expression) -> exp.Expression:
        if isinstance(node, (exp.Placeholder, exp.Parameter)):
            return sqlglot.parse_one(values.sql(node), read="duckdb")
        return node

    return ast.transform(replace)


bind = bind_parameters


def run_select(session: "Session", query: exp.Expression, tables: dict[str, pa.Table]
               ) -> pa.Table:
    """The rows of a query (an AST without parameters), ``tables`` registered under their
    names while it runs: how a stored table's write uses the query engine. The query goes
    through the engine as text, as any statement does."""
    from .binder import bind_query
    from .dialect import GraphSQL
    from .parser import parse

    statement = parse(query.sql(dialect=GraphSQL))
    snapshot = session.snapshot()
    context = session.context(snapshot)
    context.tables.update(tables)
    try:
        logical = bind_query(statement.ast, statement.text, None, context)
        return session.runner.run(session.runner.plan(logical, snapshot))
    finally:
        for name in tables:  # not kept registered in the engine after the statement
            session.runner.sql.forget(f"__graphdb_table_{name.lower()}")


def run_text(session: "Session", text: str, parameters: Any = None) -> pa.Table:
    """The rows of the query ``text``, run as a statement of its own would be."""
    from .parser import parse

    return session.execute(parse(text), parameters)[0]


class NotConstant(Exception):
    """An expression that is not a literal or a parameter."""


def constant_value(node: exp.Expression, params: Parameters) -> Any:
    """The value of a literal, a parameter, a signed number, TRUE/FALSE or NULL (in
    parentheses or not); :class:`NotConstant` for anything else."""
    if isinstance(node, (exp.Placeholder, exp.Parameter)):
        return params.value(node)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        try:
            return number(node.this)
        except (ValueError, decimal.InvalidOperation):
            raise NotConstant from None
    if isinstance(node, exp.Neg):
        value = constant_value(node.this, params)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value
    if isinstance(node, exp.Boolean):
        return node.this
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Paren):
        return constant_value(node.this, params)
    raise NotConstant


def is_simple(node: exp.Expression) -> bool:
    """Whether :func:`constant_value` reads ``node``."""
    if isinstance(node, (exp.Placeholder, exp.Parameter, exp.Literal, exp.Boolean, exp.Null)):
        return True
    if isinstance(node, (exp.Neg, exp.Paren)):
        return is_simple(node.this)
    return False


def values_table(session: "Session", values: "exp.Values | FastValues", parameters: Any,
                 columns: list[str], types: list[pa.DataType] | None = None) -> pa.Table:
    """The rows of VALUES under ``columns``: constants and parameters read here (the common
    case, fast), any other expression computed by the query engine. ``types``: the columns'
    types, which strings take where values of several kinds meet."""
    if isinstance(values, FastValues):  # literal rows read without the general parser
        if values.args["width"] != len(columns):
            raise BinderError(f"a VALUES row has {values.args['width']} values for the "
                              f"{len(columns)} columns ({', '.join(columns)})")
        return rows_table(values.rows(parameters), columns, types)
    rows = values.expressions
    for row in rows:
        if len(row.expressions) != len(columns):
            raise BinderError(f"a VALUES row has {len(row.expressions)} values for the "
                              f"{len(columns)} columns ({', '.join(columns)})")
    params = Parameters(values, parameters)
    try:
        data = [[constant_value(node, params) for node in row.expressions] for row in rows]
    except NotConstant:
        bound = bind(values, parameters)
        names = [f"c{i}" for i in range(len(columns))]
        bound.set("alias", exp.TableAlias(this=exp.to_identifier("__graphdb_values"),
                                          columns=[exp.to_identifier(n) for n in names]))
        result = run_select(session, exp.select("*").from_(bound), {})
        return pa.table(list(result.columns), names=columns)
    return rows_table(data, columns, types)


def insert_rows_of(session: "Session", ast: exp.Insert, parameters: Any, columns: list[str],
                   types: list[pa.DataType] | None = None) -> pa.Table:
    """The rows an INSERT gives, under ``columns`` (the target's columns it names, in
    order): its VALUES, or its query's rows (run by the query engine)."""
    if len({c.lower() for c in columns}) != len(columns):
        raise BinderError("a column is named twice in the INSERT's column list")
    source = ast.expression
    if isinstance(source, (exp.Values, FastValues)):
        return values_table(session, source, parameters, columns, types)
    if isinstance(source, exp.Query):
        result = run_select(session, bind(ast, parameters).expression, {})
        if result.num_columns != len(columns):
            raise BinderError(f"the query gives {result.num_columns} columns for the "
                              f"{len(columns)} of the INSERT ({', '.join(columns)})")
        return pa.table(list(result.columns), names=columns)
    raise BinderError("INSERT takes VALUES (...) or a query")


def rows_table(data: list[list[Any]], columns: list[str],
               types: list[pa.DataType] | None = None) -> pa.Table:
    """Python rows as an Arrow table (each column's values of one kind; a column whose type
    is a string takes any values as their text)."""
    arrays = []
    for i, name in enumerate(columns):
        values = [row[i] for row in data]
        typed = _typed(values, types[i]) if types is not None else None
        if typed is not None:
            arrays.append(typed)
            continue
        values = _numbers(values)
        try:
            arrays.append(pa.array(values))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            wanted = types[i] if types is not None else None
            if wanted is not None and (pa.types.is_string(wanted)
                                       or pa.types.is_large_string(wanted)):
                arrays.append(pa.array([None if v is None else _text(v) for v in values],
                                       pa.string()))
                continue
            if all(v is None or isinstance(v, (int, float)) and not isinstance(v, bool)
                   for v in values):  # integers beyond 64 bits: their exact text
                arrays.append(pa.array([None if v is None else str(v) for v in values]))
                continue
            raise InvalidInputError(f"column {name}: the values {values[:3]!r} are not of one "
                                    "type") from None
    return pa.table(arrays, names=columns)


def _typed(values: list, wanted: pa.DataType | None) -> pa.Array | None:
    """``values`` as an array of the column's type ``wanted`` where they are of its own kind
    (integers of an integer or a double column, numbers of a double column, strings of a text
    column, booleans of a boolean one) and fit it exactly, as the column's CAST would have
    them; None otherwise (the general conversion then reads them)."""
    if wanted is None:
        return None
    if pa.types.is_integer(wanted):
        kinds: tuple = (int,)
    elif pa.types.is_float64(wanted):
        kinds = (int, float)
    elif pa.types.is_string(wanted) or pa.types.is_large_string(wanted):
        kinds = (str,)
    elif pa.types.is_boolean(wanted):
        return pa.array(values, wanted) if all(v is None or type(v) is bool for v in values) \
            else None
    else:
        return None
    if not all(v is None or (isinstance(v, kinds) and type(v) is not bool) for v in values):
        return None
    try:  # an integer beyond the type's range, or beyond a double's exact ones, is refused
        return pa.array(values, wanted)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return None


def _numbers(values: list) -> list:
    """A column's numbers of one kind: doubles where any is a double, else exact decimals
    where any is a decimal (integers beside them made decimals too)."""
    kinds = {type(v) for v in values if v is not None}
    if decimal.Decimal not in kinds or not kinds <= {int, float, decimal.Decimal}:
        return values
    if float in kinds:
        return [None if v is None else float(v) for v in values]
    return [None if v is None else decimal.Decimal(v) for v in values]


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
