"""COPY and the loads: ``COPY (query) TO 'file'`` (the query's rows written by
:mod:`graphdb.export`), and ``COPY g FROM 'edges'``, ``CREATE GRAPH g FROM 'edges'`` and
``CREATE GRAPH h AS GRAPH g WHERE ...`` (a :class:`~graphdb.executor.plan.LoadGraph`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from graphdb.executor.arrays import to_table
from graphdb.executor.plan import PlanNode

from ...errors import CatalogError, InvalidInputError
from .. import grammar
from ..binder import bind_query
from ..copy import LOAD_OPTIONS
from . import Handler

if TYPE_CHECKING:
    from graphdb.executor.snapshot import StatementCatalog

    from ...session import Session
    from ..parser import Statement

__all__ = ["HANDLERS", "Load", "query_plan"]


def query_plan(session: "Session", sql: str, snapshot: "StatementCatalog",
               parameters: Any = None) -> PlanNode:
    """The logical plan of the query ``sql`` (bound as any statement is)."""
    from ..parser import parse

    query = parse(sql)
    return bind_query(query.ast, query.text, parameters, session.context(snapshot))


class CopyTo(Handler):
    """``COPY (query) TO 'file' [(...)]``: its plan is the query's; the rows it gives are
    written to the file (:func:`graphdb.export.write_table`)."""

    kind = "copy_to"
    parameters = True

    def files(self, statement: "Statement") -> str | None:
        return "COPY ... TO writes a file"

    def plan(self, session: "Session", statement: "Statement", parameters: Any,
             snapshot: "StatementCatalog") -> PlanNode:
        return query_plan(session, statement.ast.spec["query"], snapshot, parameters)

    def finish(self, session: "Session", statement: "Statement", table: pa.Table
               ) -> tuple[pa.Table, str | None]:
        from ...export import write_table

        spec = statement.ast.spec
        rows = write_table(table, spec["path"], spec["options"])
        return to_table({"Count": [rows]}), None


class Load(Handler):
    """What the loads share (and CREATE PROPERTY GRAPH): a writable database; IF NOT EXISTS and
    the refusal of an existing graph before anything is read; the ingest's summary line."""

    kind = "load_graph"
    explainable = True
    leased = False
    #: what IF NOT EXISTS says was not done
    skipped = "nothing loaded"

    def check(self, session: "Session", statement: "Statement") -> None:
        session.writable()

    def replaces(self, statement: "Statement") -> bool:
        return bool(_options(statement).get("replace"))

    def refuse(self, graph: str) -> None:
        raise CatalogError(f"graph '{graph}' already exists: CREATE OR REPLACE GRAPH {graph} "
                           f"..., COPY {graph} FROM ... (REPLACE), or DROP GRAPH {graph} first")

    def execute(self, session: "Session", statement: "Statement", parameters: Any
                ) -> tuple[pa.Table, str | None]:
        graph = statement.ast.name
        if not self.replaces(statement) and \
                graph.lower() in (g.lower() for g in session.catalog.names()):
            if statement.ast.exists:  # CREATE GRAPH IF NOT EXISTS
                return pa.table({}), f"graph '{graph}' exists; {self.skipped}"
            self.refuse(graph)
        return super().execute(session, statement, parameters)

    def finish(self, session: "Session", statement: "Statement", table: pa.Table
               ) -> tuple[pa.Table, str | None]:
        from ...cli import ingest_summary
        from ...loading import summary

        return pa.table({}), ingest_summary(summary(table), None)


def _options(statement: "Statement") -> dict[str, Any]:
    """A load's options by the ingest's keywords (checked)."""
    options = {LOAD_OPTIONS[k]: v for k, v in statement.ast.spec["options"].items()}
    for name in ("undirected", "replace", "header"):
        if name in options and not isinstance(options[name], bool):
            raise InvalidInputError(f"option {name.upper()} is TRUE or FALSE")
    return options


class LoadFile(Load):
    """``COPY g FROM 'edges' (...)`` and ``CREATE [OR REPLACE] GRAPH g FROM 'edges' (...)``:
    the ingest's options by their SQL names."""

    def files(self, statement: "Statement") -> str | None:
        return "this load reads a file"

    def plan(self, session: "Session", statement: "Statement", parameters: Any,
             snapshot: "StatementCatalog") -> PlanNode:
        from ...loading import load_plan

        options = _options(statement)
        vertices = options.pop("vertices", None)
        return load_plan(session, statement.ast.name, statement.ast.spec["path"], vertices,
                         **options)


class KeepSubgraph(Load):
    """``CREATE GRAPH h AS GRAPH g WHERE ...``: the subgraph stored as a graph of its own (its
    vertices with their properties, its edges with theirs, g's weight column and direction),
    as of now: later changes to g do not reach it."""

    def plan(self, session: "Session", statement: "Statement", parameters: Any,
             snapshot: "StatementCatalog") -> PlanNode:
        from graphdb.executor.graph_tables import weight_column

        from ...loading import load_plan
        from ..dialect import span
        from ..subgraph import split_conditions
        from ..tables import outer_columns

        node = statement.ast.args["subgraph"]
        context = session.context(snapshot)
        if node.args.get("labels") or context.schema(node.this.name) is not None:
            raise InvalidInputError("CREATE GRAPH ... AS keeps a subgraph of a graph of one "
                                    "vertex and one edge type; of a property graph, CREATE "
                                    "PROPERTY GRAPH over its tables (g.Person, g.knows) instead")
        source, conditions = split_conditions(node, context, outer_columns)
        text = node.meta["text"]

        def written(condition) -> str:
            where = span(condition)
            return f"({text[where[0]:where[1] + 1]})" if where else \
                f"({condition.sql('duckdb')})"

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
        return load_plan(session, statement.ast.name, query_plan(session, edges, snapshot),
                         query_plan(session, vertices, snapshot), undirected=not entry.directed,
                         weight=weight_column(entry), **_options(statement))


HANDLERS = {grammar.CopyTo: CopyTo(), grammar.LoadGraph: LoadFile(),
            grammar.CreateGraphAs: KeepSubgraph()}
