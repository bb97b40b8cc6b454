"""A session's writes: the catalog's writer, and the transaction BEGIN opens.

A session writes through one :class:`graphdb.catalog.writer.Writer`, made at its first write (a
session that only reads never takes the writer lock). A statement outside BEGIN ... COMMIT
commits on its own, inside the write operator that runs it (:mod:`graphdb.executor.writes`);
BEGIN opens a transaction that COMMIT writes in one LMDB transaction and ROLLBACK forgets.
This object holds no reference to the session: it is released with the session's other parts
when the session is closed or collected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphdb.catalog import Catalog, GraphEntry
    from graphdb.catalog.writer import Writer

__all__ = ["Transaction"]


class Transaction:
    """The writes of one session (see the module docstring)."""

    def __init__(self, catalog: "Catalog"):
        self.catalog = catalog
        self._writer: "Writer | None" = None

    @property
    def writer(self) -> "Writer":
        """The session's writer (its write transaction, :mod:`graphdb.catalog.writer`)."""
        if self._writer is None:
            from graphdb.catalog.writer import Writer

            self._writer = Writer(self.catalog)
        return self._writer

    @property
    def started(self) -> bool:
        """Whether the session has written at all (it has a writer)."""
        return self._writer is not None

    @property
    def open(self) -> bool:
        """Whether BEGIN opened a transaction that is not committed or rolled back yet."""
        return self._writer is not None and self._writer.in_transaction

    def begin(self) -> None:
        self.writer.begin()

    def commit(self) -> "list[GraphEntry]":
        """Write the transaction's changes; the entries it committed."""
        return self.writer.commit()

    def rollback(self) -> "list[GraphEntry]":
        """Forget the transaction's changes; the (pending) entries it had changed, whose
        derived data the caller forgets."""
        return self.writer.rollback()

    def close(self) -> None:
        """The session closes: an open transaction is rolled back, the writer lock released."""
        if self._writer is not None:
            self._writer.close()
