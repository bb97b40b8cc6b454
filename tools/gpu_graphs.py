"""Benchmark graphs built on the GPU: R-MAT and grids as resident CSR, seeded.

``graphdb.generators.rmat`` takes minutes on the CPU at scale 24; this draws the same R-MAT
distribution (Graph500 a, b, c; scrambled ids; duplicates and self loops kept) with CuPy's
generator, so the graph differs edge by edge from the CPU one with the same seed but not in
kind. CSR arrays are sorted on the device and attached to a :class:`graphdb.executor.graph.Graph`
whose host arrays are copied back only if a CPU peer (scipy) asks for them.
"""

from __future__ import annotations

import numpy as np

from graphdb.executor.gpu import runtime as rt
from graphdb.executor.graph import CSR, Graph
from graphdb.generators import GRAPH500_ABC

__all__ = ["rmat_edges_gpu", "grid_edges_gpu", "graph_from_device_edges"]


def rmat_edges_gpu(scale: int, edge_factor: int = 16, *, seed: int = 0):
    cp = rt.cp()
    n, m = 1 << scale, edge_factor << scale
    a, b, c = GRAPH500_ABC
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


def _csr(src, dst, n, weights):
    cp = rt.cp()
    order = cp.argsort(src)
    counts = cp.bincount(src, minlength=n)
    offsets = cp.zeros(n + 1, dtype=np.int64)
    cp.cumsum(counts, out=offsets[1:])
    targets = dst[order].astype(np.int32)
    w = None if weights is None else weights[order]
    return rt.DeviceCSR(offsets, targets, w)


def graph_from_device_edges(src, dst, n: int, *, directed: bool = True, weights=None,
                            name: str = "bench") -> Graph:
    """A Graph whose CSR lives on the device (host copies made lazily, for CPU peers)."""
    cp = rt.cp()
    if not directed:
        loop = src == dst
        src, dst = cp.concatenate([src, dst[~loop]]), cp.concatenate([dst, src[~loop]])
        if weights is not None:
            weights = cp.concatenate([weights, weights[~loop]])
    out = _csr(src, dst, n, weights)
    inn = _csr(dst, src, n, weights) if directed else out
    del src, dst

    def host(dev):
        def load():
            w = None if dev.weights is None else cp.asnumpy(dev.weights)
            return CSR(cp.asnumpy(dev.offsets), cp.asnumpy(dev.targets), w)
        return load

    g = Graph(name=name, num_vertices=n, num_edges=out.num_edges, directed=directed,
              weighted=weights is not None, _load_out=host(out),
              _load_in=host(inn) if directed else None)
    rt.attach_device_csr(g, "out", out)
    if directed:
        rt.attach_device_csr(g, "in", inn)
    return g
