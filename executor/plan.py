"""The logical plan: plain frozen dataclasses that the front end builds and the executor runs.

Graph operators are nodes of their own; everything relational is one :class:`RelationalQuery`
whose SQL (DuckDB's dialect, written by the front end) reads the graph operators' results as
named relations. Statements that change the database are plans too: a write (INSERT, DELETE,
UPDATE) is a node over the query that gives its rows, a definition (CREATE GRAPH, DROP GRAPH, a
load) a node of its own (those of stored tables: :mod:`.plan_tables`); EXPLAIN shows them as it shows queries, and the runner runs them. The
executor needs no import from the layers above it.

A node object may appear under several parents (a CTE referenced twice); the runner computes it
once per query.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

__all__ = [
    "PlanNode", "AlgorithmScan", "lateral_column", "GraphTableScan", "ValuesScan",
    "RelationalQuery", "Hop", "PatternMatch", "ShowGraphs", "DescribeGraph", "Subgraph",
    "InsertRows", "DeleteRows", "UpdateRows", "TargetRows", "ROW", "CANONICAL",
    "CreateGraph", "DropGraph", "LoadGraph", "TableSource", "CreatePropertyGraph",
    "StoredTableScan", "ROWID",
]


@dataclass(frozen=True, eq=False)
class PlanNode:
    """Base class. ``eq=False``: nodes compare by identity, which the runner's cache relies on."""

    def children(self) -> tuple["PlanNode", ...]:
        out: list[PlanNode] = []
        for value in self.__dict__.values():
            if isinstance(value, PlanNode):
                out.append(value)
            elif isinstance(value, tuple):
                out.extend(v for v in value if isinstance(v, PlanNode))
        return tuple(out)


# -- leaves -------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Subgraph(PlanNode):
    """The part of a graph an operator runs on (``bfs(GRAPH g WHERE e.year = 2020, 1)``):
    ``edges`` is a query of the stored positions of the edges kept (over the graph's
    ``edge_positions`` table), ``vertices`` one of the vertices kept (over
    ``vertex_positions``); None keeps all. ``text`` is the subgraph as written (EXPLAIN).
    See :mod:`graphdb.executor.subgraph` for what a view keeps."""

    graph: str
    edges: PlanNode | None = None
    vertices: PlanNode | None = None
    text: str = ""
    #: of a property graph, the vertex and edge labels kept (None: all)
    vertex_labels: tuple[str, ...] | None = None
    edge_labels: tuple[str, ...] | None = None


@dataclass(frozen=True, eq=False)
class AlgorithmScan(PlanNode):
    """Run a graph algorithm; its rows become a relation of the query.

    The multi-source form (``FROM persons p, LATERAL khop(g, p.id, 2)``): the arguments named in
    ``lateral`` take the values of the columns of input ``sources``, one column each in that
    order; the operator runs for every distinct row of them without NULLs (one operator however
    many rows ask, not one call per row), and its output starts with one column per lateral
    argument (:func:`lateral_column`) saying which arguments produced each row.
    """

    algorithm: str
    graph: str
    #: bound options (internal values except parameters of kind ``vertex``, still user ids); a
    #: value may be a :class:`PlanNode`, a scalar subquery the runner evaluates first
    options: tuple[tuple[str, Any], ...]
    sources: PlanNode | None = None
    lateral: tuple[str, ...] = ()
    #: all the query wants of the rows: an aggregate or a top-k of them
    #: (:class:`~graphdb.executor.results.Reduction` / :class:`~graphdb.executor.results.TopRows`),
    #: which the operator computes where its values are (on a GPU, only those rows move)
    summary: Any = None
    #: the subgraph it runs on (None: the whole graph)
    subgraph: Subgraph | None = None

    def children(self) -> tuple["PlanNode", ...]:
        subqueries = tuple(v for k, v in self.options
                           if isinstance(v, PlanNode) and k not in self.lateral)
        masks = () if self.subgraph is None else self.subgraph.children()
        return subqueries + masks + ((self.sources,) if self.sources is not None else ())


def lateral_column(param: str) -> str:
    """The output column of a multi-source :class:`AlgorithmScan` holding argument ``param``."""
    return f"__arg_{param}"


@dataclass(frozen=True, eq=False)
class GraphTableScan(PlanNode):
    """``g.vertices``, ``g.edges`` or ``g.adjacency`` of a stored graph.

    ``g.edges`` lists every edge once, as stored; on an undirected graph each edge once, from
    its smaller endpoint to its larger. ``g.adjacency`` lists every (src, dst) pair a traversal
    follows: the same as ``g.edges`` on a directed graph, both directions of each edge on an
    undirected one. ``sources`` (user ids) is a filter ``src IN sources`` pushed into the scan:
    only those vertices' rows of the CSR are read.

    Two tables serve subgraph masks (:class:`Subgraph`) and are not the user's to name:
    ``edge_positions``, every stored edge in stored order with its position ``__pos`` (an
    undirected edge's two copies both, each with its endpoints as ``g.edges`` lists them), and
    ``vertex_positions``, ``g.vertices`` with each vertex's internal id ``__pos``.
    """

    graph: str
    table: str  # "vertices" | "edges" | "adjacency" | "edge_positions" | "vertex_positions"
    sources: tuple[Any, ...] | None = None
    #: of ``vertices`` (and a vertex label's table ``label:<name>``), ``sources`` are the ids
    #: (keys) of a lookup: only those vertices' rows are read; ``exact``: the lookup is the
    #: query's whole WHERE
    exact: bool = False


@dataclass(frozen=True, eq=False)
class ValuesScan(PlanNode):
    """A table known when planning (built-in table functions such as ``settings()``, tables the
    program registered). ``kept``: the same table from one statement to the next (a registered
    one), which the relational engine keeps registered."""

    name: str
    table: pa.Table = field(repr=False)
    kept: bool = False


@dataclass(frozen=True, eq=False)
class StoredTableScan(PlanNode):
    """A stored table (``CREATE TABLE``): the live rows of the statement's version, handed to
    the relational engine in place (kept registered from one statement to the next while the
    version lasts).

    ``keys``: a lookup by the table's key (``WHERE id = 42``, ``id IN (1, 2)``): only the
    rows with these key values (a tuple of values, or of tuples for a key of several
    columns), found through the key index instead of a scan."""

    table: str
    keys: tuple | None = None
    #: the lookup is the whole WHERE of the query (it may be answered without a relational
    #: engine: see RelationalQuery.direct)
    exact: bool = False


# -- the relational part ----------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class RelationalQuery(PlanNode):
    """Everything of a query that is not a graph operator: one SQL statement (DuckDB's dialect)
    over named relations, each the Arrow result of a plan node (a graph operator, a scan of
    ``g.vertices``/``g.edges``, a table known when planning).

    ``inputs`` maps the names the SQL reads to their plan nodes; ``shown`` maps each input
    name to what the user wrote (EXPLAIN and error messages say ``bfs(g, 1)``, not an internal
    name).

    ``direct``: the statement only picks columns of its one input (``SELECT vertex, depth FROM
    bfs(g, 1)``, or of the summary its graph operator computes: ``SELECT count(*) FROM
    khop(g, 1, 2)``), possibly ordered and limited (``order``, ``limit``, ``offset``): (output
    name, input column) each. The runner answers it from the input itself, without the
    relational engine's ~1 ms per statement (and its registering of the input).
    """

    sql: str
    inputs: tuple[tuple[str, PlanNode], ...]
    shown: tuple[tuple[str, str], ...] = ()
    direct: tuple[tuple[str, str | None], ...] | None = None
    #: with ``direct`` columns: the rows ordered by these input columns first ((column,
    #: descending) each, NULLs last as DuckDB puts them), then ``offset`` and ``limit``
    order: tuple[tuple[str, bool], ...] = ()
    limit: int | None = None
    offset: int = 0
    #: instead of ``direct`` columns, one row of aggregates of the input's columns: (output
    #: name, function: count_all, count, count_distinct, min, max, sum, mean; input column)
    aggregates: tuple[tuple[str, str, str | None], ...] = ()

    def children(self) -> tuple["PlanNode", ...]:
        return tuple(node for _, node in self.inputs)


# -- graph pattern matching ---------------------------------------------------------------------
@dataclass(frozen=True)
class Hop:
    """One edge of a pattern: from the previous vertex variable to ``target``.

    ``direction`` is 'out', 'in' or 'both'. ``low``/``high`` bound the number of edges; a hop
    of exactly one edge binds ``edge`` (its stored edge position) for edge properties.
    ``edges``, ``sources`` and ``targets`` restrict every step it takes (the conditions inside
    a quantified pattern, ``-[e WHERE ...]->{1,3}`` or ``((x)-[e]->(y) WHERE ...){1,3}``, and
    labels): queries of the stored edge positions it may use (over the graph's
    ``edge_positions``), of the vertices a step may leave and reach (over ``vertex_positions``);
    ``ends`` those of the vertices it may end at (its target's labels). None allows all.
    """

    target: str
    direction: str
    low: int = 1
    high: int = 1
    edge: str | None = None
    edges: PlanNode | None = None
    sources: PlanNode | None = None
    targets: PlanNode | None = None
    #: the vertices the hop may end at (its target's labels), checked once after it
    ends: PlanNode | None = None

    def masks(self) -> tuple[tuple[str, PlanNode], ...]:
        return tuple((kind, query) for kind, query in (
            ("edges", self.edges), ("sources", self.sources), ("targets", self.targets),
            ("ends", self.ends)) if query is not None)


@dataclass(frozen=True, eq=False)
class PatternMatch(PlanNode):
    """Bindings of a linear path pattern, computed by frontier expansion over the CSR.

    Starts from the vertices of ``start`` (all, or those whose ids ``start_ids`` gives), then
    expands one hop after the other: a single edge gathers the frontier's neighbours with their
    edge positions; ``{m,n}`` keeps one frontier per source and level (reachability: each
    (source, target) pair once). Output columns are ``<variable>.<property>`` for the requested
    ``vertex_properties`` / ``edge_properties``, or, with ``outputs``, (name, column) each:
    the COLUMNS list when it only names properties.
    """

    graph: str
    start: str
    #: the user ids of the start vertices: the first column of a query, or the values
    #: themselves (``WHERE a.id = 7``); None: every vertex
    start_ids: PlanNode | tuple | None
    hops: tuple[Hop, ...]
    vertex_properties: tuple[tuple[str, str], ...]  # (variable, property)
    edge_properties: tuple[tuple[str, str], ...]
    text: str = ""
    outputs: tuple[tuple[str, str], ...] | None = None
    #: the path variable (``MATCH p = ...``), whose columns are ``p.vertices``, ``p.edges``,
    #: ``p.length`` and ``p.cost`` among ``vertex_properties``
    path: str | None = None
    #: the rows of a quantified hop (:data:`graphdb.executor.paths.MODES`): one per walk
    #: (SQL/PGQ's default), at most ``k`` shortest per pair of endpoints (``ANY``, ``ANY k``,
    #: ``ANY SHORTEST``), or every shortest one (``ALL SHORTEST``)
    mode: str = "walk"
    k: int = 1
    #: matched from the pattern's last vertex (its paths are turned around on output)
    reversed: bool = False
    #: on a property graph, (variable, property, stored columns) of the properties output: a
    #: variable's property is in one column per label (COALESCE of them); () for ``id``,
    #: ``label``, ``src``, ``dst``
    stored: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    #: on a property graph, the vertex label whose keys ``start_ids`` (a tuple) are (None: the
    #: graph's own user ids)
    start_label: str | None = None
    #: only the number of rows is wanted (``SELECT count(*) FROM GRAPH_TABLE (...)``): the
    #: operator's table is one row of it (:mod:`graphdb.executor.pattern_count`)
    count_only: bool = False

    def children(self) -> tuple["PlanNode", ...]:
        first = (self.start_ids,) if isinstance(self.start_ids, PlanNode) else ()
        return first + tuple(query for hop in self.hops for _, query in hop.masks())


# -- catalog statements -------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ShowGraphs(PlanNode):
    pass


@dataclass(frozen=True, eq=False)
class DescribeGraph(PlanNode):
    graph: str


# -- writes -------------------------------------------------------------------------------------
#: Hidden columns of the rows a DELETE or UPDATE picks from (:class:`TargetRows`): each row's
#: identity (for ``g.edges`` where the edge comes from: a base position, or a delta edge as
#: -1 - index; for ``g.vertices`` its dense id), and whether an edge row is the stored copy
#: from the smaller endpoint (an undirected edge is stored both ways).
ROW = "__graphdb_row"
CANONICAL = "__graphdb_canonical"


@dataclass(frozen=True, eq=False)
class InsertRows(PlanNode):
    """``INSERT INTO g.edges | g.vertices``: the rows of ``source`` (VALUES, a query, a table
    from the program), its columns in order the table's ``columns`` (None: all of them, in the
    table's order), added to the graph's newest version as delta records (ids that are no vertex
    yet become vertices). ``values``: the rows are an INSERT's VALUES."""

    graph: str
    table: str  # "edges" | "vertices"
    columns: tuple[str, ...] | None
    source: PlanNode
    values: bool = False


@dataclass(frozen=True, eq=False)
class TargetRows(PlanNode):
    """The rows a DELETE or UPDATE picks from: ``g.edges`` (each stored copy of an undirected
    edge) or ``g.vertices`` at the graph's newest version, read once the writer lock is held,
    with the hidden columns :data:`ROW` (and :data:`CANONICAL` for edges)."""

    graph: str
    table: str


@dataclass(frozen=True, eq=False)
class DeleteRows(PlanNode):
    """``[DETACH] DELETE FROM g.edges | g.vertices [WHERE ...]``: ``picked`` is the query of the
    :data:`ROW` (and :data:`CANONICAL`) of the rows to delete, over :class:`TargetRows`. A
    vertex with edges is deleted only with ``detach`` (its edges with it)."""

    graph: str
    table: str
    picked: PlanNode
    detach: bool = False


@dataclass(frozen=True, eq=False)
class UpdateRows(PlanNode):
    """``UPDATE g.edges | g.vertices SET ... [WHERE ...]``: ``picked`` is the query of the rows
    to change over :class:`TargetRows`: their :data:`ROW` (and :data:`CANONICAL`), then the
    new values of ``columns`` (of edges: every column; an edge changed is deleted and inserted
    anew)."""

    graph: str
    table: str
    columns: tuple[str, ...]
    picked: PlanNode


# -- definitions --------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class CreateGraph(PlanNode):
    """``CREATE [OR REPLACE] GRAPH [IF NOT EXISTS] g (...)``: an empty graph with the given
    property columns, filled by writes."""

    graph: str
    directed: bool
    weighted: bool
    id_type: str  # "int64" | "string"
    vertex_properties: pa.Schema = field(repr=False)
    edge_properties: pa.Schema = field(repr=False)
    replace: bool = False
    if_not_exists: bool = False


@dataclass(frozen=True, eq=False)
class DropGraph(PlanNode):
    """``DROP GRAPH [IF EXISTS] g``."""

    graph: str
    if_exists: bool = False


@dataclass(frozen=True, eq=False)
class LoadGraph(PlanNode):
    """A graph loaded by the bulk ingest (``COPY g FROM``, ``CREATE GRAPH g FROM`` or ``AS
    GRAPH``, ``Connection.ingest``): its edges and vertices from files (a path or glob) or from
    the rows of plan nodes (a query's result, a table of the program), with the ingest's
    ``options`` (a :class:`graphdb.catalog.IngestOptions`, without its vertex file).
    ``progress``: the :class:`graphdb.catalog.Progress` it reports to (None: silent)."""

    graph: str
    edges: "str | PlanNode"
    vertices: "str | PlanNode | None"
    options: Any
    replace: bool = False
    progress: Any = field(default=None, repr=False)

    def children(self) -> tuple["PlanNode", ...]:
        return tuple(v for v in (self.edges, self.vertices) if isinstance(v, PlanNode))


@dataclass(frozen=True)
class TableSource:
    """One table of a property graph: its rows (``rows``), the name edge tables reference it
    by, its label, key column(s) and properties (names or (property, column) pairs; None: all
    but ``except_``), and for an edge table the vertex tables its ends reference with their key
    columns. ``labels``: several labels (default: ``(label or name,)``); ``stored``: the stored
    table (CREATE TABLE) it is, whose rows carry their identities in column :data:`ROWID`;
    ``row_labels``: DuckPGQ's ``LABEL l IN column (...)`` labels, label i given to the
    rows whose integer ``row_label_column`` has bit i set."""

    name: str
    rows: PlanNode
    label: str | None = None
    key: str | None = None
    properties: tuple | None = None
    source: str | None = None
    destination: str | None = None
    source_key: str | None = None
    destination_key: str | None = None
    labels: tuple[str, ...] | None = None
    except_: tuple[str, ...] = ()
    stored: str | None = None
    row_labels: tuple[str, ...] = ()
    row_label_column: str | None = None


#: The column of a stored table's rows (TableSource.rows) that holds each row's identity.
ROWID = "__graphdb_rowid"


@dataclass(frozen=True, eq=False)
class CreatePropertyGraph(PlanNode):
    """``CREATE [OR REPLACE] PROPERTY GRAPH`` (and ``Connection.create_property_graph``): its
    vertex and edge tables become one stored graph (:mod:`graphdb.executor.writes.property_graph`)."""

    graph: str
    vertex_tables: tuple[TableSource, ...]
    edge_tables: tuple[TableSource, ...]
    undirected: bool = False
    replace: bool = False
    progress: Any = field(default=None, repr=False)
    #: the stored tables read, (name, table id, version) each: checked unchanged under the
    #: writer lock before the graph is stored
    versions: tuple[tuple[str, str, int], ...] = ()
    if_not_exists: bool = False

    def children(self) -> tuple["PlanNode", ...]:
        return tuple(t.rows for t in self.vertex_tables + self.edge_tables)

