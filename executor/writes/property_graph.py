"""CREATE PROPERTY GRAPH: vertex and edge element tables with labels become one stored graph.

Each vertex element table (its labels, its key, its properties) is given the ids of its rows'
keys (:func:`~graphdb.executor.property_graph.encode_keys`: text that sorts by element, then key,
so an element's vertices stay one range of internal ids as rows come and go); each edge table's
source and destination keys are looked up in the vertex tables they reference; then one graph is
ingested with the schema in its catalog entry (see :mod:`graphdb.executor.property_graph` for how
it is stored and read).

A graph over stored tables (CREATE TABLE) records them: INSERT, UPDATE, DELETE and COPY on them
reach the graph in the same transaction (:mod:`graphdb.executor.writes.table_graphs`). It is built from the
tables' committed rows, and the tables are checked unchanged under the writer lock just before it
is stored (another connection's write meanwhile makes the statement fail, to be run again).
"""

from __future__ import annotations

import dataclasses
import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from graphdb.storage.lazy import pc

from ..errors import InvalidArgument
from ..physical.nodes import PhysicalNode
from ..plan import ROWID
from ..property_expressions import COMPUTED, Expression, column_name, with_computed
from ..property_graph import ROW, ROW_LABELS, EdgeLabel, PropertySchema, VertexLabel, encode_keys
from .definitions import load, status_table, summary_table
from .files import write_arrow_file

if TYPE_CHECKING:
    from ..runner import Runner

__all__ = ["CreatePropertyGraphOperator", "EdgeTable", "KEY", "ROW", "VertexTable", "build"]



_LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: The hidden property holding a vertex table's key when no property shows it.
KEY = "__key"


@dataclass
class VertexTable:
    """A vertex element table: its rows, its name (the AS name, else the table's), its label,
    its key column and the columns that are properties ((property, column) pairs or names;
    None: all but ``except_``). ``labels``: several labels (default: ``[label or name]``);
    ``rowids``: the rows' identities in a stored table ``stored`` (None: positions)."""

    name: str
    table: pa.Table
    label: str | None = None
    key: str | None = None
    properties: list | None = None
    labels: list[str] | None = None
    except_: list[str] = field(default_factory=list)
    rowids: np.ndarray | None = None
    stored: str | None = None
    row_labels: list[str] = field(default_factory=list)
    row_label_column: str | None = None
    #: (hidden column, expression) of its properties that are expressions
    computed: tuple = ()


@dataclass
class EdgeTable:
    """An edge element table: its rows, name, the vertex tables (names or labels) its sources
    and destinations are in and the columns holding their keys, its label(s) and properties
    (None: all its columns but ``except_``)."""

    name: str
    table: pa.Table
    source: str
    destination: str
    source_key: str | None = None
    destination_key: str | None = None
    label: str | None = None
    properties: list | None = None
    labels: list[str] | None = None
    except_: list[str] = field(default_factory=list)
    rowids: np.ndarray | None = None
    stored: str | None = None
    computed: tuple = ()


def _column(table: pa.Table, name: str | None, what: str, default: int) -> str:
    names = table.column_names
    if name is None:
        if len(names) <= default:
            raise InvalidArgument(f"{what}: the table has no column {default + 1}")
        return names[default]
    found = [c for c in names if c == name] or [c for c in names if c.lower() == name.lower()]
    if not found:
        raise InvalidArgument(f"{what}: no column '{name}' (columns: {', '.join(names)})")
    return found[0]


def _properties(table: pa.Table, chosen: list | None, leave: list[str], what: str
                ) -> list[tuple[str, str]]:
    """(property, column) pairs of an element table: ``chosen`` names or (property, column)
    pairs, ``"*"`` among them (or None) for every column but ``leave``. One property given by
    two labels must be the same column."""
    out: dict[str, tuple[str, str]] = {}
    for item in ["*"] if chosen is None else chosen:
        if item == "*":
            left = {c.lower() for c in leave}
            for c in leave:
                _column(table, c, what + " EXCEPT", 0)
            pairs = [(c, c) for c in table.column_names if c.lower() not in left
                     and not c.startswith(COMPUTED)]
        else:
            prop, column = item if isinstance(item, tuple) else (item, item)
            pairs = [(prop, _column(table, column, what, 0))]
        for prop, column in pairs:
            if out.setdefault(prop.lower(), (prop, column))[1] != column:
                raise InvalidArgument(f"{what}: property {prop} is given two different "
                                      "columns")
    return list(out.values())


def _spread(values: pa.Array, before: int, after: int) -> pa.Array:
    """``values`` with ``before`` NULLs ahead and ``after`` behind."""
    parts = [pa.nulls(before, values.type), values, pa.nulls(after, values.type)]
    return pa.concat_arrays([p for p in parts if len(p) or p is values])


def _labels(item) -> list[str]:
    labels = list(item.labels or [item.label or item.name])
    for label in labels:
        if not _LABEL.fullmatch(label):
            raise InvalidArgument(f"label '{label}': use letters, digits and underscores")
    return labels


def _plain(array: pa.Array) -> pa.Array:
    """Key values as the ingest stores them (large strings as strings)."""
    if pa.types.is_large_string(array.type):
        return array.cast(pa.string())
    return array


@dataclass
class _Vertices:
    item: VertexTable
    table: pa.Table  # sorted by key
    key: str  # key column
    key_prop: str  # the property holding it
    props: list[tuple[str, str]]
    ids: pa.Array  # stored ids, sorted
    keys: pa.Array  # key values, in the same order


def build(vertex_tables: list[VertexTable], edge_tables: list[EdgeTable], undirected: bool,
          tables: tuple[str, ...] = ()) -> tuple[pa.Table, pa.Table, PropertySchema]:
    """(the stored vertex table, the stored edge table, the schema) of a property graph."""
    if not vertex_tables:
        raise InvalidArgument("a property graph needs at least one vertex table")
    seen: dict[str, str] = {}
    for item in [*vertex_tables, *edge_tables]:
        if not _LABEL.fullmatch(item.name):
            raise InvalidArgument(f"table name '{item.name}': use letters, digits and "
                                    "underscores (or give it a name with AS)")
        if item.name.lower() in seen:
            raise InvalidArgument(f"table '{item.name}' is given twice; give one a name with AS")
        seen[item.name.lower()] = item.name
    elements: dict[str, str] = {}  # an element's first label names it: one per table
    for item in [*vertex_tables, *edge_tables]:
        first = _labels(item)[0]
        if first.lower() in elements:
            raise InvalidArgument(f"label '{first}' is given to two tables "
                                    f"({elements[first.lower()]} and {item.name}); a table's "
                                    "first label must be its own")
        elements[first.lower()] = item.name
    key_mode = len(vertex_tables) == 1
    vertices: list[_Vertices] = []
    for item in vertex_tables:
        what = f"vertex table {item.name}"
        table = item.table.combine_chunks()
        # every row keeps its table row id (a hidden property: ``x.rowid``, and the key of
        # a table without one)
        rowids = item.rowids if item.rowids is not None else np.arange(table.num_rows)
        table = table.append_column(ROW, pa.array(rowids, pa.int64()))
        key = ROW if item.key == ROW else _column(item.table, item.key, what, 0)
        keys = _plain(table.column(key).combine_chunks())
        if keys.null_count:
            raise InvalidArgument(f"{what}: key column '{key}' holds NULL")
        props = _properties(item.table, item.properties, item.except_, what)
        key_prop = next((p for p, c in props if c == key), None)
        if key_prop is None:
            key_prop = ROW if key == ROW else KEY
            props.append((key_prop, key))
        if key != ROW:
            props.append((ROW, ROW))
        if item.row_labels:  # the bits giving rows their labels: a hidden property
            column = _column(table, item.row_label_column, what, 0)
            if not pa.types.is_integer(table.schema.field(column).type):
                raise InvalidArgument(f"{what}: the column {column} of its labels (IN {column} "
                                      "(...)) must be an integer")
            props.append((ROW_LABELS, column))
        key_mode = key_mode and pa.types.is_integer(keys.type)
        vertices.append(_Vertices(item, table, key, key_prop, props, keys, keys))
    schema = PropertySchema((), (), undirected, tuple(tables),
                            "key" if key_mode else "composite")
    for index, v in enumerate(vertices):
        ids = encode_keys(schema, index, v.keys)
        order = pc.sort_indices(ids)
        v.ids, v.keys, v.table = ids.take(order), v.keys.take(order), v.table.take(order)
        if len(ids) > 1 and pc.any(pc.equal(v.ids.slice(1), v.ids.slice(0, len(ids) - 1))
                                   ).as_py():
            raise InvalidArgument(f"vertex table {v.item.name}: key '{v.key}' is not unique")
    n = sum(len(v.ids) for v in vertices)
    id_type = pa.int64() if key_mode else pa.string()
    columns = {"id": pa.concat_arrays([v.ids.cast(id_type) for v in vertices]),
               "label": pa.concat_arrays([pa.repeat(pa.scalar(_labels(v.item)[0]),
                                                     len(v.ids)).cast(pa.string())
                                          for v in vertices])}
    start, labels = 0, []
    for v in vertices:
        count = len(v.ids)
        element = _labels(v.item)[0]
        for prop, column in v.props:
            columns[PropertySchema.column(element, prop)] = _spread(
                v.table.column(column).combine_chunks(), start, n - start - count)
        labels.append(VertexLabel(element, v.item.stored or v.item.name, v.key_prop,
                                  str(v.keys.type), tuple(p for p, _ in v.props), start, count,
                                  tuple(_labels(v.item)), tuple(c for _, c in v.props),
                                  tuple(v.item.row_labels),
                                  ROW_LABELS if v.item.row_labels else "", v.item.computed))
        start += count
    vertex_table = pa.table(columns)
    schema = PropertySchema(tuple(labels), (), undirected, tuple(tables), schema.id_mode)

    by_name = {}
    for v in vertices:
        for alias in (v.item.name, v.item.stored or v.item.name, *_labels(v.item)):
            by_name.setdefault(alias.lower(), v)
    parts, edge_labels = [], []
    for item in edge_tables:
        what = f"edge table {item.name}"
        table = item.table.combine_chunks()
        item.source_key = _column(table, item.source_key, what, 0)
        item.destination_key = _column(table, item.destination_key, what, 1)
        ends = []
        for side, referenced in ((item.source_key, item.source),
                                 (item.destination_key, item.destination)):
            target = by_name.get(referenced.lower())
            if target is None:
                raise InvalidArgument(f"{what}: it references '{referenced}', which is no "
                                        "vertex table of the graph")
            values = table.column(side).combine_chunks()
            try:
                values = values.cast(target.keys.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                raise InvalidArgument(f"{what}: column '{side}' ({values.type}) cannot hold "
                                        f"keys of {target.item.name} ({target.keys.type})"
                                        ) from None
            found = pc.index_in(values, value_set=target.keys)
            if found.null_count:
                missing = values.filter(pc.is_null(found))[0].as_py()
                raise InvalidArgument(f"{what}: {side} {missing!r} is no key of vertex table "
                                        f"{target.item.name}")
            ends.append((target, target.ids.take(found)))
        props = _properties(table, item.properties, item.except_, what)
        rowids = item.rowids if item.rowids is not None else np.arange(table.num_rows)
        parts.append((item, table, ends, props, pa.array(rowids, pa.int64())))
        edge_labels.append(EdgeLabel(_labels(item)[0], item.stored or item.name,
                                     _labels(ends[0][0].item)[0], _labels(ends[1][0].item)[0],
                                     item.source_key,
                                     item.destination_key, tuple(p for p, _ in props),
                                     table.num_rows, tuple(_labels(item)),
                                     tuple(c for _, c in props), item.computed))
    m = sum(t.num_rows for _, t, _, _, _ in parts)
    edges = {"src": pa.concat_arrays([e[0][1].cast(id_type) for _, _, e, _, _ in parts])
             if parts else pa.array([], id_type),
             "dst": pa.concat_arrays([e[1][1].cast(id_type) for _, _, e, _, _ in parts])
             if parts else pa.array([], id_type),
             "label": pa.concat_arrays([pa.repeat(pa.scalar(_labels(i)[0]), t.num_rows).cast(
                 pa.string()) for i, t, _, _, _ in parts]) if parts else pa.array([], pa.string()),
             ROW: pa.concat_arrays([r for *_, r in parts]) if parts else pa.array([], pa.int64())}
    first = 0
    for item, table, _, props, _ in parts:
        for prop, column in props:
            edges[PropertySchema.column(_labels(item)[0], prop)] = _spread(
                table.column(column).combine_chunks(), first, m - first - table.num_rows)
        first += table.num_rows
    schema = PropertySchema(schema.vertex_labels, tuple(edge_labels), undirected, tuple(tables),
                            schema.id_mode)
    return vertex_table, pa.table(edges), schema


@dataclass(eq=False, kw_only=True)
class CreatePropertyGraphOperator(PhysicalNode):
    """Runs :class:`graphdb.executor.plan.CreatePropertyGraph`: its tables' rows (its inputs,
    vertex tables first) built into the stored vertex and edge tables, then ingested."""

    reads_data: bool = False

    def run(self, runner: "Runner", metrics: dict) -> pa.Table:
        node = self.logical
        if node.if_not_exists and not node.replace and _exists(runner, node.graph):
            return status_table(f"graph '{node.graph}' exists; nothing created")
        rows = [runner.input(self, i) for i in range(len(self.inputs))]
        vertex_tables = [VertexTable(s.name, _split(t)[0], rowids=_split(t)[1], label=s.label, key=s.key,
                                     properties=_listed(s.properties),
                                     labels=_listed(s.labels), except_=list(s.except_),
                                     stored=s.stored, row_labels=list(s.row_labels),
                                     row_label_column=s.row_label_column)
                         for s, t in zip(node.vertex_tables, rows)]
        edge_tables = [EdgeTable(s.name, _split(t)[0], rowids=_split(t)[1], source=s.source,
                                 destination=s.destination, source_key=s.source_key,
                                 destination_key=s.destination_key, label=s.label,
                                 properties=_listed(s.properties), labels=_listed(s.labels),
                                 except_=list(s.except_), stored=s.stored)
                       for s, t in zip(node.edge_tables, rows[len(vertex_tables):])]
        tables = tuple(dict.fromkeys(t.stored for t in [*vertex_tables, *edge_tables]
                                     if t.stored))
        for item in [*vertex_tables, *edge_tables]:
            _work_out_expressions(runner, item)
        vertices, edges, schema = build(vertex_tables, edge_tables, node.undirected, tables)
        schema = _with_table_created(runner, schema)
        prepare = _unchanged(runner, node) if node.versions else None
        if vertices.num_rows == 0:
            return _create_empty(runner, node, vertices, edges, schema, prepare)
        from graphdb.catalog import IngestOptions  # (the ingest loads at the first load)

        options = IngestOptions(undirected=node.undirected, weight="none", format="arrow",
                                vertex_format="arrow", src="src", dst="dst",
                                schema=json.dumps(schema.to_json()))
        with tempfile.TemporaryDirectory(prefix="graphdb-property-graph-") as tmp:
            paths = {}
            for role, table in (("edges", edges), ("vertices", vertices)):
                paths[role] = Path(tmp) / f"{role}.arrow"
                write_arrow_file(table, paths[role])
            return load(runner, node.graph, str(paths["edges"]), str(paths["vertices"]),
                        options, replace=node.replace, progress=node.progress,
                        prepare=prepare)


def _with_table_created(runner: "Runner", schema: PropertySchema) -> PropertySchema:
    """``schema`` knowing when each of its stored tables was created (so that it can tell
    when one is replaced)."""
    now = runner.catalog.tables_now()
    created = [getattr(now.find(t), "created", None) for t in schema.tables]
    if any(c is None for c in created):
        return schema
    return dataclasses.replace(schema, table_created=tuple(created))


def _work_out_expressions(runner: "Runner", item: VertexTable | EdgeTable) -> None:
    """The properties of ``item`` that are expressions made columns of its rows (hidden ones,
    which its labels' ``computed`` define, so that later writes work them out again)."""
    computed: dict[str, str] = {}
    listed = []
    for entry in item.properties or ():
        if isinstance(entry, tuple) and isinstance(entry[1], Expression):
            name = column_name(entry[0])
            if computed.setdefault(name, entry[1].sql) != entry[1].sql:
                raise InvalidArgument(f"{item.name}: property {entry[0]} is given two different "
                                      "expressions")
            listed.append((entry[0], name))
        else:
            listed.append(entry)
    if computed:
        item.table = with_computed(runner.sql, item.table, tuple(computed.items()))
        item.properties = listed
        item.computed = tuple(computed.items())


def _exists(runner: "Runner", name: str) -> bool:
    return name.lower() in (n.lower() for n in runner.catalog.names())


def _split(rows: pa.Table) -> tuple[pa.Table, np.ndarray | None]:
    """(the table's columns, its rows' identities) of a table source's rows."""
    if ROWID not in rows.column_names:
        return rows, None
    rowids = rows.column(ROWID).to_numpy()
    return rows.drop_columns([ROWID]), rowids


def _unchanged(runner: "Runner", node):
    """What runs under the writer lock before the graph is stored: it raises when a stored
    table the graph was built from changed meanwhile."""
    def check() -> None:
        from graphdb.catalog import CatalogError

        now = runner.catalog.tables.committed()
        for table, table_id, version in node.versions:
            entry = now.find(table)
            if entry is None or (entry.table_id, entry.version) != (table_id, version):
                raise CatalogError(f"table '{table}' changed while property graph "
                                   f"'{node.graph}' was being built from it; run CREATE "
                                   "PROPERTY GRAPH again")
    return check


def _create_empty(runner: "Runner", node, vertices: pa.Table, edges: pa.Table,
                  schema: PropertySchema, prepare) -> pa.Table:
    """A property graph without vertices (its tables are empty; rows come later)."""
    from graphdb.catalog import GraphNotFound
    from graphdb.catalog.generation import create_graph

    try:
        old = runner.catalog.get(node.graph, exact=True)
    except GraphNotFound:
        old = None
    entry = create_graph(
        runner.catalog, node.graph, directed=not schema.undirected, weighted=False,
        id_type="int64" if schema.id_mode == "key" else "string",
        vertex_properties=pa.schema(list(vertices.schema)[1:]),
        edge_properties=pa.schema(list(edges.schema)[2:]), replace=node.replace,
        stats={"property_graph": schema.to_json()}, prepare=prepare)
    if old is not None:
        runner.forget(old)
    return summary_table(entry, 0.0)


def _listed(items) -> list | None:
    return None if items is None else list(items)
