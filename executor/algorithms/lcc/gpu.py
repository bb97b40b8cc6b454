"""Local clustering coefficient (Graphalytics LCC) on the GPU.

N(v) is v's set of distinct neighbours, in or out, v excluded; d = |N(v)|; the coefficient is the
number of directed edges a -> b with a, b in N(v) (an undirected edge counts both ways), over
d(d - 1), and 0 when d < 2. The neighbour sets and the distinct out-edges are built on the
device by sorting edge keys; the counting kernel is ``cuda/lcc.cu``.
"""

from __future__ import annotations

import numpy as np

from ...gpu import runtime as rt
from ...graph import Graph
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["LCC_KERNELS", "lcc", "lcc_coefficients_gpu"]

THREADS = 256

#: ``lcc.cu``: the closed-path count of every (vertex, neighbour) entry, a warp each.
LCC_KERNELS = rt.CudaModule("algorithms/lcc/lcc.cu", ("graphdb_lcc_count<{id}>",))


def _distinct_csr(cp, src, dst, n: int, ids):
    """Sorted, duplicate-free CSR of the pairs (src, dst) without self loops, and its row ids."""
    keep = src != dst
    key = cp.unique(src[keep].astype(np.int64) * n + dst[keep].astype(np.int64))
    rows = (key // n).astype(ids)
    targets = (key % n).astype(ids)
    offsets = cp.zeros(n + 1, dtype=np.int64)
    cp.cumsum(cp.bincount(rows, minlength=n), out=offsets[1:])
    return offsets, targets, rows


def lcc_coefficients_gpu(graph: Graph):
    cp = rt.cp()
    n = graph.num_vertices
    out = rt.device_csr(graph, "out")
    ids = out.targets.dtype
    with rt.translate_oom("lcc on the GPU"), rt.operator_stream():
        if n == 0 or out.num_edges == 0:
            return cp.zeros(n, dtype=np.float64)
        src = cp.searchsorted(out.offsets[1:], cp.arange(out.num_edges, dtype=np.int64),
                              side="right").astype(ids)
        dst = out.targets
        d_off, d_tg, _ = _distinct_csr(cp, src, dst, n, ids)
        both_src = cp.concatenate((src, dst))
        both_dst = cp.concatenate((dst, src))
        s_off, s_tg, s_rows = _distinct_csr(cp, both_src, both_dst, n, ids)
        del src, dst, both_src, both_dst
        counts = cp.zeros(n, dtype=np.uint64)
        entries = int(s_tg.size)
        if entries:
            kernel = LCC_KERNELS.kernel("graphdb_lcc_count", ids)
            kernel((rt.grid_for(entries * 32, THREADS),), (THREADS,), (
                s_off, s_tg, s_rows, np.int64(entries), d_off, d_tg, counts))
        d = (s_off[1:] - s_off[:-1]).astype(np.float64)
        denom = d * (d - 1)
        return cp.where(d >= 2, counts.astype(np.float64) / cp.maximum(denom, 1), 0.0)


def lcc(graph: Graph, config: OperatorConfig) -> AlgorithmOutput:
    """GPU twin of :func:`graphdb.executor.algorithms.lcc.cpu.lcc`."""
    coefficient = lcc_coefficients_gpu(graph)
    return AlgorithmOutput.vertices({"coefficient": coefficient})
