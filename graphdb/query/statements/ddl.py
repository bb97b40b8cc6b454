"""Definitions: CREATE GRAPH g (...) (an empty graph), DROP GRAPH, CREATE PROPERTY GRAPH."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from graphdb.executor.plan import CreateGraph, DropGraph, PlanNode

from ...errors import InvalidInputError
from .. import grammar
from . import Handler
from .copy import Load
from .maintenance import outside_transaction

if TYPE_CHECKING:
    from graphdb.executor.snapshot import StatementCatalog

    from ...session import Session
    from ..parser import Statement

__all__ = ["HANDLERS", "Definition"]


class Definition(Handler):
    """A statement whose plan reports a status line (``status``) and no rows."""

    leased = False

    def check(self, session: "Session", statement: "Statement") -> None:
        session.writable()

    def finish(self, session: "Session", statement: "Statement", table: pa.Table
               ) -> tuple[pa.Table, str | None]:
        return pa.table({}), table.column("status")[0].as_py()


class CreateGraphHandler(Definition):
    kind = "create_graph"

    def check(self, session: "Session", statement: "Statement") -> None:
        outside_transaction(session, "CREATE GRAPH")

    def plan(self, session: "Session", statement: "Statement", parameters: Any,
             snapshot: "StatementCatalog") -> PlanNode:
        ast = statement.ast
        options = ast.spec
        vertices = dict(options["vertices"])
        id_type = vertices.pop("id", pa.int64())
        if id_type not in (pa.int64(), pa.string()):
            raise InvalidInputError("a vertex id is BIGINT or VARCHAR, not " + str(id_type))
        edges = dict(options["edges"])
        weight = edges.pop("weight", None)
        if weight is not None and weight not in (pa.float64(), pa.float32(), pa.int64(),
                                                 pa.int32()):
            raise InvalidInputError(f"the weight column is a number, not {weight}")
        for reserved in ("src", "dst"):
            if reserved in edges:
                raise InvalidInputError(f"EDGES lists the properties of an edge; '{reserved}' "
                                        "is always there")
        return CreateGraph(ast.name, directed=not options["undirected"],
                           weighted=weight is not None,
                           id_type="string" if id_type == pa.string() else "int64",
                           vertex_properties=pa.schema(list(vertices.items())),
                           edge_properties=pa.schema(list(edges.items())),
                           replace=options["replace"], if_not_exists=ast.exists)


class DropGraphHandler(Definition):
    kind = "drop_graph"

    def plan(self, session: "Session", statement: "Statement", parameters: Any,
             snapshot: "StatementCatalog") -> PlanNode:
        return DropGraph(statement.ast.name, statement.ast.exists)


class CreatePropertyGraphHandler(Load):
    """``CREATE PROPERTY GRAPH`` (parsed by :mod:`graphdb.query.property_graph_sql`): a table
    is a table of the connection (registered, a graph's ``g.vertices`` or ``g.Person``) or a
    quoted file DuckDB reads."""

    kind = "create_property_graph"
    skipped = "nothing created"

    def replaces(self, statement: "Statement") -> bool:
        return statement.ast.spec["replace"]

    def files(self, statement: "Statement") -> str | None:
        parts = statement.ast.spec
        if any(item["file"] for item in parts["vertices"] + parts["edges"]):
            return "this property graph reads files"
        return None

    def refuse(self, graph: str) -> None:
        from ...property_graphs import refuse_existing

        refuse_existing(graph)

    def check(self, session: "Session", statement: "Statement") -> None:
        outside_transaction(session, "CREATE PROPERTY GRAPH")

    def plan(self, session: "Session", statement: "Statement", parameters: Any,
             snapshot: "StatementCatalog") -> PlanNode:
        from ...property_graphs import plan_statement

        return plan_statement(session, statement.ast.spec, snapshot)


def session_progress(session: "Session"):
    """What a statement's load reports progress to: the session's handler, if any."""
    from ...loading import progress_for

    return progress_for(session, False)


HANDLERS = {grammar.CreateGraph: CreateGraphHandler(), grammar.DropGraph: DropGraphHandler(),
            grammar.CreatePropertyGraph: CreatePropertyGraphHandler()}
