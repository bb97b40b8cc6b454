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

Ctrl-C in a program that runs a statement on its main thread (:func:`sigint_cancels`): while
the statement runs, SIGINT cancels it like ``Connection.interrupt()`` instead of raising
KeyboardInterrupt wherever the main thread happens to be (half through importing numba, which
then stayed half imported for the rest of the process; inside a commit's bookkeeping). The
statement stops at its next checkpoint, undoes what it did, and the caller raises
KeyboardInterrupt then, with the connection intact. Python runs signal handlers only between
bytecodes of the main thread, and a thread inside DuckDB or a compiled kernel runs none for as
long as it stays there; so the signal's wakeup byte (``signal.set_wakeup_fd``) goes to a watcher
thread, which cancels at once, DuckDB included.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TypeVar

from graphdb.catalog.progress import Progress
from graphdb.storage import interrupt

from .errors import QueryCancelled

__all__ = ["CancellableProgress", "cancellable", "check_cancelled", "checkpoint", "in_background", "is_cancelled",
           "operator", "reporting", "sigint_cancels"]

T = TypeVar("T")

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


# -- Ctrl-C as a cancel (see the module docstring) ---------------------------------------------
class _Watcher:
    """The process's reader of the signal wakeup socket: calls the armed callback on SIGINT."""

    def __init__(self) -> None:
        self.reader, self.writer = socket.socketpair()
        self.reader.setblocking(True)
        self.writer.setblocking(False)
        self.callback: Callable[[], None] | None = None
        self.lock = threading.Lock()
        threading.Thread(target=self._run, name="graphdb-sigint", daemon=True).start()

    def _run(self) -> None:
        while True:
            try:
                data = self.reader.recv(64)
            except OSError:
                return
            if not data:
                return
            if signal.SIGINT in data:
                with self.lock:
                    callback = self.callback
                if callback is not None:
                    callback()


_WATCHER: _Watcher | None = None
_WATCHER_LOCK = threading.Lock()
_DEPTH = threading.local()


def _watcher() -> _Watcher:
    global _WATCHER
    with _WATCHER_LOCK:
        if _WATCHER is None:
            _WATCHER = _Watcher()
        return _WATCHER


def _run_pending_handlers() -> None:
    """A Python call: Python runs signals that came while C code ran at its first bytecode."""


@contextlib.contextmanager
def sigint_cancels(cancel: Callable[[], None]) -> Iterator[dict]:
    """While the block runs on the main thread, Ctrl-C calls ``cancel()`` (from a watcher
    thread at once, and from the main thread's handler) instead of raising KeyboardInterrupt.
    Yields a dict whose ``"hit"`` says afterwards whether SIGINT came. Elsewhere (another
    thread, a program with its own SIGINT handler, a nested statement) it changes nothing."""
    state = {"hit": False}
    if threading.current_thread() is not threading.main_thread() or \
            getattr(_DEPTH, "n", 0) or signal.getsignal(signal.SIGINT) is not \
            signal.default_int_handler:
        yield state
        return

    def hit() -> None:
        state["hit"] = True
        cancel()

    def handler(signum, frame) -> None:
        # Only a flag here: the handler runs between two bytecodes of the main thread, maybe
        # while it holds a lock that cancel() takes. The watcher thread, woken by the same
        # signal's byte, cancels.
        state["hit"] = True

    watcher = _watcher()
    previous_handler = signal.signal(signal.SIGINT, handler)
    try:
        previous_fd = signal.set_wakeup_fd(watcher.writer.fileno(), warn_on_full_buffer=False)
    except ValueError:  # (not the main interpreter)
        signal.signal(signal.SIGINT, previous_handler)
        yield state
        return
    with watcher.lock:
        watcher.callback = hit
    _DEPTH.n = 1
    try:
        yield state
    finally:
        _DEPTH.n = 0
        _run_pending_handlers()  # a SIGINT that came inside C code is handled here, by ours
        with watcher.lock:
            watcher.callback = None
        signal.set_wakeup_fd(previous_fd, warn_on_full_buffer=False)
        signal.signal(signal.SIGINT, previous_handler)


def check_cancelled() -> None:
    """Raise QueryCancelled if the running query was cancelled (no progress report)."""
    if is_cancelled():
        raise QueryCancelled("query cancelled")


def in_background(work: Callable[[], "T"], name: str) -> "T":
    """``work()`` run in a thread of its own while this one waits, checking for a cancel every
    few milliseconds: a cancelled statement stops waiting at once, and the work goes on to its
    end (what an interrupt must never cut: an import, a database's start)."""
    box: dict = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # handed to the waiter
            box["error"] = exc

    # not a daemon: an interpreter exiting meanwhile waits for it rather than killing it inside
    # native code (a thread unwound inside C++ there aborts the process)
    thread = threading.Thread(target=run, name=name)
    thread.start()
    while thread.is_alive():
        thread.join(0.02)
        check_cancelled()
    if "error" in box:
        raise box["error"]
    return box["value"]


#: Modules a process's first write imports (pyarrow imports pandas at its first ``pa.array`` of
#: Python values: one or two seconds), imported by :func:`import_first` where cancellable.
#: Reads and loads never import them (a query or an ingest stays free of pandas).
_FIRST_IMPORTS = ("pandas",)


def import_first() -> None:
    """Import what a first write imports, in a thread of its own (:func:`in_background`)
    so that an interrupt in those seconds stops the statement at once (the import completes
    behind it). Does nothing once they are imported (or where they are not installed)."""
    import importlib.util
    import sys

    missing = [m for m in _FIRST_IMPORTS if m not in sys.modules]
    if not missing:
        return
    try:
        missing = [m for m in missing if importlib.util.find_spec(m) is not None]
    except (ImportError, ValueError):
        return
    if missing:
        in_background(lambda: [__import__(m) for m in missing], "graphdb-first-imports")


def is_cancelled() -> bool:
    """Whether the statement running in this thread was cancelled (a callback to hand to work
    that stops on its own when told, such as a compaction)."""
    event = _EVENT.get()
    return event is not None and event.is_set()


interrupt.install(check_cancelled)  # the lower layers' cancellation point (storage.interrupt)


class CancellableProgress(Progress):
    """A load's progress, and its cancellation points: every report of a phase or of bytes
    read checks for an interrupt of the statement (Connection.interrupt, Ctrl-C), so a load
    stops within a batch of its input and removes what it wrote; the commit is never cut."""

    def __init__(self, inner: Progress | None):
        self.inner = inner

    def phase(self, name: str, total: int | None = None) -> None:
        check_cancelled()
        if self.inner is not None:
            self.inner.phase(name, total)

    def advance(self, done: int, rows: int | None = None) -> None:
        check_cancelled()
        if self.inner is not None:
            self.inner.advance(done, rows)

    def close(self) -> None:
        if self.inner is not None:
            self.inner.close()
