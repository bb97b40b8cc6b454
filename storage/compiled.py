"""Loops of the bulk paths (page building, an ingest's counting sort) compiled by numba.

numpy covers these paths in several passes over the data; a compiled loop does one (see the
kernels: :mod:`graphdb.storage.page_kernel`, :func:`graphdb.catalog.csrbuild.stable_order`). But numba is
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

__all__ = ["MIN_EDGES", "MIN_MEMORY", "Kernel", "preload"]

#: Ingests of fewer edges than this keep to numpy: in a fresh process, loading numba while the
#: input is read slows the read by ~0.4 s (0.46 s of CPU on a machine the parser already keeps
#: busy), which the kernels win back from about 16 M edges (~8 ns per edge in page building,
#: ~6 in the sort). Measured on two cores, fresh processes, best of 5: RMAT18 (4.2 M edges)
#: 0.82 s without numba, 1.19 s with; RMAT20 (16.8 M) about even (median 2.08 -> 1.97 s).
MIN_EDGES = 12_000_000

#: Memory limits below this keep to numpy: numba and LLVM take ~170 MB resident once loaded
#: (measured: an RMAT20 ingest under --memory-limit 32MB peaked at 299 MiB with the kernels,
#: 171 MiB without).
MIN_MEMORY = 1 << 30


class Kernel:
    """``func`` compiled by numba (``nogil``: callers run kernels in threads).

    ``warm(dispatcher)`` calls it on tiny inputs of the types it is usually called with, so
    that loading also loads (or compiles) those specializations before anyone gets it."""

    def __init__(self, func: Callable[..., Any], warm: Callable[[Any], None]):
        self.func, self._warm = func, warm
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


def preload(edges: int, memory_limit: int, *kernels: Kernel) -> threading.Thread | None:
    """Load in one thread those of ``kernels`` that are not loaded yet, for an ingest of about
    ``edges`` edges under ``memory_limit`` (unless below :data:`MIN_EDGES` or
    :data:`MIN_MEMORY`); returns the thread, if one was started."""
    if edges < MIN_EDGES or memory_limit < MIN_MEMORY:
        return None
    wanted = [k for k in kernels if k._compiled is None]
    if not wanted:
        return None
    thread = threading.Thread(target=lambda: [k.load() for k in wanted], name="kernels",
                              daemon=True)
    thread.start()
    return thread
