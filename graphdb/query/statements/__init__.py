"""Statement handlers: one per kind of parsed statement, in a table keyed by the class of the
statement's tree (:mod:`graphdb.query.grammar`, sqlglot's), one module per family:

============== ========================================================================
module          statements
============== ========================================================================
``query``       SELECT (any query), DESCRIBE
``write``       INSERT, UPDATE, DELETE, DETACH DELETE (of ``g.edges`` / ``g.vertices``)
``ddl``         CREATE GRAPH g (...), DROP GRAPH, CREATE PROPERTY GRAPH
``copy``        COPY ... TO 'file'; loads: COPY g FROM, CREATE GRAPH g FROM | AS GRAPH
``settings``    SET, RESET, SHOW GRAPHS | SETTINGS | FUNCTIONS
``transaction`` BEGIN, COMMIT, ROLLBACK
``maintenance`` CHECKPOINT, VACUUM, PRAGMA integrity_check
``explain``     EXPLAIN [ANALYZE]
``tables``      CREATE/DROP/ALTER TABLE, TRUNCATE, COPY t FROM, views, schemas, SHOW TABLES
============== ========================================================================

A handler binds its statement into a logical plan (:meth:`Handler.plan`: nodes of
:mod:`graphdb.executor.plan`, for queries, writes and definitions alike), which the session's
runner plans and runs, so EXPLAIN shows every such statement as it shows a query; statements that
only change the session (SET, BEGIN, ...) are carried out by :meth:`Handler.execute` itself.

A new family is a module with its handlers (subclasses of :class:`Handler`) and a ``HANDLERS``
dict from the tree classes it handles to them, listed in :data:`FAMILIES`; a statement sqlglot
does not parse gets its grammar rule in :mod:`graphdb.query.grammar` first.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ...errors import BinderError

if TYPE_CHECKING:
    from sqlglot import exp

    from graphdb.executor.plan import PlanNode
    from graphdb.executor.snapshot import StatementCatalog

    from ...session import Session
    from ..parser import Statement

__all__ = ["FAMILIES", "Handler", "handler_for", "handlers"]

#: The handler modules of this package, one per family of statements.
FAMILIES = ("query", "write", "ddl", "copy", "settings", "transaction", "maintenance",
            "explain", "tables")


class Handler:
    """How one kind of statement is carried out (see the module docstring)."""

    #: the statement's kind as results report it (``Result.kind``)
    kind = ""
    #: whether it takes parameters (``?``, ``$1``, ``$name``)
    parameters = False
    #: whether EXPLAIN shows its plan (queries, writes, loads); the others are refused there
    explainable = False
    #: whether it runs inside the catalog snapshot of its statement (its lease keeps what it
    #: reads on disk): every statement that binds names against the catalog and reads data
    leased = True

    def files(self, statement: "Statement") -> str | None:
        """What the statement does with files outside the database, as the start of a
        refusal ("COPY ... TO writes a file"), or None when it touches none (a connection
        without external access refuses the first kind)."""
        return None

    def check(self, session: "Session", statement: "Statement") -> None:
        """Before planning: what the session must allow (a writable database, no open
        transaction for a definition, ...)."""

    def plan(self, session: "Session", statement: "Statement", parameters: Any,
             snapshot: "StatementCatalog") -> "PlanNode":
        """The statement's logical plan, bound against ``snapshot``."""
        raise BinderError(f"{self.shown} has no plan: it changes the session, not the data")

    def finish(self, session: "Session", statement: "Statement", table: pa.Table
               ) -> tuple[pa.Table, str | None]:
        """After the plan ran: (the statement's rows, its status line)."""
        return table, None

    def execute(self, session: "Session", statement: "Statement", parameters: Any
                ) -> tuple[pa.Table, str | None]:
        """Carry the statement out: check, plan, run, finish."""
        self.check(session, statement)
        snapshot = session.snapshot()  # one view of the catalog for the whole statement
        if self.leased and self.uses_lease(statement):
            with session.catalog.snapshot():
                table = session.run(self.plan(session, statement, parameters, snapshot),
                                    snapshot)
        else:
            table = session.run(self.plan(session, statement, parameters, snapshot), snapshot)
        return self.finish(session, statement, table)

    def explains(self, session: "Session", statement: "Statement") -> bool:
        """Whether EXPLAIN shows this statement (:attr:`explainable`, unless the statement's
        target says otherwise)."""
        return self.explainable

    def uses_lease(self, statement: "Statement") -> bool:
        """Whether this statement binds under the catalog's lease (see :attr:`leased`)."""
        return True

    @property
    def shown(self) -> str:
        """The statement's name in messages (``DROP GRAPH``)."""
        return self.kind.replace("_", " ").upper()


_TABLE: dict[type, Handler] | None = None


def handlers() -> dict[type, Handler]:
    """The table: tree class -> handler, from every family's ``HANDLERS``."""
    global _TABLE
    if _TABLE is None:
        table: dict[type, Handler] = {}
        for family in FAMILIES:
            table.update(importlib.import_module(f"{__name__}.{family}").HANDLERS)
        _TABLE = table
    return _TABLE


def handler_for(ast: exp.Expression) -> Handler | None:
    """The handler of a parsed statement (the nearest class of its tree with one), or None
    for a statement graphdb does not run."""
    table = handlers()
    for cls in type(ast).__mro__:
        found = table.get(cls)
        if found is not None:
            return found
    return None
