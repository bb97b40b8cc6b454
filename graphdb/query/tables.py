"""Binding the leaves of FROM: graph algorithms, ``g.vertices``/``g.edges``, built-in table
functions and CTE names.

Algorithm calls are bound generically against :data:`graphdb.executor.algorithms.REGISTRY`: the first
argument names a graph, then positional arguments in declared order, then named ones
(``name => value``); defaults fill the rest and :meth:`Param.coerce` validates each value.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Callable

import pyarrow as pa
from sqlglot import exp

from graphdb.catalog import Catalog
from graphdb.executor import algorithms
from graphdb.executor.plan import AlgorithmScan, GraphTableScan, PlanNode, ValuesScan

from ..errors import BinderError
from .expressions import literal_value
from .scope import suggest

__all__ = ["Context", "bind_algorithm", "plan_table_function", "plan_named_table", "GRAPH_TABLES"]

GRAPH_TABLES = ("vertices", "edges")


@dataclass
class Context:
    """What binding needs from the connection.

    ``graph_columns(graph, table)`` lists the columns of ``g.vertices``/``g.edges``;
    ``builtins`` maps a table-function name to a callable returning its ``pa.Table``;
    ``tables`` maps a lower-case name to a registered table (``con.register``).
    """

    catalog: Catalog
    graph_columns: Callable[[str, str], list[str]]
    builtins: dict[str, Callable[[], pa.Table]] = field(default_factory=dict)
    tables: dict[str, pa.Table] = field(default_factory=dict)
    ctes: dict[str, tuple[PlanNode, list[str]]] = field(default_factory=dict)
    _counter: int = 0

    def fresh(self, prefix: str) -> str:
        """A column name no user query can clash with."""
        self._counter += 1
        return f"__{prefix}{self._counter}"

    def graph(self, name: str) -> str:
        """The catalog's spelling of graph ``name`` (raises with suggestions)."""
        return self.catalog.get(name).name


def _graph_arg(node: exp.Expression, function: str) -> str:
    if isinstance(node, (exp.Column, exp.Identifier)) and not getattr(node, "table", ""):
        return node.name
    if isinstance(node, exp.Literal) and node.is_string:
        return node.this
    raise BinderError(f"{function}(): the first argument must name a graph, got {node.sql()}")


def _argument(node: exp.Expression, where: str, ctx: Context) -> Any:
    """A constant, or a plan for a scalar subquery (``bfs(g, (SELECT ... LIMIT 1))``)."""
    if isinstance(node, exp.Subquery):
        from .planner import plan_query  # the planner imports this module

        plan, names = plan_query(node.this, ctx)
        if len(names) != 1:
            raise BinderError(f"{where}: the subquery must return one column, not {len(names)}")
        return plan
    try:
        return literal_value(node)
    except BinderError:
        raise BinderError(f"{where} must be a constant or a (SELECT ...) subquery, "
                          f"got {node.sql()}") from None


def bind_algorithm(name: str, graph: str, positional: list[Any],
                   named: dict[str, Any]) -> AlgorithmScan:
    """Bind Python argument values to an algorithm's declared parameters."""
    spec = algorithms.get(name)
    if spec is None:
        known = sorted(algorithms.REGISTRY)
        close = difflib.get_close_matches(name.lower(), known, n=1)
        hint = f"did you mean {close[0]}()?" if close else f"functions: {', '.join(known)}"
        raise BinderError(f"unknown table function {name}(); {hint}")
    if len(positional) > len(spec.params):
        raise BinderError(f"{spec.name}() takes at most {len(spec.params)} arguments after the "
                          f"graph, got {len(positional)}: {spec.signature()}")
    bound = {p.name: v for p, v in zip(spec.params, positional)}
    for key, value in named.items():
        param = spec.param(key.lower())
        if param is None:
            raise BinderError(f"{spec.name}() has no argument '{key}'"
                              + suggest(key, [p.name for p in spec.params], "arguments")
                              + f": {spec.signature()}")
        if param.name in bound:
            raise BinderError(f"{spec.name}(): argument '{param.name}' given twice")
        bound[param.name] = value
    options = []
    for param in spec.params:
        if param.name not in bound:
            if param.required:
                raise BinderError(f"{spec.name}(): missing argument '{param.name}': "
                                  f"{spec.signature()}")
            continue
        value = bound[param.name]
        if not isinstance(value, PlanNode):  # a subquery's value is checked when it is known
            value = param.coerce(value, spec.name)
        options.append((param.name, value))
    return AlgorithmScan(spec.name, graph, tuple(options))


def plan_table_function(call: exp.Func, ctx: Context) -> tuple[PlanNode, list[str]]:
    name = (call.name if isinstance(call, exp.Anonymous) else call.sql_name()).lower()
    args = list(call.expressions) if isinstance(call, exp.Anonymous) else [
        a for a in call.args.values() if isinstance(a, exp.Expression)]
    if name in ctx.builtins:
        if args:
            raise BinderError(f"{name}() takes no arguments")
        return _values(name, ctx.builtins[name]())
    spec = algorithms.get(name)
    if spec is None:
        known = sorted(set(algorithms.REGISTRY) | set(ctx.builtins))
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"did you mean {close[0]}()?" if close else f"functions: {', '.join(known)}"
        raise BinderError(f"unknown table function {name}(); {hint}")
    if not args or isinstance(args[0], exp.Kwarg):
        raise BinderError(f"{name}() needs a graph as its first argument: {spec.signature()}")
    graph = ctx.graph(_graph_arg(args[0], name))
    positional, named, seen_named = [], {}, False
    for arg in args[1:]:
        if isinstance(arg, (exp.Kwarg, exp.PropertyEQ)):
            seen_named = True
            key = arg.this.name
            if key.lower() in (k.lower() for k in named):
                raise BinderError(f"{name}(): argument '{key.lower()}' given twice")
            named[key] = _argument(arg.expression, f"{name}(): argument '{key}'", ctx)
        elif seen_named:
            raise BinderError(f"{name}(): positional arguments must come before named ones")
        else:
            where = (f"{name}(): argument '{spec.params[len(positional)].name}'"
                     if len(positional) < len(spec.params) else f"{name}(): argument")
            positional.append(_argument(arg, where, ctx))
    node = bind_algorithm(name, graph, positional, named)
    return node, [c.name for c in spec.columns]


def _values(name: str, table: pa.Table) -> tuple[PlanNode, list[str]]:
    return ValuesScan(name, table), list(table.column_names)


def plan_named_table(table: exp.Table, ctx: Context) -> tuple[PlanNode, list[str], str]:
    """``FROM name`` or ``FROM g.vertices``: (plan, columns, default qualifier)."""
    name, db = table.name, table.args.get("db")
    if db is not None:
        graph = ctx.graph(db.name)
        which = name.lower()
        if which not in GRAPH_TABLES:
            raise BinderError(f"graph '{graph}' has no table '{name}'"
                              + suggest(which, list(GRAPH_TABLES), "tables"))
        return GraphTableScan(graph, which), ctx.graph_columns(graph, which), name
    cte = ctx.ctes.get(name) or next(
        (v for k, v in ctx.ctes.items() if k.lower() == name.lower()), None)
    if cte is not None:
        return cte[0], list(cte[1]), name
    registered = ctx.tables.get(name.lower())
    if registered is not None:  # a named Arrow relation (con.register)
        node, columns = _values(name, registered)
        return node, columns, name
    if name.lower() in ctx.builtins:
        node, columns = _values(name.lower(), ctx.builtins[name.lower()]())
        return node, columns, name
    graphs = ctx.catalog.names()
    if name in graphs or name.lower() in (g.lower() for g in graphs):
        raise BinderError(f"'{name}' is a graph, not a table: query {name}.vertices, "
                          f"{name}.edges, a function such as bfs({name}, 1), or "
                          f"GRAPH_TABLE ({name} MATCH ...)")
    known = sorted(ctx.ctes) + sorted(ctx.tables) + [f"{g}.{t}" for g in graphs
                                                     for t in GRAPH_TABLES]
    if isinstance(table.this, exp.Identifier) and algorithms.get(name) is not None:
        raise BinderError(f"{name} is a table function: write {name}(graph, ...)")
    raise BinderError(f"unknown table '{name}'" + suggest(name, known, "tables"))
