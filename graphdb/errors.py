"""The exceptions a graphdb user sees, in the PEP 249 hierarchy.

Lower layers raise their own errors; :func:`translate` maps them onto these classes at the API
boundary, so ``except graphdb.Error`` catches everything the engine raises on purpose.
"""

from __future__ import annotations

__all__ = [
    "Warning",
    "Error",
    "InterfaceError",
    "DatabaseError",
    "DataError",
    "OperationalError",
    "IntegrityError",
    "InternalError",
    "ProgrammingError",
    "NotSupportedError",
    "ParseError",
    "BinderError",
    "CatalogError",
    "IngestError",
    "InvalidInputError",
    "CorruptDatabaseError",
    "translate",
]


class Warning(Exception):  # noqa: A001  (PEP 249 name)
    pass


class Error(Exception):
    pass


class InterfaceError(Error):
    pass


class DatabaseError(Error):
    pass


class DataError(DatabaseError):
    pass


class OperationalError(DatabaseError):
    """Resource problems: locks, device memory, files that cannot be opened."""


class IntegrityError(DatabaseError):
    pass


class InternalError(DatabaseError):
    pass


class ProgrammingError(DatabaseError):
    """Mistakes in the query: syntax, unknown names, wrong arguments."""


class NotSupportedError(DatabaseError):
    pass


class ParseError(ProgrammingError):
    """SQL that does not parse; ``line`` and ``column`` are 1-based."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        self.line, self.column = line, column
        where = f" at line {line}, column {column}" if line is not None else ""
        super().__init__(f"syntax error{where}: {message}")


class BinderError(ProgrammingError):
    """A name or argument that does not resolve (unknown function, column, bad argument)."""


class CatalogError(ProgrammingError):
    """Unknown or already existing graph."""


class InvalidInputError(ProgrammingError):
    """An argument value the engine cannot accept."""


class CorruptDatabaseError(DatabaseError):
    """Data read from the database failed validation (a damaged or edited file, block or
    catalog entry). The message names the graph, the file and what is wrong; nothing of it was
    used, deleted or returned. ``graph`` and ``file`` carry the first two where known."""

    def __init__(self, message: str, graph: str | None = None, file: str | None = None):
        self.graph, self.file = graph, file
        super().__init__(message)


class IngestError(DataError):
    """Bad input file; ``file`` and ``line`` say where."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None):
        self.file, self.line = file, line
        super().__init__(message)


def translate(exc: BaseException) -> BaseException:
    """The graphdb exception for an error raised by a lower layer (or ``exc`` itself)."""
    import graphdb.catalog.errors as ce
    import graphdb.executor.errors as xe
    import graphdb.storage.errors as se

    if isinstance(exc, Error):
        return exc
    if isinstance(exc, ce.CorruptGraph):
        new: Error = CorruptDatabaseError(f"corrupt database: {exc}", exc.graph, exc.file)
    elif isinstance(exc, se.CorruptData):
        new = CorruptDatabaseError(f"corrupt database: {exc}", None, exc.file)
    elif isinstance(exc, ce.GraphChanged):
        new = OperationalError(str(exc))
    elif isinstance(exc, ce.IngestError):
        new = IngestError(str(exc), file=exc.file, line=exc.line)
    elif isinstance(exc, ce.CatalogError):
        new = CatalogError(str(exc))
    elif isinstance(exc, xe.InvalidArgument):
        new = InvalidInputError(str(exc))
    elif isinstance(exc, xe.StatementMismatch):
        new = BinderError(str(exc))
    elif isinstance(exc, xe.ConstraintViolation):
        new = IntegrityError(str(exc))
    elif isinstance(exc, xe.SQLError):
        from .query.diagnostics import sql_error

        new = sql_error(exc.kind, str(exc), exc.shown)
    elif isinstance(exc, (xe.DeviceUnavailable, xe.DeviceOutOfMemory, xe.QueryCancelled)):
        new = OperationalError(str(exc))
    elif isinstance(exc, xe.ExecutionError):
        new = ProgrammingError(str(exc)) if "type mismatch" in str(exc) else DatabaseError(str(exc))
    elif isinstance(exc, se.DatabaseLocked):
        new = OperationalError(str(exc))
    elif isinstance(exc, se.StorageError):
        new = OperationalError(str(exc))
    else:
        return exc
    new.__cause__ = exc
    return new
