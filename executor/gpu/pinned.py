"""Page-locked host memory for the streamed operators: copies to the device are DMA only from
page-locked memory (54 GB/s on an H100, 7 GB/s from ordinary memory).

A streamed operator's topology is held page-locked once per graph version, by the residency
owner (counted against the host budget): :func:`pinned_csr`. Page streaming instead reads the
buffer manager's frames, which are page-locked already.
"""

from __future__ import annotations

import numpy as np

from . import runtime as rt

__all__ = ["h2d", "pinned_csr", "pinned_empty"]

def pinned_empty(n: int, dtype) -> np.ndarray:
    """A page-locked numpy array (its pages are mapped into the device's address space)."""
    dtype = np.dtype(dtype)
    mem = rt.cp().cuda.alloc_pinned_memory(max(1, n * dtype.itemsize))
    return np.frombuffer(mem, dtype=dtype, count=n)


def _pinned_copy(values: np.ndarray, dtype=None) -> np.ndarray:
    out = pinned_empty(values.size, dtype or values.dtype)
    out[:] = values
    return out


def pinned_csr(graph, name: str, csr, weights: bool):
    """(offsets, targets, weights or None) of ``csr`` (graph's form ``name``: ``csr:out``,
    ``csr:in``, ``csr:symmetric``) in page-locked memory, copied once per graph version."""
    off = graph.derived(f"pinned:{name}:offsets", lambda: _pinned_copy(csr.offsets, np.int64))
    tgt = graph.derived(f"pinned:{name}:targets", lambda: _pinned_copy(csr.targets, np.int32))
    w = None
    if weights and csr.weights is not None:
        w = graph.derived(f"pinned:{name}:weights",
                          lambda: _pinned_copy(csr.weights, np.float64))
    return off, tgt, w


def h2d(dst, src: np.ndarray, stream, dst_byte_offset: int = 0) -> int:
    """Asynchronous copy of a page-locked host array into device memory; returns bytes."""
    nbytes = int(src.nbytes)
    if nbytes:
        rt.cp().cuda.runtime.memcpyAsync(dst.data.ptr + dst_byte_offset, src.ctypes.data, nbytes,
                                         1, stream.ptr)  # 1 = cudaMemcpyHostToDevice
    return nbytes
