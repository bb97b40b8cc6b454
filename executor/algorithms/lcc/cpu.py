"""Local clustering coefficient (LCC), LDBC Graphalytics definition (directed and undirected).

For a vertex v let N(v) be its distinct neighbours, in or out, v itself excluded, and d = |N(v)|.
LCC(v) counts the directed edges (a, b) with both a and b in N(v) (an undirected edge counts in
both directions; parallel edges and self loops count once / not at all) and divides by d(d - 1);
it is 0 when d < 2. On an undirected graph this is the usual 2T(v) / (d(d - 1)).

With U the symmetric 0/1 adjacency of the distinct neighbour relation and D the 0/1 adjacency of
distinct directed edges (no self loops), the count is ``sum_b (U @ D)[v, b] * U[v, b]``: paths
v - a -> b that close back to v. That is a sparse product masked by U, computed by scipy in row
blocks sized by the number of two-step paths they start (``U @ outdeg_D``), so that the
intermediate product stays bounded on large graphs with hubs.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np

from ...cancel import checkpoint
from ...graph import Graph
from ..spec import AlgorithmOutput, OperatorConfig

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["lcc", "lcc_coefficients"]

#: Two-step paths (entries of the intermediate product, before merging) per row block.
BLOCK_PATHS = 1 << 24


def _simple_adjacency(graph: Graph) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """(U, D): 0/1 int64 matrices of distinct neighbours and distinct directed edges."""
    import scipy.sparse as sp

    n = graph.num_vertices
    csr = graph.out_csr
    sources = csr.sources().astype(np.int64)
    targets = csr.targets.astype(np.int64)
    proper = sources != targets
    sources, targets = sources[proper], targets[proper]
    ones = np.ones(sources.size, dtype=np.int64)
    directed = sp.csr_matrix((ones, (sources, targets)), shape=(n, n))
    directed.sum_duplicates()
    directed.data[:] = 1
    if not graph.directed:
        return directed, directed  # both directions are stored already
    neighbours = (directed + directed.T).tocsr()
    neighbours.data[:] = 1
    return neighbours, directed


def lcc_coefficients(graph: Graph) -> np.ndarray:
    """Local clustering coefficient of every vertex.

    Returns
    -------
    numpy.ndarray
        float64 per vertex, in ``[0, 1]``; 0 where the vertex has fewer than two neighbours.
    """
    n = graph.num_vertices
    neighbours, directed = _simple_adjacency(graph)
    degree = np.diff(neighbours.indptr).astype(np.float64)
    closed = np.zeros(n, dtype=np.float64)
    paths = np.cumsum(neighbours @ np.diff(directed.indptr))  # two-step paths up to each row
    cuts = np.searchsorted(paths, np.arange(BLOCK_PATHS, paths[-1] if n else 0, BLOCK_PATHS))
    bounds = np.unique(np.concatenate([[0], cuts + 1, [n]]).clip(0, n))
    for start, end in pairwise(bounds):
        checkpoint()
        block = neighbours[start:end]
        closed[start:end] = (block @ directed).multiply(block).sum(axis=1).ravel()
    coefficient = np.zeros(n, dtype=np.float64)
    pairs = degree * (degree - 1)
    ok = degree >= 2
    coefficient[ok] = closed[ok] / pairs[ok]
    return coefficient


def lcc(graph: Graph, config: OperatorConfig) -> AlgorithmOutput:
    """Local clustering coefficient of every vertex (Graphalytics LCC)."""
    return AlgorithmOutput.vertices({"coefficient": lcc_coefficients(graph)})
