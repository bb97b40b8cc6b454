"""CDLP past the device budget: vertex-range chunks of the out- and in-CSR together (each vertex
needs its whole neighbourhood at once), the family's step (:mod:`.step`) applied per chunk."""

from __future__ import annotations

import time

import numpy as np

from ...cancel import checkpoint
from ...graph import Graph
from ...operators.edge_stream import CPU_TEMP_PER_EDGE, vertex_chunks
from ...operators.metrics import StreamMetrics, check_budget
from ..spec import AlgorithmOutput, OperatorConfig
from .step import most_frequent_label

__all__ = ["edge_centric_cdlp"]


def edge_centric_cdlp(graph: Graph, config: OperatorConfig,
                      max_iterations: int = 10) -> AlgorithmOutput:
    """CDLP (Graphalytics) by vertex-range chunks; same columns as the resident cdlp."""
    t_start = time.perf_counter()
    n = graph.num_vertices
    metrics = StreamMetrics("edge_centric", config.device, int(config.budget_bytes))
    check_budget("cdlp", n, config)
    gpu = config.device == "gpu"
    per_edge = 4 + (16 if gpu else CPU_TEMP_PER_EDGE) * 2  # ids, sort keys
    csrs, chunks, oversized = vertex_chunks(graph, config.free_bytes(), per_edge)
    metrics.extra["oversized_chunks"] = oversized
    if gpu:
        from ...gpu import runtime as rt

        xp = rt.cp()
    else:
        xp = np
    edges = sum(c.num_edges for c in csrs)
    labels = xp.arange(n, dtype=np.int64)
    for _ in range(max_iterations):
        checkpoint()
        t0 = time.perf_counter()
        new = labels.copy()
        for a, b in chunks:
            rows, nbrs = [], []
            for c in csrs:
                e0, e1 = int(c.offsets[a]), int(c.offsets[b])
                chunk = xp.asarray(c.targets[e0:e1])
                metrics.bytes_to_device += int(chunk.nbytes) + 8 * (b - a + 1)
                rows.append(xp.asarray(np.repeat(np.arange(b - a), np.diff(c.offsets[a:b + 1]))))
                nbrs.append(labels[chunk])
            new[a:b] = most_frequent_label(xp, xp.concatenate(rows), xp.concatenate(nbrs),
                                           labels[a:b], n)
        labels = new
        metrics.kernel_s += time.perf_counter() - t0
        metrics.iteration(active_vertices=n, active_edges=edges, mode="chunks",
                          pieces=len(chunks), nbytes=0)
    metrics.partitions = len(chunks) * metrics.outer_iterations
    out = labels if xp is np else xp.asnumpy(labels)
    return AlgorithmOutput({"vertex": np.arange(n, dtype=np.int64), "label": out},
                           metrics.as_dict(time.perf_counter() - t_start))
