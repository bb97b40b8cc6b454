"""Binding ``GRAPH_TABLE (g MATCH ... WHERE ... COLUMNS (...))`` onto a frontier operator.

The pattern becomes one :class:`~graphdb.executor.plan.PatternMatch` (frontier expansion over
the CSR, the operator family of bfs/khop), not a chain of joins over ``g.edges``. Conjuncts of
WHERE that mention only an end vertex of the pattern choose its start set (the pattern is
reversed when only its last vertex is filtered): they become a query over ``g.vertices`` whose
ids the expansion starts from, so ``WHERE a.id = 7`` expands from one vertex instead of all of
them. The rest of WHERE and the COLUMNS list are SQL over the operator's output, in the query
around it.
"""

from __future__ import annotations

from typing import Callable

from sqlglot import exp

from graphdb.executor.plan import GraphTableScan, Hop, PatternMatch, RelationalQuery

from ..errors import BinderError, NotSupportedError
from .dialect import EdgePattern, GraphTable, NodePattern
from .tables import Context, suggest

__all__ = ["bind_graph_table", "output_name"]

_FLIP = {"out": "in", "in": "out", "both": "both"}


def output_name(node: exp.Expression) -> str:
    """The column name SQL gives a select-list expression."""
    if isinstance(node, exp.Alias):
        return node.alias
    if isinstance(node, exp.Column):
        return node.name
    return node.sql()


def conjuncts(node: exp.Expression | None) -> list[exp.Expression]:
    """The AND-ed parts of a condition (none for None)."""
    if node is None:
        return []
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    if isinstance(node, exp.Paren) and isinstance(node.this, exp.And):
        return conjuncts(node.this)
    return [node]


def _pattern_text(pattern: list[exp.Expression]) -> str:
    parts = []
    for item in pattern:
        if isinstance(item, NodePattern):
            parts.append(f"({item.this.name if item.this else ''})")
        else:
            var = item.this.name if item.this else ""
            low, high = item.args["low"], item.args["high"]
            quant = "" if (low, high) == (1, 1) else f"{{{low},{high}}}"
            body = {"out": f"-[{var}]->", "in": f"<-[{var}]-", "both": f"-[{var}]-"}
            parts.append(body[item.args["direction"]] + quant)
    return "".join(parts)


def _var_names(pattern):
    vertices, edges, single = [], [], {}
    for i, item in enumerate(pattern):
        if isinstance(item, NodePattern):
            vertices.append(item.this.name if item.this else f"__v{i}")
        else:
            if item.this is not None:
                name = item.this.name
                if name in edges or name in vertices:
                    raise BinderError(f"pattern variable '{name}' is used twice")
                edges.append(name)
                single[name] = (item.args["low"], item.args["high"]) == (1, 1)
    return vertices, edges, single


class _Scope:
    """The pattern's variables and their properties."""

    def __init__(self, columns: dict[str, list[str]]):
        self.columns = columns

    def resolve(self, column: exp.Column) -> tuple[str, str]:
        """(variable, property) of ``var.prop``."""
        if not column.table:
            first = next(iter(self.columns))
            raise BinderError(f"in GRAPH_TABLE, qualify '{column.name}' with its pattern "
                              f"variable (e.g. {first}.{column.name})")
        var = next((v for v in self.columns if v.lower() == column.table.lower()), None)
        if var is None:
            raise BinderError(f"unknown table '{column.table}'"
                              + suggest(column.table, list(self.columns), "pattern variables"))
        names = self.columns[var]
        prop = next((c for c in names if c == column.name), None) or next(
            (c for c in names if c.lower() == column.name.lower()), None)
        if prop is None:
            raise BinderError(f"table '{var}' has no column '{column.name}'"
                              + suggest(column.name, names, "columns"))
        return var, prop


def _start_values(conditions: list[exp.Expression], start: str,
                  value: Callable[[exp.Expression], tuple | None]) -> tuple | None:
    """The ids of ``WHERE start.id = x`` or ``start.id IN (x, y)`` (literals or parameters):
    the start set without a query, else None."""
    if len(conditions) != 1:
        return None
    condition = conditions[0]

    def is_id(node: exp.Expression) -> bool:
        return isinstance(node, exp.Column) and node.name.lower() == "id" and \
            node.table.lower() == start.lower()

    found = None
    if isinstance(condition, exp.EQ):
        for a, b in ((condition.this, condition.expression),
                     (condition.expression, condition.this)):
            if is_id(a) and value(b) is not None:
                found = [value(b)[0]]
    elif isinstance(condition, exp.In) and is_id(condition.this) and condition.expressions \
            and not condition.args.get("query"):
        listed = [value(v) for v in condition.expressions]
        found = [v[0] for v in listed] if all(v is not None for v in listed) else None
    if found is None or any(isinstance(v, (list, tuple, dict, bool)) for v in found):
        return None
    return tuple(v for v in found if v is not None)


def bind_graph_table(table: GraphTable, ctx: Context, generate: Callable[[exp.Expression], str],
                     vertices_name: Callable[[str], str], fresh: Callable[[], str],
                     value: Callable[[exp.Expression], tuple | None]
                     ) -> tuple[str, list[tuple[str, object]]]:
    """The SQL that stands for ``table`` in the query around it (a derived table or the
    operator's result, aliased) and the relations it reads, (name, plan node) each.
    ``generate`` writes an expression as SQL (parameters filled in), ``vertices_name(graph)``
    names a graph's vertex table, ``fresh()`` names the operator's result, ``value(node)`` is
    ``(the value,)`` of a literal or a parameter, else None."""
    graph = ctx.graph(table.this.name)
    pattern = list(table.args["pattern"])
    vertices, edges, single = _var_names(pattern)
    for item in pattern:
        if isinstance(item, EdgePattern) and item.args["low"] > item.args["high"]:
            raise BinderError(f"edge quantifier {{{item.args['low']},{item.args['high']}}}: "
                              "the lower bound exceeds the upper bound")
    vertex_cols = ctx.graph_columns(graph, "vertices")
    # Listing g.edges' columns reads its schema: only when an edge variable is used.
    clauses = [table.args.get("where")] + list(table.args.get("columns") or []) + [
        item.args.get("where") for item in pattern]
    used = {c.table.lower() for clause in clauses if clause is not None
            for c in clause.find_all(exp.Column) if c.table}
    edge_cols = ctx.graph_columns(graph, "edges") if used & {e.lower() for e in edges} else []
    columns = {v: vertex_cols for v in dict.fromkeys(vertices)}
    columns.update({e: edge_cols for e in edges})
    scope = _Scope(columns)

    conditions: list[exp.Expression] = []
    for item in pattern + [table]:
        conditions.extend(conjuncts(item.args.get("where")))
    if any(c.find(exp.Subquery, exp.Select) for c in conditions):
        raise NotSupportedError("subqueries inside GRAPH_TABLE are not supported; filter its "
                                "result instead: SELECT ... FROM GRAPH_TABLE (...) t WHERE "
                                "t.x IN (SELECT ...)")

    def variables(node: exp.Expression) -> set[str]:
        return {scope.resolve(c)[0] for c in node.find_all(exp.Column)}

    # A filter on an end vertex alone chooses the operator's start vertices.
    first, last = vertices[0], vertices[-1]
    by_var = [(c, variables(c)) for c in conditions]
    start = first
    if not any(v == {first} for _, v in by_var) and any(v == {last} for _, v in by_var) \
            and last != first:
        start = last
    pushed = [c for c, v in by_var if v == {start}]
    rest = [c for c, v in by_var if v != {start}]
    inputs: list[tuple[str, object]] = []
    start_ids = _start_values(pushed, start, value)
    if pushed and start_ids is None:
        name = vertices_name(graph)
        where = " AND ".join(f"({generate(c)})" for c in pushed)
        start_ids = RelationalQuery(
            f'SELECT "{start}".id FROM {name} AS "{start}" WHERE {where}',
            ((name, GraphTableScan(graph, "vertices")),))

    hops = []
    # Positions, not nodes: two anonymous () patterns are equal as AST nodes but distinct here.
    positions = list(range(len(pattern))) if start == first else list(
        reversed(range(len(pattern))))
    for i in range(1, len(positions), 2):
        edge = pattern[positions[i]]
        target = vertices[positions[i + 1] // 2]
        direction = edge.args["direction"] if start == first else _FLIP[edge.args["direction"]]
        name = edge.this.name if edge.this is not None else None
        hops.append(Hop(target, direction, edge.args["low"], edge.args["high"],
                        name if name and single[name] else None))

    outputs = table.args.get("columns") or [exp.alias_(exp.column("id", v), v)
                                            for v in dict.fromkeys(vertices)
                                            if not v.startswith("__")]
    referenced: set[tuple[str, str]] = set()
    for node in rest + list(outputs):
        referenced |= {scope.resolve(c) for c in node.find_all(exp.Column)}
    vertex_props, edge_props = [], []
    for var, prop in sorted(referenced):
        if var in edges:
            if not single[var]:
                raise NotSupportedError(f"'{var}.{prop}': a variable-length edge ({var}) has no "
                                        "single set of properties")
            edge_props.append((var, prop))
        else:
            vertex_props.append((var, prop))
    if not vertex_props and not edge_props:
        vertex_props.append((start, "id"))  # keep the row count (count(*) over a pattern)

    text = _pattern_text(pattern)
    if pushed:
        text += f" start {start} WHERE " + " AND ".join(c.sql() for c in pushed)
    alias = table.args.get("alias")
    alias_sql = alias.sql(dialect="duckdb") if alias is not None else "graph_table"
    plain = [c.this if isinstance(c, exp.Alias) else c for c in outputs]
    result = fresh()
    if not rest and all(isinstance(c, exp.Column) for c in plain):
        # COLUMNS only names properties: the operator's result is the table, named as asked
        named = tuple((output_name(c), "{}.{}".format(*scope.resolve(p)))
                      for c, p in zip(outputs, plain))
        node = PatternMatch(graph, start, start_ids, tuple(hops), tuple(vertex_props),
                            tuple(edge_props), text, named)
        return f"{result} AS {alias_sql}", inputs + [(result, node)]
    node = PatternMatch(graph, start, start_ids, tuple(hops), tuple(vertex_props),
                        tuple(edge_props), text)
    inputs.append((result, node))

    def over_result(expression: exp.Expression) -> str:
        """``expression`` with ``a.id`` as the operator's column ``"a.id"``."""
        def rename(node: exp.Expression) -> exp.Expression:
            if not isinstance(node, exp.Column):
                return node
            var, prop = scope.resolve(node)
            return exp.Column(this=exp.to_identifier(f"{var}.{prop}", quoted=True),
                              table=exp.to_identifier("__pattern"))

        return generate(expression.transform(rename))

    select = ", ".join(f'{over_result(c.this if isinstance(c, exp.Alias) else c)} AS '
                       + '"' + output_name(c).replace('"', '""') + '"' for c in outputs)
    where = (" WHERE " + " AND ".join(f"({over_result(c)})" for c in rest)) if rest else ""
    return f"(SELECT {select} FROM {result} AS __pattern{where}) AS {alias_sql}", inputs
