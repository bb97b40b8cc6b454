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

Compiled code is cached on disk in graphdb's cache directory (:func:`cache_dir`:
``$GRAPHDB_CACHE_DIR``, else ``$XDG_CACHE_HOME/graphdb``, else ``~/.cache/graphdb``), never beside
the sources: numba's default for ``cache=True`` is the ``__pycache__`` folder next to the module,
which for an installed package is inside site-packages, where it outlives ``pip uninstall`` (and
a leftover ``graphdb/`` folder of cache files then shadows a later editable install).
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

from . import interrupt

__all__ = ["CACHE_DIR_VARIABLE", "MIN_EDGES", "MIN_MEMORY", "TINY_WORK", "Kernel", "KernelSet",
           "cache_dir", "first_use_seconds", "import_numba", "note_first_use", "numba_loaded",
           "preload", "use_threads"]

#: The environment variable that moves graphdb's cache directory (compiled CPU and GPU kernels).
CACHE_DIR_VARIABLE = "GRAPHDB_CACHE_DIR"

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


#: Seconds this process has spent on kernels' one-time costs: [compiling kernels the cache
#: could not serve (once per install, CPU or GPU), loading the compiler (numba's import, once
#: per process)]. The shell and the demo say how much of a statement's time they were
#: (``graphdb warmup`` compiles ahead).
_FIRST_USE = [0.0, 0.0]
_FIRST_USE_LOCK = threading.Lock()


def first_use_seconds() -> tuple[float, float]:
    """(compiling, loading) seconds spent so far in this process on one-time kernel costs."""
    return _FIRST_USE[0], _FIRST_USE[1]


def note_first_use(seconds: float, compiling: bool = True) -> None:
    """Count ``seconds`` of a one-time kernel cost: a compile (a GPU module, say), or with
    ``compiling`` False the loading of the compiler."""
    with _FIRST_USE_LOCK:
        _FIRST_USE[0 if compiling else 1] += seconds


def _numba():
    """numba, imported; its import, and each compile the cache could not serve (numba's
    compile events time them), are counted as one-time costs."""
    start = time.perf_counter()
    imported = "numba" in sys.modules
    numba = import_numba()  # (where an interrupt stops the wait, never the import)

    with _FIRST_USE_LOCK:
        if not _COMPILES_TIMED:
            from numba.core import event

            event.register("numba:compile", _compile_timer())
            _COMPILES_TIMED.append(True)
    if not imported:
        note_first_use(time.perf_counter() - start, compiling=False)
    return numba


_COMPILES_TIMED: list[bool] = []


def _compile_timer():
    """A numba event listener timing each outermost compile (numba serialises compiles with
    its compiler lock, so one depth counter serves every thread)."""
    from numba.core import event

    class CompileTimer(event.Listener):
        depth, started = 0, 0.0

        def on_start(self, ev) -> None:
            if self.depth == 0:
                self.started = time.perf_counter()
            self.depth += 1

        def on_end(self, ev) -> None:
            self.depth -= 1
            if self.depth == 0:
                note_first_use(time.perf_counter() - self.started)

    return CompileTimer()


def numba_loaded() -> bool:
    """Whether numba is imported in this process (then compiled kernels cost no start-up)."""
    return "numba" in sys.modules


_IMPORT_LOCK = threading.Lock()
_importing: threading.Thread | None = None
_import_error: BaseException | None = None


def import_numba():
    """numba, imported once per process in a thread of its own: an interrupt of the statement
    that waits for it (a second or two on a cold start) stops the wait, never the import, so
    numba is never left half imported ("module 'numba' has no attribute 'core'" for every
    later query), and the statement stops within a fraction of a second."""
    global _importing
    with _IMPORT_LOCK:
        if _importing is None:
            # not a daemon: an exit meanwhile waits for the import instead of cutting it
            _importing = threading.Thread(target=_import, name="graphdb-import-numba")
            _importing.start()
        thread = _importing
    while thread.is_alive():
        thread.join(0.02)
        interrupt.check()  # a cancelled statement stops waiting; the import completes
    if _import_error is not None:
        raise _import_error
    import numba

    return numba


def _import() -> None:
    global _import_error
    try:
        import numba  # noqa: F401
        from numba.core import caching  # noqa: F401  (what the cache locator extends)
    except BaseException as exc:  # reported to every waiter
        _import_error = exc


def cache_dir() -> Path:
    """Where graphdb keeps compiled kernels: ``$GRAPHDB_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/graphdb``, else ``~/.cache/graphdb`` (read at each call, so a process may
    change it before its first compile). Removing the folder only costs a compile."""
    chosen = os.environ.get(CACHE_DIR_VARIABLE)
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base).expanduser() if base else Path.home() / ".cache") / "graphdb"


#: The Python functions compiled by :func:`_njit`: only these are cached in :func:`cache_dir`.
_OURS: set[Callable[..., Any]] = set()
_locator_installed = False


def _install_locator() -> bool:
    """Teach numba where graphdb's kernels are cached; False where numba's caching internals
    are not what this expects (then kernels compile without a disk cache).

    numba picks a cache folder per function by asking its locator classes in turn; the first
    that answers wins. Ours goes first and answers only for the functions in :data:`_OURS`, so
    a user's own ``@numba.njit(cache=True)`` functions in the same process keep numba's usual
    places (``NUMBA_CACHE_DIR`` or ``__pycache__``). Setting ``NUMBA_CACHE_DIR`` instead would
    work only before numba's import and would move everyone's cache with ours."""
    global _locator_installed
    with _LOCK:
        if _locator_installed:
            return True
        try:
            from numba.core import caching
        except ImportError:  # pragma: no cover - numba is a dependency
            return False
        impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
        locators = getattr(impl, "_locator_classes", None)
        mixin = getattr(caching, "_SourceFileBackedLocatorMixin", None)
        base = getattr(caching, "_CacheLocator", None)
        if not isinstance(locators, list) or mixin is None or base is None:
            return False

        class GraphdbCacheLocator(mixin, base):
            """graphdb's kernels: cached under :func:`cache_dir`/numba."""

            def __init__(self, py_func, py_file):
                self._py_file = py_file
                self._lineno = py_func.__code__.co_firstlineno
                self._cache_path = str(cache_dir() / "numba"
                                       / self.get_suitable_cache_subpath(py_file))

            def get_cache_path(self):
                return self._cache_path

            @classmethod
            def from_function(cls, py_func, py_file):
                if py_func not in _OURS:
                    return None
                return super().from_function(py_func, py_file)

        locators.insert(0, GraphdbCacheLocator)
        _locator_installed = True
        return True


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
        return True
    except OSError:
        return False


def _njit(func: Callable[..., Any], **options: Any) -> Any:
    """``func`` compiled by numba (``nogil``, plus ``options``), cached in :func:`cache_dir`;
    every kernel of graphdb goes here. Where that folder cannot be written (or numba's cache
    machinery is not the expected one), the kernel is compiled in memory each process rather
    than cached anywhere else."""
    numba = _numba()

    _OURS.add(func)
    cache = _install_locator() and _writable(cache_dir() / "numba")
    return numba.njit(cache=cache, nogil=True, **options)(func)


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
                numba = _numba()

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
    numba = _numba()
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
