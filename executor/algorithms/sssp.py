"""Single-source shortest paths (SSSP) and single-source widest paths (SSWP).

SSSP follows the Graphalytics definition: the smallest sum of edge weights over all directed
paths from the source (both directions for an undirected graph); unreachable vertices are not
reported. Weighted graphs run scipy's compiled Dijkstra on the graph's cached CSR matrix (no
per-call conversion); with unit weights the distances are BFS depths, which is much cheaper.

SSWP gives, for every reachable vertex, the largest bottleneck (minimum edge weight) over all
paths from the source; the source itself has width +inf. No compiled routine fits, so it is a
vectorized label-correcting search: each round relaxes the out-edges of the vertices whose width
grew in the previous round. Widths only grow and take values among the edge weights, so it ends.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from scipy.sparse import csgraph

from ..errors import InvalidArgument
from ..graph import Graph
from ._csgraph import WEIGHT_PARAM, check_non_negative, edge_weights, scipy_matrix
from .bfs import bfs_levels, frontier_edges
from .registry import Algorithm, AlgorithmOutput, Column, Param, check_source, register

__all__ = ["sssp_distances", "sswp_widths"]


def sssp_distances(graph: Graph, source: int, weight: str | None = None) -> np.ndarray:
    """Shortest-path distance of every vertex from ``source``.

    Parameters
    ----------
    graph : Graph
        The graph.
    source : int
        Internal id of the start vertex.
    weight : str or None
        Edge weight column: ``None`` takes the graph's weights if it has them, else unit weights.

    Returns
    -------
    numpy.ndarray
        float64 per vertex, ``inf`` where unreachable.

    Raises
    ------
    InvalidArgument
        Weights asked of an unweighted graph, an unknown weight column, negative weights.
    """
    weights = edge_weights(graph, weight, "sssp")
    if weights is None:
        vertices, depth = bfs_levels(graph, source)
        dist = np.full(graph.num_vertices, np.inf)
        dist[vertices] = depth
        return dist
    check_non_negative(weights, graph, "sssp")
    return csgraph.dijkstra(scipy_matrix(graph, weights), directed=True, indices=source)


def _sssp_cpu(graph: Graph, source: int, weight: str | None = None) -> AlgorithmOutput:
    check_source(graph, source, "sssp")
    weights = edge_weights(graph, weight, "sssp")
    if weights is None:  # unit weights: hop counts from the BFS, already only reached vertices
        vertices, depth = bfs_levels(graph, source)
        return AlgorithmOutput(
            {"vertex": vertices, "distance": depth.astype(np.float64)},
            {"reached": int(vertices.size), "method": "bfs"},
        )
    dist = sssp_distances(graph, source, weight)
    reached = np.flatnonzero(dist < np.inf)
    return AlgorithmOutput(
        {"vertex": reached, "distance": dist[reached]},
        {"reached": int(reached.size), "method": "dijkstra"},
    )


def sswp_widths(graph: Graph, source: int) -> tuple[np.ndarray, int]:
    """Widest-path width of every vertex from ``source``.

    Parameters
    ----------
    graph : Graph
        A weighted graph.
    source : int
        Internal id of the start vertex.

    Returns
    -------
    width : numpy.ndarray
        float64 per vertex: ``inf`` at the source, ``-inf`` where unreachable.
    rounds : int
        Relaxation rounds run.

    Raises
    ------
    InvalidArgument
        The graph has no weights, or NaN weights.
    """
    csr = graph.out_csr
    if not graph.weighted or csr.weights is None:
        raise InvalidArgument(
            f"sswp(): graph '{graph.name}' has no edge weights; widest paths need them"
        )
    if csr.num_edges and np.isnan(csr.weights).any():
        raise InvalidArgument(f"sswp(): graph '{graph.name}' has NaN edge weights")
    width = np.full(graph.num_vertices, -np.inf)
    width[source] = np.inf
    active = np.array([source], dtype=np.int64)
    rounds = 0
    while active.size:
        rounds += 1
        edges, sources = frontier_edges(csr, active)
        candidate = np.minimum(width[sources], csr.weights[edges])
        targets = csr.targets[edges]
        better = candidate > width[targets]
        targets, candidate = targets[better], candidate[better]
        np.maximum.at(width, targets, candidate)  # several edges may improve one target
        active = np.unique(targets).astype(np.int64, copy=False)
    return width, rounds


def _sswp_cpu(graph: Graph, source: int) -> AlgorithmOutput:
    check_source(graph, source, "sswp")
    width, rounds = sswp_widths(graph, source)
    reached = np.flatnonzero(width > -np.inf)
    return AlgorithmOutput(
        {"vertex": reached, "width": width[reached]},
        {"iterations": rounds, "reached": int(reached.size)},
    )


SSSP = register(
    Algorithm(
        name="sssp",
        params=(
            Param("source", "vertex", doc="vertex to start from"),
            WEIGHT_PARAM,
        ),
        columns=(Column("vertex", pa.int64(), vertex=True), Column("distance", pa.float64())),
        cpu=_sssp_cpu,
        doc="Shortest-path distance from source to every reachable vertex.",
    )
)

SSWP = register(
    Algorithm(
        name="sswp",
        params=(Param("source", "vertex", doc="vertex to start from"),),
        columns=(Column("vertex", pa.int64(), vertex=True), Column("width", pa.float64())),
        cpu=_sswp_cpu,
        doc="Widest-path width (largest bottleneck edge weight) from source; +inf at source.",
    )
)
