"""GROUP BY and aggregate functions.

The aggregate step is planned as three operators: a projection computing the group keys and the
aggregates' arguments as plain columns, an :class:`~graphdb.executor.plan.Aggregate` (Arrow's hash
aggregation), and then the select list, HAVING and ORDER BY translated with a ``substitute``
hook that replaces each aggregate call and each group key by the column holding it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import pyarrow.compute as pc
from sqlglot import exp

from graphdb.executor.plan import Aggregate, AggregateCall, Project

from ..errors import BinderError, NotSupportedError
from .expressions import AGGREGATES, aggregate_name, function_args, literal_value

if TYPE_CHECKING:
    from .planner import Block

__all__ = ["has_aggregates", "plan_aggregate", "resolve_group_keys"]


def _aggregate_calls(node: exp.Expression) -> list[exp.Expression]:
    """Outermost aggregate calls in ``node`` (not looking into subqueries)."""
    found: list[exp.Expression] = []

    def visit(n: exp.Expression) -> None:
        if isinstance(n, (exp.Subquery, exp.Select)):
            return
        if aggregate_name(n) is not None:
            for inner in n.iter_expressions():
                if any(aggregate_name(x) is not None for x in inner.walk()):
                    raise BinderError(f"aggregate calls cannot be nested: {n.sql()}")
            found.append(n)
            return
        for child in n.iter_expressions():
            visit(child)

    visit(node)
    return found


def has_aggregates(nodes: list[exp.Expression]) -> bool:
    return any(_aggregate_calls(n) for n in nodes)


def _call_parts(node: exp.Expression) -> tuple[str, exp.Expression | None, bool]:
    """(Arrow function, argument or None for count(*), distinct)."""
    name = aggregate_name(node)
    args = function_args(node)
    distinct = False
    if len(args) == 1 and isinstance(args[0], exp.Distinct):
        distinct = True
        args = list(args[0].expressions)
    if name == "count" and (not args or isinstance(args[0], exp.Star)):
        if distinct:
            raise BinderError("COUNT(DISTINCT *) is not valid; name a column")
        return "count_all", None, False
    if name not in AGGREGATES:
        raise NotSupportedError(f"aggregate {name}() is not supported (aggregates: "
                                f"{', '.join(sorted(set(AGGREGATES)))})")
    if len(args) != 1:
        raise BinderError(f"{name}() takes one argument, got {len(args)}")
    function = AGGREGATES[name]
    if distinct:
        if function != "count":
            raise NotSupportedError(f"{name}(DISTINCT ...) is not supported; only COUNT(DISTINCT)")
        function = "count_distinct"
    return function, args[0], distinct


def plan_aggregate(block: "Block", group: list[exp.Expression],
                   expressions: list[exp.Expression]) -> Callable[[exp.Expression], pc.Expression]:
    """Add the aggregate operators to ``block``; returns the translator for what comes after.

    ``group`` are the GROUP BY expressions (aliases and positions already resolved);
    ``expressions`` are everything evaluated after grouping (select list, HAVING, ORDER BY).
    """
    before = block.translator()
    key_columns: list[str] = []
    key_exprs: list[pc.Expression] = []
    key_by_sql: dict[str, str] = {}
    key_by_column: dict[str, str] = {}
    for key in group:
        column = block.ctx.fresh("k")
        key_columns.append(column)
        key_exprs.append(before(key))
        key_by_sql[key.sql()] = column
        if isinstance(key, exp.Column):
            key_by_column[block.scope.resolve(key)] = column

    calls: list[AggregateCall] = []
    arg_columns: list[str] = []
    arg_exprs: list[pc.Expression] = []
    call_by_sql: dict[str, str] = {}
    for node in expressions:
        for call in _aggregate_calls(node):
            text = call.sql()
            if text in call_by_sql:
                continue
            function, arg, distinct = _call_parts(call)
            column = None
            if arg is not None:
                column = block.ctx.fresh("v")
                arg_columns.append(column)
                arg_exprs.append(before(arg))
            output = block.ctx.fresh("a")
            calls.append(AggregateCall(output, function, column, distinct))
            call_by_sql[text] = output

    inner = Project(block.node, tuple(key_columns + arg_columns), tuple(key_exprs + arg_exprs))
    block.node = Aggregate(inner, tuple(key_columns), tuple(calls))
    block.columns = key_columns + [c.output for c in calls]

    def substitute(node: exp.Expression) -> pc.Expression | None:
        text = node.sql()
        if text in call_by_sql:
            return pc.field(call_by_sql[text])
        if text in key_by_sql:
            return pc.field(key_by_sql[text])
        if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
            resolved = block.scope.resolve(node)
            if resolved in key_by_column:
                return pc.field(key_by_column[resolved])
            raise BinderError(f"column '{node.sql()}' must appear in GROUP BY or be used in an "
                              "aggregate function")
        return None

    return block.translator(substitute=substitute)


def resolve_group_keys(group: exp.Group | None, items: list[exp.Expression],
                       in_scope: Callable[[exp.Column], bool]) -> list[exp.Expression]:
    """GROUP BY expressions with positions (``GROUP BY 1``) and select aliases resolved."""
    if group is None:
        return []
    if group.args.get("all"):  # GROUP BY ALL: every select item that is not an aggregate
        return [i.this if isinstance(i, exp.Alias) else i for i in items
                if not _aggregate_calls(i)]
    aliases = {i.alias: i.this for i in items if isinstance(i, exp.Alias)}
    keys = []
    for key in group.expressions:
        if isinstance(key, exp.Literal) and not key.is_string:
            position = literal_value(key)
            if not isinstance(position, int) or not 1 <= position <= len(items):
                raise BinderError(f"GROUP BY position {key.sql()} is not in the select list")
            item = items[position - 1]
            keys.append(item.this if isinstance(item, exp.Alias) else item)
        elif (isinstance(key, exp.Column) and not key.table and key.name in aliases
              and not in_scope(key)):
            keys.append(aliases[key.name])  # like DuckDB: input columns win over aliases
        else:
            keys.append(key)
    return keys
