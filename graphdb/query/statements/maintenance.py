"""CHECKPOINT, VACUUM and PRAGMA integrity_check: compacting a graph's delta now, the database
file's free space, and the whole database verified."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ...errors import InvalidInputError
from .. import grammar
from . import Handler

if TYPE_CHECKING:
    from ...session import Session
    from ..parser import Statement

__all__ = ["HANDLERS", "outside_transaction"]


def outside_transaction(session: "Session", what: str) -> None:
    """Refuse ``what`` inside an open transaction; make the database writable for it."""
    if session.transaction.open:
        raise InvalidInputError(f"{what} cannot run inside a transaction: COMMIT or ROLLBACK "
                                "first")
    session.writable()


class Checkpoint(Handler):
    """``CHECKPOINT [g]`` (:func:`graphdb.query.compacting.checkpoint`)."""

    kind = "checkpoint"

    def execute(self, session: "Session", statement: "Statement", parameters: Any
                ) -> tuple[pa.Table, str | None]:
        from ..compacting import checkpoint

        outside_transaction(session, "CHECKPOINT")
        return pa.table({}), checkpoint(session, statement.ast.name)


class Vacuum(Handler):
    kind = "vacuum"

    def execute(self, session: "Session", statement: "Statement", parameters: Any
                ) -> tuple[pa.Table, str | None]:
        from graphdb.executor.device import format_bytes

        session.writable()
        before = session.catalog.env.space()
        after = session.catalog.vacuum()
        return pa.table({}), (f"database file compacted: {format_bytes(before.used_bytes)} -> "
                              f"{format_bytes(after.used_bytes)} in use")


class IntegrityCheck(Handler):
    """``PRAGMA integrity_check``: every page, record, block and file of the database verified
    in a child process (:mod:`graphdb.integrity`); one row ``ok``, or one per problem."""

    kind = "pragma"
    leased = False

    def execute(self, session: "Session", statement: "Statement", parameters: Any
                ) -> tuple[pa.Table, str | None]:
        from ...integrity import integrity_check

        return integrity_check(session.path), None


HANDLERS = {grammar.Checkpoint: Checkpoint(), grammar.Vacuum: Vacuum(),
            grammar.Pragma: IntegrityCheck()}
