"""Loops of the bulk paths (page building, an ingest's counting sort) compiled by numba.

numpy covers these paths in several passes over the data; a compiled loop does one (see the
kernels: :mod:`storage.page_kernel`, :func:`catalog.csrbuild.stable_order`). numba is imported
when a kernel is first wanted, never by ``import graphdb``, and kernels are cached on disk
(``cache=True``): a cold cache costs about a second of compiling once per install, a warm one
still ~0.3 s per process (numba's import, loading the kernel). So a kernel serves work of at
least ``min_work`` items, or any work once it is loaded, and the numpy path stays for the rest
(and as the reference the tests compare a kernel with); an ingest that will want the kernels
:func:`preload`\\ s them in a thread while it reads its input, so that their cost overlaps the
read instead of landing on the sort and the commit.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

__all__ = ["Kernel", "preload"]


class Kernel:
    """``func`` compiled by numba (``nogil``: callers run kernels in threads) on first use.

    ``warm(dispatcher)`` calls it on tiny inputs of the types it is usually called with, so
    that :func:`preload` also loads (or compiles) those specializations."""

    def __init__(self, func: Callable[..., Any], min_work: int,
                 warm: Callable[[Any], None]):
        self.func, self.min_work, self._warm = func, min_work, warm
        self._lock = threading.Lock()
        self._compiled: Any = None  # the dispatcher; False without numba

    def get(self, work: int) -> Any:
        """The compiled kernel for ``work`` items, or None: numpy's turn (the kernel is not
        loaded and ``work`` is below ``min_work``, or there is no numba)."""
        if self._compiled is None and work < self.min_work:
            return None
        return self.load() or None

    def load(self) -> Any:
        with self._lock:
            if self._compiled is None:
                try:
                    import numba
                except ImportError:  # pragma: no cover - numba is a dependency
                    self._compiled = False
                else:
                    self._compiled = numba.njit(cache=True, nogil=True)(self.func)
            return self._compiled

    def warm(self) -> None:
        compiled = self.load()
        if compiled:
            self._warm(compiled)


def preload(work: int, *kernels: Kernel) -> threading.Thread | None:
    """Load (and warm) in one thread those of ``kernels`` that work of about ``work`` items
    will want and that are not loaded yet; returns the thread, if one was started."""
    wanted = [k for k in kernels if k._compiled is None and work >= k.min_work]
    if not wanted:
        return None
    thread = threading.Thread(target=lambda: [k.warm() for k in wanted], name="kernels",
                              daemon=True)
    thread.start()
    return thread
