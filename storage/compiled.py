"""Loops of the bulk paths (page building, an ingest's counting sort) compiled by numba.

numpy covers these paths in several passes over the data; a compiled loop does one (see the
kernels: :mod:`storage.page_kernel`, :func:`catalog.csrbuild.stable_order`). But numba is
costly to bring in: ~0.3 s per process with a warm on-disk cache (``cache=True``; a cold cache
compiles for about a second once per install), and ~170 MB resident for numba and LLVM. So a
kernel is used only once loaded, and it is loaded only by :func:`preload`, which an ingest calls
before it reads its input when the input is large (the kernel then pays for itself) and its
memory limit leaves room for numba: the cost overlaps the read instead of landing on the sort
and the commit, and an ingest under a small ``--memory-limit`` keeps to numpy. The numpy path
stays for everything else (and is the reference the tests compare a kernel with). Nothing here
imports numba before :func:`preload` or :meth:`Kernel.load`: ``import graphdb`` never does.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

__all__ = ["MIN_MEMORY", "Kernel", "preload"]

#: Memory limits below this keep to numpy: numba and LLVM take ~170 MB resident once loaded
#: (measured: an RMAT20 ingest under --memory-limit 32MB peaked at 299 MiB with the kernels,
#: 171 MiB without).
MIN_MEMORY = 1 << 30


class Kernel:
    """``func`` compiled by numba (``nogil``: callers run kernels in threads).

    ``warm(dispatcher)`` calls it on tiny inputs of the types it is usually called with, so
    that loading also loads (or compiles) those specializations before anyone gets it."""

    def __init__(self, func: Callable[..., Any], min_work: int,
                 warm: Callable[[Any], None]):
        self.func, self.min_work, self._warm = func, min_work, warm
        self._lock = threading.Lock()
        self._compiled: Any = None  # the warmed dispatcher; False without numba

    def get(self) -> Any:
        """The compiled kernel once loaded, else None (numpy's turn)."""
        return self._compiled or None

    def load(self) -> Any:
        """Import numba, compile (or load from the cache) and warm; the dispatcher, or False
        without numba."""
        with self._lock:
            if self._compiled is None:
                try:
                    import numba
                except ImportError:  # pragma: no cover - numba is a dependency
                    self._compiled = False
                else:
                    compiled = numba.njit(cache=True, nogil=True)(self.func)
                    self._warm(compiled)
                    self._compiled = compiled
            return self._compiled


def preload(work: int, memory_limit: int, *kernels: Kernel) -> threading.Thread | None:
    """Load in one thread those of ``kernels`` that work of about ``work`` items wants (at
    least their ``min_work``) and that are not loaded yet, unless ``memory_limit`` is below
    :data:`MIN_MEMORY`; returns the thread, if one was started."""
    if memory_limit < MIN_MEMORY:
        return None
    wanted = [k for k in kernels if k._compiled is None and work >= k.min_work]
    if not wanted:
        return None
    thread = threading.Thread(target=lambda: [k.load() for k in wanted], name="kernels",
                              daemon=True)
    thread.start()
    return thread
