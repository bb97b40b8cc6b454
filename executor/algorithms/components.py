"""Weakly connected components (WCC), Graphalytics semantics.

Two vertices share a component when a path joins them ignoring edge directions. Each vertex's
component is reported as the smallest internal vertex id in it (internal ids ascend with the
user's ids, so that is also the smallest user id), which makes the labels deterministic.

The walk is scipy's compiled component search fed with the graph's out- and in-CSR, so no
transpose is built per call (see :mod:`._csgraph`).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..graph import Graph
from ._csgraph import weak_component_labels
from .registry import Algorithm, AlgorithmOutput, Column, register

__all__ = ["wcc_components", "smallest_member"]


def smallest_member(labels: np.ndarray) -> np.ndarray:
    """Replace arbitrary component numbers ``0..k-1`` by each component's smallest vertex id.

    scipy numbers components in the order it first meets them while scanning vertices upwards,
    so the smallest member of component ``c`` is where the running maximum of the labels first
    reaches ``c``: a couple of linear passes. If a scipy release numbered differently, the check
    fails and a scatter-minimum (slower, always right) does the job.

    Parameters
    ----------
    labels : numpy.ndarray
        Integer component number per vertex, values ``0..k-1``.

    Returns
    -------
    numpy.ndarray
        int64 per vertex: the smallest vertex id with the same label.
    """
    n = labels.size
    if n == 0:
        return labels.astype(np.int64)
    k = int(labels.max()) + 1
    if k == 1:  # connected: the common case needs no pass at all
        return np.zeros(n, dtype=np.int64)
    running = np.maximum.accumulate(labels)
    rises = np.flatnonzero(running[1:] != running[:-1]) + 1
    if running[0] == 0 and rises.size == k - 1:  # k - 1 rises from 0 to k - 1: all by one
        first = np.concatenate([[0], rises])  # first[c] = first vertex with label c
    else:
        first = np.full(k, n, dtype=np.int64)
        np.minimum.at(first, labels, np.arange(n, dtype=np.int64))
    return np.take(first, labels)


def wcc_components(graph: Graph) -> np.ndarray:
    """Weakly connected components of ``graph``.

    Returns
    -------
    numpy.ndarray
        int64 per vertex: the smallest internal id in its component.
    """
    return smallest_member(weak_component_labels(graph))


def _wcc_cpu(graph: Graph) -> AlgorithmOutput:
    labels = weak_component_labels(graph)
    return AlgorithmOutput(
        {"vertex": np.arange(graph.num_vertices, dtype=np.int64), "component": smallest_member(labels)},
        {"components": int(labels.max()) + 1 if labels.size else 0},
    )


WCC = register(
    Algorithm(
        name="wcc",
        params=(),
        columns=(
            Column("vertex", pa.int64(), vertex=True),
            Column("component", pa.int64(), vertex=True),
        ),
        cpu=_wcc_cpu,
        doc="Weakly connected component of every vertex, named by its smallest vertex.",
        all_active=True,
    )
)
