"""Plans of statements already seen: a query run again skips binding and planning.

A query's physical plan is a function of its text, its parameters' values and what it was
planned against: the committed catalog (every graph's version, the property graphs, the tables),
the connection's settings (device, memory limit, threads ...), the tables and table functions the
program registered, and an open transaction's own changes. The cache keeps a plan under its text
and parameters together with that state, and hands it out only while the state is the same:

- **the catalog** by the database's generation as the statement's catalog snapshot read it
  (:attr:`graphdb.catalog.Snapshot.generation`: LMDB's transaction id, which every commit of
  this process or another raises, with the epoch of the file this process has open, which a
  copy-compaction renews): any commit at all (a write, CREATE/DROP, a load, a compaction)
  retires every plan made before it. The test is the snapshot the statement reads anyway,
  under its lease: a plan is never run against data that snapshot does not hold;
- **the settings** by value (they are an immutable record, replaced by SET and RESET), and the
  device the planner was given (its kind and budget);
- **registered tables and table functions** by a counter their registration raises;
- **a transaction** with changes of its own: nothing is cached or reused inside it.

Plans that hold values read while planning are not kept: a built-in table function's rows
(``settings()``, ``graphs()``, ``buffer_stats()`` ...), DESCRIBE, EXPLAIN, writes, DDL. Parameter
values are part of the key with their types (``1``, ``1.0`` and ``True`` are equal in Python, not
in SQL); a value that cannot be a key (an array) bypasses the cache.

:meth:`graphdb.Connection.prepare` names a statement to run many times; ``execute`` uses the same
cache, so a statement repeated as text is as fast. The cache is the session's
(:attr:`graphdb.session.Session.plans`), consulted by the query handler
(:mod:`graphdb.query.statements.query`) inside the statement's catalog snapshot.
"""

from __future__ import annotations

import datetime
import decimal
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Hashable

__all__ = ["CACHED_PLANS", "PlanState", "PreparedStatement", "StatementCache", "cacheable",
           "parameters_key", "plan_key"]

#: Plans kept per connection (least recently used dropped first).
CACHED_PLANS = 256


@dataclass(frozen=True)
class PlanState:
    """What a plan was made against (see the module docstring); plans are reused only where
    it is equal."""

    catalog: Any
    settings: Any
    registry: int
    #: the device the plan's operators were placed on (and its budget)
    device: Any = None


class _Unkeyable(Exception):
    """A parameter value that cannot be part of a key (an array, an object)."""


#: Parameter values of these types are keys as they are (with their type).
_PLAIN = (type(None), bool, int, float, str, bytes, datetime.date, datetime.time,
          datetime.timedelta, decimal.Decimal, uuid.UUID)


def _value_key(value: Any) -> Hashable:
    if isinstance(value, _PLAIN):
        return (type(value).__name__, value)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_value_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((str(k), _value_key(v)) for k, v in value.items())))
    raise _Unkeyable


def parameters_key(parameters: Any) -> Hashable | None:
    """A key for the parameter values, with their types (``1``, ``1.0`` and ``True`` are equal
    in Python, not in SQL); None where one cannot be a key."""
    try:
        return _value_key(parameters)
    except _Unkeyable:
        return None


def cacheable(plan) -> bool:
    """Whether a physical plan may be run again: none of its nodes holds rows computed while
    planning, except tables the program registered (whose registration the state follows)."""
    for node in plan.walk():
        logical = node.logical
        if type(logical).__name__ == "ValuesScan" and not logical.kept:
            return False
        if type(logical).__name__ in ("ShowGraphs", "DescribeGraph"):
            return False
    return True


def plan_key(session, statement, parameters: Any, held) -> tuple | None:
    """(text, parameters, state) a query's plan is kept under in ``session.plans``, or None
    where it is not kept: an open transaction (its own changes), parameters that cannot be a
    key, a catalog snapshot (``held``) read without a generation."""
    if held.generation is None or session.transaction.open or session.catalog.pending:
        return None
    values = parameters_key(parameters)
    if values is None:
        return None
    return (statement.text, values,
            PlanState(held.generation, session.settings, session.registry,
                      session.runner.device_for()))


class StatementCache:
    """Physical plans by (statement text, parameters), each with the :class:`PlanState` it was
    made against."""

    def __init__(self, capacity: int = CACHED_PLANS):
        self.capacity = capacity
        self._plans: OrderedDict[tuple, tuple[PlanState, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, text: str, parameters: Hashable, state: PlanState):
        """The plan of ``text`` with ``parameters`` made against ``state``, or None."""
        key = (text, parameters)
        with self._lock:
            found = self._plans.get(key)
            if found is None or found[0] != state:
                self.misses += 1
                return None
            self._plans.move_to_end(key)
            self.hits += 1
            return found[1]

    def put(self, text: str, parameters: Hashable, state: PlanState, plan) -> None:
        with self._lock:
            self._plans[(text, parameters)] = (state, plan)
            self._plans.move_to_end((text, parameters))
            while len(self._plans) > self.capacity:
                self._plans.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._plans.clear()

    def __len__(self) -> int:
        return len(self._plans)


class PreparedStatement:
    """A statement parsed once, to run many times with parameters
    (:meth:`graphdb.Connection.prepare`): ``stmt.execute([7])``, or ``con.execute(stmt, [7])``.
    Its plan is kept and reused as :class:`StatementCache` says."""

    def __init__(self, connection, sql: str, statement):
        self.connection, self.sql, self.statement = connection, sql, statement

    def __str__(self) -> str:
        return self.sql

    def execute(self, parameters: Any = None):
        """Run the statement with ``parameters`` (a sequence for ``?``, a dict for ``$name``):
        a :class:`graphdb.Result`."""
        return self.connection.execute(self.sql, parameters)

    def __repr__(self) -> str:
        return f"<graphdb.PreparedStatement {self.sql!r}>"
