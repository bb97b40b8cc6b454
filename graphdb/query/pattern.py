"""Binding ``GRAPH_TABLE (g MATCH ... WHERE ... COLUMNS (...))`` onto a frontier operator.

The pattern becomes one :class:`~graphdb.executor.plan.PatternMatch` (frontier expansion over the CSR,
the operator family of bfs/khop), not a chain of joins over ``g.edges``. Conjuncts of WHERE that
mention only an end vertex of the pattern are pushed into the operator as its start set (the
pattern is reversed when only its last vertex is filtered), so ``WHERE a.id = 7`` expands from
one vertex instead of all of them. The rest of WHERE is a Filter above it; COLUMNS a Project.
"""

from __future__ import annotations

from sqlglot import exp

from graphdb.executor.plan import Filter, Hop, PatternMatch, PlanNode, Project, Rename

from ..errors import BinderError, NotSupportedError
from .dialect import EdgePattern, GraphTable, NodePattern
from .expressions import Translator, conjuncts, output_name
from .scope import Relation, Scope
from .tables import Context

__all__ = ["plan_graph_table"]

_FLIP = {"out": "in", "in": "out", "both": "both"}


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


def plan_graph_table(table: GraphTable, ctx: Context) -> tuple[PlanNode, list[str]]:
    graph = ctx.graph(table.this.name)
    pattern = list(table.args["pattern"])
    vertices, edges, single = _var_names(pattern)
    for item in pattern:
        if isinstance(item, EdgePattern) and item.args["low"] > item.args["high"]:
            raise BinderError(f"edge quantifier {{{item.args['low']},{item.args['high']}}}: "
                              "the lower bound exceeds the upper bound")
    vertex_cols = ctx.graph_columns(graph, "vertices")
    # Listing g.edges' columns may build the edge table: only when an edge variable is used.
    clauses = [table.args.get("where")] + list(table.args.get("columns") or []) + [
        item.args.get("where") for item in pattern]
    used = {c.table.lower() for clause in clauses if clause is not None
            for c in clause.find_all(exp.Column) if c.table}
    edge_cols = ctx.graph_columns(graph, "edges") if used & {e.lower() for e in edges} else []
    relations = [Relation(None, v, vertex_cols, [f"{v}.{c}" for c in vertex_cols])
                 for v in dict.fromkeys(vertices)]
    relations += [Relation(None, e, edge_cols, [f"{e}.{c}" for c in edge_cols]) for e in edges]
    scope = Scope(relations)

    conditions: list[exp.Expression] = []
    for item in pattern + [table]:
        conditions.extend(conjuncts(item.args.get("where")))
    if any(c.find(exp.Subquery, exp.Select) for c in conditions):
        raise NotSupportedError("subqueries inside GRAPH_TABLE are not supported; filter its "
                                "result instead: SELECT ... FROM GRAPH_TABLE (...) t WHERE "
                                "t.x IN (SELECT ...)")

    def variables(node: exp.Expression) -> set[str]:
        out = set()
        for column in node.find_all(exp.Column):
            if not column.table:
                raise BinderError(f"in GRAPH_TABLE, qualify '{column.name}' with its pattern "
                                  f"variable (e.g. {vertices[0]}.{column.name})")
            out.add(scope.resolve(column).split(".", 1)[0])
        return out

    # Push a filter on an end vertex into the operator's start set.
    first, last = vertices[0], vertices[-1]
    by_var = {c: variables(c) for c in conditions}
    start = first
    if not any(v == {first} for v in by_var.values()) and any(
            v == {last} for v in by_var.values()) and last != first:
        start = last
    pushed = [c for c, v in by_var.items() if v == {start}]
    rest = [c for c in conditions if c not in pushed]
    start_filter = None
    if pushed:
        raw = Translator(lambda col: scope.resolve(col).split(".", 1)[1])
        start_filter = raw(exp.and_(*pushed))

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

    columns = table.args.get("columns") or [exp.alias_(exp.column("id", v), v)
                                            for v in dict.fromkeys(vertices)
                                            if not v.startswith("__")]
    referenced: set[str] = set()
    for node in rest + list(columns):
        for column in node.find_all(exp.Column):
            if not column.table:
                variables(node)
            referenced.add(scope.resolve(column))
    vertex_props, edge_props = [], []
    for ref in sorted(referenced):
        var, prop = ref.split(".", 1)
        if var in edges:
            if not single[var]:
                raise NotSupportedError(f"'{ref}': a variable-length edge ({var}) has no single "
                                        "set of properties")
            edge_props.append((var, prop))
        else:
            vertex_props.append((var, prop))
    if not vertex_props and not edge_props:
        vertex_props.append((start, "id"))  # keep the row count (count(*) over a pattern)

    text = _pattern_text(pattern)
    if pushed:
        text += f" start {start} WHERE " + " AND ".join(c.sql() for c in pushed)
    node: PlanNode = PatternMatch(graph, start, start_filter, tuple(hops), tuple(vertex_props),
                                  tuple(edge_props), text)
    translate = Translator(scope.resolve)
    if rest:
        condition = exp.and_(*rest)
        node = Filter(node, translate(condition), condition.sql())
    names = [output_name(c) for c in columns]
    node = Project(node, tuple(f"__p{i}" for i in range(len(names))),
                   tuple(translate(c) for c in columns))
    return Rename(node, tuple(names)), names

