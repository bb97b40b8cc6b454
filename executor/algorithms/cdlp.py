"""Community detection by label propagation (CDLP), LDBC Graphalytics semantics.

Labels start as the vertex ids. In each of ``max_iterations`` synchronous iterations every vertex
takes the most frequent label among its neighbours, ties going to the smallest label; a vertex
with no neighbours keeps its label. For a directed graph the neighbours are the in- and the
out-neighbours, counted with multiplicity (a vertex that is both counts twice, as do parallel
edges); an undirected graph counts each incident edge once (a self loop once).

Internal ids ascend with the user's ids, so "smallest label" is the same on either.

Vectorized: one (vertex, neighbour label) key per counted edge, sorted, then run lengths give
the label counts per vertex and a segmented maximum picks the winner. No Python loop over
vertices or edges; one sort per iteration.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..cancel import checkpoint
from ..graph import Graph
from ._csgraph import cached
from .registry import MAX_ITERATIONS, Algorithm, AlgorithmOutput, Column, Param, register

__all__ = ["cdlp_labels", "most_frequent_label"]


def _neighbour_pairs(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """(vertex, neighbour) per counted neighbour occurrence, as int64 arrays."""
    csr = graph.out_csr
    sources = csr.sources().astype(np.int64)
    targets = csr.targets.astype(np.int64)
    if not graph.directed:
        return sources, targets
    return np.concatenate([sources, targets]), np.concatenate([targets, sources])


def most_frequent_label(
    owners: np.ndarray, neighbour_labels: np.ndarray, labels: np.ndarray
) -> np.ndarray:
    """One CDLP step: each vertex's most frequent neighbour label, smallest on ties.

    Parameters
    ----------
    owners : numpy.ndarray
        int64 vertex per observation.
    neighbour_labels : numpy.ndarray
        int64 label that ``owners[i]`` sees, values in ``0..len(labels)-1``.
    labels : numpy.ndarray
        Current int64 label per vertex; vertices that see nothing keep theirs.

    Returns
    -------
    numpy.ndarray
        The new int64 label per vertex.
    """
    n = labels.size
    new = labels.copy()
    if owners.size == 0:
        return new
    key = owners * n + neighbour_labels
    key.sort()
    run_start = np.flatnonzero(np.diff(key, prepend=key[0] - 1))
    run_length = np.diff(np.append(run_start, key.size))
    run_key = key[run_start]
    run_owner = run_key // n
    run_label = run_key - run_owner * n
    owner_start = np.flatnonzero(np.diff(run_owner, prepend=run_owner[0] - 1))
    longest = np.maximum.reduceat(run_length, owner_start)
    owner_runs = np.diff(np.append(owner_start, run_owner.size))
    # Runs of one owner are in ascending label order: the first longest run has the smallest
    # label among the most frequent.
    candidates = np.flatnonzero(run_length == np.repeat(longest, owner_runs))
    cand_owner = run_owner[candidates]
    first = np.flatnonzero(np.diff(cand_owner, prepend=cand_owner[0] - 1))
    new[cand_owner[first]] = run_label[candidates[first]]
    return new


def cdlp_labels(graph: Graph, max_iterations: int = 10) -> tuple[np.ndarray, int]:
    """Run CDLP on ``graph``.

    Parameters
    ----------
    graph : Graph
        The graph (directed: in- and out-neighbours count).
    max_iterations : int
        Number of synchronous iterations.

    Returns
    -------
    labels : numpy.ndarray
        int64 label (an internal vertex id) per vertex.
    iterations : int
        Iterations that changed a label; the loop stops early at a fixed point, where further
        iterations would change nothing.
    """
    owners, neighbours = cached(graph, "cdlp:pairs", lambda: _neighbour_pairs(graph))
    labels = np.arange(graph.num_vertices, dtype=np.int64)
    for iteration in range(max_iterations):
        checkpoint()
        new = most_frequent_label(owners, labels[neighbours], labels)
        if np.array_equal(new, labels):
            return labels, iteration
        labels = new
    return labels, max_iterations


def _cdlp_cpu(graph: Graph, max_iterations: int = 10) -> AlgorithmOutput:
    labels, iterations = cdlp_labels(graph, max_iterations)
    return AlgorithmOutput(
        {"vertex": np.arange(graph.num_vertices, dtype=np.int64), "label": labels},
        {"iterations": iterations},
    )


CDLP = register(
    Algorithm(
        name="cdlp",
        params=(Param("max_iterations", "int", default=10, minimum=0, maximum=MAX_ITERATIONS),),
        columns=(
            Column("vertex", pa.int64(), vertex=True),
            Column("label", pa.int64(), vertex=True),
        ),
        cpu=_cdlp_cpu,
        doc="Community label of every vertex by deterministic label propagation (Graphalytics).",
        all_active=True,
    )
)
