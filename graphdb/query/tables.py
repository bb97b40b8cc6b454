"""What the names in FROM stand for: graph algorithms, ``g.vertices``/``g.edges``/``g.adjacency``,
built-in table functions, tables the program registered.

Algorithm calls are bound generically against :data:`graphdb.executor.algorithms.REGISTRY`: the
first argument names a graph, then positional arguments in declared order, then named ones
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
from graphdb.executor.graph_tables import GRAPH_TABLES
from graphdb.executor.plan import AlgorithmScan, PlanNode
from graphdb.executor.property_graph import PropertySchema

from ..errors import BinderError

__all__ = ["Context", "GRAPH_TABLES", "LATERAL", "bind_algorithm", "constant", "graph_argument",
           "outer_columns", "suggest", "unknown_function", "close_to_graph_function"]


def suggest(name: str, known: list[str], what: str) -> str:
    """'; did you mean X?' for the closest of ``known``, else the list of them."""
    close = difflib.get_close_matches(name, known, n=1)
    if close:
        return f"; did you mean '{close[0]}'?"
    return f" ({what}: {', '.join(known)})" if known else ""


@dataclass
class Context:
    """What binding needs from the connection.

    ``catalog`` is the statement's view of the catalog; ``graph_columns(graph, table)`` lists
    the columns of ``g.vertices``/``g.edges``; ``builtins`` maps a table-function name to a
    callable returning its ``pa.Table``; ``tables`` maps a lower-case name to a table the
    program registered (a relation of every query under that name), or to the
    :class:`~graphdb.executor.plan.TargetRows` (``TableRows`` of a stored table) a DELETE or
    UPDATE picks from (known when it runs).
    """

    catalog: Catalog
    graph_columns: Callable[[str, str], list[str]]
    builtins: dict[str, Callable[[], pa.Table]] = field(default_factory=dict)
    tables: dict[str, pa.Table | PlanNode] = field(default_factory=dict)

    def information_schema(self, view: str) -> pa.Table:
        """The rows of ``information_schema.<view>`` (:mod:`graphdb.information_schema`)."""
        from ..information_schema import information_schema

        return information_schema(self.catalog, self.tables, view)

    def graph(self, name: str) -> str:
        """The catalog's spelling of graph ``name`` (raises with suggestions)."""
        return self.catalog.get(name).name

    def schema(self, name: str) -> PropertySchema | None:
        """The labels of property graph ``name`` (None: a graph of one vertex and edge type)."""
        return PropertySchema.of(self.catalog.get(name))

    def is_graph(self, name: str) -> bool:
        lower = name.lower()
        return any(g.lower() == lower for g in self.catalog.names())


class _Lateral:
    """The value of an argument that each row of the query gives (``khop(g, p.id, 2)``)."""

    def __repr__(self) -> str:
        return "(each row)"


#: Placeholder value of an argument bound per row (see :class:`AlgorithmScan.lateral`).
LATERAL: Any = _Lateral()


def graph_argument(node: exp.Expression, function: str) -> str:
    """The graph a function's first argument names."""
    if isinstance(node, (exp.Column, exp.Identifier)) and not getattr(node, "table", ""):
        return node.name
    if isinstance(node, exp.Literal) and node.is_string:
        return node.this
    raise BinderError(f"{function}(): the first argument must name a graph, got {node.sql()}")


def outer_columns(node: exp.Expression) -> list[exp.Column]:
    """Columns of ``node`` outside any subquery of it."""
    if isinstance(node, (exp.Subquery, exp.Select)):
        return []
    found, stack = [], [node]
    while stack:
        part = stack.pop()
        if isinstance(part, exp.Column):
            found.append(part)
        elif not isinstance(part, (exp.Subquery, exp.Select)):
            stack.extend(part.iter_expressions())
    return found


def constant(node: exp.Expression) -> tuple[bool, Any]:
    """(True, value) when ``node`` is a literal (a number, string, TRUE/FALSE, NULL, a signed
    number, in parentheses or not); (False, None) otherwise."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Literal):
        if node.is_string:
            return True, node.this
        text = node.this.replace("_", "")
        try:
            return True, int(text)
        except ValueError:
            try:
                return True, float(text)
            except ValueError:
                return False, None
    if isinstance(node, exp.Neg):
        known, value = constant(node.this)
        if known and isinstance(value, (int, float)) and not isinstance(value, bool):
            return True, -value
        return False, None
    if isinstance(node, exp.Boolean):
        return True, node.this
    if isinstance(node, exp.Null):
        return True, None
    return False, None


#: How close a table function's name must be to a graph function's to be taken for a misspelt
#: one (no table function of DuckDB's is this close to one: checked against DuckDB 2.0's).
CLOSE_NAMES = 0.6


def close_to_graph_function(name: str) -> bool:
    """Whether ``name`` is not a graph function but looks like one misspelt (``bfz``)."""
    lower = name.lower()
    return algorithms.get(lower) is None and bool(
        difflib.get_close_matches(lower, list(algorithms.REGISTRY), n=1, cutoff=CLOSE_NAMES))


def unknown_function(name: str, extra: list[str] = ()) -> BinderError:
    known = sorted(set(algorithms.REGISTRY) | set(extra))
    close = difflib.get_close_matches(name.lower(), known, n=1)
    hint = f"did you mean {close[0]}()?" if close else f"functions: {', '.join(known)}"
    return BinderError(f"unknown table function {name}(); {hint}")


def bind_algorithm(name: str, graph: str, positional: list[Any],
                   named: dict[str, Any], sources: PlanNode | None = None) -> AlgorithmScan:
    """Bind argument values (constants, :class:`PlanNode` s of scalar subqueries, or
    :data:`LATERAL`) to an algorithm's declared parameters."""
    spec = algorithms.get(name)
    if spec is None:
        raise unknown_function(name)
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
    options, lateral = [], []
    for param in spec.params:
        if param.name not in bound:
            if param.required:
                raise BinderError(f"{spec.name}(): missing argument '{param.name}': "
                                  f"{spec.signature()}")
            continue
        value = bound[param.name]
        if value is LATERAL:
            lateral.append(param.name)
            value = None
        elif not isinstance(value, PlanNode):  # a subquery's value is checked when it is known
            value = param.coerce(value, spec.name)
        options.append((param.name, value))
    return AlgorithmScan(spec.name, graph, tuple(options), sources, tuple(lateral))
