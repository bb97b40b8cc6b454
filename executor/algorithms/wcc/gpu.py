"""Weakly connected components on the GPU (Afforest sampling + lock-free union-find).

Kernels in ``cuda/wcc.cu``. Same output as the CPU twin: every vertex with the smallest internal
id of its component.
"""

from __future__ import annotations

import numpy as np

from ...gpu import runtime as rt
from ...graph import Graph
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["WCC_KERNELS", "wcc", "wcc_labels_gpu"]

THREADS = 256
SAMPLE_EDGES = 2  # Afforest's neighbour rounds before the giant component is sampled
SAMPLE_VERTICES = 1024

#: ``wcc.cu``: Afforest's sampled hooking, the full hooking pass and the compression.
WCC_KERNELS = rt.CudaModule("algorithms/wcc/wcc.cu", (
    "graphdb_wcc_hook_sample<{id}>",
    "graphdb_wcc_hook_rest<{id}>",
    "graphdb_wcc_compress<{id}>",
))


def wcc_labels_gpu(graph: Graph, *, seed: int = 0):
    """(component label per vertex as a device array, stats)."""
    cp = rt.cp()
    n = graph.num_vertices
    out = rt.device_csr(graph, "out")
    ids = out.targets.dtype
    hook_sample = WCC_KERNELS.kernel("graphdb_wcc_hook_sample", ids)
    hook_rest = WCC_KERNELS.kernel("graphdb_wcc_hook_rest", ids)
    compress = WCC_KERNELS.kernel("graphdb_wcc_compress", ids)
    stream = rt.operator_stream()
    with rt.translate_oom("wcc on the GPU"), stream:
        parent = cp.arange(n, dtype=ids)
        if n == 0:
            return parent, {}
        grid = (rt.grid_for(n, THREADS),)
        hook_sample(grid, (THREADS,), (out.offsets, out.targets, parent, np.int64(n),
                                       np.int32(SAMPLE_EDGES)))
        compress(grid, (THREADS,), (parent, np.int64(n)))
        # The most frequent root of a seeded sample is the giant component (Afforest).
        rng = np.random.default_rng(seed)
        sample = cp.asarray(rng.integers(0, n, size=min(SAMPLE_VERTICES, n)))
        roots, counts = cp.unique(parent[sample], return_counts=True)
        giant = int(roots[int(cp.argmax(counts))])
        warps_grid = (rt.grid_for(n * 32, THREADS),)
        hook_rest(warps_grid, (THREADS,), (out.offsets, out.targets, parent, np.int64(n),
                                           np.int32(SAMPLE_EDGES), ids.type(giant)))
        if graph.directed:
            inn = rt.device_csr(graph, "in")
            hook_rest(warps_grid, (THREADS,), (inn.offsets, inn.targets, parent, np.int64(n),
                                               np.int32(0), ids.type(giant)))
        compress(grid, (THREADS,), (parent, np.int64(n)))
    return parent, {"giant_component_root": giant}


def wcc(graph: Graph, config: OperatorConfig) -> AlgorithmOutput:
    """GPU twin of :func:`graphdb.executor.algorithms.wcc.cpu.wcc`: the labels stay on the
    device for the result path."""
    labels, stats = wcc_labels_gpu(graph)
    return AlgorithmOutput.vertices({"component": labels}, stats)
