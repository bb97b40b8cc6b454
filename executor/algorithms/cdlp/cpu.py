"""Community detection by label propagation (CDLP), LDBC Graphalytics semantics.

Labels start as the vertex ids. In each of ``max_iterations`` synchronous iterations every vertex
takes the most frequent label among its neighbours, ties going to the smallest label; a vertex
with no neighbours keeps its label. For a directed graph the neighbours are the in- and the
out-neighbours, counted with multiplicity (a vertex that is both counts twice, as do parallel
edges); an undirected graph counts each incident edge once (a self loop once).

Internal ids ascend with the user's ids, so "smallest label" is the same on either.

The step itself is :mod:`.step` (numpy here, CuPy on the GPU).
"""

from __future__ import annotations

import numpy as np

from ...graph import Graph
from ..spec import AlgorithmOutput, OperatorConfig
from .step import propagate

__all__ = ["cdlp", "cdlp_labels"]


def _neighbour_pairs(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """(vertex, neighbour) per counted neighbour occurrence, as int64 arrays."""
    csr = graph.out_csr
    sources = csr.sources().astype(np.int64)
    targets = csr.targets.astype(np.int64)
    if not graph.directed:
        return sources, targets
    return np.concatenate([sources, targets]), np.concatenate([targets, sources])


def cdlp_labels(graph: Graph, max_iterations: int = 10) -> tuple[np.ndarray, int]:
    """Run CDLP on ``graph``: (int64 label per vertex, iterations that changed a label)."""
    owners, neighbours = graph.derived("cdlp:pairs", lambda: _neighbour_pairs(graph))
    return propagate(np, owners, neighbours, graph.num_vertices, max_iterations)


def cdlp(graph: Graph, config: OperatorConfig, max_iterations: int = 10) -> AlgorithmOutput:
    """Community label of every vertex (Graphalytics CDLP)."""
    labels, iterations = cdlp_labels(graph, max_iterations)
    return AlgorithmOutput.vertices({"label": labels}, {"iterations": iterations})
