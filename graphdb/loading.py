"""Loading graphs: ``Connection.ingest`` of files and Python objects, and the loads of SQL
(``COPY g FROM 'edges' (...)``, ``CREATE [OR REPLACE] GRAPH g FROM 'edges' (...)``), all planned
as one :class:`graphdb.executor.plan.LoadGraph` and run by the session's runner."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from graphdb.catalog import IngestOptions
from graphdb.executor.plan import LoadGraph, PlanNode

from .errors import CatalogError
from .interop import ingest_objects, is_path
from .query.names import is_sql_keyword
from .settings import parse_bytes

if TYPE_CHECKING:
    from .session import Session

__all__ = ["check_graph_name", "ingest", "load_plan", "progress_for", "summary"]


def check_graph_name(graph: str) -> None:
    """A new graph's name must work unquoted in queries."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(graph)) and is_sql_keyword(str(graph)):
        raise CatalogError(f"'{graph}' is an SQL keyword: a graph name must work unquoted "
                           f"in queries (bfs(g, 1), g.edges); choose another, e.g. "
                           f"{graph}_graph")


def load_plan(session: "Session", graph: str, edges: "str | PlanNode",
              vertices: "str | PlanNode | None" = None, *,
              memory_limit: int | str | None = None, temp_dir: Any = None,
              replace: bool = False, progress: Any = False, **options: Any) -> LoadGraph:
    """The plan loading ``edges`` (a file, a glob, or a plan node's rows) as graph ``graph``
    with the options of ``graphdb ingest``."""
    check_graph_name(graph)
    weight = options.get("weight", "auto")  # the column named weight, if any / none / a name
    options["weight"] = None if weight == "auto" else "" if weight is None else weight
    limit = None if memory_limit is None else parse_bytes(memory_limit, "memory_limit")
    ingest_options = IngestOptions(memory_limit=limit,
                                   temp_dir=None if temp_dir is None else str(temp_dir),
                                   **options)
    return LoadGraph(graph, edges if isinstance(edges, PlanNode) else str(edges),
                     vertices if vertices is None or isinstance(vertices, PlanNode)
                     else str(vertices), ingest_options, replace,
                     progress_for(session, progress))


def progress_for(session: "Session", progress: Any):
    """What a load reports its progress to: ``True`` a bar on stderr, ``False`` the session's
    progress handler if it has one, else the given :class:`graphdb.catalog.Progress`."""
    if progress is True:
        from .progress import terminal_progress

        return terminal_progress()
    if progress is False and session.progress is not None:
        from .progress import HandlerProgress

        return HandlerProgress(session.progress)
    return progress or None


def summary(table: pa.Table) -> dict:
    """A load's summary (its plan's one row) as ``Connection.ingest`` returns it."""
    row = table.to_pylist()[0]
    seconds = row["seconds"]
    return {
        "graph": row["graph"], "vertices": row["vertices"], "edges": row["edges"],
        "stored_edges": row["stored_edges"], "directed": row["directed"],
        "weighted": row["weighted"], "self_loops_dropped": row["self_loops_dropped"],
        "duplicates_merged": row["duplicates_merged"],
        "weights_kept": {k: row[f"weights_{k}"] for k in ("nan", "infinite", "negative")},
        "bytes_stored": row["bytes_stored"], "seconds": seconds,
        "edges_per_second": row["edges"] / seconds if seconds > 0 else 0.0,
    }


def ingest(session: "Session", graph: str, edges: Any, *, vertices: Any = None,
           **options: Any) -> dict:
    """``Connection.ingest`` (see there): Python objects through a temporary Arrow file, files
    straight into the catalog's ingest; returns the summary."""
    session.writable()  # a session opened for reading is reopened read-write (or refuses)
    if not is_path(edges) or (vertices is not None and not is_path(vertices)):
        return ingest_objects(session, graph, edges, vertices, options)
    return summary(session.run(load_plan(session, graph, edges, vertices, **options)))
