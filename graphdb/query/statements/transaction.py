"""BEGIN, COMMIT, ROLLBACK: the session's transaction (:mod:`graphdb.transaction`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from graphdb.executor.cancel import check_cancelled

from . import Handler

if TYPE_CHECKING:
    from ...session import Session
    from ..parser import Statement

__all__ = ["HANDLERS"]


class Begin(Handler):
    kind = "begin"

    def execute(self, session: "Session", statement: "Statement", parameters: Any
                ) -> tuple[pa.Table, str | None]:
        from ..buffered import InsertBuffer

        session.transaction.begin()
        session.buffer = InsertBuffer(session)
        return pa.table({}), "transaction started"


class End(Handler):
    """``COMMIT`` (and ``END``) or ``ROLLBACK`` (and ``ABORT``)."""

    def __init__(self, commit: bool):
        self.commit = commit
        self.kind = "commit" if commit else "rollback"

    def execute(self, session: "Session", statement: "Statement", parameters: Any
                ) -> tuple[pa.Table, str | None]:
        if self.commit:
            check_cancelled()  # interrupted before it writes: the transaction stays open
        done = "commit" if self.commit else "roll back"
        if not session.transaction.open:
            return pa.table({}), f"no transaction is open; nothing to {done}"
        session.buffer = None
        if self.commit:
            session.after_commit(session.transaction.commit())
            return pa.table({}), "committed"
        for entry in session.transaction.rollback():
            session.runner.forget(entry)
        return pa.table({}), "rolled back"


HANDLERS = {exp.Transaction: Begin(), exp.Commit: End(commit=True),
            exp.Rollback: End(commit=False)}
