"""Where operators run: the CPU or a CUDA GPU, and the memory budget that goes with it.

CuPy is imported only when a GPU is asked for or probed, so a CPU-only install never needs it.
"""

from __future__ import annotations

import atexit
import functools
import os
import threading
from dataclasses import dataclass

from .errors import DeviceUnavailable

__all__ = ["Device", "DEVICE_CHOICES", "gpu_available", "gpu_count", "select_device",
           "host_memory_bytes", "warm_up"]

DEVICE_CHOICES = ("auto", "cpu", "gpu")

#: Share of free memory (host or device) that a default budget takes.
DEFAULT_MEMORY_SHARE = 0.8


def _start_cuda_context_async() -> None:
    """Create the device's primary CUDA context on a background thread, through the driver.

    Context creation (about 140 ms on an H100) and ``import cupy`` (about 250 ms) are the two
    big costs of a GPU query in a fresh process. ctypes releases the GIL during the driver call,
    so the context is made while the main thread imports CuPy, which then finds it ready
    (the runtime API uses the primary context). Best effort: any failure is left for CuPy to
    report.
    """
    import threading

    def create() -> None:
        try:
            import ctypes

            cuda = ctypes.CDLL("libcuda.so.1")
            if cuda.cuInit(0) != 0:
                return
            dev, ctx = ctypes.c_int(), ctypes.c_void_p()
            if cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0:
                cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
        except Exception:  # noqa: BLE001  (no driver, no device: CuPy says why)
            pass

    threading.Thread(target=create, name="graphdb-cuda-context", daemon=True).start()


#: One probe per process; a caller that arrives while the warm-up thread probes waits for it.
_probe_lock = threading.Lock()
_warm_up_thread: threading.Thread | None = None


def _gpu_probe() -> tuple[bool, str]:
    """(available, reason). Cached: probing initialises the CUDA driver once per process."""
    with _probe_lock:
        return _probe()


def warm_up(setting: str) -> None:
    """Start the GPU probe (importing CuPy, creating the CUDA context) on a background thread,
    unless ``setting`` is ``cpu`` or the probe has run. The interactive shell calls this at its
    first prompt, so the probe runs while the user types; a device choice made meanwhile waits
    for it under the lock. (Overlapping it with a query's own parsing and graph load gained
    nothing measurable on an H100: both hold the GIL.) Interpreter exit waits for a probe in
    flight, so that CUDA is never torn down half initialised."""
    global _warm_up_thread
    if setting.lower() == "cpu" or _warm_up_thread is not None or _probe.cache_info().currsize:
        return
    _warm_up_thread = threading.Thread(target=_gpu_probe, name="graphdb-gpu-warm-up",
                                       daemon=True)
    _warm_up_thread.start()
    atexit.register(_warm_up_thread.join, 30)


@functools.lru_cache(maxsize=1)
def _probe() -> tuple[bool, str]:
    if os.environ.get("GRAPHDB_DISABLE_GPU"):
        return False, "disabled by GRAPHDB_DISABLE_GPU"
    _start_cuda_context_async()
    try:
        import cupy  # noqa: F401
    except Exception as exc:  # ImportError, or a broken CUDA install raising at import
        return False, f"CuPy is not installed ({type(exc).__name__})"
    try:
        import cupy

        # Not ``import cupyx``: CuPy imports it at its first elementwise operation, and with it
        # scipy.sparse (150 ms on an H100 host with SciPy 1.17). BFS runs on raw kernels, memset
        # and copies only, so a BFS query never pays it; operators that use CuPy's elementwise
        # operations pay it at their first use.
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return False, "no CUDA device found"
    except Exception as exc:
        return False, f"no usable CUDA device ({exc})"
    return True, "CUDA device present"


def gpu_available() -> bool:
    return _gpu_probe()[0]


def gpu_count() -> int:
    """CUDA devices this process sees (0 without a usable GPU)."""
    if not gpu_available():
        return 0
    import cupy

    return int(cupy.cuda.runtime.getDeviceCount())


def host_memory_bytes() -> int:
    """Physical memory of this machine."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


@dataclass(frozen=True)
class Device:
    """A device and the bytes operators may use on it; for a GPU also what the cost model sizes
    cache blocking by (0 where unknown): its L2 and its memory bandwidth."""

    kind: str  # "cpu" or "gpu"
    memory_limit: int
    name: str = "cpu"
    reason: str = ""
    #: the GPU's L2 cache (PageRank's blocking is sized from it); 0 on the CPU
    l2_bytes: int = 0
    #: memory bandwidth in bytes/s (the device's memory clock x bus width; 0 unknown)
    bandwidth: float = 0.0

    @property
    def is_gpu(self) -> bool:
        return self.kind == "gpu"

    def describe(self) -> str:
        return f"{self.name} (budget {format_bytes(self.memory_limit)})"


def format_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover


#: cudaDeviceAttr numbers of the memory clock (kHz) and bus width (bits).
_MEMORY_CLOCK_KHZ, _MEMORY_BUS_BITS = 36, 37


def _memory_bandwidth(runtime, device_id: int, props: dict) -> float:
    """Bytes/s the device's memory moves at its clock: clock x 2 (double data rate) x bus
    width; 0.0 where the driver does not say (CUDA 13 dropped the properties' fields)."""
    try:
        clock = props.get("memoryClockRate") or runtime.deviceGetAttribute(_MEMORY_CLOCK_KHZ,
                                                                           device_id)
        bits = props.get("memoryBusWidth") or runtime.deviceGetAttribute(_MEMORY_BUS_BITS,
                                                                          device_id)
        return float(clock) * 1e3 * 2 * float(bits) / 8
    except Exception:  # noqa: BLE001  (an unknown bandwidth only leaves a figure out)
        return 0.0


def _gpu_device(memory_limit: int | None, reason: str) -> Device:
    import cupy

    free, _total = cupy.cuda.runtime.memGetInfo()
    device_id = cupy.cuda.Device().id
    props = cupy.cuda.runtime.getDeviceProperties(device_id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    limit = memory_limit if memory_limit is not None else int(free * DEFAULT_MEMORY_SHARE)
    # The budget is enforced where the bytes are allocated, per operator: the runner caps CuPy's
    # pool at it while a GPU operator runs (executor.gpu.runtime.memory_budget), and the pool's
    # OutOfMemoryError becomes DeviceOutOfMemory, so the caller can fall back to the CPU.
    return Device("gpu", limit, name=name, reason=reason,
                  l2_bytes=int(props.get("l2CacheSize", 0)),
                  bandwidth=_memory_bandwidth(cupy.cuda.runtime, device_id, props))


def select_device(setting: str = "auto", memory_limit: int | None = None) -> Device:
    """Resolve the ``device`` setting to a :class:`Device`.

    ``auto`` takes the GPU when one is usable, else the CPU; ``gpu`` insists on one and raises
    :class:`DeviceUnavailable` with the reason when there is none.
    """
    setting = setting.lower()
    if setting not in DEVICE_CHOICES:
        raise ValueError(f"device must be one of {', '.join(DEVICE_CHOICES)}, got {setting!r}")
    if setting in ("auto", "gpu"):
        ok, why = _gpu_probe()
        if ok:
            return _gpu_device(memory_limit, f"device = '{setting}' and {why}")
        if setting == "gpu":
            raise DeviceUnavailable(f"device = 'gpu' but {why}")
        reason = f"device = 'auto' and {why}"
    else:
        reason = "device = 'cpu'"
    limit = memory_limit if memory_limit is not None else int(host_memory_bytes() * DEFAULT_MEMORY_SHARE)
    return Device("cpu", limit, name="cpu", reason=reason)
