"""Binding: a parsed query becomes graph operators plus one SQL statement that DuckDB runs.

The relational part of a query is the user's own SQL, run by DuckDB (:mod:`graphdb.executor.
relational`). What DuckDB cannot know is bound here, and each piece of the text that names it is
replaced (the parser recorded where each piece is, :mod:`.dialect`):

- a graph function call, ``bfs(g, 1) AS b``, becomes ``<relation> AS b``: the relation is the
  :class:`~graphdb.executor.plan.AlgorithmScan`'s result. Its arguments are values (literals,
  parameters), scalar subqueries (``bfs(g, (SELECT ...))``, a query of their own run first), or,
  when they name columns of tables before it (``FROM persons p, LATERAL khop(g, p.id, 2)``),
  the multi-source form: one operator run for the distinct values of a query over those tables
  (with the WHERE conditions that apply to them), its rows joined back per row by a LATERAL
  subquery that DuckDB decorrelates into a hash join;
- ``g.vertices``, ``g.edges`` and ``g.adjacency`` become their tables' names (kept registered in
  DuckDB while the graph version lives), or, on a large graph with ``src = x`` /
  ``src IN (...)`` in WHERE, a scan that reads only those vertices' rows of the CSR (the filter
  stays in the SQL too);
- ``GRAPH_TABLE (...)`` becomes a derived table over a pattern operator's result
  (:mod:`.pattern`);
- built-in table functions (``settings()``) and registered tables become relations;
- parameters become typed literals (:mod:`.parameters`), numbered by their place in the text;
- select-list expressions without an alias are named by their text, as written.

Everything else is left to DuckDB, whose errors the front end translates
(:mod:`.errors`). Binding never changes the parsed statement, which :func:`.parser.parse` shares.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
from sqlglot import exp

from graphdb.executor import algorithms
from graphdb.executor.graph_tables import table_name
from graphdb.executor.physical import pushdown
from graphdb.executor.plan import (
    AlgorithmScan,
    GraphTableScan,
    PatternMatch,
    PlanNode,
    RelationalQuery,
    StoredTableScan,
    TargetRows,
    ValuesScan,
    lateral_column,
)
from graphdb.executor.plan_tables import TableRows
from graphdb.executor.property_graph import user_id_type

from .._version import __version__
from ..errors import BinderError
from .dialect import GraphTable, SubgraphRef, span
from .lookups import key_conditions
from .parameters import Parameters, placeholders, sql_literal
from .pattern import bind_graph_table, conjuncts
from .replacement import is_file_name, python_variable
from .subgraph import bind_subgraph
from .tables import (
    GRAPH_TABLES,
    LATERAL,
    Context,
    bind_algorithm,
    close_to_graph_function,
    constant,
    graph_argument,
    outer_columns,
    suggest,
    unknown_function,
)
from .views import expand_views

__all__ = ["bind_query"]

_SPACES = re.compile(r"\s+")

#: Rows of g.edges / g.adjacency from which a ``src = x`` filter is applied by reading those
#: vertices' rows of the CSR (a statement of its own, ~1 ms to register with DuckDB) rather than
#: by DuckDB scanning the whole resident table (~1 ns a row: 4 ms at this size, growing with it).
PUSHDOWN_MIN_ROWS = 1 << 22

_INT64_MAX = (1 << 63) - 1
#: The argument of a set of sources (``bfs(g, sources => [1, 2, 3])``) and the output column
#: that says which source each row came from.
SOURCES, SOURCE = "sources", "source"


@dataclass(frozen=True)
class _Edit:
    """Replace ``text[start:stop]`` by ``text``; the relations it reads come with it."""

    start: int
    stop: int
    text: str
    inputs: tuple[tuple[str, PlanNode], ...] = ()
    shown: tuple[tuple[str, str], ...] = ()


def bind_query(ast: exp.Expression, text: str, parameters: Any, ctx: Context) -> RelationalQuery:
    """The plan of a query: a :class:`RelationalQuery` over its graph operators."""
    expanded = expand_views(ast, text, ctx)
    if expanded is not None:
        ast, text = expanded
    return _Binder(ast, text, Parameters(ast, parameters, _Outline.of(ast).placeholders),
                   ctx).bind()


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _qualifier(item: exp.Expression) -> str:
    """The name a FROM item is referred to by (its alias, else its table or function name)."""
    alias = item.args.get("alias")
    if alias is not None and alias.name:
        return alias.name
    if isinstance(item, exp.Table):
        return item.this.name if isinstance(item.this, exp.Func) else item.name
    if isinstance(item, exp.Lateral) and isinstance(item.this, exp.Func):
        return item.this.name
    return ""


def _from_items(select: exp.Select) -> list[exp.Expression]:
    """The FROM items of a SELECT: the first, then each join's."""
    source = select.args.get("from_") or select.args.get("from")
    return ([source.this] if source is not None else []) + [
        j.this for j in select.args.get("joins") or []]


@dataclass(frozen=True)
class _Outline:
    """What binding looks for in a statement, found in one walk and kept with the (shared,
    unchanging) parsed statement: a program that runs one query many times walks it once."""

    selects: tuple[exp.Select, ...]
    ctes: frozenset[str]
    placeholders: tuple[exp.Expression, ...]
    references: tuple[exp.Expression, ...]  # FROM items to bind, shortest first
    qualified: tuple[exp.Column, ...]  # columns like g.vertices.id
    versions: tuple[exp.Expression, ...]  # version(): graphdb's, not DuckDB's
    limits: tuple[exp.Expression, ...]  # the values of LIMIT and OFFSET clauses

    @classmethod
    def of(cls, ast: exp.Expression) -> "_Outline":
        outline = ast.meta.get("graphdb_outline")
        if outline is None:
            selects, ctes, found, references, qualified, versions, limits = \
                [], set(), [], [], [], [], []
            for node in ast.walk():
                if isinstance(node, exp.Select):
                    selects.append(node)
                elif isinstance(node, exp.CTE):
                    ctes.add(node.alias.lower())
                elif isinstance(node, (exp.Placeholder, exp.Parameter)):
                    found.append(node)
                elif isinstance(node, (exp.Table, exp.Lateral, GraphTable)) and span(node):
                    references.append(node)
                elif isinstance(node, exp.Column) and node.args.get("db") is not None:
                    qualified.append(node)
                elif isinstance(node, exp.CurrentVersion) and span(node):
                    versions.append(node)
                elif isinstance(node, (exp.Limit, exp.Offset)) and node.expression is not None:
                    limits.append(node.expression)
            references.sort(key=lambda n: span(n)[1] - span(n)[0])
            outline = cls(tuple(selects), frozenset(ctes), tuple(placeholders(ast)),
                          tuple(references), tuple(qualified), tuple(versions), tuple(limits))
            ast.meta["graphdb_outline"] = outline
        return outline


class _Binder:
    def __init__(self, ast: exp.Expression, text: str, params: Parameters, ctx: Context):
        self.ast, self.text, self.params, self.ctx = ast, text, params, ctx
        self.outline = _Outline.of(ast)
        self.edits: list[_Edit] = []
        self.ctes = self.outline.ctes
        self._count = 0
        self._full_names: set[int] = set()  # graph tables referred to as g.vertices

    # -- the text -------------------------------------------------------------------------------
    def fresh(self) -> str:
        self._count += 1
        return f"__graphdb_r{self._count}"

    def _edit(self, node: exp.Expression, text: str, inputs=(), shown=()) -> None:
        start, end = span(node)
        self.edits.append(_Edit(start, end + 1, text, tuple(inputs), tuple(shown)))

    def _extent(self, node: exp.Expression) -> tuple[int, int]:
        """(first, last) character of ``node``: its span, else the widest of its parts'
        (with the closing parentheses that follow them)."""
        where = span(node)
        if where is not None:
            return where
        starts, ends = [], []
        for part in node.walk():
            where = span(part)
            if where is None and isinstance(part, (exp.Identifier, exp.Literal)) and part._meta:
                where = (part._meta.get("start"), part._meta.get("end"))
            if where is not None and where[0] is not None:
                starts.append(where[0])
                ends.append(where[1])
        if not starts:
            raise BinderError(f"cannot place {node.sql()} in the query text")
        start, end = min(starts), max(ends)
        while end + 1 < len(self.text) and \
                self.text[start:end + 1].count("(") > self.text[start:end + 1].count(")"):
            end += 1
        return start, end

    def render(self, start: int, stop: int) -> tuple[str, dict[str, PlanNode], dict[str, str]]:
        """``text[start:stop]`` with the edits inside it made: (SQL, inputs, shown)."""
        inside = sorted((e for e in self.edits if start <= e.start and e.stop <= stop
                         and (e.start < stop or e.start == e.stop)),
                        key=lambda e: (e.start, -e.stop))
        parts, inputs, shown, at = [], {}, {}, start
        for edit in inside:
            if edit.start < at or (edit.start == edit.stop and edit.start < at):
                continue  # inside an edit already made
            parts.append(self.text[at:edit.start])
            parts.append(edit.text)
            for name, node in edit.inputs:
                inputs.setdefault(name, node)
            shown.update(edit.shown)
            at = edit.stop
        parts.append(self.text[at:stop])
        return "".join(parts), inputs, shown

    def query(self, start: int, stop: int, head: str = "", tail: str = "") -> RelationalQuery:
        sql, inputs, shown = self.render(start, stop)
        return RelationalQuery(head + sql + tail, tuple(inputs.items()), tuple(shown.items()))

    def generate(self, node: exp.Expression) -> str:
        """``node`` (which may be a copy) as DuckDB SQL, its parameters filled in."""
        marks: dict[str, str] = {}

        def mark(part: exp.Expression) -> exp.Expression:
            if not isinstance(part, (exp.Placeholder, exp.Parameter)):
                return part
            name = f"__graphdb_parameter_{len(marks)}__"
            marks[name] = self.params.sql(part)
            return exp.column(name)

        sql = node.transform(mark).sql(dialect="duckdb")
        for mark, value in marks.items():
            sql = sql.replace(mark, value)
        return sql

    # -- binding --------------------------------------------------------------------------------
    def bind(self) -> RelationalQuery:
        outline = self.outline
        for select in outline.selects:
            self._check_names(select)
        for node in outline.limits:  # no table has 2^63 rows: beyond, no limit at all
            value = self._constant(node)
            where = self._place(node)
            if value is not None and isinstance(value[0], int) and value[0] > _INT64_MAX and \
                    where is not None:
                self.edits.append(_Edit(where[0], where[1] + 1, str(_INT64_MAX)))
        done = {e.start for e in self.edits}
        for node in outline.placeholders:
            if span(node) is not None and span(node)[0] not in done:
                self._edit(node, self.params.sql(node))
        later = []
        for node in outline.references:
            if not self._reference(node):
                later.append(node)
        for node in sorted(later, key=lambda n: span(n)[0]):  # LATERALs, left to right
            self._function(self._call(node), node, lateral_ok=True)
        for column in outline.qualified:
            self._qualified_column(column)
        for node in outline.versions:
            self._edit(node, sql_literal(__version__))
        self._name_outputs()
        return self._direct(self.query(0, len(self.text)))

    def _check_names(self, select: exp.Select) -> None:
        """Two FROM items of one SELECT may not go by the same name; two graph tables of one
        name (``social.vertices``, ``cities.vertices``) go by their full names."""
        items = _from_items(select)
        graph_tables = [i for i in items if isinstance(i, exp.Table) and i.args.get("db")
                        is not None and i.args.get("alias") is None]
        names = [_qualifier(i).lower() for i in graph_tables]
        for item, name in zip(graph_tables, names):
            if names.count(name) > 1:
                self._full_names.add(id(item))
        seen = set()
        for item in items:
            name = _qualifier(item).lower()
            if id(item) in self._full_names:
                name = f"{item.args['db'].name}.{name}".lower()
            if name and name in seen:
                raise BinderError(f"table name '{_qualifier(item)}' is used twice in FROM; give "
                                  "one an alias")
            seen.add(name)

    @staticmethod
    def _call(node: exp.Expression) -> exp.Func:
        return node.this

    def _reference(self, node: exp.Expression) -> bool:
        """Bind a FROM item; False when it must wait (a call whose arguments name columns)."""
        if isinstance(node, GraphTable):
            sql, inputs = bind_graph_table(node, self.ctx, self.generate, self._vertices_name,
                                           self.fresh, self._constant)
            self._edit(node, sql, inputs, [(inputs[-1][0], "GRAPH_TABLE " + node.this.name)])
            return True
        call = node.this
        if isinstance(node, exp.Lateral) or isinstance(call, exp.Func):
            if not isinstance(call, exp.Func) or isinstance(node.parent, exp.Lateral):
                return True
            name = call.name if isinstance(call, exp.Anonymous) else call.sql_name()
            if algorithms.get(name) is not None:
                if self._correlated(call):
                    return False
                self._function(call, node, lateral_ok=False)
            elif close_to_graph_function(name) and name.lower() not in self.ctx.builtins:
                # a graph function misspelt: DuckDB would suggest one of its own instead
                raise unknown_function(name)
            elif name.lower() in self.ctx.builtins and not isinstance(node, exp.Lateral):
                function = self.ctx.builtins[name.lower()]
                args = call.expressions if isinstance(call, exp.Anonymous) else []
                if args and not getattr(function, "takes_arguments", False):
                    raise BinderError(f"{name.lower()}() takes no arguments")
                values = [self._constant(a) for a in args]  # graph_changes('g')
                if any(v is None for v in values):
                    raise BinderError(f"{name.lower()}()'s arguments are constants")
                self._values(node, name.lower(), function(*[v[0] for v in values]),
                             name.lower())
            return True
        if node.args.get("db") is not None and not self._qualified_table(node):
            self._graph_table(node)
            return True
        if node.args.get("db") is None:
            self._named_table(node)
        return True

    def _vertices_name(self, graph: str) -> str:
        return table_name(self.ctx.catalog.get(graph), "vertices")

    def _values(self, node: exp.Expression, name: str, table, default: str) -> None:
        relation = self.fresh()
        alias = node.args.get("alias")
        text = relation + " AS " + (alias.sql(dialect="duckdb") if alias is not None
                                    else _quote(default))
        self._edit(node, text, [(relation, ValuesScan(name, table))], [(relation, f"{name}()")])

    def _named_table(self, node: exp.Table) -> None:
        name = node.name
        lower = name.lower()
        if lower in self.ctes:
            return
        registered = self.ctx.tables.get(lower)
        if registered is not None:  # the program's table, kept under its own name
            relation = f"__graphdb_table_{lower}"
            alias = node.args.get("alias")
            text = relation + " AS " + (alias.sql(dialect="duckdb") if alias is not None
                                        else _quote(name))
            if isinstance(registered, TargetRows):  # the rows a write picks from
                source, shown = registered, f"{registered.graph}.{registered.table}"
            elif isinstance(registered, TableRows):  # a stored table's, likewise
                source, shown = registered, registered.table
            else:
                source, shown = ValuesScan(lower, registered, kept=True), name
            self._edit(node, text, [(relation, source)], [(relation, shown)])
            return
        stored = self.ctx.catalog.find_table(name)
        if stored is not None:
            self._stored_table(node, stored)
            return
        if lower in self.ctx.builtins:
            self._values(node, lower, self.ctx.builtins[lower](), name)
            return
        graphs = self.ctx.catalog.names()
        if self.ctx.is_graph(name):
            raise BinderError(f"'{name}' is a graph, not a table: query {name}.vertices, "
                              f"{name}.edges, a function such as bfs({name}, 1), or "
                              f"GRAPH_TABLE ({name} MATCH ...)")
        if algorithms.get(name) is not None:
            raise BinderError(f"{name} is a table function: write {name}(graph, ...)")
        if is_file_name(name, bool(node.this.args.get("quoted"))):
            return  # FROM 'people.csv': DuckDB reads the file (a replacement scan)
        value = python_variable(name)
        if value is not None:  # FROM df: the caller's DataFrame or Arrow table, as it is now
            relation = self.fresh()
            alias = node.args.get("alias")
            text = relation + " AS " + (alias.sql(dialect="duckdb") if alias is not None
                                        else _quote(name))
            from ..interop import plain_table

            table = plain_table(value, f"FROM {name}")
            self._edit(node, text, [(relation, ValuesScan(lower, table))], [(relation, name)])
            return
        known = sorted(self.ctes) + sorted(self.ctx.tables) + \
            self.ctx.catalog.tables().names() + [f"{g}.{t}" for g in graphs for t in GRAPH_TABLES]
        raise BinderError(f"unknown table '{name}'" + suggest(name, known, "tables"))

    def _qualified_table(self, node: exp.Table) -> bool:
        """Bind ``schema.table`` (a stored table of a schema, or of ``main``) or
        ``information_schema.x``; False when the qualifier names a graph (``g.vertices``)."""
        schema = node.args["db"].name
        if node.args.get("catalog") is not None or self.ctx.is_graph(schema):
            return False
        if schema.lower() == "information_schema":
            self._values(node, f"information_schema.{node.name.lower()}",
                         self.ctx.information_schema(node.name), node.name)
            return True
        stored = self.ctx.catalog.find_table(f"{schema}.{node.name}")
        if stored is None:
            tables = self.ctx.catalog.tables()
            if schema.lower() != "main" and schema.lower() not in (
                    s.lower() for s in tables.schemas()):
                return False  # g.vertices of a graph g that may be misspelled: said there
            raise BinderError(f"unknown table '{schema}.{node.name}'"
                              + suggest(f"{schema}.{node.name}", tables.names(), "tables"))
        self._stored_table(node, stored)
        return True

    def _stored_table(self, node: exp.Table, entry) -> None:
        """A stored table: its rows at the statement's version, kept registered in the
        relational engine under one name per generation (or only the rows a key lookup
        finds, :mod:`.lookups`)."""
        alias = node.args.get("alias")
        alias_sql = alias.sql(dialect="duckdb") if alias is not None else _quote(node.name)
        key = entry.key_columns
        found = key_conditions(node, key, [entry.schema.field(c).type for c in key],
                               self._constant)
        if found is None:
            relation, keys, exact = f"__graphdb_stored_{entry.table_id}", None, False
        else:
            relation, (keys, exact) = self.fresh(), found
        self._edit(node, f"{relation} AS {alias_sql}",
                   [(relation, StoredTableScan(entry.name, keys, exact))],
                   [(relation, entry.name)])

    # -- g.vertices, g.edges, g.adjacency -------------------------------------------------------
    def _graph_table(self, node: exp.Table) -> None:
        graph = self.ctx.graph(node.args["db"].name)
        which = node.name.lower()
        schema = self.ctx.schema(graph)
        element = schema.element_of(node.name) if schema is not None and \
            which not in GRAPH_TABLES and node.args.get("catalog") is None else None
        if element is not None:  # a property graph's g.Person, g.knows
            label = element.name
            entry = self.ctx.catalog.get(graph)
            relation = table_name(entry, f"label_{label}")
            alias = node.args.get("alias")
            alias_sql = alias.sql(dialect="duckdb") if alias is not None else _quote(
                node.name if id(node) not in self._full_names else f"{graph}.{node.name}")
            scan = GraphTableScan(graph, f"label:{label}")
            if element in schema.vertex_labels and not element.key.startswith("__"):
                kind = pa.string() if element.key_type in ("string", "large_string") else \
                    pa.int64() if element.key_type.startswith(("int", "uint")) else pa.null()
                found = key_conditions(node, (element.key,), [kind], self._constant)
                if found is not None:  # a lookup by the label's key
                    relation = self.fresh()
                    scan = GraphTableScan(graph, f"label:{label}", found[0], found[1])
            self._edit(node, f"{relation} AS {alias_sql}", [(relation, scan)],
                       [(relation, f"{graph}.{node.name}")])
            return
        if which not in GRAPH_TABLES or node.args.get("catalog") is not None:
            known = list(GRAPH_TABLES) + ([v.name for v in schema.vertex_labels
                                           + schema.edge_labels] if schema else [])
            raise BinderError(f"graph '{graph}' has no table '{node.name}'"
                              + suggest(which, known, "tables"))
        alias = node.args.get("alias")
        alias_sql = alias.sql(dialect="duckdb") if alias is not None else _quote(
            f"{node.args['db'].name}.{which}" if id(node) in self._full_names else which)
        entry = self.ctx.catalog.get(graph)
        rows = entry.num_edges if which == "adjacency" or entry.directed else \
            entry.num_edges // 2
        if which == "vertices":  # a lookup by vertex id
            kind = pa.string() if user_id_type(entry) == "string" else pa.int64()
            found = key_conditions(node, ("id",), [kind], self._constant)
            if found is not None:
                relation = self.fresh()
                self._edit(node, f"{relation} AS {alias_sql}",
                           [(relation, GraphTableScan(graph, which, found[0], found[1]))],
                           [(relation, f"{graph}.{which}")])
                return
        sources = None
        if which != "vertices" and rows >= PUSHDOWN_MIN_ROWS:  # src = c, src IN (...): the CSR
            kind = pa.string() if user_id_type(entry) == "string" else pa.int64()
            found = key_conditions(node, ("src",), [kind], self._constant)
            sources = list(found[0]) if found is not None else None
        if sources is not None:  # only values of the ids' type: others are DuckDB's to refuse
            strings = user_id_type(entry) == "string"
            if not all(isinstance(v, str) if strings else isinstance(v, int)
                       and not isinstance(v, bool) for v in sources):
                sources = None
        if sources is None:
            relation = table_name(self.ctx.catalog.get(graph), which)
            scan = GraphTableScan(graph, which)
        else:
            relation = self.fresh()
            scan = GraphTableScan(graph, which, tuple(sources))
        self._edit(node, f"{relation} AS {alias_sql}", [(relation, scan)],
                   [(relation, f"{graph}.{which}")])

    def _place(self, node: exp.Expression) -> tuple[int, int] | None:
        """(first, last) character of a literal or a parameter, if known."""
        where = span(node)
        if where is None and isinstance(node, exp.Literal) and node._meta:
            where = (node._meta.get("start"), node._meta.get("end"))
        return where if where is not None and where[0] is not None else None

    def _constant(self, node: exp.Expression) -> tuple[Any] | None:
        """(value,) of a literal or a parameter, else None."""
        if isinstance(node, (exp.Placeholder, exp.Parameter)):
            value = self.params.value(node)
            return None if isinstance(value, (list, tuple, dict)) else (value,)
        known, value = constant(node)
        return (value,) if known else None

    def _qualified_column(self, column: exp.Column) -> None:
        """``g.vertices.id`` -> ``vertices.id`` (the default qualifier of ``FROM g.vertices``)."""
        db, table = column.args["db"], column.args["table"]
        if not self.ctx.is_graph(db.name) or table.name.lower() not in GRAPH_TABLES:
            return
        start, end = db._meta.get("start"), table._meta.get("end")
        if start is None or end is None:
            return
        name = table.name.lower()
        select = column.parent_select
        while select is not None:
            for item in _from_items(select):
                if isinstance(item, exp.Table) and item.args.get("db") is not None and \
                        item.args["db"].name.lower() == db.name.lower() and \
                        item.name.lower() == name and id(item) in self._full_names:
                    name = f"{item.args['db'].name}.{name}"
            select = select.parent_select
        self.edits.append(_Edit(start, end + 1, _quote(name)))

    # -- graph functions ------------------------------------------------------------------------
    def _correlated(self, call: exp.Func) -> bool:
        """Whether an argument of ``call`` (after the graph) names a column: the LATERAL form."""
        return any(self._columns(self._value_node(a)) for a in call.expressions[1:])

    @staticmethod
    def _value_node(arg: exp.Expression) -> exp.Expression:
        return arg.expression if isinstance(arg, (exp.Kwarg, exp.PropertyEQ)) else arg

    _columns = staticmethod(outer_columns)

    def _function(self, call: exp.Func, item: exp.Expression, lateral_ok: bool) -> None:
        name = (call.name if isinstance(call, exp.Anonymous) else call.sql_name()).lower()
        spec = algorithms.get(name)
        args = list(call.expressions) if isinstance(call, exp.Anonymous) else []
        if not args or isinstance(args[0], (exp.Kwarg, exp.PropertyEQ)):
            raise BinderError(f"{name}() needs a graph as its first argument: {spec.signature()}")
        subgraph = None
        if isinstance(args[0], SubgraphRef):
            subgraph = bind_subgraph(args[0], self.ctx, self.text, self._render_piece,
                                     self._columns, self._rename_column)
            graph = subgraph.graph
        else:
            graph = self.ctx.graph(graph_argument(args[0], name))
        positional, named, seen_named, per_row = [], {}, False, {}
        shown = [graph if subgraph is None else subgraph.text]
        many = None  # the query of a set of sources (sources => [1, 2] or a subquery)
        for arg in args[1:]:
            value_node = self._value_node(arg)
            if value_node is not arg and arg.this.name.lower() == SOURCES:
                if spec.many is None:
                    raise BinderError(f"{name}() takes no set of sources: {spec.signature()}")
                many = self._set_query(value_node)
                named[spec.many[0]] = LATERAL
                shown.append(f"{SOURCES} => {self._source_text(value_node)}")
                seen_named = True
                continue
            if value_node is not arg:
                seen_named = True
                key = arg.this.name
                if key.lower() in (k.lower() for k in named):
                    raise BinderError(f"{name}(): argument '{key.lower()}' given twice"
                                      + (" (source and sources)" if many is not None else ""))
                where = f"{name}(): argument '{key}'"
            elif seen_named:
                raise BinderError(f"{name}(): positional arguments must come before named ones")
            else:
                index = len(positional)
                where = (f"{name}(): argument '{spec.params[index].name}'"
                         if index < len(spec.params) else f"{name}(): argument")
            value = self._argument(value_node, where, lateral_ok)
            text = self._source_text(value_node)
            if value is LATERAL:
                param = (key.lower() if value_node is not arg else
                         spec.params[len(positional)].name if len(positional) < len(spec.params)
                         else "")
                per_row[param] = value_node
            if value_node is not arg:
                named[key] = value
                shown.append(f"{key} => {text}")
            else:
                positional.append(value)
                shown.append(text)
        node = bind_algorithm(name, graph, positional, named)
        if subgraph is not None:
            node = replace(node, subgraph=subgraph)
        relation = self.fresh()
        call_text = f"{name}({', '.join(shown)})"
        alias = item.args.get("alias")
        alias_sql = alias.sql(dialect="duckdb") if alias is not None and alias.name else name
        if alias is not None and not alias.name and alias.args.get("columns"):
            alias_sql = name + alias.sql(dialect="duckdb")
        if many is not None:  # one run for a set of sources: their rows, with a source column
            if len(node.lateral) != 1:
                raise BinderError(f"{name}(): with sources => ..., the other arguments must be "
                                  "the same for every source (not columns of a table before it)")
            node = replace(node, sources=many)
            columns = ", ".join(_quote(c.name) for c in spec.columns)
            text = (f"(SELECT {_quote(lateral_column(node.lateral[0]))} AS {_quote(SOURCE)}, "
                    f"{columns} FROM {relation}) AS {alias_sql}")
            self._edit(item, text, [(relation, node)], [(relation, call_text)])
            return
        if not node.lateral:
            self._edit(item, f"{relation} AS {alias_sql}", [(relation, node)],
                       [(relation, call_text)])
            return
        expressions = [per_row[p] for p in node.lateral]
        sources, same_level = self._sources(item, expressions, name)
        node = replace(node, sources=sources)
        columns = ", ".join(_quote(c.name) for c in spec.columns)
        match = " AND ".join(
            f"{relation}.{_quote(lateral_column(p))} = ({self._render_node(e)})"
            for p, e in zip(node.lateral, expressions))
        text = (("LATERAL " if same_level else "")
                + f"(SELECT {columns} FROM {relation} WHERE {match}) AS {alias_sql}")
        self._edit(item, text, [(relation, node)], [(relation, call_text)])

    def _set_query(self, node: exp.Expression) -> RelationalQuery:
        """The query listing a set of values: the rows of a subquery (its first column), or
        the elements of a list (``[1, 2, 3]``, a parameter bound to a list or tuple)."""
        inner = node
        while isinstance(inner, exp.Paren):
            inner = inner.this
        start, end = self._extent(node)
        if isinstance(inner, (exp.Subquery, exp.Select)):
            return self.query(start, end + 1, "SELECT * FROM ", " AS __graphdb_subquery")
        if self._columns(node):
            raise BinderError("sources => ... takes a list ([1, 2, 3]) or a subquery, not a "
                              "column: write LATERAL bfs(g, t.column) to run per row")
        return self.query(start, end + 1, "SELECT unnest(", ") AS value")

    def _source_text(self, node: exp.Expression) -> str:
        try:
            start, end = self._extent(node)
        except BinderError:
            return node.sql(dialect="duckdb")
        return _SPACES.sub(" ", self.text[start:end + 1])

    def _rename_column(self, column: exp.Column, sql: str) -> None:
        """Write ``column`` (``v.age``) as ``sql`` where the statement's text is rendered."""
        first = column.args.get("table") or column.this
        start, end = first._meta.get("start"), column.this._meta.get("end")
        if start is None or end is None:
            raise BinderError(f"cannot place {column.sql()} in the query text")
        self.edits.append(_Edit(start, end + 1, sql))

    def _render_piece(self, node: exp.Expression) -> tuple[str, dict, dict]:
        """(SQL, relations read, how they show) of a piece of the statement, edits made."""
        start, end = self._extent(node)
        return self.render(start, end + 1)

    def _render_node(self, node: exp.Expression) -> str:
        start, end = self._extent(node)
        return self.render(start, end + 1)[0]

    def _argument(self, node: exp.Expression, where: str, lateral_ok: bool) -> Any:
        """A graph function argument: its value, a query for its value (a subquery or an
        expression), or :data:`LATERAL` (it names columns: one value per row)."""
        if isinstance(node, (exp.Placeholder, exp.Parameter)):
            return self.params.value(node)
        known, value = constant(node)
        if known:
            return value
        inner = node
        while isinstance(inner, exp.Paren):
            inner = inner.this
        if isinstance(inner, exp.Subquery) or isinstance(inner, exp.Select):
            start, end = self._extent(node)
            return self.query(start, end + 1, "SELECT * FROM ", " AS __graphdb_subquery")
        if self._columns(node):
            if not lateral_ok:
                raise BinderError(f"{where} names a column, which only a table before it in "
                                  "FROM can give")
            return LATERAL
        start, end = self._extent(node)
        return self.query(start, end + 1, "SELECT ")

    def _sources(self, item: exp.Expression, expressions: list[exp.Expression], name: str
                 ) -> tuple[RelationalQuery, bool]:
        """The query listing the distinct arguments of a LATERAL call, and whether the tables
        it reads are in the same FROM as the call (else in a query around it)."""
        qualifiers = {c.table.lower() for e in expressions for c in self._columns(e) if c.table}
        inner = item
        select = item.parent_select
        same_level = True
        while select is not None:
            source = select.args.get("from_") or select.args.get("from")
            joins = select.args.get("joins") or []
            items = _from_items(select)
            position = next((i for i, it in enumerate(items)
                             if any(part is inner for part in it.walk())), len(items))
            visible = items[:position]
            names = {_qualifier(it).lower() for it in visible}
            if visible and qualifiers <= names:
                last = joins[position - 2] if position >= 2 else source.this
                start, stop = span(source.this)[0], self._extent(last)[1] + 1
                conditions = self._source_conditions(select, names, item)
                head = "SELECT DISTINCT " + ", ".join(self._render_node(e) for e in expressions)
                where = " WHERE " + " AND ".join(f"({c})" for c in conditions) \
                    if conditions else ""
                return self.query(start, stop, head + " FROM ", where), same_level
            inner, select, same_level = select, select.parent_select, False
        columns = ", ".join(sorted({c.sql() for e in expressions for c in self._columns(e)}))
        raise BinderError(f"{name}(): the arguments name {columns}, which no table before the "
                          "call in FROM (or in a query around it) has")

    def _source_conditions(self, select: exp.Select, names: set[str],
                           item: exp.Expression) -> list[str]:
        """The WHERE conditions of ``select`` that name only the tables ``names`` (qualified),
        outside ``item``: they narrow the arguments to the rows the query keeps."""
        where = select.args.get("where")
        out = []
        item_span = span(item)
        for condition in conjuncts(where.this if where is not None else None):
            columns = list(condition.find_all(exp.Column))
            if condition.find(exp.Select) is not None or span(condition) is None:
                continue
            if not all(c.table and c.table.lower() in names for c in columns):
                continue
            start, end = span(condition)
            if start <= item_span[0] <= end:
                continue
            out.append(self.render(start, end + 1)[0])
        return out

    # -- statements that need no relational engine -----------------------------------------------
    #: clauses that make a SELECT more than a choice of columns, or a summary of one operator
    _CLAUSES = ("where", "having", "distinct", "qualify", "windows", "joins", "laterals",
                "with_", "with", "pivots", "sample")

    def _direct(self, query: RelationalQuery) -> RelationalQuery:
        """``query`` answered without DuckDB where it takes its one input as it is: columns of
        it, or (pushed down onto the graph operator, :mod:`graphdb.executor.physical.pushdown`)
        an aggregate or a top-k of a graph function's rows. See
        :attr:`RelationalQuery.direct`."""
        select = self.ast
        looked_up = len(query.inputs) == 1 and isinstance(
            query.inputs[0][1], (StoredTableScan, GraphTableScan)) and \
            query.inputs[0][1].exact  # the WHERE is the key lookup's: its rows are the rows
        if not isinstance(select, exp.Select) or len(query.inputs) != 1 or any(
                select.args.get(clause) for clause in self._CLAUSES
                if not (clause == "where" and looked_up)) or not select.expressions:
            return query
        source = select.args.get("from_") or select.args.get("from")
        name, node = query.inputs[0]
        item = source.this if source is not None else None
        if not isinstance(item, (exp.Table, GraphTable)) or item.args.get("alias") is not None \
                and item.args["alias"].args.get("columns"):
            return query
        if isinstance(node, PatternMatch) and node.outputs is not None:
            columns = [n for n, _ in node.outputs]
        elif isinstance(node, GraphTableScan):
            columns = self.ctx.graph_columns(node.graph, node.table)
        elif isinstance(node, StoredTableScan):
            columns = self.ctx.catalog.table(node.table).schema.names
        elif isinstance(node, AlgorithmScan) and not node.lateral:
            columns = [c.name for c in algorithms.get(node.algorithm).columns]
        else:
            return query
        shortcut = _Shortcut(self, select, _qualifier(item).lower(), columns)
        ordered = select.args.get("order") or select.args.get("limit") or \
            select.args.get("offset")
        if select.args.get("group") is None and not ordered:
            direct = shortcut.plain()
            if direct is None and isinstance(node, PatternMatch) and node.outputs is not None:
                aggregates = shortcut.aggregates()  # count, min, ... of a pattern's rows
                if aggregates is not None and any(f != "count_all" for _, f, _ in aggregates):
                    return replace(query, direct=tuple((n, n) for n, _, _ in aggregates),
                                   aggregates=aggregates)
            if direct is None and not (pushdown.PUSHDOWN and isinstance(node, AlgorithmScan)):
                direct = shortcut.row_count()  # (an operator counts its own rows: pushed down)
                if direct is not None and isinstance(node, PatternMatch):  # counted, not built
                    query = replace(query, inputs=((name, replace(node, count_only=True)),))
            if direct is not None:
                return replace(query, direct=direct)
        if ordered and isinstance(node, PatternMatch) and node.outputs is not None and \
                select.args.get("group") is None:
            found = shortcut.ordered_rows()  # a pattern's few rows sorted without DuckDB
            if found is not None:
                direct, order, limit, offset = found
                return replace(query, direct=direct, order=order, limit=limit, offset=offset)
        if not pushdown.PUSHDOWN or not isinstance(node, AlgorithmScan):
            return query
        found = shortcut.top(node) if ordered else shortcut.reduction(node, self.ctx)
        if found is None:
            return query
        summary, direct = found
        return replace(query, inputs=((name, replace(node, summary=summary)),), direct=direct)

    # -- output names ---------------------------------------------------------------------------
    def _name_outputs(self) -> None:
        """Name each unaliased expression of the result by its text (``count(*)``, as SQLite
        does), not by DuckDB's rewriting of it (``count_star()``)."""
        query = self.ast
        while not isinstance(query, exp.Select):
            if isinstance(query, (exp.Union, exp.Intersect, exp.Except)):
                query = query.this
            elif isinstance(query, exp.Subquery):
                query = query.this
            else:
                return
        for item in query.expressions:
            where = span(item)
            if where is None or isinstance(item, (exp.Alias, exp.Column, exp.Star)):
                continue
            if type(item).__name__ == "Columns" or (isinstance(item, exp.Anonymous)
                                                     and item.name.upper() == "COLUMNS"):
                continue  # DuckDB's COLUMNS(...) expands to several columns, named by DuckDB
            name = _SPACES.sub(" ", self.text[where[0]:where[1] + 1]).strip()
            self.edits.append(_Edit(where[1] + 1, where[1] + 1, " AS " + _quote(name)))


#: SQL aggregates a graph operator computes itself -> the result path's names
_PUSHABLE = {exp.Min: "min", exp.Max: "max", exp.Sum: "sum", exp.Avg: "mean"}


class _Shortcut:
    """A SELECT over one input, in the input's column names, where nothing but columns,
    aggregates of columns, one GROUP BY column, or ORDER BY one column with LIMIT is asked."""

    def __init__(self, binder: _Binder, select: exp.Select, qualifier: str, columns: list[str]):
        self.binder, self.select, self.qualifier, self.columns = binder, select, qualifier, \
            columns

    def name(self, projection: exp.Expression) -> str:
        """A select-list item's output name (its alias, its column's name, or its text)."""
        if isinstance(projection, exp.Alias):
            return projection.alias
        if isinstance(projection, exp.Column):
            return projection.name
        start, end = span(projection)
        return _SPACES.sub(" ", self.binder.text[start:end + 1]).strip()

    def column(self, node: exp.Expression) -> str | None:
        """The input column ``node`` is a plain reference to, else None."""
        if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star) or \
                node.args.get("db") is not None or (node.table and node.table.lower()
                                                    != self.qualifier):
            return None
        found = [c for c in self.columns if c == node.name] or [
            c for c in self.columns if c.lower() == node.name.lower()]
        return found[0] if len(found) == 1 else None

    def columns_of(self) -> list[tuple[str, str]] | None:
        """(output name, input column) of a select list of plain columns and stars."""
        out = []
        for projection in self.select.expressions:
            target = projection.this if isinstance(projection, exp.Alias) else projection
            if isinstance(target, exp.Star):
                out.extend((c, c) for c in self.columns)
                continue
            column = self.column(target)
            if column is None:
                return None
            out.append((self.name(projection), column))
        return out

    def plain(self) -> tuple[tuple[str, str], ...] | None:
        out = self.columns_of()
        return None if out is None else tuple(out)

    def row_count(self) -> tuple[tuple[str, None]] | None:
        """((output name, None),) of ``SELECT count(*)`` alone: the input's row count."""
        projections = self.select.expressions
        target = projections[0].this if isinstance(projections[0], exp.Alias) else \
            projections[0]
        if len(projections) == 1 and isinstance(target, exp.Count) and \
                isinstance(target.this, exp.Star):
            return ((self.name(projections[0]), None),)
        return None

    def reduction(self, node: AlgorithmScan, ctx: Context):
        """(Reduction, direct) of aggregates [GROUP BY one column], or None."""
        group = self.select.args.get("group")
        key = None
        if group is not None:
            if len(group.expressions) != 1 or group.args.get("rollup") or \
                    group.args.get("cube") or group.args.get("grouping_sets"):
                return None
            key = self.column(group.expressions[0])
            if key is None:
                return None
        calls, direct = [], []
        for i, projection in enumerate(self.select.expressions):
            target = projection.this if isinstance(projection, exp.Alias) else projection
            output = f"__{i}"
            if key is not None and self.column(target) == key:
                direct.append((self.name(projection), "__key"))
                continue
            if isinstance(target, exp.Count):
                inner = target.this
                if isinstance(inner, exp.Star):
                    calls.append((output, "count_all", None, False))
                elif isinstance(inner, exp.Distinct):
                    return None
                elif self.column(inner) is not None:
                    calls.append((output, "count", self.column(inner), False))
                else:
                    return None
            elif type(target) in _PUSHABLE and self.column(target.this) is not None and \
                    not target.args.get("expressions"):
                calls.append((output, _PUSHABLE[type(target)], self.column(target.this), False))
            else:
                return None
            direct.append((self.name(projection), output))
        spec = algorithms.get(node.algorithm)
        entry = ctx.catalog.get(node.graph)
        found = pushdown.reduction_for(key, "__key" if key else None, calls,
                                       {c.name: c.type for c in spec.columns},
                                       {c.name for c in spec.columns if c.vertex},
                                       user_id_type(entry) == "string"
                                       or ctx.schema(node.graph) is not None)
        return None if found is None else (found, tuple(direct))

    def top(self, node: AlgorithmScan):
        """(TopRows, direct) of ``ORDER BY one column LIMIT n [OFFSET m]``, or None."""
        order = self.select.args.get("order")
        limit = self.select.args.get("limit")
        if order is None or limit is None or len(order.expressions) != 1 or \
                self.select.args.get("group") is not None:
            return None
        outputs = self.columns_of()
        ordered = order.expressions[0]
        if outputs is None or ordered.args.get("nulls_first") or not isinstance(
                ordered.this, exp.Column):
            return None
        key = self.column(ordered.this) if ordered.this.table else None
        if key is None:  # a bare name: an output name first, then an input column (as SQL)
            by_name = [c for n, c in outputs if n == ordered.this.name]
            key = by_name[0] if len(by_name) == 1 else self.column(ordered.this)
        count = self.count(limit.expression)
        offset = self.select.args.get("offset")
        skip = 0 if offset is None else self.count(offset.expression)
        if key is None or count is None or skip is None:
            return None
        spec = algorithms.get(node.algorithm)
        internal = tuple((f"__{i}", column) for i, (_, column) in enumerate(outputs))
        found = pushdown.top_for(key, bool(ordered.args.get("desc")), count, skip, internal,
                                 {c.name: c.type for c in spec.columns},
                                 {c.name for c in spec.columns if c.vertex})
        direct = tuple((name, f"__{i}") for i, (name, _) in enumerate(outputs))
        return None if found is None else (found, direct)

    def aggregates(self) -> tuple[tuple[str, str, str | None], ...] | None:
        """(output name, function, input column) of a select list of ``count(*)``,
        ``count([DISTINCT] x)``, ``min``/``max``/``sum``/``avg`` of input columns, or None."""
        out = []
        for projection in self.select.expressions:
            target = projection.this if isinstance(projection, exp.Alias) else projection
            name = self.name(projection)
            if isinstance(target, exp.Count):
                inner = target.this
                if isinstance(inner, exp.Star):
                    out.append((name, "count_all", None))
                    continue
                distinct = isinstance(inner, exp.Distinct)
                if distinct:
                    inner = inner.expressions[0] if len(inner.expressions) == 1 else None
                column = self.column(inner) if inner is not None else None
                if column is None:
                    return None
                out.append((name, "count_distinct" if distinct else "count", column))
            elif type(target) in _PUSHABLE and self.column(target.this) is not None and \
                    not target.args.get("expressions"):
                out.append((name, _PUSHABLE[type(target)], self.column(target.this)))
            else:
                return None
        return tuple(out) if len({n for n, _, _ in out}) == len(out) else None

    def ordered_rows(self):
        """(direct, order, limit, offset) of ``SELECT columns ... ORDER BY columns [LIMIT n]
        [OFFSET m]`` (order keys by output name or input column, NULLs last), or None."""
        outputs = self.columns_of()
        order = self.select.args.get("order")
        if outputs is None:
            return None
        keys = []
        for ordered in (order.expressions if order is not None else ()):
            if ordered.args.get("nulls_first") or not isinstance(ordered.this, exp.Column):
                return None
            key = self.column(ordered.this) if ordered.this.table else None
            if key is None:  # a bare name: an output name first, then an input column (as SQL)
                by_name = [c for n, c in outputs if n == ordered.this.name]
                key = by_name[0] if len(by_name) == 1 else self.column(ordered.this)
            if key is None:
                return None
            keys.append((key, bool(ordered.args.get("desc"))))
        limit, offset = self.select.args.get("limit"), self.select.args.get("offset")
        count = None if limit is None else self.count(limit.expression)
        skip = 0 if offset is None else self.count(offset.expression)
        if (limit is not None and count is None) or skip is None:
            return None
        return tuple(outputs), tuple(keys), count, skip

    def count(self, node: exp.Expression) -> int | None:
        """A LIMIT or OFFSET's value, a non-negative integer (literal or parameter), else
        None (DuckDB then judges it)."""
        value = self.binder._constant(node)
        if value is None or not isinstance(value[0], int) or isinstance(value[0], bool) or \
                value[0] < 0:
            return None
        return value[0]
