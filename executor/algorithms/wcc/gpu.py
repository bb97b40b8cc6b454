"""Weakly connected components on the GPU (Afforest sampling + lock-free union-find).

Kernels in ``cuda/wcc.cu``. Same output as the CPU twin: every vertex with the smallest internal
id of its component.
"""

from __future__ import annotations

import numpy as np

from ...gpu import runtime as rt
from ...graph import Graph
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["WCC_KERNELS", "Afforest", "afforest_labels", "wcc", "wcc_labels_gpu"]

THREADS = 256
SAMPLE_EDGES = 2  # Afforest's neighbour rounds before the giant component is sampled
SAMPLE_VERTICES = 1024

#: ``wcc.cu``: Afforest's sampled hooking, the full hooking pass and the compression.
WCC_KERNELS = rt.CudaModule("algorithms/wcc/wcc.cu", (
    "graphdb_wcc_hook_sample<{id}>",
    "graphdb_wcc_hook_rest<{id}>",
    "graphdb_wcc_compress<{id}>",
    "graphdb_wcc_replay<{id}>",
    "graphdb_wcc_disagree<{id}>",
))


class Afforest:
    """Afforest's steps over CSRs of one id type (a graph's, or a rank's shards): link each
    row's first edges, compress, find the giant component from a seeded sample, link the rest
    of the rows outside it. The numeric step of the one-GPU operator and of each rank."""

    def __init__(self, ids):
        self.ids = np.dtype(ids)
        self.hook_sample_k = WCC_KERNELS.kernel("graphdb_wcc_hook_sample", ids)
        self.hook_rest_k = WCC_KERNELS.kernel("graphdb_wcc_hook_rest", ids)
        self.compress_k = WCC_KERNELS.kernel("graphdb_wcc_compress", ids)

    def start(self, n: int):
        return rt.cp().arange(n, dtype=self.ids)

    def sample(self, offsets, targets, parent, rows: tuple[int, int] | None = None) -> None:
        """``rows``: link only rows ``lo..hi-1`` (a rank's; all by default)."""
        lo, hi = rows or (0, int(parent.size))
        self.hook_sample_k((rt.grid_for(max(hi - lo, 1), THREADS),), (THREADS,), (
            offsets, targets, parent, np.int64(hi), np.int32(SAMPLE_EDGES), np.int64(lo)))
        self.compress(parent)

    def compress(self, parent) -> None:
        n = int(parent.size)
        if n:
            self.compress_k((rt.grid_for(n, THREADS),), (THREADS,), (parent, np.int64(n)))

    def giant(self, parent, seed: int = 0) -> int:
        """The most frequent root of a seeded sample (the same on every rank of a partitioned
        run: their labels are the same)."""
        cp = rt.cp()
        n = int(parent.size)
        rng = np.random.default_rng(seed)
        sample = cp.asarray(rng.integers(0, n, size=min(SAMPLE_VERTICES, n)))
        roots, counts = cp.unique(parent[sample], return_counts=True)
        return int(roots[int(cp.argmax(counts))])

    def rest(self, offsets, targets, parent, skip: int, giant: int,
             rows: tuple[int, int] | None = None) -> None:
        lo, hi = rows or (0, int(parent.size))
        self.hook_rest_k((rt.grid_for(max(hi - lo, 1) * 32, THREADS),), (THREADS,), (
            offsets, targets, parent, np.int64(hi), np.int32(skip), self.ids.type(giant),
            np.int64(lo)))


def afforest_labels(offsets, targets, n: int, *, seed: int = 0, more: tuple = (),
                    skip_giant: bool = True):
    """(component label per vertex as a device array of the targets' dtype, stats): Afforest
    over the CSR ``offsets``/``targets`` (edges of vertices ``0..n-1``), then every edge of the
    CSRs in ``more``. ``skip_giant=False`` processes every edge: the giant component's edges
    may be skipped only when each is also seen from its other end (both directions stored, or
    the in-CSR in ``more``)."""
    steps = Afforest(targets.dtype)
    parent = steps.start(n)
    if n == 0:
        return parent, {}
    steps.sample(offsets, targets, parent)
    giant = steps.giant(parent, seed) if skip_giant else -1  # -1: no vertex's root
    steps.rest(offsets, targets, parent, SAMPLE_EDGES, giant)
    for extra_offsets, extra_targets in more:
        steps.rest(extra_offsets, extra_targets, parent, 0, giant)
    steps.compress(parent)
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
