"""Community detection by label propagation (Graphalytics CDLP) on the GPU, in CuPy.

Each iteration every vertex takes the most frequent label among its neighbours (in- and
out-neighbours of a directed graph, with multiplicity), ties to the smallest label; a vertex
with no neighbours keeps its label. One iteration is a sort of (vertex, label) keys and two
segmented passes, all on the device; no custom kernel is needed because the sort dominates.
"""

from __future__ import annotations

import numpy as np

from ..algorithms.registry import AlgorithmOutput
from ..cancel import checkpoint
from ..graph import Graph
from . import runtime as rt

__all__ = ["cdlp", "cdlp_labels_gpu"]


def cdlp_labels_gpu(graph: Graph, max_iterations: int = 10):
    cp = rt.cp()
    n = graph.num_vertices
    out = rt.device_csr(graph, "out")
    with rt.translate_oom("cdlp on the GPU"), rt.operator_stream():
        # Each neighbour relation as (receiver, sender): out-edges, and in-edges when directed.
        deg = cp.asnumpy(out.degrees())
        receiver = cp.asarray(np.repeat(np.arange(n, dtype=np.int64), deg))
        sender = out.targets.astype(np.int64)
        if graph.directed:
            receiver, sender = (cp.concatenate((receiver, sender)),
                                cp.concatenate((sender, receiver)))
        labels = cp.arange(n, dtype=np.int64)
        for _ in range(max_iterations):
            checkpoint()
            if receiver.size == 0:
                break
            key = cp.sort(receiver * n + labels[sender])
            starts = cp.flatnonzero(cp.concatenate((cp.ones(1, dtype=bool), key[1:] != key[:-1])))
            counts = cp.diff(cp.concatenate((starts, cp.asarray([key.size]))))
            run_key = key[starts]
            vertex, label = run_key // n, run_key % n
            # Best run per vertex: most frequent, then smallest label. Sorting by
            # (vertex, -count, label) puts it first in each vertex's group.
            order = cp.lexsort(cp.stack((label, -counts, vertex)))
            vertex, label = vertex[order], label[order]
            first = cp.concatenate((cp.ones(1, dtype=bool), vertex[1:] != vertex[:-1]))
            labels = labels.copy()
            labels[vertex[first]] = label[first]
    return labels


def cdlp(graph: Graph, max_iterations: int = 10) -> AlgorithmOutput:
    """GPU twin of the CPU cdlp."""
    labels = cdlp_labels_gpu(graph, max_iterations)
    return AlgorithmOutput(
        {"vertex": np.arange(graph.num_vertices, dtype=np.int64),
         "label": rt.cp().asnumpy(labels)},
        {"iterations": max_iterations},
    )
