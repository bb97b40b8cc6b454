"""PageRank with the LDBC Graphalytics semantics.

Every vertex starts at 1/|V|. Each iteration:
``PR'(v) = (1 - d)/|V| + d * (sum over in-edges (u, v) of PR(u)/outdeg(u) + D/|V|)``
where D is the total rank of dangling vertices (no out-edges), spread evenly. Parallel edges
count with multiplicity. ``tolerance = 0`` runs exactly ``max_iterations`` iterations; a
positive tolerance stops as soon as the L1 change of an iteration falls below it.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..cancel import checkpoint
from ..graph import Graph
from ._csgraph import cached, kernel_csr
from .registry import MAX_ITERATIONS, Algorithm, AlgorithmOutput, Column, Param, register

__all__ = ["inverse_out_degrees", "pagerank_ranks"]


def inverse_out_degrees(graph: Graph) -> np.ndarray:
    """``1 / outdeg(u)`` per vertex, 0 for a dangling vertex; cached on the graph."""

    def build() -> np.ndarray:
        degree = graph.out_csr.degrees()
        inverse = np.zeros(graph.num_vertices, dtype=np.float64)
        np.divide(1.0, degree, out=inverse, where=degree > 0)
        return inverse

    return cached(graph, "pagerank:inverse_degree", build)


def pagerank_ranks(
    graph: Graph, damping: float = 0.85, max_iterations: int = 20, tolerance: float = 0.0
) -> tuple[np.ndarray, int]:
    """Graphalytics PageRank.

    A compiled pull over the in-CSR (:func:`._kernels.pagerank_step`), parallel over vertices
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
    from . import _kernels

    in_off, in_src = kernel_csr(graph, "in")  # in-CSR targets are the edges' sources
    inverse = inverse_out_degrees(graph)
    kernels = _kernels.for_work(n + len(in_src), parallel=True)
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


def _pagerank_cpu(
    graph: Graph, damping: float = 0.85, max_iterations: int = 20, tolerance: float = 0.0
) -> AlgorithmOutput:
    rank, iterations = pagerank_ranks(graph, damping, max_iterations, tolerance)
    return AlgorithmOutput(
        {"vertex": np.arange(graph.num_vertices, dtype=np.int64), "rank": rank},
        {"iterations": iterations},
    )


PAGERANK = register(
    Algorithm(
        name="pagerank",
        params=(
            Param("damping", "float", default=0.85, minimum=0.0, maximum=1.0),
            Param("max_iterations", "int", default=20, minimum=0, maximum=MAX_ITERATIONS),
            Param(
                "tolerance",
                "float",
                default=0.0,
                minimum=0.0,
                doc="stop when the L1 change of an iteration is below this (0: never)",
            ),
        ),
        columns=(Column("vertex", pa.int64(), vertex=True), Column("rank", pa.float64())),
        cpu=_pagerank_cpu,
        doc="PageRank of every vertex (LDBC Graphalytics definition).",
        all_active=True,
    )
)
