"""Creating property graphs: ``CREATE PROPERTY GRAPH`` (SQL/PGQ), ``Connection.
create_property_graph`` and ``graphdb ingest --vertex-table/--edge-table`` each name vertex and
edge tables with labels; here they become one :class:`graphdb.executor.plan.CreatePropertyGraph`
(each table's rows a plan node: a file DuckDB reads, a table of the connection, an object of the
program), which :mod:`graphdb.executor.writes.property_graph` builds and stores as one graph."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from graphdb.executor.plan import CreatePropertyGraph, PlanNode, RelationalQuery, TableSource

from .errors import CatalogError
from .loading import check_graph_name, progress_for, summary

if TYPE_CHECKING:
    from .session import Session

__all__ = ["create_property_graph", "file_rows", "refuse_existing"]


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
    from graphdb.executor.plan import ValuesScan

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
