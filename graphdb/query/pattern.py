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

from graphdb.executor.graph_tables import POSITION, table_name
from graphdb.executor.pattern import PATH_COLUMNS
from graphdb.executor.plan import GraphTableScan, Hop, PatternMatch, RelationalQuery
from graphdb.executor.property_graph import ROW, ROW_LABELS, PropertySchema, visible

from ..errors import BinderError, NotSupportedError
from .conditions import conjuncts
from .dialect import UNBOUNDED, EdgePattern, GraphTable, NodePattern
from .labels import label_set, row_label_choice
from .pattern_surface import (
    EDGE_POSITION,
    VERTEX_ID,
    bind_patterns,
    element_ids,
    expand_outputs,
    uses_position,
)
from .tables import Context, suggest

__all__ = ["bind_graph_table", "conjuncts", "output_name"]

_FLIP = {"out": "in", "in": "out", "both": "both"}


def output_name(node: exp.Expression) -> str:
    """The column name SQL gives a select-list expression."""
    if isinstance(node, exp.Alias):
        return node.alias
    if isinstance(node, exp.Column):
        return node.name
    return node.sql()


def _pattern_text(table: GraphTable) -> str:
    pattern = table.args["pattern"]
    parts = []
    path, prefix, k = table.args.get("path"), table.args.get("prefix"), table.args.get("k")
    if path is not None:
        parts.append(f"{path.name} = ")
    if prefix is not None:
        parts.append({"any": "ANY", "any_shortest": "ANY SHORTEST", "shortest": "SHORTEST",
                      "all_shortest": "ALL SHORTEST"}[prefix] + (f" {k}" if k else "") + " ")
    def labelled(node) -> str:
        labels = node.args.get("labels")
        return (node.this.name if node.this else "") + (f":{labels.replace(' ', '')}"
                                                        if labels else "")

    for item in pattern:
        if isinstance(item, NodePattern):
            parts.append(f"({labelled(item)})")
            continue
        var = labelled(item)
        low, high = item.args["low"], item.args["high"]
        quant = "" if (low, high) == (1, 1) else f"{{{low},{'' if high == UNBOUNDED else high}}}"
        body = {"out": f"-[{var}]->", "in": f"<-[{var}]-", "both": f"-[{var}]-"}
        body = body[item.args["direction"]]
        if item.args.get("source") is not None:
            x, y = item.args["source"], item.args["target"]
            body = f"(({labelled(x)}){body}({labelled(y)}))"
        parts.append(body + quant)
    return "".join(parts)


def _var_names(pattern, path: str | None):
    """(vertex variables, edge variables, whether each edge variable is a single edge, the
    variables of quantified path patterns' inner vertices)."""
    vertices, edges, single, inner = [], [], {}, []
    taken = {path.lower()} if path else set()

    def claim(name: str) -> None:
        if name.lower() in taken:
            raise BinderError(f"pattern variable '{name}' is used twice")
        taken.add(name.lower())

    for i, item in enumerate(pattern):
        if isinstance(item, NodePattern):
            name = item.this.name if item.this else f"__v{i}"
            if name not in vertices:
                if item.this is not None and name.lower() in taken:
                    raise BinderError(f"pattern variable '{name}' is used twice")
                taken.add(name.lower())
            vertices.append(name)
            continue
        if item.this is not None:
            claim(item.this.name)
            edges.append(item.this.name)
            single[item.this.name] = (item.args["low"], item.args["high"]) == (1, 1) and \
                item.args.get("source") is None
        for inner_node in (item.args.get("source"), item.args.get("target")):
            if inner_node is not None and inner_node.this is not None:
                claim(inner_node.this.name)
                inner.append(inner_node.this.name)
    return vertices, edges, single, inner


#: Path functions of COLUMNS and WHERE -> the path variable's column.
_PATH_FUNCTIONS = {"vertices": "vertices", "edges": "edges", "path_length": "length",
                   "length": "length", "cost": "cost"}


def _path_functions(node: exp.Expression, path: str | None) -> exp.Expression:
    """``vertices(p)``, ``edges(p)``, ``path_length(p)`` / ``length(p)`` and ``cost(p)`` as
    the columns ``p.vertices`` ... of the pattern's result."""
    if path is None:
        return node

    def rename(part: exp.Expression) -> exp.Expression:
        if isinstance(part, exp.Func):
            name = part.name if isinstance(part, exp.Anonymous) else part.sql_name()
            args = list(part.expressions) if isinstance(part, exp.Anonymous) else [
                part.this] if part.this is not None else []
            if name.lower() in _PATH_FUNCTIONS and len(args) == 1 and \
                    isinstance(args[0], exp.Column) and not args[0].table and \
                    args[0].name.lower() == path.lower():
                return exp.column(_PATH_FUNCTIONS[name.lower()], table=path)
        if isinstance(part, exp.Column) and not part.table and part.name.lower() == path.lower():
            raise BinderError(f"'{part.name}' is a path: use vertices({part.name}), "
                              f"edges({part.name}), path_length({part.name}), "
                              f"element_id({part.name}) or cost({part.name})")
        return part

    return node.transform(rename)


def _default_columns(pattern: list, vertices: list[str], edges: list[str],
                     property_graph: bool) -> list[exp.Expression]:
    """The output of a GRAPH_TABLE without COLUMNS: on a property graph every property of each
    named vertex and single edge, in the pattern's order (``x.*`` each, as DuckPGQ reads it); on a graph, the
    id of each named vertex."""
    if not property_graph:
        return [exp.alias_(exp.column("id", v), v) for v in dict.fromkeys(vertices)
                if not v.startswith("__")]
    # a quantified edge is a list of edges, not one set of properties: edges(p) shows it
    single = {item.this.name for item in pattern if isinstance(item, EdgePattern)
              and item.this is not None and (item.args["low"], item.args["high"]) == (1, 1)}
    named = set(vertices) | (set(edges) & single)
    order = [item.this.name for item in pattern if item.this is not None
             and item.this.name in named and not item.this.name.startswith("__")]
    return [exp.Column(this=exp.Star(), table=exp.to_identifier(v))
            for v in dict.fromkeys(order)]


class _Labels:
    """The labels of a pattern's variables on a property graph (nothing on a plain graph):
    which labels each may have, the properties that gives it, the stored columns they are in,
    and the conditions that restrict it to its labels."""

    def __init__(self, schema: PropertySchema | None, graph: str, pattern: list,
                 vertices: list[str]):
        self.schema = schema
        self.of: dict[str, tuple[str, ...]] = {}  # variable -> its labels (all: absent)
        self.kind: dict[str, str] = {}  # variable -> "vertex" | "edge"
        self.edge_at: dict[int, str] = {}  # pattern position -> its edge variable
        # variable -> (element, bit) of the labels rows get from a column (DuckPGQ's IN)
        self.by_rows: dict[str, list[tuple[str, int | None]]] = {}
        vertex_names = [(v.name, v.label_names) for v in schema.vertex_labels] if schema else []
        edge_names = [(e.name, e.label_names) for e in schema.edge_labels] if schema else []

        def note(variable: str, text: str | None, kind: str) -> None:
            self.kind[variable] = kind
            if text is None:
                return
            if schema is None:
                raise BinderError(f"graph '{graph}' has one vertex and one edge type, so no "
                                  f"labels ({text}); CREATE PROPERTY GRAPH makes a graph of "
                                  "labelled vertex and edge tables")
            names = vertex_names if kind == "vertex" else edge_names
            choice = row_label_choice(text, [(v.name, v.label_names, v.row_labels)
                                             for v in schema.vertex_labels]) \
                if kind == "vertex" else None
            if choice is not None:
                found = tuple(dict.fromkeys(element for element, _ in choice))
                self.by_rows[variable] = choice
            else:
                found = label_set(text, names, f"{kind} labels of graph '{graph}'")
            self.of[variable] = tuple(n for n in self.of.get(variable, found) if n in found)

        for i, item in enumerate(pattern):
            if isinstance(item, NodePattern):
                note(vertices[i // 2], item.args.get("labels"), "vertex")
                continue
            variable = item.this.name if item.this is not None else f"__e{i}"
            self.edge_at[i] = variable
            note(variable, item.args.get("labels"), "edge")
            for node, role in ((item.args.get("source"), "sources"),
                               (item.args.get("target"), "targets")):
                if node is not None:
                    inner = node.this.name if node.this is not None else f"__inner{i}{role}"
                    note(inner, node.args.get("labels"), "vertex")

    def row_conditions(self) -> dict[str, exp.Expression]:
        """The condition each variable naming a label rows get from a column's value has:
        ``(x.__row_labels & 2) = 2`` (with ``x.label = 'Organisation'`` where it may have
        several element tables)."""
        found = {}
        for variable, choice in self.by_rows.items():
            several = len({element for element, _ in choice}) > 1
            terms = []
            for element, bit in choice:
                label = exp.EQ(this=exp.column("label", table=variable, quoted=True),
                               expression=exp.Literal.string(element))
                if bit is None:
                    terms.append(label)
                    continue
                mask = exp.column(ROW_LABELS, table=variable, quoted=True)
                test = exp.EQ(this=exp.paren(exp.BitwiseAnd(this=mask, expression=exp.Literal
                                                            .number(bit))),
                              expression=exp.Literal.number(bit))
                terms.append(exp.and_(label, test) if several else test)
            found[variable] = exp.or_(*terms) if len(terms) > 1 else terms[0]
        return found

    def edge_variable(self, position: int) -> str:
        return self.edge_at[position]

    def _labels(self, variable: str) -> tuple[str, ...]:
        schema = self.schema
        every = schema.vertex_labels if self.kind[variable] == "vertex" else schema.edge_labels
        return self.of.get(variable, tuple(label.name for label in every))

    def properties(self, variable: str) -> list[str]:
        """The properties a variable of a property graph has (its labels' and the extras:
        a vertex's ``id`` and ``label``, an edge's ``src``, ``dst`` and ``label``, and the
        ``rowid`` of its row in its table)."""
        found: dict[str, None] = {}
        vertex = self.kind[variable] == "vertex"
        rows = True
        for name in self._labels(variable):
            label = self.schema.vertex_label(name) if vertex else self.schema.edge_label(name)
            found.update(dict.fromkeys(visible(label.properties)))
            rows = rows and (not vertex or ROW in label.properties)
        lower = {p.lower() for p in found}
        extras = ("id", "label") if vertex else ("src", "dst", "label")
        extras += (ROWID,) if rows else ()  # (graphs stored before vertices kept it: none)
        return list(found) + [e for e in extras if e not in lower]

    def own_properties(self, variable: str) -> list[str]:
        """The properties of a variable's labels (without the extras every vertex or edge
        has): what ``x.*`` shows."""
        found: dict[str, None] = {}
        vertex = self.kind[variable] == "vertex"
        for name in self._labels(variable):
            label = self.schema.vertex_label(name) if vertex else self.schema.edge_label(name)
            found.update(dict.fromkeys(visible(label.properties)))
        return list(found)

    def _columns(self, variable: str, prop: str) -> tuple[str, ...]:
        labels = self._labels(variable)
        if self.kind[variable] == "vertex":
            found = self.schema.vertex_columns(labels, prop)
            if not found and prop.lower() == ROWID:
                found = self.schema.vertex_columns(labels, ROW)
            return found
        found = self.schema.edge_columns(labels, prop)
        return (ROW,) if not found and prop.lower() == ROWID else found

    def restriction(self, variable: str, alias: str) -> str:
        """SQL keeping the rows of ``alias`` (a vertex or edge table) that have the variable's
        labels; "" when it may have any."""
        if self.schema is None or variable not in self.of:
            return ""
        every = (self.schema.vertex_labels if self.kind[variable] == "vertex"
                 else self.schema.edge_labels)
        if len(self.of[variable]) == len(every):
            return ""
        names = ", ".join("'" + n.replace("'", "''") + "'" for n in self.of[variable])
        return f"{alias}.label IN ({names})" if names else "FALSE"

    def stored_sql(self, condition: exp.Expression, scope: "_Scope") -> exp.Expression:
        """``condition`` over the stored tables: ``a.name`` as the stored column of each of
        a's labels (COALESCE of them: a vertex has one label, so one is not NULL)."""
        if self.schema is None:
            return condition

        def rename(node: exp.Expression) -> exp.Expression:
            if not isinstance(node, exp.Column) or not node.table:
                return node
            variable, prop = scope.resolve(node)
            if variable not in self.kind:
                return node
            columns = self._columns(variable, prop)
            if not columns:
                return node  # id, label, src, dst: columns of the stored tables
            refs = [exp.column(c, table=variable, quoted=True) for c in columns]
            return refs[0] if len(refs) == 1 else exp.func("coalesce", *refs)

        return condition.transform(rename)

    def stored(self, references: list[tuple[str, str]]) -> tuple[tuple[str, str, tuple], ...]:
        """(variable, property, its stored columns) of the properties a pattern outputs."""
        if self.schema is None:
            return ()
        return tuple((variable, prop, self._columns(variable, prop))
                     for variable, prop in references if variable in self.kind)


#: The row id of an element's row in its table, as DuckDB names a table's (``x.rowid``).
ROWID = "rowid"


class _Scope:
    """The pattern's variables and their properties."""

    def __init__(self, columns: dict[str, list[str]]):
        self.columns = columns

    def qualify(self, table: GraphTable, kinds: dict[str, str], labels: _Labels) -> GraphTable:
        """``table`` with each bare column name that one variable has a property of
        (``COLUMNS (firstName)``, as DuckPGQ reads it) qualified by that variable; a name that
        several variables have is ambiguous."""
        lowered = {k.lower() for k in kinds}

        def owners(name: str, own: bool) -> list[str]:
            found = []
            for variable, names in self.columns.items():
                if variable.startswith("__") or kinds.get(variable) == "path":
                    continue
                shown = labels.own_properties(variable) if own and labels.schema is not None \
                    else names
                if any(n.lower() == name.lower() for n in shown):
                    found.append(variable)
            return found

        def rewrite(node: exp.Expression) -> exp.Expression:
            if not isinstance(node, exp.Column) or node.table or \
                    not isinstance(node.this, exp.Identifier) or node.name.lower() in lowered:
                return node
            # a property of a label, not the extras every element has (id, src, dst, label)
            found = owners(node.name, labels.schema is not None)
            if len(found) > 1:
                raise BinderError(f"in GRAPH_TABLE, '{node.name}' is a property of "
                                  f"{', '.join(found)}: qualify it (e.g. {found[0]}.{node.name})")
            if not found:
                return node
            return exp.column(node.this.copy(), table=found[0])

        written = [output_name(c) for c in table.args.get("columns") or []]
        table = table.transform(rewrite)
        for item, name in zip(table.args.get("columns") or [], written):
            if not isinstance(item, (exp.Alias, exp.Column)) and output_name(item) != name:
                item.replace(exp.alias_(item.copy(), name, quoted=True))  # named as written
        return table

    def resolve(self, column: exp.Column) -> tuple[str, str]:
        """(variable, property) of ``var.prop``."""
        if column.args.get("db") is not None:
            raise BinderError(f"in GRAPH_TABLE, '{column.sql()}': a property is named by its "
                              f"pattern variable alone ({column.table}.{column.name})")
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
                  value: Callable[[exp.Expression], tuple | None], key: str = "id"
                  ) -> tuple | None:
    """The ids of ``WHERE start.id = x`` or ``start.id IN (x, y)`` (literals or parameters;
    ``key`` names the column): the start set without a query, else None."""
    if len(conditions) != 1:
        return None
    condition = conditions[0]

    def is_id(node: exp.Expression) -> bool:
        return isinstance(node, exp.Column) and node.name.lower() == key.lower() and \
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


def _label_keys(conditions: list[exp.Expression], start: str, labels: _Labels,
                value: Callable[[exp.Expression], tuple | None]) -> tuple[str, tuple] | None:
    """(label, keys) of ``WHERE start.key = x`` (or ``IN (x, y)``) on a start vertex of one
    vertex label, where ``key`` is that label's key and the values are of its type: the start
    vertices are looked up by their keys (a binary search of the label's sorted keys), not
    found by a query of the whole vertex table (16 ms for one person of 150 k vertices)."""
    if labels.schema is None or len(labels.of.get(start, ())) != 1:
        return None
    label = labels.schema.vertex_label(labels.of[start][0])
    keys = _start_values(conditions, start, value, label.key)
    integers = label.key_type.startswith(("int", "uint"))
    if keys is None or not all(isinstance(k, int) if integers else isinstance(k, str)
                               for k in keys):
        return None
    return label.name, keys


def bind_graph_table(table: GraphTable, ctx: Context, generate: Callable[[exp.Expression], str],
                     vertices_name: Callable[[str], str], fresh: Callable[[], str],
                     value: Callable[[exp.Expression], tuple | None]
                     ) -> tuple[str, list[tuple[str, object]]]:
    """The SQL that stands for ``table`` in the query around it (a derived table or the
    operator's result, aliased) and the relations it reads, (name, plan node) each.
    ``generate`` writes an expression as SQL (parameters filled in), ``vertices_name(graph)``
    names a graph's vertex table, ``fresh()`` names the operator's result, ``value(node)`` is
    ``(the value,)`` of a literal or a parameter, else None."""
    if table.args.get("also"):  # MATCH p1, p2, ...: each bound alone, then joined
        return bind_patterns(table, lambda one: bind_graph_table(
            one, ctx, generate, vertices_name, fresh, value), generate,
            lambda one, variable: shown_properties(one, ctx, variable))
    graph = ctx.graph(table.this.name)
    entry = ctx.catalog.get(graph)
    path = table.args["path"].name if table.args.get("path") is not None else None
    prefix, k = table.args.get("prefix"), table.args.get("k")
    mode, k = {None: ("walk", 1), "any": ("any", k or 1), "any_shortest": ("any", 1),
               "shortest": ("any", k), "all_shortest": ("all_shortest", 1)}[prefix]
    vertices, edges, single, inner = _var_names(list(table.args["pattern"]), path)
    kinds = {**{v: "vertex" for v in vertices + inner}, **{e: "edge" for e in edges}}
    if path is not None:
        kinds[path] = "path"
    table = element_ids(table, kinds)
    pattern = list(table.args["pattern"])
    hops_at = [i for i, item in enumerate(pattern) if isinstance(item, EdgePattern)]
    for i in hops_at:
        low, high = pattern[i].args["low"], pattern[i].args["high"]
        if high != UNBOUNDED and low > high:
            raise BinderError(f"edge quantifier {{{low},{high}}}: the lower bound exceeds the "
                              "upper bound")
        if high == UNBOUNDED and prefix is None:
            raise BinderError("an unbounded quantifier (*, +, {m,}) matches endless walks: give "
                              "an upper bound {m,n}, or select paths (ANY SHORTEST, ALL SHORTEST, "
                              "ANY k)")
    if prefix is not None:
        if len(hops_at) != 1:
            raise NotSupportedError("a path search prefix (ANY, SHORTEST, ALL SHORTEST) takes a "
                                    "pattern of one edge or one quantified edge, (a)-[e]->{m,n}(b)")
        if pattern[hops_at[0]].args["low"] > 1 and (path is not None or k > 1
                                                    or mode == "all_shortest"):
            raise NotSupportedError("ANY k / SHORTEST / ALL SHORTEST paths are searched from 0 or "
                                    "1 edges up: use {0,n} or {1,n} and filter path_length(p) in "
                                    "WHERE")
    labels = _Labels(ctx.schema(graph), graph, pattern, vertices)
    if labels.schema is not None:
        columns = {v: labels.properties(v) for v in dict.fromkeys(vertices + inner)}
        columns.update({e: labels.properties(e) for e in edges})
    else:
        vertex_cols = ctx.graph_columns(graph, "vertices")
        # Listing g.edges' columns reads its schema: only when an edge variable is used.
        clauses = [table.args.get("where")] + list(table.args.get("columns") or [])
        for item in pattern:
            clauses += [item.args.get(name) for name in ("where", "group")]
            clauses += [node.args.get("where") for node in (item.args.get("source"),
                                                             item.args.get("target")) if node]
        used = {c.table.lower() for clause in clauses if clause is not None
                for c in clause.find_all(exp.Column) if c.table}
        edge_cols = ctx.graph_columns(graph, "edges") if used & {e.lower() for e in edges} else []
        columns = {v: vertex_cols for v in dict.fromkeys(vertices + inner)}
        columns.update({e: edge_cols for e in edges})
    if path is not None:
        columns[path] = list(PATH_COLUMNS)
    row_conditions = labels.row_conditions()
    for variable in row_conditions:
        if variable in inner:
            raise NotSupportedError(f"({variable}): a label rows get from a column's value "
                                    "(LABEL ... IN column (...)) on a vertex inside a quantified "
                                    "pattern; name it on the pattern's end vertices")
        columns[variable] = list(columns[variable]) + [ROW_LABELS]
    if uses_position(table):  # element_id
        for e in edges:
            columns[e] = list(columns[e]) + [EDGE_POSITION]
        for v in dict.fromkeys(vertices + inner):
            columns[v] = list(columns[v]) + [VERTEX_ID]
    scope = _Scope(columns)
    table = scope.qualify(table, kinds, labels)
    pattern = list(table.args["pattern"])

    def variables(node: exp.Expression) -> set[str]:
        return {scope.resolve(c)[0] for c in node.find_all(exp.Column)}

    # Conditions inside a quantified hop (or any hop of a selective pattern) hold for every
    # step it takes: masks of the edges and vertices a step may use, not filters of the rows.
    conditions: list[exp.Expression] = []
    masks: dict[int, dict[str, list[exp.Expression]]] = {}
    for i, item in enumerate(pattern):
        if isinstance(item, NodePattern):
            conditions.extend(conjuncts(item.args.get("where")))
            continue
        stepwise = prefix is not None or (item.args["low"], item.args["high"]) != (1, 1) or \
            item.args.get("source") is not None
        own = conjuncts(item.args.get("where")) + conjuncts(item.args.get("group"))
        for node in (item.args.get("source"), item.args.get("target")):
            if node is not None:
                own += conjuncts(node.args.get("where"))
        if not stepwise:
            conditions.extend(own)
            continue
        roles = {}
        if item.this is not None:
            roles[item.this.name] = "edges"
        for node, role in ((item.args.get("source"), "sources"),
                           (item.args.get("target"), "targets")):
            if node is not None and node.this is not None:
                roles[node.this.name] = role
        for condition in own:
            named = variables(condition)
            if len(named) != 1 or next(iter(named)) not in roles:
                raise NotSupportedError(
                    f"{condition.sql()}: a condition inside a quantified pattern names one of its "
                    "own variables (the edge, or the vertex a step leaves or reaches); move "
                    "conditions across several of them out of the pattern")
            masks.setdefault(i, {}).setdefault(roles[next(iter(named))], []).append(condition)
    conditions.extend(conjuncts(table.args.get("where")))
    conditions.extend(row_conditions.values())
    if any(c.find(exp.Subquery, exp.Select) for c in conditions + [
            c for found in masks.values() for cs in found.values() for c in cs]):
        raise NotSupportedError("subqueries inside GRAPH_TABLE are not supported; filter its "
                                "result instead: SELECT ... FROM GRAPH_TABLE (...) t WHERE "
                                "t.x IN (SELECT ...)")
    conditions = [_path_functions(c, path) for c in conditions]

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
    start_ids = _start_values(pushed, start, value) if labels.schema is None else None
    start_label = None
    found_keys = _label_keys(pushed, start, labels, value)
    if found_keys is not None:
        start_label, start_ids = found_keys
    if not isinstance(start_ids, tuple):
        # From many start vertices (every one, a label's, those a condition finds), a condition
        # on one single edge alone is a mask of the stored edges its hop may take (computed
        # once per graph version and condition text, and kept), not a filter of one built row
        # per edge: 1 M rows made and filtered took 400 ms where the mask's hop makes the 13 k
        # that pass. From start vertices given by their ids it stays a filter of the few rows
        # made (a mask reads every edge).
        hop_of = {variable: at for at, variable in labels.edge_at.items()}
        edge_only = [(c, v) for c, v in by_var if len(v) == 1 and single.get(next(iter(v)))
                     and next(iter(v)) in hop_of]
        for c, v in edge_only:
            masks.setdefault(hop_of[next(iter(v))], {}).setdefault("edges", []).append(c)
        rest = [c for c in rest if not any(c is e for e, _ in edge_only)]
    restrict = labels.restriction(start, '"' + start.replace('"', '""') + '"')
    if (pushed or restrict) and start_ids is None:
        name = vertices_name(graph)
        where = " AND ".join([f"({generate(labels.stored_sql(c, scope))})" for c in pushed]
                             + ([restrict] if restrict else []))
        start_ids = RelationalQuery(
            f'SELECT "{start}".id FROM {name} AS "{start}" WHERE {where}',
            ((name, GraphTableScan(graph, "vertices")),))

    def mask(found: list[exp.Expression], role: str, variable: str) -> RelationalQuery:
        kind = "edge_positions" if role == "edges" else "vertex_positions"
        relation = table_name(entry, kind)
        alias = '"' + variable.replace('"', '""') + '"'
        restrict = labels.restriction(variable, alias)
        where = " AND ".join([f"({generate(labels.stored_sql(c, scope))})" for c in found]
                             + ([restrict] if restrict else []))
        return RelationalQuery(f"SELECT {alias}.{POSITION} FROM {relation} AS {alias} "
                               f"WHERE {where}", ((relation, GraphTableScan(graph, kind)),),
                               ((relation, f"{graph}.{kind.split('_')[0]}s"),))

    hops = []
    taken: list[exp.Expression] = []  # conditions checked as a hop's ends, not after the match
    ended: list[str] = []  # and how EXPLAIN shows them
    backwards = start != first
    # Positions, not nodes: two anonymous () patterns are equal as AST nodes but distinct here.
    positions = list(range(len(pattern))) if not backwards else list(
        reversed(range(len(pattern))))
    bound = {start}
    for i in range(1, len(positions), 2):
        at = positions[i]
        edge = pattern[at]
        target = vertices[positions[i + 1] // 2]
        direction = edge.args["direction"] if not backwards else _FLIP[edge.args["direction"]]
        name = edge.this.name if edge.this is not None else None
        low, high = edge.args["low"], edge.args["high"]
        if high == UNBOUNDED:  # a selective search ends by itself; bound it by the graph's size
            high = max(entry.num_vertices, 1) * k + 1
        found = {}
        roles = {"edges": labels.edge_variable(at)}
        for node, role in ((edge.args.get("source"), "sources"),
                           (edge.args.get("target"), "targets")):
            if node is not None:
                roles[role] = node.this.name if node.this is not None else f"__inner{at}{role}"
        for role, variable in roles.items():
            parts = masks.get(at, {}).get(role, [])
            if parts or labels.restriction(variable, "x"):
                if backwards and role != "edges":  # a reversed step leaves what it reached
                    role = "targets" if role == "sources" else "sources"
                found[role] = mask(parts, role, variable)
        # The target's own conditions and labels: the vertices the hop may end at, checked
        # right after it (a shortest search stops once it has reached them all).
        own = [c for c, v in by_var if v == {target}] if target not in bound else []
        if (own or labels.restriction(target, "x")) and target not in bound:
            found["ends"] = mask(own, "ends", target)
            taken.extend(own)
            if own:
                ended.append(f" ends {target} WHERE " + " AND ".join(c.sql() for c in own))
        bound.add(target)
        hops.append(Hop(target, direction, low, high,
                        name if name and single[name] else None, **found))

    rest = [c for c in rest if not any(c is t for t in taken)]
    outputs = table.args.get("columns") or _default_columns(
        pattern, vertices, edges, labels.schema is not None)
    outputs = expand_outputs(outputs, labels.own_properties if labels.schema is not None
                             else lambda v: columns[v], kinds, path)
    outputs = [_path_functions(c, path) for c in outputs]
    names = [_output_of(c, path, table).lower() for c in outputs]
    referenced: set[tuple[str, str]] = set()
    for node in rest + list(outputs):
        referenced |= {scope.resolve(c) for c in node.find_all(exp.Column)}
    vertex_props, edge_props = [], []
    for var, prop in sorted(referenced):
        if var in inner:
            raise BinderError(f"'{var}.{prop}': {var} is a vertex inside a quantified pattern, "
                              "one per step; vertices(p) of a path variable lists them")
        if var in edges:
            if not single[var]:
                raise NotSupportedError(f"'{var}.{prop}': a variable-length edge ({var}) has no "
                                        "single set of properties; name the path (MATCH p = "
                                        "...) for edges(p)")
            edge_props.append((var, prop))
        else:
            vertex_props.append((var, prop))
    if not vertex_props and not edge_props:
        vertex_props.append((start, "id"))  # keep the row count (count(*) over a pattern)
    stored = labels.stored(vertex_props + edge_props)

    text = _pattern_text(table)
    if pushed:
        text += f" start {start} WHERE " + " AND ".join(c.sql() for c in pushed)
    text += "".join(ended)
    alias = table.args.get("alias")
    # without an alias, the relational engine names it as any subquery (unnamed_subquery, ...)
    alias_sql = f" AS {alias.sql(dialect='duckdb')}" if alias is not None else ""
    plain = [c.this if isinstance(c, exp.Alias) else c for c in outputs]
    result = fresh()
    shape = dict(path=path, mode=mode, k=k, reversed=backwards, stored=stored,
                 start_label=start_label)
    if not rest and all(isinstance(c, exp.Column) for c in plain) and \
            len(set(names)) == len(names):
        # COLUMNS only names properties: the operator's result is the table, named as asked
        named = tuple((output_name(c) if not isinstance(c, exp.Column) or c.table.lower()
                       != (path or "").lower() else _path_output(c, table),
                       "{}.{}".format(*scope.resolve(p))) for c, p in zip(outputs, plain))
        node = PatternMatch(graph, start, start_ids, tuple(hops), tuple(vertex_props),
                            tuple(edge_props), text, named, **shape)
        text = f"{result}{alias_sql}" if alias is not None else f"(SELECT * FROM {result})"
        return text, inputs + [(result, node)]
    node = PatternMatch(graph, start, start_ids, tuple(hops), tuple(vertex_props),
                        tuple(edge_props), text, **shape)
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
                       + '"' + _output_of(c, path, table).replace('"', '""') + '"'
                       for c in outputs)
    where = (" WHERE " + " AND ".join(f"({over_result(c)})" for c in rest)) if rest else ""
    return f"(SELECT {select} FROM {result} AS __pattern{where}){alias_sql}", inputs


def shown_properties(table: GraphTable, ctx: Context, variable: str) -> list[str]:
    """The properties ``variable`` of ``table``'s pattern shows in ``x.*``: its labels' (a
    property graph's), or the graph's vertex or edge columns."""
    graph = ctx.graph(table.this.name)
    path = table.args["path"].name if table.args.get("path") is not None else None
    pattern = list(table.args["pattern"])
    vertices, edges, _single, inner = _var_names(pattern, path)
    labels = _Labels(ctx.schema(graph), graph, pattern, vertices)
    if labels.schema is not None:
        return labels.own_properties(variable)
    return ctx.graph_columns(graph, "vertices" if variable in vertices + inner else "edges")


def _path_output(column: exp.Column, table: GraphTable) -> str:
    """The name a path function's column takes without an alias: as written (``vertices(p)``)."""
    names = {"length": "path_length"}
    return f"{names.get(column.name, column.name)}({column.table})"


def _output_of(node: exp.Expression, path: str | None, table: GraphTable) -> str:
    if path is not None and isinstance(node, exp.Column) and node.table.lower() == path.lower():
        return _path_output(node, table)
    return output_name(node)
