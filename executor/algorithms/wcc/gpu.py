"""Weakly connected components on the GPU (Afforest sampling + lock-free union-find).

Kernels in ``cuda/wcc.cu``. Same output as the CPU twin: every vertex with the smallest internal
id of its component.
"""

from __future__ import annotations

import numpy as np

from ...gpu import runtime as rt
from ...graph import Graph
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["WCC_KERNELS", "afforest_labels", "wcc", "wcc_labels_gpu"]

THREADS = 256
SAMPLE_EDGES = 2  # Afforest's neighbour rounds before the giant component is sampled
SAMPLE_VERTICES = 1024

#: ``wcc.cu``: Afforest's sampled hooking, the full hooking pass and the compression.
WCC_KERNELS = rt.CudaModule("algorithms/wcc/wcc.cu", (
    "graphdb_wcc_hook_sample<{id}>",
    "graphdb_wcc_hook_rest<{id}>",
    "graphdb_wcc_compress<{id}>",
))


def afforest_labels(offsets, targets, n: int, *, seed: int = 0, more: tuple = (),
                    skip_giant: bool = True):
    """(component label per vertex as a device array of the targets' dtype, stats): Afforest
    over the CSR ``offsets``/``targets`` (edges of vertices ``0..n-1``), then every edge of the
    CSRs in ``more``. ``skip_giant=False`` processes every edge: the giant component's edges
    may be skipped only when each is also seen from its other end (both directions stored, or
    the in-CSR in ``more``), which one rank's rows of a partition do not guarantee."""
    cp = rt.cp()
    ids = targets.dtype
    hook_sample = WCC_KERNELS.kernel("graphdb_wcc_hook_sample", ids)
    hook_rest = WCC_KERNELS.kernel("graphdb_wcc_hook_rest", ids)
    compress = WCC_KERNELS.kernel("graphdb_wcc_compress", ids)
    parent = cp.arange(n, dtype=ids)
    if n == 0:
        return parent, {}
    grid = (rt.grid_for(n, THREADS),)
    hook_sample(grid, (THREADS,), (offsets, targets, parent, np.int64(n),
                                   np.int32(SAMPLE_EDGES)))
    compress(grid, (THREADS,), (parent, np.int64(n)))
    giant = -1  # no vertex's root: nothing skipped
    if skip_giant:  # the most frequent root of a seeded sample is the giant component
        rng = np.random.default_rng(seed)
        sample = cp.asarray(rng.integers(0, n, size=min(SAMPLE_VERTICES, n)))
        roots, counts = cp.unique(parent[sample], return_counts=True)
        giant = int(roots[int(cp.argmax(counts))])
    warps_grid = (rt.grid_for(n * 32, THREADS),)
    hook_rest(warps_grid, (THREADS,), (offsets, targets, parent, np.int64(n),
                                       np.int32(SAMPLE_EDGES), ids.type(giant)))
    for extra_offsets, extra_targets in more:
        hook_rest(warps_grid, (THREADS,), (extra_offsets, extra_targets, parent, np.int64(n),
                                           np.int32(0), ids.type(giant)))
    compress(grid, (THREADS,), (parent, np.int64(n)))
    return parent, {"giant_component_root": giant}


def wcc_labels_gpu(graph: Graph, *, seed: int = 0):
    """(component label per vertex as a device array, stats)."""
    out = rt.device_csr(graph, "out")
    with rt.translate_oom("wcc on the GPU"), rt.operator_stream():
        more = ()
        if graph.directed:
            inn = rt.device_csr(graph, "in")
            more = ((inn.offsets, inn.targets),)
        return afforest_labels(out.offsets, out.targets, graph.num_vertices, seed=seed,
                               more=more)


def wcc(graph: Graph, config: OperatorConfig) -> AlgorithmOutput:
    """GPU twin of :func:`graphdb.executor.algorithms.wcc.cpu.wcc`: the labels stay on the
    device for the result path."""
    labels, stats = wcc_labels_gpu(graph)
    return AlgorithmOutput.vertices({"component": labels}, stats)
