"""Kernel modules compiled once per source, device architecture and CuPy build, kept on disk.

``cupy.RawModule`` keys its on-disk cache partly on NVRTC's output for an empty file, so even
a warm-cache load loads the NVRTC library and compiles once per process: about 26 ms of a
fresh process's first GPU query on an H100 (measured with CuPy 14.2, CUDA 13.0). Our kernels
do not need that: their cache key is the source text (headers inlined), the compile options,
the name expressions, the device's compute capability and the CuPy version and CUDA runtime
it was built against. A hit reads one file, checks its digest and hands the binary to the
driver (``cuModuleLoadData``); NVRTC is touched only on a miss.

The files sit in graphdb's cache directory, in ``cuda/`` (:func:`cache_dir`: ``~/.cache/graphdb``
by default, ``$GRAPHDB_CACHE_DIR`` to move it; never inside site-packages), as
``graphdb-<key>.cubin``: a header line, a JSON line with the
mangled name of every name expression and the binary's SHA-256, then the binary. A file that
does not parse or whose digest does not match is compiled again and replaced; files are
written to a temporary name and renamed, so concurrent processes never read half a file.
``CUPY_CACHE_IN_MEMORY=1`` keeps compiled modules off the disk, as it does for CuPy.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

__all__ = ["KernelModule", "OPTIONS", "cache_dir", "load_module", "set_dynamic_shared"]

#: NVRTC options of every module. ``-ftz=true`` is what CuPy adds to RawModule compiles, which
#: the kernels were first verified with.
OPTIONS = ("--std=c++17", "-ftz=true")
_MAGIC = b"graphdb-kernel-cache 1\n"
#: CUfunction_attribute CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
_MAX_DYNAMIC_SHARED = 8


class KernelModule:
    """A loaded module: ``get_function`` takes a kernel's name or one of the name expressions
    (``"graphdb_wcc_compress<int>"``) the module was compiled with. Functions are CuPy's
    ``cupy.cuda.function.Function``: called as ``f(grid, block, args, shared_mem=0)`` on the
    current stream."""

    def __init__(self, module, mangled: dict[str, str]):
        self._module = module  # keeps the CUmodule loaded while any of its functions lives
        self._mangled = mangled
        self._functions: dict[str, object] = {}

    def get_function(self, name: str):
        fn = self._functions.get(name)
        if fn is None:
            fn = self._module.get_function(self._mangled.get(name, name))
            self._functions[name] = fn
        return fn

    @property
    def names(self) -> dict[str, str]:
        """Name expression -> mangled name."""
        return dict(self._mangled)


def set_dynamic_shared(function, nbytes: int) -> None:
    """Let ``function`` launch with up to ``nbytes`` of dynamic shared memory (past the default
    48 KiB, an opt-in per kernel)."""
    from cupy.cuda import driver

    attribute = getattr(driver, "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES",
                        _MAX_DYNAMIC_SHARED)
    driver.funcSetAttribute(function.ptr, attribute, int(nbytes))


def cache_dir() -> Path:
    """Where compiled modules are kept: ``cuda/`` in graphdb's cache directory (the one the
    CPU kernels use, :func:`graphdb.storage.compiled.cache_dir`)."""
    from graphdb.storage.compiled import cache_dir as graphdb_cache

    return graphdb_cache() / "cuda"


def _key(source: str, expressions: tuple[str, ...], arch: str) -> str:
    import cupy

    parts = [_MAGIC.decode(), source, *OPTIONS, "\0", *sorted(expressions), "\0", arch,
             cupy.__version__, str(cupy.cuda.runtime.runtimeGetVersion())]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _read(path: Path, expressions: tuple[str, ...]) -> tuple[bytes, dict[str, str]] | None:
    """(binary, mangled names) of a cache file, or None when it is missing or not intact."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not data.startswith(_MAGIC):
        return None
    end = data.find(b"\n", len(_MAGIC))
    if end < 0:
        return None
    try:
        header = json.loads(data[len(_MAGIC):end])
        binary = data[end + 1:]
        mangled = dict(header["names"])
        intact = hashlib.sha256(binary).hexdigest() == header["sha256"]
    except (ValueError, KeyError, TypeError):
        return None
    if not intact or set(mangled) != set(expressions):
        return None
    return binary, mangled


def _write(path: Path, binary: bytes, mangled: dict[str, str]) -> None:
    """Store a compiled module atomically; a cache that cannot be written is only slower."""
    header = json.dumps({"names": mangled, "sha256": hashlib.sha256(binary).hexdigest()})
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".graphdb-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_MAGIC + header.encode() + b"\n" + binary)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass


def _compile(source: str, expressions: tuple[str, ...]) -> tuple[bytes, dict[str, str]]:
    from cupy.cuda import compiler

    binary, mapping = compiler.compile_using_nvrtc(
        source, OPTIONS, name_expressions=list(expressions) or None)
    if isinstance(binary, str):  # PTX, where NVRTC cannot target the device directly
        binary = binary.encode()
    return binary, {e: mapping[e] for e in expressions} if expressions else {}


def load_module(source: str, expressions: tuple[str, ...] = ()) -> KernelModule:
    """``source`` compiled for the current device (from the disk cache when it is there),
    loaded; ``expressions`` are the template instantiations to compile and name."""
    import cupy

    device = cupy.cuda.Device()
    path = cache_dir() / f"graphdb-{_key(source, expressions, device.compute_capability)}.cubin"
    in_memory = os.environ.get("CUPY_CACHE_IN_MEMORY", "0") not in ("", "0")
    cached = None if in_memory else _read(path, expressions)
    if cached is None:
        from graphdb.storage.compiled import note_first_use

        started = time.perf_counter()
        cached = _compile(source, expressions)
        note_first_use(time.perf_counter() - started)  # once per architecture (the shell says)
        if not in_memory:
            _write(path, *cached)
    binary, mangled = cached
    module = cupy.cuda.function.Module()
    module.load(binary)
    return KernelModule(module, mangled)
