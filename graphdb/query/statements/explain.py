"""EXPLAIN [ANALYZE]: the physical plan of a statement (a query, a write, a load), as lines;
with ANALYZE the statement runs and each operator's time, rows and metrics are shown."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from graphdb.executor.arrays import to_table

from ...errors import BinderError, InvalidInputError
from .. import grammar
from ..explain import explain_lines, sql_plan_lines
from . import Handler, handler_for

if TYPE_CHECKING:
    from graphdb.executor.physical import PhysicalNode

    from ...session import Session
    from ..parser import Statement

__all__ = ["HANDLERS", "explain"]


class Explain(Handler):
    kind = "explain"
    parameters = True

    def execute(self, session: "Session", statement: "Statement", parameters: Any
                ) -> tuple[pa.Table, str | None]:
        inner = statement.explained()
        handler = handler_for(inner.ast)
        if not handler.explainable:
            raise BinderError(f"EXPLAIN shows how a query runs; {handler.shown} is not a query")
        if not handler.explains(session, inner):
            raise BinderError(f"EXPLAIN does not show {handler.shown} of a stored table yet (its "
                              "write is not a plan); EXPLAIN shows writes to graphs")
        if parameters and not handler.parameters:
            raise InvalidInputError(f"{handler.shown} takes no parameters")
        handler.check(session, inner)
        snapshot = session.snapshot()
        with session.catalog.snapshot():
            logical = handler.plan(session, inner, parameters, snapshot)
            plan = session.runner.plan(logical, snapshot)
            table, ran = explain(session, plan, statement.analyze)
        if ran is not None:  # it ran: what its statement does after running (a commit's)
            handler.finish(session, inner, ran)
        return table, None


def explain(session: "Session", plan: "PhysicalNode", analyze: bool
            ) -> tuple[pa.Table, pa.Table | None]:
    """EXPLAIN's table of ``plan`` (one line per row) and, with ``analyze``, the rows the plan
    gave when it ran first."""
    runner = session.runner
    stats = None
    total = None
    ran = None
    if analyze:
        start = time.perf_counter()
        runner.profile = True
        try:
            ran = runner.run(plan)
        finally:
            runner.profile = False
        total = time.perf_counter() - start
        stats = dict(runner.stats)
    sql_plans = {}
    for node in plan.walk():
        if node.kind != "RelationalQuery" or node.logical.direct is not None:
            continue
        if analyze:  # (a mask or start set kept from an earlier statement is not run)
            ran = stats.get(id(node))
            trees = (ran.metrics.get("duckdb_profile") or []) if ran is not None else []
        else:
            trees = runner.sql_plan(node)
        sql_plans[id(node)] = sql_plan_lines(trees, runner.relations(node), analyze)
    lines = explain_lines(plan, stats, sql_plans)
    if total is not None:
        lines.append(f"Total: {total * 1000:.2f} ms")
    return to_table({"plan": lines}), ran


HANDLERS = {grammar.Explain: Explain()}
