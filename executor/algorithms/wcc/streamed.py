"""WCC past the device budget: Subway subgraph streaming of the symmetrised adjacency, each
vertex's value the smallest vertex id that reached it (a monotone min, exact asynchronously)."""

from __future__ import annotations

from ...graph import Graph
from ...operators.subway import run_subway
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["subway_wcc"]


def subway_wcc(graph: Graph, config: OperatorConfig) -> AlgorithmOutput:
    """Every vertex with the smallest internal id of its weakly connected component."""
    return run_subway(graph, config, "wcc", None)
