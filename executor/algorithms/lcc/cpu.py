"""Local clustering coefficient (LCC), LDBC Graphalytics definition (directed and undirected).

For a vertex v let N(v) be its distinct neighbours, in or out, v itself excluded, and d = |N(v)|.
LCC(v) counts the directed edges (a, b) with both a and b in N(v) (an undirected edge counts in
both directions; parallel edges and self loops count once / not at all) and divides by d(d - 1);
it is 0 when d < 2. On an undirected graph this is the usual 2T(v) / (d(d - 1)).

With U the symmetric neighbour relation weighted by ``w(a, b) = D[a, b] + D[b, a]`` (D the
distinct directed edges, so w is 1 or 2), the count of v is the sum of w over the unordered pairs
{a, b} of N(v) that are neighbours. Each such pair is found once from its lower-ranked end in the
degree order (rank by degree, then id): for every a in N(v), walk U+(a), a's neighbours of higher
rank, and test each against v's neighbours marked in a bitmap. In the degree order a vertex has
at most sqrt(2|E|) higher-ranked neighbours, so the work is O(|E| sqrt|E|) however skewed the
degrees (the masked sparse product U @ D it replaces walked every two-step path: a hub of degree
d cost d^2, 24 s on R-MAT 16 where igraph takes 0.5 s). Vertices are taken cyclically by the
threads, each with its own bitmap (|V| / 8 bytes).
"""

from __future__ import annotations

import numpy as np

from graphdb.storage.compiled import KernelSet

from ...cancel import checkpoint
from ...graph import Graph
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["KERNELS", "lcc", "lcc_coefficients", "oriented_neighbours"]

KERNELS = KernelSet(__name__)
prange = range  # numba.prange once compiled

_ONE = np.uint64(1)
_SIX = np.uint64(6)
_LOW6 = np.uint64(63)

#: Vertices per call of the counting kernel (a cancel is noticed between calls).
CHUNK_VERTICES = 1 << 16


def oriented_neighbours(graph: Graph) -> tuple[np.ndarray, ...]:
    """(U offsets, U targets, U+ offsets, U+ targets, U+ weights) of the docstring's relation:
    U the symmetric distinct neighbour CSR, U+ its entries towards higher-ranked vertices with
    ``w`` (int32, 1 or 2). scipy's sparse sums do the merging (parallel edges, both directions)."""
    import scipy.sparse as sp

    n = graph.num_vertices
    csr = graph.out_csr
    proper = (csr.targets != csr.sources()).astype(np.int32)  # self loops sum to 0 and go
    # copies: summing duplicates sorts the indices in place, and these are the graph's own
    distinct = sp.csr_matrix((proper, csr.targets.copy(), csr.offsets.copy()), shape=(n, n))
    distinct.sum_duplicates()
    distinct.eliminate_zeros()
    distinct.data[:] = 1
    both = (distinct + distinct.T).tocsr()  # w(a, b) = D[a, b] + D[b, a]
    u_off = both.indptr.astype(np.int64)
    u_tgt = both.indices
    degree = np.diff(u_off)
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort((np.arange(n), degree))] = np.arange(n)
    up = rank[u_tgt] > np.repeat(rank, degree)
    kept = np.zeros(up.size + 1, dtype=np.int64)
    np.cumsum(up, out=kept[1:])
    p_off = kept[u_off]  # U+ rows: the kept entries of each U row, in order
    return u_off, u_tgt, p_off, u_tgt[up], both.data[up]


@KERNELS.kernel(parallel=True)
def lcc_closed(u_off, u_tgt, p_off, p_tgt, p_w, first, last, threads, bits, closed):
    """``closed[v]`` for v in ``[first, last)``: the sum of ``p_w`` over the pairs of v's
    neighbours found from their lower-ranked end (module docstring). Thread t takes vertices
    ``first + t, first + t + threads, ...`` with bitmap ``bits[t]`` (clear on entry and exit)."""
    for t in prange(threads):
        mark = bits[t]
        v = first + t
        while v < last:
            lo = u_off[v]
            hi = u_off[v + 1]
            for i in range(lo, hi):
                a = u_tgt[i]
                mark[a >> _SIX] |= _ONE << (a & _LOW6)
            total = 0
            for i in range(lo, hi):
                a = u_tgt[i]
                for j in range(p_off[a], p_off[a + 1]):
                    b = p_tgt[j]
                    if (mark[b >> _SIX] >> (b & _LOW6)) & _ONE:
                        total += np.int64(p_w[j])
            for i in range(lo, hi):
                a = u_tgt[i]
                mark[a >> _SIX] = 0
            closed[v] = total
            v += threads


def lcc_coefficients(graph: Graph) -> np.ndarray:
    """Local clustering coefficient of every vertex.

    Returns
    -------
    numpy.ndarray
        float64 per vertex, in ``[0, 1]``; 0 where the vertex has fewer than two neighbours.
    """
    n = graph.num_vertices
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    u_off, u_tgt, p_off, p_tgt, p_w = oriented_neighbours(graph)
    kernels = KERNELS.for_work(n + int(u_off[-1]), parallel=True)
    threads = _threads(kernels)
    bits = np.zeros((threads, (n + 63) // 64), dtype=np.uint64)
    closed = np.zeros(n, dtype=np.int64)
    index = np.uint32 if n < 2**32 else np.uint64  # unsigned: see graphdb.storage.compiled
    args = (u_off.view(np.uint64), u_tgt.astype(index, copy=False), p_off.view(np.uint64),
            p_tgt.astype(index, copy=False), p_w)
    for first in range(0, n, CHUNK_VERTICES):
        checkpoint()
        kernels.lcc_closed(*args, np.uint64(first), np.uint64(min(n, first + CHUNK_VERTICES)),
                           np.uint64(threads), bits, closed)
    degree = np.diff(u_off).astype(np.float64)
    coefficient = np.zeros(n, dtype=np.float64)
    ok = degree >= 2
    coefficient[ok] = closed[ok] / (degree[ok] * (degree[ok] - 1))
    return coefficient


def _threads(kernels) -> int:
    """Threads of the counting kernel: numba's pool when compiled, one for the Python source."""
    if kernels is KERNELS.python:
        return 1
    import numba

    return int(numba.get_num_threads())


def lcc(graph: Graph, config: OperatorConfig) -> AlgorithmOutput:
    """Local clustering coefficient of every vertex (Graphalytics LCC)."""
    return AlgorithmOutput.vertices({"coefficient": lcc_coefficients(graph)})
