"""Graph algorithms: declared table functions with CPU and (optionally) GPU implementations."""

from __future__ import annotations

from typing import Any

from ..device import Device
from ..errors import DeviceOutOfMemory
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
    """Run algorithm ``name`` on ``graph`` with bound options, on ``device`` where it can.

    A GPU that runs out of memory part-way (another process took it, or the estimate was low)
    is not the user's problem: the CPU implementation answers instead, and the metrics say so.
    """
    algorithm = REGISTRY[name]
    if device.is_gpu:
        from ..gpu import implementation_for  # lazy: CPU installs never import CuPy

        gpu_impl = implementation_for(name)
        if gpu_impl is not None:
            try:
                output = gpu_impl(graph, **options)
            except DeviceOutOfMemory as exc:
                output = algorithm.cpu(graph, **options)
                output.metrics["device"] = "cpu"
                output.metrics["fallback"] = f"GPU out of memory ({exc}); ran on the CPU"
                return output
            output.metrics.setdefault("device", "gpu")
            return output
    output = algorithm.cpu(graph, **options)
    output.metrics.setdefault("device", "cpu")
    return output
