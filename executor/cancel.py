"""Cancellation points inside long-running operators.

:meth:`graphdb.executor.runner.Runner.cancel` (Ctrl-C in the shell, ``Connection.interrupt()``) sets an
event that the runner checks between operators. An operator that iterates for long (PageRank,
label propagation, a BFS over thousands of levels, a streamed pass) calls :func:`checkpoint`
once an iteration, so a cancel takes effect within one iteration rather than at the end of
the operator. Outside a running query :func:`checkpoint` does nothing, so the algorithms stay
callable on their own.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextvars import ContextVar

from .errors import QueryCancelled

__all__ = ["cancellable", "checkpoint"]

_EVENT: ContextVar[threading.Event | None] = ContextVar("graphdb_cancel", default=None)


def checkpoint() -> None:
    """Raise :class:`QueryCancelled` if the running query was cancelled."""
    event = _EVENT.get()
    if event is not None and event.is_set():
        raise QueryCancelled("query cancelled")


@contextlib.contextmanager
def cancellable(event: threading.Event) -> Iterator[None]:
    """Make :func:`checkpoint` in this thread watch ``event`` while the block runs."""
    token = _EVENT.set(event)
    try:
        yield
    finally:
        _EVENT.reset(token)
