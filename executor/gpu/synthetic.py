"""Synthetic graphs built on the GPU: R-MAT and grids as resident CSR, seeded.

Used by the GPU calibration (:mod:`graphdb.executor.physical.measure`) and the benchmarks in
``tools/`` (through ``tools/gpu_graphs.py``, which gives R-MAT Graph500's probabilities).

``graphdb.generators.rmat`` takes minutes on the CPU at scale 24; this draws the same R-MAT
distribution (Graph500 a, b, c; scrambled ids; duplicates and self loops kept) with CuPy's
generator, so the graph differs edge by edge from the CPU one with the same seed but not in
kind. The CSR arrays are sorted on the device and handed to the residency owner as the graph's
device CSR (the entries :func:`graphdb.executor.gpu.runtime.device_csr` reads); host arrays are
copied back only when a CPU peer (scipy) or a streamed operator asks for them.
"""

from __future__ import annotations

import numpy as np

from ..graph import Graph, index_dtype
from . import runtime as rt

__all__ = ["DeviceGraph", "graph_from_device_edges", "grid_edges_gpu", "rmat_edges_gpu"]


def rmat_edges_gpu(scale: int, edge_factor: int = 16, *, seed: int = 0,
                   abc: tuple[float, float, float]):
    """(src, dst) device arrays of an R-MAT graph with quadrant probabilities ``abc``."""
    cp = rt.cp()
    n, m = 1 << scale, edge_factor << scale
    a, b, c = abc
    rs = cp.random.RandomState(seed)
    src = cp.zeros(m, dtype=np.int64)
    dst = cp.zeros(m, dtype=np.int64)
    for bit in range(scale):
        r = rs.random_sample(m, dtype=np.float32)
        src |= (r >= a + b).astype(np.int64) << bit
        dst |= (((r >= a) & (r < a + b)) | (r >= a + b + c)).astype(np.int64) << bit
        del r
    perm = cp.random.RandomState(seed + 0x5EED).permutation(n)
    return perm[src], perm[dst]


def grid_edges_gpu(rows: int, cols: int):
    """A rows x cols 4-neighbour grid, each edge once (load undirected)."""
    cp = rt.cp()
    ids = cp.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    src = cp.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = cp.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    return src, dst


def _csr(src, dst, n, weights, ids):
    """{"offsets", "targets"[, "weights"]} of the edges sorted by ``src`` (device arrays)."""
    cp = rt.cp()
    order = cp.argsort(src)
    counts = cp.bincount(src, minlength=n)
    offsets = cp.zeros(n + 1, dtype=np.int64)
    cp.cumsum(counts, out=offsets[1:])
    arrays = {"offsets": offsets, "targets": dst[order].astype(ids)}
    if weights is not None:
        arrays["weights"] = weights[order].astype(np.float64)
    return arrays


class DeviceGraph(Graph):
    """A :class:`Graph` whose stored arrays were made on the device: a host read copies the
    residency owner's device entry back (once; the host copy is then held like any loaded
    array). Drop the device copies with :meth:`drop_device` after the host copies are made, and
    the graph reads as an in-memory one from then on."""

    def __init__(self, name: str, n: int, m: int, directed: bool, weighted: bool):
        super().__init__(name, n, m, directed, weighted, read=self._from_device)
        self._ids = index_dtype(n)

    def id_dtype(self) -> np.dtype:  # without reading the host targets (as StoredGraph does)
        return self._ids

    def _from_device(self, array: str) -> np.ndarray:
        held = self.residency.peek(self.key, rt.device_name(), f"device:{array}")
        if held is None:
            if array.startswith("in_") and self.directed:
                raise KeyError(array)  # derived from the out-CSR by Graph.array
            raise RuntimeError(f"{self.name}: the device copy of {array} was dropped before its "
                               "host copy was made (call host_copies() first)")
        return rt.cp().asnumpy(held)

    def host_copies(self) -> None:
        """Copy every stored array to the host now (the streamed operators read them there)."""
        for d in ("out", "in") if self.directed else ("out",):
            self.csr(d, weights=self.weighted)

    def drop_device(self) -> None:
        """Forget every device entry of this graph (CSR, partitions) and release CuPy's cache."""
        self.residency.forget(self.key, rt.device_name())
        rt.cp().get_default_memory_pool().free_all_blocks()


def graph_from_device_edges(src, dst, n: int, *, directed: bool = True, weights=None,
                            name: str = "bench") -> DeviceGraph:
    """A graph whose CSR lives on the device, put in the residency owner as its device CSR."""
    cp = rt.cp()
    if not directed:
        loop = src == dst
        src, dst = cp.concatenate([src, dst[~loop]]), cp.concatenate([dst, src[~loop]])
        if weights is not None:
            weights = cp.concatenate([weights, weights[~loop]])
    ids = index_dtype(n)
    sides = {"out": _csr(src, dst, n, weights, ids)}
    if directed:
        sides["in"] = _csr(dst, src, n, weights, ids)
    m = int(sides["out"]["targets"].size)
    del src, dst, weights
    g = DeviceGraph(name, n, m, directed, "weights" in sides["out"])
    device = rt.device_name()
    for side, arrays in sides.items():
        for what, array in arrays.items():
            g.residency.put(g.key, device, f"device:{side}_{what}", array)
    return g
