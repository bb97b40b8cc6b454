"""Benchmark graphs built on the GPU (:mod:`graphdb.executor.gpu.synthetic`), R-MAT with
Graph500's quadrant probabilities as :func:`graphdb.generators.rmat` draws them on the CPU.

Used by ``tools/bench_gpu.py``, ``tools/bench_multi_gpu.py`` and ``tools/bench_streaming.py``
(GPU machine only: CuPy)."""

from __future__ import annotations

from graphdb.executor.gpu import synthetic
from graphdb.executor.gpu.synthetic import DeviceGraph, graph_from_device_edges, grid_edges_gpu
from graphdb.generators import GRAPH500_ABC

__all__ = ["DeviceGraph", "graph_from_device_edges", "grid_edges_gpu", "rmat_edges_gpu"]


def rmat_edges_gpu(scale: int, edge_factor: int = 16, *, seed: int = 0):
    """(src, dst) device arrays of a Graph500 R-MAT graph."""
    return synthetic.rmat_edges_gpu(scale, edge_factor, seed=seed, abc=GRAPH500_ABC)
