"""The GPU device layer: CuPy, kernel modules, the memory budget, streams, device copies.

Everything here imports CuPy lazily (inside functions), so importing this module is cheap and a
CPU-only install can import it; only calling into it needs CuPy.

- Kernel modules (:class:`CudaModule`) are ``.cu`` files beside the Python code that launches
  them (an algorithm family's folder, or ``operators/`` for the shared traversal operators),
  with the shared headers in ``gpu/include/graphdb/`` and the ABI constants of
  :mod:`graphdb.executor.abi` prepended; :mod:`.compiled` keeps the binaries on disk.
- The memory budget (``SET memory_limit``) caps CuPy's pool while an operator runs
  (:func:`memory_budget`); a CuPy out-of-memory error becomes
  :class:`graphdb.executor.errors.DeviceOutOfMemory` (:func:`translate_oom`), so the runner can
  take the CPU plan the physical planner prepared.
- A graph's device CSR (:func:`device_csr`) is uploaded once per graph version and held by the
  residency owner (:mod:`graphdb.executor.residency`), counted against the GPU budget.
"""

from __future__ import annotations

import contextlib
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ..abi import CUDA_DEFINES
from ..errors import DeviceOutOfMemory

__all__ = [
    "CudaModule",
    "DeviceCSR",
    "DeviceInfo",
    "apply_memory_limit",
    "cp",
    "device_csr",
    "device_info",
    "device_name",
    "device_names",
    "grid_for",
    "id_ctype",
    "memory_budget",
    "operator_stream",
    "translate_oom",
    "value_ctype",
]

EXECUTOR_DIR = Path(__file__).resolve().parent.parent
#: Shared headers (``#include "graphdb/common.cuh"``).
INCLUDE_DIR = Path(__file__).resolve().with_name("include")
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$', re.MULTILINE)


def cp():
    """The ``cupy`` module (imported on first use)."""
    import cupy

    return cupy


#: C types of the arrays kernels take as template arguments.
_CTYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long",
           np.dtype(np.float64): "double", np.dtype(np.float32): "float"}


def id_ctype(dtype: np.dtype) -> str:
    """C type of a vertex-id array, as the kernels' template argument."""
    dtype = np.dtype(dtype)
    if dtype in (np.int32, np.int64):
        return _CTYPES[dtype]
    raise TypeError(f"vertex ids must be int32 or int64, not {dtype}")


def value_ctype(dtype: np.dtype) -> str:
    """C type of a value array (int32, int64, float32, float64) as a template argument."""
    try:
        return _CTYPES[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"no kernel takes {np.dtype(dtype)} values") from None


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


def device_name() -> str:
    """The residency owner's name of the current device (``"gpu:<id>"``)."""
    return f"gpu:{cp().cuda.Device().id}"


def grid_for(work: int, threads: int = 256, per_sm: int = 8) -> int:
    """Blocks for a grid-stride kernel: enough to fill the device, no more than the work needs."""
    full = device_info().multiprocessors * per_sm
    return max(1, min(full, -(-int(work) // threads)))


def _defines() -> str:
    return "".join(f"#define GRAPHDB_{name} {value}\n" for name, value in CUDA_DEFINES.items())


class CudaModule:
    """One ``.cu`` file of the executor, declared beside the Python code that launches it.

    ``path`` is relative to the executor package; ``templates`` are the name expressions to
    instantiate, with ``{id}`` standing for each vertex-id type (int and long long). The source
    handed to the compiler is the ABI constants (:mod:`graphdb.executor.abi`) as ``#define``
    lines, then the file with its local includes inlined (each header once), so the kernel
    cache's key changes whenever a header or a constant does. Compiled once per device and
    memoized in-process; see :mod:`.compiled` for the on-disk cache."""

    def __init__(self, path: str, templates: tuple[str, ...] = ()):
        self.path = EXECUTOR_DIR / path
        # (an expression without {id} is listed once)
        self.expressions = tuple(dict.fromkeys(e.format(id=t) for e in templates
                                               for t in ("int", "long long")))
        self._loaded: dict[int, Any] = {}

    def source(self) -> str:
        seen: set[Path] = set()

        def expand(path: Path) -> str:
            def include(m: re.Match) -> str:
                local = path.parent / m.group(1)
                target = (local if local.exists() else INCLUDE_DIR / m.group(1)).resolve()
                if target in seen:
                    return ""
                seen.add(target)
                return f"// ---- {m.group(1)} ----\n" + expand(target)

            text = _INCLUDE.sub(include, path.read_text())
            return re.sub(r"^\s*#\s*pragma\s+once\s*$", "", text, flags=re.MULTILINE)

        return _defines() + expand(self.path)

    def get(self):
        """The module compiled for the current device (from the disk cache when it is there)."""
        device = cp().cuda.Device().id
        module = self._loaded.get(device)
        if module is None:
            from .compiled import load_module

            module = load_module(self.source(), self.expressions)
            self._loaded[device] = module
        return module

    def function(self, name: str):
        """A kernel by its name, or by one of the module's name expressions."""
        return self.get().get_function(name)

    def kernel(self, template: str, ids: np.dtype, *extra: str):
        """One template instantiation: ``FRONTIER.kernel("graphdb_frontier_bfs_level", ids)``."""
        return self.function(f"{template}<{','.join((id_ctype(ids),) + extra)}>")


def apply_memory_limit(limit_bytes: int | None) -> None:
    """Cap CuPy's default memory pool at the budget (``SET memory_limit``)."""
    pool = cp().get_default_memory_pool()
    pool.set_limit(size=int(limit_bytes) if limit_bytes else 0)


@contextlib.contextmanager
def memory_budget(limit_bytes: int, devices=None, reserve: int = 0) -> Iterator[None]:
    """Cap CuPy's pool at one operator's budget while it runs, then restore the previous cap:
    on the current device, or on each of ``devices`` (a partitioned operator's GPUs: the
    budget is per GPU; CuPy's pool keeps a limit per device).

    CuPy counts the blocks its pool caches (freed, kept for reuse) against the cap and does not
    release them when an allocation reaches it: blocks freed by an earlier query, or by the
    residency owner's evictions just before, would make an operator that plans to use
    ``reserve`` bytes of the budget fail short of it. They are released first when the pool's
    total and ``reserve`` do not both fit.

    The pool is process-wide while ``memory_limit`` is a connection setting: setting the cap for
    good would let one connection's ``SET memory_limit`` starve every other one in the process.
    """
    cupy = cp()
    pool = cupy.get_default_memory_pool()
    restore = []
    for device in (devices or [None]):
        with contextlib.ExitStack() as on:
            if device is not None:
                on.enter_context(cupy.cuda.Device(device))
            restore.append((device, pool.get_limit()))
            if limit_bytes and pool.total_bytes() + reserve > limit_bytes \
                    and pool.free_bytes():
                pool.free_all_blocks()
            apply_memory_limit(limit_bytes)
    try:
        yield
    finally:
        for device, previous in restore:
            with contextlib.ExitStack() as on:
                if device is not None:
                    on.enter_context(cupy.cuda.Device(device))
                pool.set_limit(size=previous)


def device_names(devices=None) -> list[str]:
    """The residency owner's names of ``devices`` (GPU ids), or of the current device."""
    if devices:
        return [f"gpu:{d}" for d in devices]
    return [device_name()]


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


def _upload(graph, name: str, dtype) -> Any:
    """Stored array ``name`` of ``graph`` on the current device.

    From the host copy when the residency owner holds one; otherwise, for a stored graph,
    straight from the buffer manager's page-locked frames block by block (no host copy of the
    whole array is made), each block checked as it passes (:func:`_check_block`)."""
    from graphdb.storage import CorruptData, ItemKey

    cupy = cp()
    merged = getattr(graph, "upload_merged", None)
    if merged is not None:  # a changed version: merged on the device from the resident base
        return merged(name, dtype)
    held = graph.residency.peek(graph.key, "cpu", f"array:{name}")
    buffers = getattr(graph, "buffers", None)
    if held is not None or buffers is None:
        host = held if held is not None else graph.array(name)
        return cupy.asarray(host, dtype=dtype)
    info = buffers.array_info(graph.graph_id, name)
    _check_record(graph, name, info)
    out = cupy.empty(info.length, dtype=info.dtype)
    keys = [ItemKey.block(graph.graph_id, name, n) for n in range(info.num_blocks)]
    stream = cupy.cuda.get_current_stream()
    last_offset = 0
    for key, view in buffers.scan(keys):
        block = view[: info.block_length(key.n) * info.dtype.itemsize].view(info.dtype)
        last_offset = _check_block(graph, name, key.n, block, last_offset)
        at = key.n * info.per_block * info.dtype.itemsize
        cupy.cuda.runtime.memcpyAsync(out.data.ptr + at, block.ctypes.data, block.nbytes, 1,
                                      stream.ptr)  # 1 = cudaMemcpyHostToDevice
        stream.synchronize()  # the frame is unpinned when the loop moves on
    if name.endswith("_offsets") and last_offset != graph.num_edges:
        raise CorruptData(f"graph '{graph.name}': array {name!r} ends at {last_offset}, not at "
                          f"|E| = {graph.num_edges}")
    return out if out.dtype == np.dtype(dtype) else out.astype(dtype)


def _check_record(graph, name: str, info) -> None:
    """A CSR array's record against the graph's sizes before its blocks go to the device (the
    catalog's check of a host read, catalog.validation.array_problem)."""
    from graphdb.storage import CorruptData

    from ..graph import index_dtype

    kind = name.split("_", 1)[-1]
    want = {"offsets": (np.dtype(np.int64), graph.num_vertices + 1),
            "targets": (index_dtype(graph.num_vertices), graph.num_edges),
            "weights": (np.dtype(np.float64), graph.num_edges)}.get(kind)
    if want is not None and (info.dtype, info.length) != want:
        raise CorruptData(f"graph '{graph.name}': array {name!r} is stored as {info.length} "
                          f"{info.dtype.name}, the graph needs {want[1]} {want[0].name}")


def _check_block(graph, name: str, n: int, block: np.ndarray, last_offset: int) -> int:
    """The CSR invariants of one block on its way to the device: offsets non-decreasing from
    where the previous block ended and at most |E|, targets in ``[0, |V|)``; returns the last
    offset seen. Damaged blocks never reach a kernel."""
    from graphdb.storage import CorruptData

    if not block.size:
        return last_offset
    if name.endswith("_offsets"):
        bad = (int(block[0]) < last_offset or (n == 0 and int(block[0]) != 0)
               or bool((np.diff(block) < 0).any())
               or int(block[-1]) > graph.num_edges)
        if not bad:
            return int(block[-1])
    elif name.endswith("_targets"):
        bad = int(block.min()) < 0 or int(block.max()) >= graph.num_vertices
        if not bad:
            return last_offset
    else:
        return last_offset
    raise CorruptData(f"graph '{graph.name}': block {n} of {name!r} breaks the CSR invariants "
                      "(offsets must ascend to |E|, targets lie in [0, |V|))")


def device_csr(graph, direction: str = "out", *, weights: bool = False) -> DeviceCSR:
    """The graph's out- or in-CSR on the current device, uploaded once and held by the residency
    owner (counted against the GPU budget); the weights only when asked for. A view of a graph
    (:class:`~graphdb.executor.subgraph.GraphView`) compacts its own from its parent's, there."""
    derive = getattr(graph, "device_csr", None)
    if derive is not None:
        return derive(direction, weights=weights)
    direction = graph.stored_direction(direction)
    device = device_name()
    # Kernels take one id type for both directions: the out-CSR's (a derived in-CSR may have
    # been built with the default, narrower one).
    ids = graph.id_dtype()

    def upload(what: str, dtype):
        def build():
            with translate_oom(f"uploading the {direction}-{what} of graph '{graph.name}'"):
                return _upload(graph, f"{direction}_{what}", dtype)
        return graph.derived(f"device:{direction}_{what}", build, device=device)

    csr = DeviceCSR(upload("offsets", np.int64), upload("targets", ids))
    if weights and graph.weighted:
        csr.weights = upload("weights", np.float64)
    return csr
