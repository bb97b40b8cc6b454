"""Errors raised by the executor. The front end maps them onto the PEP 249 hierarchy."""

__all__ = ["ExecutionError", "InvalidArgument", "DeviceUnavailable", "DeviceOutOfMemory",
           "QueryCancelled", "SQLError", "StatementMismatch", "ConstraintViolation"]


class ExecutionError(Exception):
    """A query could not be executed."""


class InvalidArgument(ExecutionError):
    """An algorithm or operator was given an argument it cannot accept (user error)."""


class StatementMismatch(ExecutionError):
    """A write does not fit the table it writes (a column it does not have, a query of another
    width): the front end's BinderError."""


class ConstraintViolation(ExecutionError):
    """A write breaks a table's constraint (NOT NULL, a key, CHECK, a reference) or a property
    graph's: the front end's IntegrityError. The statement changed nothing."""


class DeviceUnavailable(ExecutionError):
    """The requested device (a GPU) is not present or CuPy is not installed."""


class DeviceOutOfMemory(ExecutionError):
    """The device ran out of memory and no smaller plan was possible."""


class QueryCancelled(ExecutionError):
    """The query was cancelled (Ctrl-C in the shell, or Connection.interrupt())."""


class SQLError(ExecutionError):
    """The relational engine refused or failed a statement.

    ``kind`` says what went wrong, read from the engine's exception class: 'parser',
    'binder', 'catalog' (the query), 'data' (a value: conversion, range, division by zero),
    'not_supported', 'integrity', 'resources' (memory, files), 'internal' or 'database'. The
    message is the engine's own; ``shown`` maps the internal names of the statement's
    relations to what the user wrote, for the front end to put back.
    """

    def __init__(self, kind: str, message: str, shown: dict[str, str] | None = None):
        super().__init__(message)
        self.kind, self.shown = kind, dict(shown or {})
