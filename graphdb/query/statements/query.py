"""Queries: SELECT (any query sqlglot parses: set operations, VALUES, ...) and DESCRIBE."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from graphdb.executor.arrays import to_table
from graphdb.executor.plan import DescribeGraph, PlanNode, ValuesScan

from ...errors import BinderError
from ..binder import bind_query
from . import Handler

if TYPE_CHECKING:
    from graphdb.executor.snapshot import StatementCatalog

    from ...session import Session
    from ..parser import Statement

__all__ = ["HANDLERS", "describe_target"]


class Query(Handler):
    kind = "select"
    parameters = True
    explainable = True

    def plan(self, session: "Session", statement: "Statement", parameters: Any,
             snapshot: "StatementCatalog") -> PlanNode:
        return bind_query(statement.ast, statement.text, parameters, session.context(snapshot))

    def execute(self, session: "Session", statement: "Statement", parameters: Any
                ) -> tuple[pa.Table, str | None]:
        """Plan (or take the plan kept for the same text, parameters and state: see
        :mod:`graphdb.statement_cache`) and run, inside the statement's catalog snapshot."""
        from ...statement_cache import cacheable, plan_key

        snapshot = session.snapshot()
        with session.catalog.snapshot() as held:
            key = plan_key(session, statement, parameters, held)
            physical = session.plans.get(*key) if key is not None else None
            if physical is None:
                physical = session.runner.plan(
                    self.plan(session, statement, parameters, snapshot), snapshot)
                if key is not None and cacheable(physical):
                    session.plans.put(*key, physical)
            return session.runner.run(physical), None


def describe_target(ast: exp.Expression, text: str) -> tuple[str, Any]:
    """('graph', name), ('table', 'g.edges' SQL) or ('query', its text) of a DESCRIBE
    statement (``text``)."""
    target = ast.this
    if isinstance(target, exp.Table) and target.args.get("db") is not None:
        return "table", target.sql(dialect="duckdb")
    if isinstance(target, exp.Query):
        return "query", text.split(None, 1)[1]
    return "graph", target.name


class Describe(Handler):
    """``DESCRIBE g`` (the graph's properties), ``DESCRIBE g.edges`` or ``DESCRIBE SELECT ...``
    (the columns and their types)."""

    kind = "describe"
    explainable = True

    def plan(self, session: "Session", statement: "Statement", parameters: Any,
             snapshot: "StatementCatalog") -> PlanNode:
        from ..parser import parse

        kind, target = describe_target(statement.ast, statement.text)
        if statement.ast.args.get("kind") == "PROPERTY GRAPH":
            from graphdb.executor.property_graph import PropertySchema

            from ...property_graphs import describe_property_graph

            entry = snapshot.get(target)
            schema = PropertySchema.of(entry)
            if schema is None:
                raise BinderError(f"'{entry.name}' is a graph, not a property graph: DESCRIBE "
                                  f"{entry.name}")
            return ValuesScan("describe", describe_property_graph(entry.name, schema))
        if kind in ("graph", "table"):  # a stored table: its columns and constraints
            from ..table_statements import describe_table

            found = describe_table(session, target if kind == "graph" else
                                   statement.ast.this.sql(dialect="duckdb").replace('"', ""))
            if found is not None:
                return ValuesScan("describe", found)
        if kind == "graph":
            return DescribeGraph(snapshot.get(target).name)
        if kind == "table":
            query = parse(f"SELECT * FROM {target} LIMIT 0")
        else:
            query = parse(target)
        logical = bind_query(query.ast, query.text, None, session.context(snapshot))
        schema = session.run(logical, snapshot).schema
        return ValuesScan("describe", to_table({
            "column": [f.name for f in schema], "type": [str(f.type) for f in schema]}))


HANDLERS = {exp.Query: Query(), exp.Describe: Describe()}
