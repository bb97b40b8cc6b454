"""Plans of INSERTs of literal rows into stored tables, kept from one run to the next.

The statement cache (:mod:`graphdb.statement_cache`) keys a query's plan by the database's
generation, which every commit raises: a program inserting row after row with the same
``INSERT INTO t VALUES (?, ?, ?)`` would bind and plan it again at each statement, reading the
catalog each time. What such a plan depends on is the table only: its columns and their types
(the column list, the conversion of the values) and what EXPLAIN says of it. So the plan of an
``INSERT INTO t [(columns)] VALUES ...`` of literals and parameters (:mod:`.fast_values`), with
at least one parameter, into an unqualified stored table is kept under its text and the table's
*shape* (its generation's id, its columns and their types), read from the statement's committed
view of the tables, and only its rows are made anew at each run.

Nothing the operator decides is kept: it reads the table's newest entry under the writer lock
as always, and checks the rows against it (their number of columns, their types converted to
the columns', the constraints), and the property graphs over the table are looked up when the
rows are recorded. A plan kept for a shape that changed is never used (the key differs), and
one kept for a table dropped since only fails as the statement would (the table is found
missing by the operator).
"""

from __future__ import annotations

import dataclasses
import weakref
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from graphdb.executor.plan import ValuesScan
from graphdb.executor.plan_tables import TableInsert

from .fast_values import FastValues
from .table_writes import column_types
from .values import rows_table

if TYPE_CHECKING:
    from graphdb.executor.physical.nodes import PhysicalNode

    from ..session import Session
    from .parser import Statement

__all__ = ["KEPT_PLANS", "kept_insert"]

#: Plans kept per connection (least recently used dropped first).
KEPT_PLANS = 64

_PLANS: "weakref.WeakKeyDictionary[Session, OrderedDict]" = weakref.WeakKeyDictionary()


@dataclasses.dataclass(frozen=True)
class _Kept:
    physical: "PhysicalNode"  # the plan as made, its VALUES replaced at each run
    names: tuple[str, ...]  # the columns the rows are for
    types: tuple  # their Arrow types, which the rows are built in


def _shape(entry) -> tuple:
    return (entry.table_id, entry.arrow_schema, entry.columns)


def kept_insert(session: "Session", statement: "Statement", parameters: Any,
                plan) -> "PhysicalNode | None":
    """The physical plan of ``statement`` (an INSERT) with this run's rows, from the plan kept
    for its text and its table's shape, or made by ``plan(snapshot)`` (the logical plan) and
    kept; None where the statement is not one whose plan is kept (the handler then plans it
    as every statement)."""
    ast = statement.ast
    source = ast.expression
    node = ast.this.this if isinstance(ast.this, exp.Schema) else ast.this
    # Only statements with parameters: a text of literals is a new key each time, and its plan
    # would hold its rows while it waits in vain to be used again.
    if not parameters or not isinstance(source, FastValues) or session.catalog.search_path or \
            node.args.get("db") is not None or session.transaction.open:
        return None
    entry = session.catalog.tables_now().find(node.name)
    if entry is None:
        return None  # (the general path says what is wrong)
    plans = _PLANS.setdefault(session, OrderedDict())
    key = (statement.text, _shape(entry))
    kept = plans.get(key)
    if kept is None:
        snapshot = session.snapshot()
        logical = plan(snapshot)
        physical = session.runner.plan(logical, snapshot)
        values = logical.rows
        if not isinstance(logical, TableInsert) or not isinstance(values, ValuesScan) or \
                len(physical.inputs) != 1:
            return physical
        names = tuple(values.table.column_names)
        kept = _Kept(physical, names, tuple(column_types(entry, list(names))))
        plans[key] = kept
        while len(plans) > KEPT_PLANS:
            plans.popitem(last=False)
        return physical
    plans.move_to_end(key)
    rows = rows_table(source.rows(parameters), list(kept.names), list(kept.types))
    physical = kept.physical
    values = dataclasses.replace(physical.logical.rows, table=rows)
    logical = dataclasses.replace(physical.logical, rows=values)
    scan = dataclasses.replace(physical.inputs[0], logical=values,
                               label=f"VALUES ({rows.num_rows} rows)")
    return dataclasses.replace(physical, logical=logical, inputs=(scan,))
