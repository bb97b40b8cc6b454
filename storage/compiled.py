"""The one loader of compiled CPU kernels (numba), for every layer.

Kernels are plain Python functions over numpy arrays; this module compiles them with numba on
first need (``cache=True``: a cold cache compiles for a few seconds once per install, a warm one
loads in well under a second). Nothing here imports numba before a kernel is asked for on work
that is large enough: ``import graphdb`` never does.

Two ways to hold kernels, both compiled by :func:`_njit`:

- :class:`KernelSet`: the kernels of one module (the graph algorithms' loops). They may call each
  other and helpers of other sets by their global names: loading a set rebinds those names in the
  module to the compiled dispatchers (and ``prange`` to numba's parallel range), so a kernel
  calling a helper calls the compiled helper. :meth:`KernelSet.for_work` hands out the Python
  source itself for tiny work while numba is not loaded yet in the process: on a warm cache the
  first compiled call still costs about a second (numba's import and one-time initialisation),
  which would dominate small queries. Same code either way, one implementation.
- :class:`Kernel`: one bulk-path loop of the ingest (page records, the counting sort), used only
  once loaded and loaded only by :func:`preload`, which an ingest calls before it reads a large
  input so that the cost overlaps the read (numba and LLVM take ~170 MB resident, so not under a
  small memory limit). The numpy path stays for everything else and is what tests compare with.

Index arrays reach kernels as *unsigned* views where they index (offsets ``uint64``, targets
``uint32``/``uint64``): numba emits a negative-index wraparound branch for every signed index,
which made edge loops 2.5 times slower. Mixing unsigned and signed integers in numba arithmetic
gives float64, so index arithmetic adds unsigned constants, never a literal ``1``.

Threads: parallel kernels run on numba's pool, sized by :func:`use_threads` from Arrow's CPU
count, which is what the connection setting ``threads`` sets (process-wide).
"""

from __future__ import annotations

import os
import sys
import threading
from types import SimpleNamespace
from typing import Any, Callable

__all__ = ["MIN_EDGES", "MIN_MEMORY", "TINY_WORK", "Kernel", "KernelSet", "numba_loaded",
           "preload", "use_threads"]

#: Work (vertices plus edges) up to which a :class:`KernelSet` runs its Python source while numba
#: is not loaded in the process (see the module docstring).
TINY_WORK = 2048

#: ``GRAPHDB_KERNELS=python`` runs the Python source at every size (debugging, tests).
_ALWAYS_PYTHON = os.environ.get("GRAPHDB_KERNELS", "").lower() == "python"

#: Ingests of fewer edges than this keep to numpy: in a fresh process, loading numba while the
#: input is read slows the read by ~0.4 s, which the kernels win back from about 16 M edges.
MIN_EDGES = 12_000_000

#: Memory limits below this keep to numpy: numba and LLVM take ~170 MB resident once loaded.
MIN_MEMORY = 1 << 30

#: One compile at a time, process-wide (numba's own compiler lock is per dispatcher).
_LOCK = threading.RLock()
#: Python function -> the KernelSet that holds it (for rebinding helpers across modules).
_OWNER: dict[Callable[..., Any], "KernelSet"] = {}


def numba_loaded() -> bool:
    """Whether numba is imported in this process (then compiled kernels cost no start-up)."""
    return "numba" in sys.modules


def _njit(func: Callable[..., Any], **options: Any) -> Any:
    """``func`` compiled by numba with its on-disk cache; every kernel of graphdb goes here."""
    import numba

    return numba.njit(cache=True, nogil=True, **options)(func)


class KernelSet:
    """The compiled kernels of one module (see the module docstring).

    Usage, in a kernel module::

        KERNELS = KernelSet(__name__)
        prange = range  # numba.prange once compiled

        @KERNELS.kernel(parallel=True)
        def step(...): ...

        kernels = KERNELS.for_work(n + m)   # compiled, or the Python source on tiny work
        kernels.step(...)
    """

    def __init__(self, module: str):
        self.module = module
        self._sources: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {}
        self._python = SimpleNamespace()
        self._compiled: SimpleNamespace | None = None

    def kernel(self, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a kernel (numba options such as ``parallel=True``, ``inline='always'``);
        the function itself stays plain Python."""

        def register(func: Callable[..., Any]) -> Callable[..., Any]:
            self._sources[func.__name__] = (func, options)
            setattr(self._python, func.__name__, func)
            _OWNER[func] = self
            return func

        return register

    @property
    def python(self) -> SimpleNamespace:
        """The kernels as Python functions (the reference the compiled ones are tested with)."""
        return self._python

    def load(self) -> SimpleNamespace:
        """The kernels compiled (lazily, per signature) by numba; imports numba once."""
        with _LOCK:
            if self._compiled is None:
                import numba

                namespace = SimpleNamespace()
                module = sys.modules[self.module].__dict__
                compiled = {name: _njit(func, **options)
                            for name, (func, options) in self._sources.items()}
                # Helpers of other sets that this module calls by name: compiled first.
                for name, value in list(module.items()):
                    owner = _OWNER.get(value) if callable(value) else None
                    if owner is not None and owner is not self:
                        module[name] = getattr(owner.load(), value.__name__)
                module.update(compiled)
                if "prange" in module:
                    module["prange"] = numba.prange
                for name, dispatcher in compiled.items():
                    setattr(namespace, name, dispatcher)
                self._compiled = namespace
            return self._compiled

    def for_work(self, work: int, *, parallel: bool = False) -> SimpleNamespace:
        """The kernels to run ``work`` (vertices plus edges) with: compiled, unless the work is
        tiny and numba is not loaded yet (then the Python source). ``parallel``: size numba's
        thread pool first (:func:`use_threads`)."""
        if _ALWAYS_PYTHON or (self._compiled is None and work <= TINY_WORK
                              and not numba_loaded()):
            return self._python
        kernels = self.load()
        if parallel:
            use_threads()
        return kernels


def use_threads() -> int:
    """Size numba's pool for the calling thread: the ``threads`` setting (Arrow's CPU count)."""
    import numba
    import pyarrow as pa

    wanted = max(1, min(int(pa.cpu_count()), numba.config.NUMBA_NUM_THREADS))
    if numba.get_num_threads() != wanted:
        numba.set_num_threads(wanted)
    return wanted


class Kernel:
    """One bulk-path loop (``nogil``: callers run it in threads), used only once loaded.

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
                    compiled = _njit(self.func)
                except ImportError:  # pragma: no cover - numba is a dependency
                    self._compiled = False
                else:
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
