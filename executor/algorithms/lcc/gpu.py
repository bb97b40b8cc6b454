"""Local clustering coefficient (Graphalytics LCC) on the GPU.

N(v) is v's set of distinct neighbours, in or out, v excluded; d = |N(v)|; the coefficient is the
number of directed edges a -> b with a, b in N(v) (an undirected edge counts both ways), over
d(d - 1), and 0 when d < 2. The count is the CPU's degree-ordered one (lcc/cpu.py): the
weighted neighbour relation and its higher-ranked part are built on the device by sorting edge
keys; the counting kernel is ``lcc.cu``.
"""

from __future__ import annotations

import numpy as np

from ...gpu import runtime as rt
from ...graph import Graph
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["LCC_KERNELS", "lcc", "lcc_coefficients_gpu"]

THREADS = 256

#: ``lcc.cu``: the closed pairs of every (vertex, neighbour) entry, a warp each.
LCC_KERNELS = rt.CudaModule("algorithms/lcc/lcc.cu", ("graphdb_lcc_count<{id}>",))


def _csr(cp, keys, n: int, ids):
    """(offsets, targets, rows) of sorted distinct keys ``row * n + target``."""
    rows = (keys // n).astype(ids)
    targets = (keys % n).astype(ids)
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
                              side="right")
        dst = out.targets.astype(np.int64)
        keep = src != dst
        directed = cp.unique(src[keep] * n + dst[keep])  # distinct directed edges
        del src, dst, keep
        a, b = directed // n, directed % n
        # both orientations of each directed edge: a pair's count is w = D[a,b] + D[b,a]
        keys, weights = cp.unique(cp.concatenate((directed, b * n + a)), return_counts=True)
        del directed, a, b
        s_off, s_tg, s_rows = _csr(cp, keys, n, ids)
        degree = s_off[1:] - s_off[:-1]
        rank = cp.empty(n, dtype=np.int64)
        rank[cp.lexsort(cp.stack((cp.arange(n), degree)))] = cp.arange(n)
        up = rank[s_tg] > rank[s_rows]
        kept = cp.zeros(up.size + 1, dtype=np.int64)
        cp.cumsum(up, out=kept[1:])
        p_off = kept[s_off]
        p_tg, p_w = s_tg[up], weights[up].astype(np.uint8)
        del keys, weights, up, kept, rank
        counts = cp.zeros(n, dtype=np.uint64)
        entries = int(s_tg.size)
        if entries:
            kernel = LCC_KERNELS.kernel("graphdb_lcc_count", ids)
            kernel((rt.grid_for(entries * 32, THREADS),), (THREADS,), (
                s_off, s_tg, s_rows, np.int64(entries), p_off, p_tg, p_w, counts))
        d = degree.astype(np.float64)
        denom = d * (d - 1)
        return cp.where(d >= 2, counts.astype(np.float64) / cp.maximum(denom, 1), 0.0)


def lcc(graph: Graph, config: OperatorConfig) -> AlgorithmOutput:
    """GPU twin of :func:`graphdb.executor.algorithms.lcc.cpu.lcc`."""
    coefficient = lcc_coefficients_gpu(graph)
    return AlgorithmOutput.vertices({"coefficient": coefficient})
