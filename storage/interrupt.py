"""Where the lower layers let a statement be interrupted: :func:`check`.

The executor owns cancellation (:mod:`graphdb.executor.cancel`: ``Connection.interrupt()`` and
Ctrl-C); storage and catalog code below it cannot import it, yet some of their loops run for
seconds (resolving a million inserted ids, waiting for numba's import). They call :func:`check`
at points where stopping leaves nothing half done; the executor installs its check here, which
raises its QueryCancelled when the running statement was cancelled. Outside a statement, or
before the executor is imported, :func:`check` does nothing.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["check", "install"]


def _nothing() -> None:
    return None


_check: Callable[[], None] = _nothing


def install(check_cancelled: Callable[[], None]) -> None:
    """Make :func:`check` call ``check_cancelled`` (the executor does, once)."""
    global _check
    _check = check_cancelled


def check() -> None:
    """Raise the executor's QueryCancelled if the running statement was interrupted."""
    _check()
