"""Binding and planning: a parsed SELECT becomes an :mod:`executor.plan` tree.

Names are resolved here, against the catalog (graphs) and the algorithm registry (functions,
arguments, output columns), so mistakes are reported before anything runs, with suggestions.
"""

from __future__ import annotations

import difflib
from typing import Any

import pyarrow.compute as pc
from sqlglot import exp

from catalog import Catalog
from executor import algorithms
from executor.plan import AlgorithmScan, Filter, Limit, PlanNode, Project, SingleRow, Sort

from ..errors import BinderError, InvalidInputError, NotSupportedError
from .expressions import output_name, to_arrow

__all__ = ["plan_select", "bind_parameters", "constant"]


def constant(node: exp.Expression, what: str) -> Any:
    """The Python value of a constant expression (literal, signed number, TRUE, NULL)."""
    if isinstance(node, exp.Paren):
        return constant(node.this, what)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        try:
            return int(node.this)
        except ValueError:
            return float(node.this)
    if isinstance(node, exp.Neg):
        value = constant(node.this, what)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value
    if isinstance(node, exp.Boolean):
        return node.this
    if isinstance(node, exp.Null):
        return None
    raise BinderError(f"{what} must be a constant, got {node.sql()}")


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
                raise InvalidInputError(
                    f"the query has more '?' placeholders than the {len(positional)} parameters given")
            value = positional[used]
            used += 1
        else:
            if named is None or name not in named:
                raise InvalidInputError(f"no value given for parameter ${name}")
            value = named[name]
        return exp.convert(value)

    def replace(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Placeholder):
            return value_for(node.this or None)
        if isinstance(node, exp.Parameter):
            return value_for(node.name)
        if isinstance(node, exp.Column) and not node.table and node.name.startswith("$"):
            return value_for(node.name[1:])
        return node

    bound = ast.transform(replace, copy=True)
    if positional is not None and used != len(positional):
        raise InvalidInputError(
            f"{len(positional)} parameters given but the query has {used} '?' placeholders")
    return bound


def _graph_name(node: exp.Expression) -> str:
    if isinstance(node, (exp.Column, exp.Identifier)):
        return node.name
    if isinstance(node, exp.Literal) and node.is_string:
        return node.this
    if isinstance(node, exp.Table):
        return node.name
    raise BinderError(f"the first argument must name a graph, got {node.sql()}")


def _plan_table_function(call: exp.Anonymous, catalog: Catalog) -> tuple[PlanNode, list[str]]:
    name = call.name.lower()
    spec = algorithms.get(name)
    if spec is None:
        known = sorted(algorithms.REGISTRY)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"did you mean {close[0]}()?" if close else f"functions: {', '.join(known)}"
        raise BinderError(f"unknown table function {name}(); {hint}")
    args = list(call.expressions)
    if not args or isinstance(args[0], exp.Kwarg):
        raise BinderError(f"{name}() needs a graph as its first argument: {spec.signature()}")
    graph = _graph_name(args[0])
    catalog.get(graph)  # raises GraphNotFound with suggestions
    bound: dict[str, Any] = {}
    positional = [a for a in args[1:] if not isinstance(a, exp.Kwarg)]
    if any(isinstance(a, exp.Kwarg) for a in args[1:]) and any(
            not isinstance(a, exp.Kwarg) for a in args[args.index(next(
                a for a in args[1:] if isinstance(a, exp.Kwarg))):]):
        raise BinderError(f"{name}(): positional arguments must come before named ones")
    if len(positional) > len(spec.params):
        raise BinderError(f"{name}() takes at most {len(spec.params)} arguments after the graph, "
                          f"got {len(positional)}: {spec.signature()}")
    for param, node in zip(spec.params, positional):
        bound[param.name] = constant(node, f"{name}(): argument '{param.name}'")
    for kw in (a for a in args[1:] if isinstance(a, exp.Kwarg)):
        key = kw.this.name.lower()
        param = spec.param(key)
        if param is None:
            close = difflib.get_close_matches(key, [p.name for p in spec.params], n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise BinderError(f"{name}() has no argument '{key}'{hint}: {spec.signature()}")
        if key in bound:
            raise BinderError(f"{name}(): argument '{key}' given twice")
        bound[key] = constant(kw.expression, f"{name}(): argument '{key}'")
    options = []
    for param in spec.params:
        if param.name not in bound:
            if param.required:
                raise BinderError(f"{name}(): missing argument '{param.name}': {spec.signature()}")
            continue
        options.append((param.name, param.coerce(bound[param.name], name)))
    return AlgorithmScan(spec.name, graph, tuple(options)), [c.name for c in spec.columns]


def _plan_from(select: exp.Select, catalog: Catalog) -> tuple[PlanNode, list[str]]:
    source = select.args.get("from_") or select.args.get("from")
    if source is None:
        return SingleRow(), []
    table = source.this
    if isinstance(table, exp.Table) and isinstance(table.this, exp.Anonymous):
        return _plan_table_function(table.this, catalog)
    if isinstance(table, exp.Table):
        raise NotSupportedError(
            f"FROM {table.sql()}: only graph algorithms are queryable as tables so far, "
            f"e.g. FROM bfs(g, 1) or FROM pagerank(g)")
    raise NotSupportedError(f"FROM {table.sql()} is not supported yet")


_UNSUPPORTED = ("joins", "group", "having", "with", "distinct", "windows", "qualify")


def plan_select(select: exp.Expression, catalog: Catalog) -> tuple[PlanNode, list[str]]:
    """Plan a SELECT; returns the plan and its output column names."""
    if not isinstance(select, exp.Select):
        raise NotSupportedError(f"{select.key.upper()} is not supported yet")
    for clause in _UNSUPPORTED:
        if select.args.get(clause):
            raise NotSupportedError(f"{clause.upper()} is not supported yet")
    node, columns = _plan_from(select, catalog)
    where = select.args.get("where")
    if where is not None:
        node = Filter(node, to_arrow(where.this, columns), where.this.sql())

    names: list[str] = []
    exprs: list[pc.Expression] = []
    for item in select.expressions:
        if isinstance(item, exp.Star):
            names.extend(columns)
            exprs.extend(pc.field(c) for c in columns)
        else:
            names.append(output_name(item))
            exprs.append(to_arrow(item, columns))
    if not names:
        raise BinderError("SELECT needs at least one column")

    keys: list[tuple[str, str]] = []
    nulls_first: list[bool] = []
    hidden = 0
    order = select.args.get("order")
    for ordered in (order.expressions if order else []):
        key = ordered.this
        if isinstance(key, exp.Column) and not key.table and key.name in names:
            column = key.name
        elif isinstance(key, exp.Literal) and not key.is_string:
            position = int(key.this)
            if not 1 <= position <= len(names):
                raise BinderError(f"ORDER BY position {position} is not in the select list")
            column = names[position - 1]
        else:
            column = f"__order{hidden}"
            hidden += 1
            names.append(column)
            exprs.append(to_arrow(key, columns))
        keys.append((column, "descending" if ordered.args.get("desc") else "ascending"))
        nulls_first.append(bool(ordered.args.get("nulls_first")))

    node = Project(node, tuple(names), tuple(exprs))
    if keys:
        node = Sort(node, tuple(keys), tuple(nulls_first))
    limit, offset = select.args.get("limit"), select.args.get("offset")
    if limit is not None or offset is not None:
        count = None if limit is None else _non_negative(limit.expression, "LIMIT")
        skip = 0 if offset is None else _non_negative(offset.expression, "OFFSET")
        node = Limit(node, count, skip)
    if hidden:
        visible = names[: len(names) - hidden]
        node = Project(node, tuple(visible), tuple(pc.field(n) for n in visible))
        names = visible
    return node, names


def _non_negative(node: exp.Expression, clause: str) -> int:
    value = constant(node, clause)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise BinderError(f"{clause} must be a non-negative integer, got {node.sql()}")
    return value
