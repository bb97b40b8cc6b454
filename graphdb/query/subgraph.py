"""Binding ``GRAPH g WHERE ...``: the part of a graph that a graph function runs on.

``bfs(GRAPH social WHERE e.since >= DATE '2020-01-01' AND v.country = 'NL', 7)`` runs BFS on a
subgraph of ``social``: the condition's conjuncts over ``e.<property>`` choose the edges kept
(``e.src``, ``e.dst``, the weight column and every edge property, with the endpoints as
``social.edges`` lists them), those over ``v.<property>`` the vertices kept (with the edges
between two kept vertices). Each conjunct names one of the two; a conjunct naming both would
need a join per edge, which a pattern (``GRAPH_TABLE``) expresses. Conditions are DuckDB SQL:
parameters, functions, dates and subqueries (``v.id IN (SELECT person FROM staff)``) work as
anywhere else, NULL keeps nothing.

Why this syntax: the subgraph stays the graph function's first argument, where the graph goes, so
every function takes one with no new parameters; ``GRAPH name`` says that what follows is a graph
(SQL/PGQ's ``GRAPH_TABLE (name MATCH ...)`` and ``CREATE PROPERTY GRAPH`` use the same word), and
``e``/``v`` are the variables a reader of ``MATCH (v)-[e]->()`` expects. It becomes a
:class:`~graphdb.executor.plan.Subgraph`: two queries of the positions kept, over the graph's
position tables, which the executor turns into masks and a view of the stored graph
(:mod:`graphdb.executor.subgraph`): nothing is copied or loaded again.
"""

from __future__ import annotations

import re
from typing import Callable

from sqlglot import exp

from graphdb.executor.graph_tables import POSITION, table_name
from graphdb.executor.plan import GraphTableScan, RelationalQuery, Subgraph
from graphdb.executor.property_graph import PropertySchema

from ..errors import BinderError
from .dialect import SubgraphRef, span
from .pattern import conjuncts
from .tables import Context, suggest

__all__ = ["bind_subgraph"]

_SPACES = re.compile(r"\s+")
#: variable -> (what it stands for, position table)
_VARIABLES = {"e": ("edges", "edge_positions"), "v": ("vertices", "vertex_positions")}


def subgraph_labels(node: SubgraphRef, schema: PropertySchema | None, graph: str
                    ) -> tuple[tuple[str, ...] | None, tuple[str, ...] | None]:
    """(vertex labels, edge labels) that ``GRAPH g LABELS (...)`` keeps (None, None: all).
    Edge labels alone keep their endpoints' labels; vertex labels alone the edge labels between
    them."""
    names = [n.name for n in node.args.get("labels") or []]
    if not names:
        return None, None
    if schema is None:
        raise BinderError(f"GRAPH {graph} LABELS: graph '{graph}' has no labels (it has one "
                          "vertex and one edge type); CREATE PROPERTY GRAPH makes one that has")
    vertex = [v.name for v in schema.vertex_labels]
    edge = [e.name for e in schema.edge_labels]
    chosen_v, chosen_e = set(), set()
    for name in names:
        lower = name.lower()
        found = [v.name for v in schema.vertex_labels
                 if v.name.lower() == lower or lower in (n.lower() for n in v.label_names)]
        found_e = [e.name for e in schema.edge_labels
                   if e.name.lower() == lower or lower in (n.lower() for n in e.label_names)]
        if not found and not found_e:
            known = [n for item in schema.vertex_labels + schema.edge_labels
                     for n in item.label_names]
            raise BinderError(f"GRAPH {graph} LABELS: no label '{name}'"
                              + suggest(name, known, "labels"))
        chosen_v.update(found)
        chosen_e.update(found_e)
    if chosen_e and not chosen_v:
        for e in map(schema.edge_label, chosen_e):
            chosen_v.update((e.source, e.destination))
    if chosen_v and not chosen_e:
        chosen_e = {e.name for e in schema.edge_labels
                    if e.source in chosen_v and e.destination in chosen_v}
    return (tuple(v for v in vertex if v in chosen_v), tuple(e for e in edge if e in chosen_e))


def split_conditions(node: SubgraphRef, ctx: Context,
                     columns: Callable[[exp.Expression], list[exp.Column]]
                     ) -> tuple[str, dict[str, list[exp.Expression]]]:
    """(the graph's name, the conjuncts of ``GRAPH g WHERE ...`` by what they choose: "edges"
    or "vertices"), each checked against the graph's properties (a property graph's: those of
    the labels kept). ``columns(node)`` lists the columns a condition names outside its
    subqueries."""
    graph = ctx.graph(node.this.name)
    schema = ctx.schema(graph)
    vertex_labels, edge_labels = subgraph_labels(node, schema, graph)
    parts: dict[str, list[exp.Expression]] = {"edges": [], "vertices": []}
    known: dict[str, list[str] | None] = {"edges": None, "vertices": None}
    for condition in conjuncts(node.args.get("where")):
        variables = set()
        for column in columns(condition):
            variable = column.table.lower() if column.table else ""
            if variable not in _VARIABLES:
                hint = (f"'{column.sql()}' names no edge or vertex" if variable
                        else f"qualify '{column.name}'")
                raise BinderError(f"GRAPH {graph} WHERE: {hint}: write e.<property> for an edge's "
                                  "property, v.<property> for a vertex's")
            kind = _VARIABLES[variable][0]
            if known[kind] is None:
                known[kind] = (ctx.graph_columns(graph, kind) if schema is None else
                               _properties(schema, kind, vertex_labels if kind == "vertices"
                                           else edge_labels))
            if not any(c.lower() == column.name.lower() for c in known[kind]):
                raise BinderError(f"GRAPH {graph} WHERE: the {kind} of graph '{graph}' have no "
                                  f"property '{column.name}'" + suggest(column.name, known[kind],
                                                                        "properties"))
            variables.add(kind)
        if len(variables) > 1:
            raise BinderError(f"GRAPH {graph} WHERE: the condition {condition.sql()} names both "
                              "an edge (e) and a vertex (v); each condition of the AND names one "
                              "of them (match the pattern with GRAPH_TABLE for conditions across "
                              "an edge and its endpoints)")
        parts[variables.pop() if variables else "edges"].append(condition)
    return graph, parts


def _properties(schema: PropertySchema, kind: str, labels: tuple[str, ...] | None) -> list[str]:
    """The properties ``v`` (``kind`` "vertices") or ``e`` has in a property graph's subgraph:
    its labels' and the extras of the stored tables."""
    if kind == "vertices":
        chosen = [schema.vertex_label(n) for n in labels] if labels else schema.vertex_labels
        extras = ["id", "label"]
    else:
        chosen = [schema.edge_label(n) for n in labels] if labels else schema.edge_labels
        extras = ["src", "dst", "label"]
    found = list(dict.fromkeys(p for label in chosen for p in label.properties))
    return found + [e for e in extras if e not in {p.lower() for p in found}]


def stored_column(schema: PropertySchema, column: exp.Column, labels: tuple[str, ...] | None
                  ) -> str | None:
    """The SQL of ``v.prop`` / ``e.prop`` over a property graph's stored table: its labels'
    columns (COALESCE of several); None for the extras (id, label, src, dst)."""
    variable = column.table.lower()
    if variable == "v":
        chosen = labels or tuple(v.name for v in schema.vertex_labels)
        found = schema.vertex_columns(chosen, column.name)
    else:
        chosen = labels or tuple(e.name for e in schema.edge_labels)
        found = schema.edge_columns(chosen, column.name)
    if not found:
        return None
    refs = [f'{column.table}."{c}"' for c in found]
    return refs[0] if len(refs) == 1 else f"coalesce({', '.join(refs)})"


def bind_subgraph(node: SubgraphRef, ctx: Context, text: str,
                  render: Callable[[exp.Expression], tuple[str, dict, dict]],
                  columns: Callable[[exp.Expression], list[exp.Column]],
                  rename: Callable[[exp.Column, str], None] = lambda column, sql: None
                  ) -> Subgraph:
    """The :class:`Subgraph` of ``GRAPH g [LABELS (...)] [WHERE ...]``. ``render(node)`` writes
    a piece of the query as DuckDB SQL (parameters filled in, subqueries bound), with the
    relations it reads and how to show them; ``columns(node)`` as :func:`split_conditions`;
    ``rename(column, sql)`` has a column of the text written as ``sql`` (a property graph's
    stored column); ``text`` is the statement."""
    graph, conditions = split_conditions(node, ctx, columns)
    entry = ctx.catalog.get(graph)
    schema = ctx.schema(graph)
    vertex_labels, edge_labels = subgraph_labels(node, schema, graph)
    start, end = span(node)
    shown = _SPACES.sub(" ", text[start:end + 1])
    queries = []
    for kind, found in conditions.items():
        variable = "e" if kind == "edges" else "v"
        table = _VARIABLES[variable][1]
        if not found:
            queries.append(None)
            continue
        relation = table_name(entry, table)
        inputs = {relation: GraphTableScan(graph, table)}
        names = {relation: f"{graph}.{kind}"}
        pieces = []
        for condition in found:
            if schema is not None:  # the property graph's columns of the labels kept
                for column in columns(condition):
                    sql = stored_column(schema, column, vertex_labels if variable == "v"
                                        else edge_labels)
                    if sql is not None:
                        rename(column, sql)
            sql, more, seen = render(condition)
            pieces.append(f"({sql})")
            inputs.update(more)
            names.update(seen)
        sql = (f"SELECT {variable}.{POSITION} FROM {relation} AS {variable} WHERE "
               + " AND ".join(pieces))
        queries.append(RelationalQuery(sql, tuple(inputs.items()), tuple(names.items())))
    return Subgraph(graph, queries[0], queries[1], text=shown, vertex_labels=vertex_labels,
                    edge_labels=edge_labels)
