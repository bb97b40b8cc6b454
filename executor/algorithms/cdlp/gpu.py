"""Community detection by label propagation (Graphalytics CDLP) on the GPU, in CuPy: the
family's step (:mod:`.step`) on device arrays, the neighbour relations built on the device once
per graph version (a sort dominates an iteration, so no custom kernel is needed)."""

from __future__ import annotations

import numpy as np

from ...gpu import runtime as rt
from ...graph import Graph
from ..spec import AlgorithmOutput, OperatorConfig
from .step import propagate

__all__ = ["cdlp", "cdlp_labels_gpu"]


def _relations(graph: Graph):
    """(receiver, sender) of every neighbour relation: out-edges, and in-edges when directed."""
    cp = rt.cp()
    n = graph.num_vertices
    out = rt.device_csr(graph, "out")
    deg = cp.asnumpy(out.degrees())
    receiver = cp.asarray(np.repeat(np.arange(n, dtype=np.int64), deg))
    sender = out.targets.astype(np.int64)
    if graph.directed:
        receiver, sender = (cp.concatenate((receiver, sender)), cp.concatenate((sender, receiver)))
    return receiver, sender


def cdlp_labels_gpu(graph: Graph, max_iterations: int = 10):
    """(device int64 label per vertex, iterations that changed a label)."""
    cp = rt.cp()
    with rt.translate_oom("cdlp on the GPU"), rt.operator_stream():
        receiver, sender = graph.derived("cdlp:relations", lambda: _relations(graph),
                                         device=rt.device_name())
        return propagate(cp, receiver, sender, graph.num_vertices, max_iterations)


def cdlp(graph: Graph, config: OperatorConfig, max_iterations: int = 10) -> AlgorithmOutput:
    """GPU twin of :func:`graphdb.executor.algorithms.cdlp.cpu.cdlp`."""
    labels, iterations = cdlp_labels_gpu(graph, max_iterations)
    return AlgorithmOutput.vertices({"label": labels}, {"iterations": iterations})
