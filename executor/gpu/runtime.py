"""The GPU device layer: CuPy, kernel modules, the memory budget, streams and graph residency.

Everything here imports CuPy lazily (inside functions), so ``import executor.gpu.runtime`` is
cheap and a CPU-only install can import it; only calling into it needs CuPy.

- Kernel modules are the ``cuda/*.cu`` files. Their ``#include "include/..."`` lines are inlined
  here before compilation, so CuPy's on-disk cache key (which hashes the source text and the
  options) changes whenever a header changes; each module is compiled once per device and
  memoized in-process (``functools.lru_cache``).
- The memory budget (``SET memory_limit``) is the limit of CuPy's default memory pool; a CuPy
  out-of-memory error inside an operator becomes :class:`graphdb.executor.errors.DeviceOutOfMemory`, so
  the caller can fall back to a CPU plan.
- A graph's CSR arrays are uploaded once and kept on the :class:`~graphdb.executor.graph.Graph` object
  (``_gpu_resident``), so repeated queries on one graph do not pay the host-to-device copy.
"""

from __future__ import annotations

import contextlib
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ..errors import DeviceOutOfMemory

__all__ = [
    "cp",
    "DeviceInfo",
    "device_info",
    "module",
    "kernel",
    "id_ctype",
    "apply_memory_limit",
    "translate_oom",
    "operator_stream",
    "DeviceCSR",
    "device_csr",
    "attach_device_csr",
    "grid_for",
    "ALL_MODULES",
]

CUDA_DIR = Path(__file__).with_name("cuda")
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$', re.MULTILINE)

#: Every kernel module and the templates it instantiates for each vertex-id type.
ALL_MODULES: dict[str, tuple[str, ...]] = {
    "frontier": (
        "graphdb_frontier_seed<{id}>",
        "graphdb_frontier_bfs_level<{id}>",
        "graphdb_frontier_sssp_relax<{id}>",
        "graphdb_frontier_sssp_bucket<{id}>",
    ),
    "pagerank": (
        *(f"graphdb_pagerank_rows<{{id}},{push},{g}>" for push in ("false", "true")
          for g in (4, 8, 16, 32)),
        "graphdb_pagerank_heavy<{id},false>",
        "graphdb_pagerank_heavy<{id},true>",
        "graphdb_pagerank_merge_apply<{id}>",
        "graphdb_pagerank_edge_rows<{id}>",
    ),
    "lcc": ("graphdb_lcc_count<{id}>",),
    "wcc": (
        "graphdb_wcc_hook_sample<{id}>",
        "graphdb_wcc_hook_rest<{id}>",
        "graphdb_wcc_compress<{id}>",
    ),
    "streaming": (),  # plain kernels (executor.streaming)
    "subway": (),
}


def cp():
    """The ``cupy`` module (imported on first use)."""
    import cupy

    return cupy


def id_ctype(dtype: np.dtype) -> str:
    """C type of a vertex-id array, as the kernels' template argument."""
    dtype = np.dtype(dtype)
    if dtype == np.int32:
        return "int"
    if dtype == np.int64:
        return "long long"
    raise TypeError(f"vertex ids must be int32 or int64, not {dtype}")


@dataclass(frozen=True)
class DeviceInfo:
    id: int
    name: str
    multiprocessors: int
    l2_bytes: int
    shared_per_block: int
    total_memory: int


@functools.lru_cache(maxsize=None)
def _device_info(device_id: int) -> DeviceInfo:
    props = cp().cuda.runtime.getDeviceProperties(device_id)
    name = props["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    return DeviceInfo(
        id=device_id,
        name=name,
        multiprocessors=int(props["multiProcessorCount"]),
        l2_bytes=int(props["l2CacheSize"]),
        shared_per_block=int(props["sharedMemPerBlock"]),
        total_memory=int(props["totalGlobalMem"]),
    )


def device_info() -> DeviceInfo:
    """Properties of the current device (read from the device, cached)."""
    return _device_info(cp().cuda.Device().id)


def grid_for(work: int, threads: int = 256, per_sm: int = 8) -> int:
    """Blocks for a grid-stride kernel: enough to fill the device, no more than the work needs."""
    full = device_info().multiprocessors * per_sm
    return max(1, min(full, -(-int(work) // threads)))


def _source(name: str) -> str:
    """The module's source with its local includes inlined (each header once)."""
    seen: set[Path] = set()

    def expand(path: Path) -> str:
        def include(m: re.Match) -> str:
            target = (path.parent / m.group(1)).resolve()
            if target in seen:
                return ""
            seen.add(target)
            return f"// ---- {m.group(1)} ----\n" + expand(target)

        text = _INCLUDE.sub(include, path.read_text())
        return re.sub(r"^\s*#\s*pragma\s+once\s*$", "", text, flags=re.MULTILINE)

    return expand(CUDA_DIR / f"{name}.cu")


@functools.lru_cache(maxsize=None)
def _module(name: str, device_id: int, expressions: tuple[str, ...]):
    from .compiled import load_module

    return load_module(_source(name), expressions)


def module(name: str):
    """The compiled kernel module ``cuda/<name>.cu`` for the current device, with the template
    instantiations :data:`ALL_MODULES` lists (memoized; compiled once, see :mod:`.compiled`)."""
    exprs = tuple(e.format(id=t) for e in ALL_MODULES.get(name, ()) for t in ("int", "long long"))
    return _module(name, cp().cuda.Device().id, exprs)


def kernel(module_name: str, template: str, ids: np.dtype, *extra: str):
    """One kernel instantiation: kernel("frontier", "graphdb_frontier_bfs_level", np.int32)."""
    args = ",".join((id_ctype(ids),) + extra)
    return module(module_name).get_function(f"{template}<{args}>")


def apply_memory_limit(limit_bytes: int | None) -> None:
    """Cap CuPy's default memory pool at the budget (``SET memory_limit``)."""
    pool = cp().get_default_memory_pool()
    pool.set_limit(size=int(limit_bytes) if limit_bytes else 0)


@contextlib.contextmanager
def memory_budget(limit_bytes: int) -> Iterator[None]:
    """Cap CuPy's pool at one operator's budget while it runs, then restore the previous cap.

    The pool is process-wide while ``memory_limit`` is a connection setting: setting the cap for
    good would let one connection's ``SET memory_limit`` starve every other one in the process.
    """
    pool = cp().get_default_memory_pool()
    previous = pool.get_limit()
    apply_memory_limit(limit_bytes)
    try:
        yield
    finally:
        pool.set_limit(size=previous)


@contextlib.contextmanager
def translate_oom(what: str) -> Iterator[None]:
    """Turn a device allocation failure into :class:`DeviceOutOfMemory` naming the sizes."""
    cupy = cp()
    try:
        yield
    except cupy.cuda.memory.OutOfMemoryError as exc:
        pool = cupy.get_default_memory_pool()
        raise DeviceOutOfMemory(
            f"{what}: the GPU ran out of memory ({exc}); pool in use {pool.used_bytes()} B, "
            f"limit {pool.get_limit() or 'none'}"
        ) from exc
    except cupy.cuda.runtime.CUDARuntimeError as exc:
        if getattr(exc, "status", None) == 2:  # cudaErrorMemoryAllocation
            raise DeviceOutOfMemory(f"{what}: {exc}") from exc
        raise


@functools.lru_cache(maxsize=None)
def _stream(device_id: int):
    # A *blocking* stream: it orders itself with the legacy default stream, on which CuPy
    # copies graphs in and results out when no stream is current. A non-blocking one raced with
    # those copies (seen on an H100: PageRank read out-degrees before their upload finished).
    return cp().cuda.Stream(non_blocking=False)


def operator_stream():
    """The stream graph operators run on (one per device; ordered with the default stream)."""
    return _stream(cp().cuda.Device().id)


@dataclass
class DeviceCSR:
    offsets: Any  # cupy int64 (V + 1)
    targets: Any  # cupy int32 / int64 (E)
    weights: Any | None = None  # cupy float64 (E)

    @property
    def num_vertices(self) -> int:
        return int(self.offsets.size) - 1

    @property
    def num_edges(self) -> int:
        return int(self.targets.size)

    def degrees(self):
        return self.offsets[1:] - self.offsets[:-1]


def _resident(graph) -> dict:
    cache = getattr(graph, "_gpu_resident", None)
    if cache is None:
        cache = {}
        graph._gpu_resident = cache  # Graph is a plain dataclass: the cache lives and dies with it
    return cache


def device_csr(graph, direction: str = "out", *, weights: bool = False) -> DeviceCSR:
    """The graph's out- or in-CSR on the current device (uploaded once, then cached)."""
    if direction == "in" and not graph.directed:
        direction = "out"
    cache = _resident(graph)
    key = (direction, cp().cuda.Device().id)
    dev = cache.get(key)
    if dev is None:
        host = graph.out_csr if direction == "out" else graph.in_csr
        # Kernels take one id type for both directions: the out-CSR's (a derived in-CSR may
        # have been built with the default, narrower one).
        ids = graph.out_csr.targets.dtype
        with translate_oom(f"uploading the {direction}-CSR of graph '{graph.name}'"):
            dev = DeviceCSR(cp().asarray(host.offsets, dtype=np.int64),
                            cp().asarray(host.targets, dtype=ids))
        cache[key] = dev
    if weights and dev.weights is None:
        host = graph.out_csr if direction == "out" else graph.in_csr
        if host.weights is not None:
            with translate_oom(f"uploading the edge weights of graph '{graph.name}'"):
                dev.weights = cp().asarray(host.weights, dtype=np.float64)
    return dev


def attach_device_csr(graph, direction: str, csr: DeviceCSR) -> None:
    """Register device arrays already built on the GPU (benchmarks, device-side loaders)."""
    _resident(graph)[(direction, cp().cuda.Device().id)] = csr
