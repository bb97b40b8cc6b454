"""Creating property graphs: ``CREATE PROPERTY GRAPH`` (SQL/PGQ), ``Connection.
create_property_graph`` and ``graphdb ingest --vertex-table/--edge-table`` each name vertex and
edge tables with labels; here they become one :class:`graphdb.executor.plan.CreatePropertyGraph`
(each table's rows a plan node: a stored table's rows with their identities, a file DuckDB
reads, a table of the connection, an object of the program), which
:mod:`graphdb.executor.writes.property_graph` builds and stores as one graph.

``CREATE PROPERTY GRAPH`` resolves what SQL/PGQ leaves to the tables here: a vertex table's
key defaults to its primary key (else to the column edge tables reference, else to its rows'
identities), and ``SOURCE persons`` without ``KEY`` takes the edge table's one foreign key to
``persons``. A graph over stored tables records them: every write to them reaches the graph in
the same transaction (:mod:`graphdb.executor.writes.table_graphs`)."""

from __future__ import annotations

import copy
import os
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from graphdb.executor.plan import (
    ROWID,
    CreatePropertyGraph,
    PlanNode,
    RelationalQuery,
    TableSource,
    ValuesScan,
)
from graphdb.executor.property_graph import PropertySchema
from graphdb.executor.writes.property_graph import ROW

from .errors import CatalogError, InvalidInputError
from .loading import check_graph_name, progress_for, summary

if TYPE_CHECKING:
    from graphdb.executor.snapshot import StatementCatalog

    from .session import Session

__all__ = ["create_property_graph", "file_rows", "plan_statement", "refuse_existing",
           "show_property_graphs"]




def file_rows(path: str) -> PlanNode:
    """The rows of a file DuckDB reads (CSV, Parquet, JSON; by its extension)."""
    return RelationalQuery("SELECT * FROM '" + str(path).replace("'", "''") + "'", ())


def refuse_existing(name: str) -> None:
    """Graph ``name`` exists: CatalogError saying how to replace it."""
    raise CatalogError(f"graph '{name}' already exists: CREATE OR REPLACE PROPERTY GRAPH "
                       f"{name} ..., or DROP GRAPH {name} first")


def create_property_graph(session: "Session", name: str, vertices: dict,
                          edges: dict | None = None, *, keys: dict | None = None,
                          undirected: bool = False, replace: bool = False,
                          progress: Any = False) -> dict:
    """``Connection.create_property_graph`` (see there): returns the ingest's summary."""
    from .interop import plain_table

    keys = keys or {}

    def rows(obj, what) -> PlanNode:
        if isinstance(obj, (str, os.PathLike)):
            return file_rows(obj)
        return ValuesScan(what, plain_table(obj, what))

    vertex_tables = tuple(TableSource(label, rows(obj, f"vertex table {label}"), label,
                                      keys.get(label)) for label, obj in vertices.items())
    edge_tables = []
    for label, spec in (edges or {}).items():
        obj, source, destination, *columns = spec
        source_key, destination_key = (columns + [None, None])[:2]
        edge_tables.append(TableSource(label, rows(obj, f"edge table {label}"), label,
                                       source=source, destination=destination,
                                       source_key=source_key, destination_key=destination_key))
    node = CreatePropertyGraph(name, vertex_tables, tuple(edge_tables), undirected, replace,
                               progress_for(session, progress))
    return run(session, node)


def run(session: "Session", node: CreatePropertyGraph) -> dict:
    """Store the property graph ``node`` plans; the ingest's summary."""
    session.writable()
    check_graph_name(node.graph)
    if not node.replace and node.graph.lower() in (g.lower() for g in session.catalog.names()):
        refuse_existing(node.graph)
    return summary(session.run(node))


# -- CREATE PROPERTY GRAPH ----------------------------------------------------------------------
def plan_statement(session: "Session", parts: dict, snapshot: "StatementCatalog"
                   ) -> CreatePropertyGraph:
    """The plan of ``CREATE PROPERTY GRAPH`` (``parts`` as
    :func:`graphdb.query.property_graph_sql.parse_create_property_graph` reads it): each
    table's rows, keys resolved from the stored tables' primary and foreign keys."""
    from .query.statements.copy import query_plan
    from .query.statements.ddl import session_progress

    parts = copy.deepcopy(parts)  # (the parsed statement is shared: it stays as parsed)
    check_graph_name(parts["graph"])
    tables = session.catalog.tables_now()
    read: dict[str, tuple[PlanNode, Any]] = {}
    for item in [*parts["vertices"], *parts["edges"]]:
        entry = None
        if item["file"]:
            rows = file_rows(item["table"])
        elif item["table"].lower() not in session.tables and \
                (entry := tables.find(item["table"])) is not None:
            view = session.catalog.tables.view(entry)
            rows = ValuesScan(entry.name, view.table.append_column(
                ROWID, pa.array(view.row_ids(), pa.int64())))
        else:
            rows = query_plan(session, f"SELECT * FROM {item['table']}", snapshot)
        item["stored"] = entry.name if entry is not None else None
        read[item["name"].lower()] = (rows, entry)
    vertices = {v["name"].lower(): v for v in parts["vertices"]}
    for v in parts["vertices"]:  # a stored table's key: its primary key
        entry = read[v["name"].lower()][1]
        if v.get("key") is None and entry is not None and len(entry.primary_key) == 1:
            v["key"] = entry.primary_key[0]
    for e in parts["edges"]:
        entry = read[e["name"].lower()][1]
        for side in ("source", "destination"):
            referenced = _vertex(vertices, e[side], parts["vertices"])
            if referenced is None:
                raise InvalidInputError(f"edge table {e['name']}: it references '{e[side]}', "
                                        "which is no vertex table of the graph")
            e[side] = referenced["name"]
            if e.get(f"{side}_key") is None:
                e[f"{side}_key"], e[f"{side}_column"] = _foreign_key(entry, e, side,
                                                                     referenced)
            column = e.get(f"{side}_column")
            if column is None:
                continue
            if referenced.get("key") is None:
                referenced["key"] = column
            elif column.lower() != referenced["key"].lower():
                raise InvalidInputError(f"edge table {e['name']}: REFERENCES {e[side]} "
                                        f"({column}), but its key is {referenced['key']}")
    for v in parts["vertices"]:  # a stored table without a key: its rows' identity
        if v.get("key") is None and read[v["name"].lower()][1] is not None:
            v["key"] = ROW

    def source(item: dict, **ends) -> TableSource:
        return TableSource(item["name"], read[item["name"].lower()][0], None, item.get("key"),
                           _listed(item["properties"]), labels=_listed(item["labels"] or None),
                           except_=tuple(item.get("except", [])), stored=item["stored"],
                           row_labels=tuple(item.get("row_labels", [])),
                           row_label_column=item.get("row_label_column"), **ends)

    vertex_tables = tuple(source(v) for v in parts["vertices"])
    edge_tables = tuple(source(e, source=e["source"], destination=e["destination"],
                               source_key=e["source_key"], destination_key=e["destination_key"])
                        for e in parts["edges"])
    versions = tuple((entry.name, entry.table_id, entry.version)
                     for _rows, entry in read.values() if entry is not None)
    return CreatePropertyGraph(parts["graph"], vertex_tables, edge_tables, parts["undirected"],
                               parts["replace"], session_progress(session), versions,
                               parts.get("if_not_exists", False))


def _listed(items) -> tuple | None:
    return None if items is None else tuple(items)


def _foreign_key(entry, item: dict, side: str, vertex: dict) -> tuple[str, str | None]:
    """(edge column, referenced column) of ``SOURCE persons`` without KEY: the edge table's
    one foreign key to the vertex table (with several, which one is meant must be said)."""
    what = f"edge table {item['name']}"
    usage = (f"name the columns: {side.upper()} KEY (column) REFERENCES {item[side]} "
             "(column)")
    if entry is None:
        raise InvalidInputError(f"{what}: {side.upper()} {item[side]} without KEY needs a "
                                f"stored table with a foreign key to it; {usage}")
    targets = {(vertex.get("stored") or vertex["table"]).lower(), vertex["table"].lower()}
    found = [fk for fk in entry.foreign_keys
             if fk.table.lower() in targets or split_last(fk.table) in targets]
    if not found:
        raise InvalidInputError(f"{what}: it has no foreign key to {item[side]}; {usage}")
    if len(found) > 1:
        raise InvalidInputError(f"{what}: it has {len(found)} foreign keys to {item[side]}, so "
                                f"which one {side.upper()} means is not said; {usage}")
    fk = found[0]
    if len(fk.columns) != 1:
        raise InvalidInputError(f"{what}: its foreign key to {item[side]} has several "
                                f"columns; {usage}")
    return fk.columns[0], fk.references[0] if fk.references else None


def split_last(name: str) -> str:
    return name.lower().rsplit(".", 1)[-1]


def _vertex(vertices: dict, name: str, items: list[dict]) -> dict | None:
    """The vertex table an edge table references: by its name, its table's, or a label."""
    found = vertices.get(name.lower())
    if found is not None:
        return found
    for v in items:
        if v["table"].lower() == name.lower() or name.lower() in (
                label.lower() for label in v.get("labels") or []):
            return v
    return None


def show_property_graphs(session: "Session") -> pa.Table:
    """``SHOW PROPERTY GRAPHS``: each property graph with its vertex and edge labels."""
    rows = []
    for entry in sorted(session.catalog.entries(), key=lambda e: e.name):
        schema = PropertySchema.of(entry)
        if schema is None:
            continue
        rows.append((entry.name,
                     ", ".join(n for v in schema.vertex_labels for n in v.label_names),
                     ", ".join(n for e in schema.edge_labels for n in e.label_names),
                     ", ".join(schema.tables)))
    return pa.table({"property_graph": pa.array([r[0] for r in rows], pa.string()),
                     "vertex_labels": pa.array([r[1] for r in rows], pa.string()),
                     "edge_labels": pa.array([r[2] for r in rows], pa.string()),
                     "tables": pa.array([r[3] for r in rows], pa.string())})


def describe_property_graph(name: str, schema: PropertySchema) -> pa.Table:
    """``DESCRIBE PROPERTY GRAPH g`` as DuckPGQ shows it: a row per element table (vertex
    tables first) with its table, label, the source and destination tables of an edge table
    with their key and foreign key columns, the column and labels of ``LABEL l IN column
    (...)``, and the table's catalog and schema."""
    vertices = {v.name: v for v in schema.vertex_labels}
    rows = []

    def split(table: str) -> tuple[str, str]:
        schema_name, _, table_name = table.rpartition(".")
        return table_name, schema_name if schema_name.lower() != "main" else ""

    for v in schema.vertex_labels:
        table, in_schema = split(v.table)
        rows.append((table, v.label_names[0], True, None, None, None, None, None, None,
                     v.column_of(v.row_label_property) if v.row_labels else None,
                     list(v.row_labels) or None, in_schema))
    for e in schema.edge_labels:
        table, in_schema = split(e.table)
        ends = []
        for side, column in ((e.source, e.source_key), (e.destination, e.destination_key)):
            vertex = vertices[side]
            key = vertex.column_of(vertex.key)
            ends += [split(vertex.table)[0], [key] if not key.startswith("__") else [],
                     [column]]
        rows.append((table, e.label_names[0], False, *ends, None, None, in_schema))
    text, texts = pa.string(), pa.list_(pa.string())
    types = [text, text, pa.bool_(), text, texts, texts, text, texts, texts, text, texts, text]
    names = ["table_name", "label", "is_vertex_table", "source_table", "source_pk", "source_fk",
             "destination_table", "destination_pk", "destination_fk", "discriminator",
             "sub_labels", "schema"]
    columns = {"property_graph": pa.array([name] * len(rows), text)}
    columns.update({n: pa.array([r[i] for r in rows], t) for i, (n, t) in
                    enumerate(zip(names, types))})
    columns["catalog"] = pa.nulls(len(rows), text)
    order = ["property_graph", *names[:-1], "catalog", "schema"]
    return pa.table({n: columns[n] for n in order})
