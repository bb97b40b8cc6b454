"""Graph algorithms: declared table functions with CPU and (optionally) GPU implementations."""

from __future__ import annotations

from typing import Any

from ..device import Device
from ..graph import Graph
from . import (  # noqa: F401  (each module registers its algorithms)
    bfs,
    cdlp,
    components,
    lcc,
    neighbors,
    pagerank,
    paths,
    sssp,
)
from .registry import REGISTRY, Algorithm, AlgorithmOutput, Column, Param

__all__ = ["REGISTRY", "Algorithm", "AlgorithmOutput", "Column", "Param", "get", "run"]


def get(name: str) -> Algorithm | None:
    return REGISTRY.get(name.lower())


def run(name: str, graph: Graph, options: dict[str, Any], device: Device) -> AlgorithmOutput:
    """Run algorithm ``name`` on ``graph`` with bound options, on ``device`` where it can."""
    algorithm = REGISTRY[name]
    implementation = algorithm.cpu
    chosen = "cpu"
    if device.is_gpu:
        from ..gpu import implementation_for  # lazy: CPU installs never import CuPy

        gpu_impl = implementation_for(name)
        if gpu_impl is not None:
            implementation, chosen = gpu_impl, "gpu"
    output = implementation(graph, **options)
    output.metrics.setdefault("device", chosen)
    return output
