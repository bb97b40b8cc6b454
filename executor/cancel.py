"""Cancellation points inside long-running operators, which also report progress.

:meth:`graphdb.executor.runner.Runner.cancel` (Ctrl-C in the shell, ``Connection.interrupt()``) sets an
event that the runner checks between operators. An operator that iterates for long (PageRank,
label propagation, a BFS over thousands of levels, a streamed pass) calls :func:`checkpoint`
once an iteration, so a cancel takes effect within one iteration rather than at the end of
the operator. Outside a running query :func:`checkpoint` does nothing, so the algorithms stay
callable on their own.

The same checkpoint tells a progress callback how far the running operator is: the runner
names the operator (:func:`operator`: e.g. ``pagerank``, with ``max_iterations`` as the total
when the call has one) and :func:`reporting` installs the callback (the shell's status line);
each checkpoint then calls ``callback(operator, step, total)``, ``step`` counting the
checkpoints the operator passed (its iterations, levels or blocks) unless the operator says
where it is (``checkpoint(done, total)``). Nothing per algorithm: every operator that checks
for cancellation reports progress.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar

from .errors import QueryCancelled

__all__ = ["cancellable", "checkpoint", "operator", "reporting"]

#: ``callback(operator, step, total)``; total is None when unknown
ProgressCallback = Callable[[str, int, "int | None"], None]

_EVENT: ContextVar[threading.Event | None] = ContextVar("graphdb_cancel", default=None)
_CALLBACK: ContextVar[ProgressCallback | None] = ContextVar("graphdb_progress", default=None)
#: [operator name, steps passed, total] of the operator running in this context
_OPERATOR: ContextVar[list | None] = ContextVar("graphdb_operator", default=None)


def checkpoint(done: int | None = None, total: int | None = None) -> None:
    """Raise :class:`QueryCancelled` if the running query was cancelled; else report one more
    step (or ``done`` of ``total``) of the running operator to the progress callback."""
    event = _EVENT.get()
    if event is not None and event.is_set():
        raise QueryCancelled("query cancelled")
    callback = _CALLBACK.get()
    if callback is None:
        return
    state = _OPERATOR.get()
    if state is None:
        return
    state[1] = state[1] + 1 if done is None else int(done)
    if total is not None:
        state[2] = int(total)
    callback(state[0], state[1], state[2])


@contextlib.contextmanager
def reporting(callback: ProgressCallback | None) -> Iterator[None]:
    """Send the progress of operators run in this thread during the block to ``callback``."""
    token = _CALLBACK.set(callback)
    try:
        yield
    finally:
        _CALLBACK.reset(token)


@contextlib.contextmanager
def operator(name: str, total: int | None = None) -> Iterator[None]:
    """Name the operator that runs during the block (for :func:`checkpoint`'s reports)."""
    token = _OPERATOR.set([name, 0, total])
    try:
        yield
    finally:
        _OPERATOR.reset(token)


@contextlib.contextmanager
def cancellable(event: threading.Event) -> Iterator[None]:
    """Make :func:`checkpoint` in this thread watch ``event`` while the block runs."""
    token = _EVENT.set(event)
    try:
        yield
    finally:
        _EVENT.reset(token)
