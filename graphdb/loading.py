"""Loading graphs: ``Connection.ingest`` of files and Python objects, and the SQL statements
``COPY g FROM 'edges' (...)`` and ``CREATE [OR REPLACE] GRAPH g FROM 'edges' (...)``."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from graphdb.catalog import IngestOptions

from .errors import CatalogError, InvalidInputError, translate
from .interop import ingest_objects, is_path
from .query.copy import LOAD_OPTIONS
from .query.names import is_sql_keyword
from .settings import parse_bytes

if TYPE_CHECKING:
    from .connection import Connection
    from .query.parser import Statement

__all__ = ["ingest", "load_statement"]


def ingest(con: "Connection", graph: str, edges: Any, *, vertices: Any = None,
           memory_limit: int | str | None = None, temp_dir: Any = None, replace: bool = False,
           progress: Any = False, **options: Any) -> dict:
    """``Connection.ingest`` (see there): Python objects through a temporary Arrow file, files
    straight into the catalog's ingest; returns the summary."""
    con._writable()  # a connection opened for reading is reopened read-write (or refuses)
    if not is_path(edges) or (vertices is not None and not is_path(vertices)):
        return ingest_objects(con, graph, edges, vertices, dict(
            options, memory_limit=memory_limit, temp_dir=temp_dir, replace=replace,
            progress=progress))
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(graph)) and is_sql_keyword(str(graph)):
        raise CatalogError(f"'{graph}' is an SQL keyword: a graph name must work unquoted "
                           f"in queries (bfs(g, 1), g.edges); choose another, e.g. "
                           f"{graph}_graph")
    weight = options.get("weight", "auto")  # the column named weight, if any / none / a name
    options["weight"] = None if weight == "auto" else "" if weight is None else weight
    start = time.perf_counter()
    try:
        limit = None if memory_limit is None else parse_bytes(memory_limit, "memory_limit")
        ingest_options = IngestOptions(
            vertices=None if vertices is None else str(vertices), memory_limit=limit,
            temp_dir=None if temp_dir is None else str(temp_dir), **options)
        if progress is True:
            from .progress import terminal_progress

            progress = terminal_progress()
        elif progress is False and con._progress is not None:
            from .progress import HandlerProgress

            progress = HandlerProgress(con._progress)
        old = con._existing(graph)
        entry = con.catalog.ingest(graph, str(edges), ingest_options, replace=replace,
                                   progress=progress or None)
    except Exception as exc:
        translated = translate(exc)
        if translated is exc:
            raise
        raise translated from None
    if old is not None:
        con._runner.forget(old)
    seconds = time.perf_counter() - start
    stats = entry.stats
    return {
        "graph": entry.name, "vertices": entry.num_vertices, "edges": entry.input_edges,
        "stored_edges": entry.num_edges, "directed": entry.directed,
        "weighted": entry.weighted, "self_loops_dropped": stats.get("self_loops_dropped", 0),
        "duplicates_merged": stats.get("duplicates_merged", 0),
        "weights_kept": {k: stats.get(f"weights_{k}", 0) for k in ("nan", "infinite", "negative")},
        "bytes_stored": stats.get("bytes_stored", 0), "seconds": seconds,
        "edges_per_second": entry.input_edges / seconds if seconds > 0 else 0.0,
    }


def load_statement(con: "Connection", statement: "Statement") -> str:
    """COPY g FROM 'edges' (...) and CREATE [OR REPLACE] GRAPH g FROM 'edges' (...): the
    ingest's options by their SQL names; returns the summary line."""
    from .cli import ingest_summary

    options = {LOAD_OPTIONS[k]: v for k, v in statement.options.items()}
    graph = statement.name
    if not options.get("replace") and graph.lower() in (g.lower() for g in con.graphs()):
        if statement.if_exists:  # CREATE GRAPH IF NOT EXISTS
            return f"graph '{graph}' exists; nothing loaded"
        raise CatalogError(f"graph '{graph}' already exists: CREATE OR REPLACE GRAPH "
                           f"{graph} ..., COPY {graph} FROM ... (REPLACE), or DROP GRAPH "
                           f"{graph} first")
    for name in ("undirected", "replace", "header"):
        if name in options and not isinstance(options[name], bool):
            raise InvalidInputError(f"option {name.upper()} is TRUE or FALSE")
    if statement.ast is not None:
        return ingest_summary(keep_subgraph(con, graph, statement.ast, options), None)
    return ingest_summary(con.ingest(graph, statement.path, **options), None)


def keep_subgraph(con: "Connection", graph: str, node, options: dict) -> dict:
    """``CREATE GRAPH h AS GRAPH g WHERE ...``: the subgraph stored as a graph of its own (its
    vertices with their properties, its edges with theirs, g's weight column and direction),
    as of now: later changes to g do not reach it."""
    from graphdb.executor.graph_tables import weight_column

    from .query.dialect import span
    from .query.subgraph import split_conditions
    from .query.tables import outer_columns

    snapshot = con._runner.snapshot()
    if node.args.get("labels") or con.context(snapshot).schema(node.this.name) is not None:
        raise InvalidInputError("CREATE GRAPH ... AS keeps a subgraph of a graph of one vertex "
                                "and one edge type; of a property graph, CREATE PROPERTY GRAPH "
                                "over its tables (g.Person, g.knows) instead")
    source, conditions = split_conditions(node, con.context(snapshot), outer_columns)
    text = node.meta["text"]

    def written(condition) -> str:
        where = span(condition)
        return f"({text[where[0]:where[1] + 1]})" if where else f"({condition.sql('duckdb')})"

    vertex_where = " AND ".join(written(c) for c in conditions["vertices"])
    vertices = f"SELECT * FROM {source}.vertices AS v" + (
        f" WHERE {vertex_where}" if vertex_where else "")
    edge_where = [written(c) for c in conditions["edges"]]
    if vertex_where:
        kept = f"SELECT v.id FROM {source}.vertices AS v WHERE {vertex_where}"
        edge_where += [f"e.src IN ({kept})", f"e.dst IN ({kept})"]
    edges = f"SELECT e.* FROM {source}.edges AS e" + (
        f" WHERE {' AND '.join(edge_where)}" if edge_where else "")
    entry = snapshot.get(source)
    return con.ingest(graph, con.execute(edges).arrow(), vertices=con.execute(vertices).arrow(),
                      undirected=not entry.directed, weight=weight_column(entry), **options)
