"""PageRank with the LDBC Graphalytics semantics.

Every vertex starts at 1/|V|. Each iteration:
``PR'(v) = (1 - d)/|V| + d * (sum over in-edges (u, v) of PR(u)/outdeg(u) + D/|V|)``
where D is the total rank of dangling vertices (no out-edges), spread evenly. Parallel edges
count with multiplicity. ``tolerance = 0`` runs exactly ``max_iterations`` iterations; a
positive tolerance stops as soon as the L1 change of an iteration falls below it.
"""

from __future__ import annotations

import numpy as np

from graphdb.storage.compiled import KernelSet

from ...cancel import checkpoint
from ...graph import Graph
from ..common import kernel_csr
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["KERNELS", "inverse_out_degrees", "pagerank", "pagerank_ranks"]

KERNELS = KernelSet(__name__)
prange = range  # numba.prange once compiled


def inverse_out_degrees(graph: Graph) -> np.ndarray:
    """``1 / outdeg(u)`` per vertex, 0 for a dangling vertex; kept per graph version."""

    def build() -> np.ndarray:
        degree = graph.out_degrees()
        inverse = np.zeros(graph.num_vertices, dtype=np.float64)
        np.divide(1.0, degree, out=inverse, where=degree > 0)
        return inverse

    return graph.derived("pagerank:inverse_degree", build)


# --- the numeric step: one vertex's update, shared by every CPU variant ----------------------


@KERNELS.kernel(inline="always")
def _update_vertex(v, s, base, damping, inverse_degree, rank, next_contrib, write_rank,
                   measure):
    """One vertex's Graphalytics update from the sum ``s`` of its in-neighbours' contributions:
    ``r = base + damping * s`` with ``base = (1 - d)/|V| + d * D/|V|`` (D the previous ranks'
    dangling total). Writes the next contribution ``r / outdeg``; a dangling vertex's slot is
    never gathered (it has no out-edges), so it holds the rank itself. Returns (this vertex's
    share of the next dangling total, its L1 change when ``measure``)."""
    r = base + damping * s
    inv = inverse_degree[v]
    dangling = 0.0
    if inv == 0.0:
        next_contrib[v] = r
        dangling = r
    else:
        next_contrib[v] = r * inv
    change = abs(r - rank[v]) if measure else 0.0
    if write_rank:
        rank[v] = r
    return dangling, change


@KERNELS.kernel(parallel=True)
def pagerank_init(rank, inverse_degree, contrib):
    """Contributions of the initial ranks (see :func:`_update_vertex`); the dangling total."""
    dangling = 0.0
    for v in prange(rank.size):
        r = rank[v]
        s = inverse_degree[v]
        if s == 0.0:
            contrib[v] = r
            dangling += r
        else:
            contrib[v] = r * s
    return dangling


@KERNELS.kernel(parallel=True)
def pagerank_step(
    in_off, in_src, contrib, inverse_degree, rank, next_contrib, base, damping, write_rank, measure
):
    """One pull iteration, fused with the update: each vertex gathers its in-neighbours'
    contributions and applies :func:`_update_vertex`. The ranks need not be written but in the
    last iteration (``write_rank``): two |V|-sized passes fewer per iteration. ``measure`` (with
    ``write_rank``, ``rank`` holding the previous ranks) also sums the L1 change. Returns
    ``(dangling total of the new ranks, L1 change or 0)``."""
    dangling = 0.0
    change = 0.0
    for v in prange(next_contrib.size):
        s = 0.0
        for e in range(in_off[v], in_off[v + 1]):
            s += contrib[in_src[e]]
        d, c = _update_vertex(v, s, base, damping, inverse_degree, rank, next_contrib,
                              write_rank, measure)
        dangling += d
        change += c
    return dangling, change


@KERNELS.kernel(parallel=True)
def pagerank_apply(sums, inverse_degree, rank, next_contrib, base, damping):
    """The update of every vertex from sums computed elsewhere (the streamed variants: edge
    chunks, pages), ranks written and the L1 change measured. Returns ``(dangling, change)``."""
    dangling = 0.0
    change = 0.0
    for v in prange(sums.size):
        d, c = _update_vertex(v, sums[v], base, damping, inverse_degree, rank, next_contrib,
                              True, True)
        dangling += d
        change += c
    return dangling, change


def pagerank_ranks(
    graph: Graph, damping: float = 0.85, max_iterations: int = 20, tolerance: float = 0.0
) -> tuple[np.ndarray, int]:
    """Graphalytics PageRank.

    A compiled pull over the in-CSR (:func:`pagerank_step`), parallel over vertices
    on the threads of the ``threads`` setting: each iteration is one pass that gathers the
    in-neighbours' contributions (rank / out-degree), writes the new rank and the next
    iteration's contribution, and sums the dangling rank and the L1 change on the way.

    Parameters
    ----------
    graph : Graph
        The graph; parallel edges count with multiplicity.
    damping : float
        Probability of following an edge.
    max_iterations : int
        Iterations to run.
    tolerance : float
        Stop early once an iteration changes the ranks by less than this (L1); 0 never stops.

    Returns
    -------
    rank : numpy.ndarray
        float64 per vertex, summing to 1.
    iterations : int
        Iterations run.
    """
    n = graph.num_vertices
    if n == 0:
        return np.zeros(0), 0
    in_off, in_src = kernel_csr(graph, "in")  # in-CSR targets are the edges' sources
    inverse = inverse_out_degrees(graph)
    kernels = KERNELS.for_work(n + len(in_src), parallel=True)
    rank = np.full(n, 1.0 / n)
    contrib, next_contrib = np.empty(n), np.empty(n)
    teleport = (1.0 - damping) / n
    measure = tolerance > 0.0  # only then is the change summed and the rank written each time
    dangling = kernels.pagerank_init(rank, inverse, contrib)
    iterations = 0
    for i in range(int(max_iterations)):
        checkpoint()  # a cancelled query stops here, within one iteration
        last = i == max_iterations - 1
        dangling, change = kernels.pagerank_step(
            in_off, in_src, contrib, inverse, rank, next_contrib,
            teleport + damping * dangling / n, float(damping), measure or last, measure)
        iterations += 1
        contrib, next_contrib = next_contrib, contrib
        if measure and change < tolerance:
            break
    return rank, iterations


def pagerank(graph: Graph, config: OperatorConfig, damping: float = 0.85,
             max_iterations: int = 20, tolerance: float = 0.0) -> AlgorithmOutput:
    """Graphalytics PageRank of every vertex (resident, all cores)."""
    rank, iterations = pagerank_ranks(graph, damping, max_iterations, tolerance)
    return AlgorithmOutput.vertices({"rank": rank}, {"iterations": iterations})
