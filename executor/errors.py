"""Errors raised by the executor. The front end maps them onto the PEP 249 hierarchy."""

__all__ = ["ExecutionError", "InvalidArgument", "DeviceUnavailable", "DeviceOutOfMemory",
           "QueryCancelled"]


class ExecutionError(Exception):
    """A query could not be executed."""


class InvalidArgument(ExecutionError):
    """An algorithm or operator was given an argument it cannot accept (user error)."""


class DeviceUnavailable(ExecutionError):
    """The requested device (a GPU) is not present or CuPy is not installed."""


class DeviceOutOfMemory(ExecutionError):
    """The device ran out of memory and no smaller plan was possible."""


class QueryCancelled(ExecutionError):
    """The query was cancelled (Ctrl-C in the shell, or Connection.interrupt())."""
