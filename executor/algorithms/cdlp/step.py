"""CDLP's numeric step, written once for numpy and CuPy (``xp``): each vertex takes the most
frequent label among its neighbour relations, ties to the smallest label.

One sort of (vertex, label) keys gives the runs of equal labels per vertex and their lengths; a
stable second sort by (vertex, -count) puts each vertex's winning run first. No Python loop over
vertices or edges: the resident operators run it over the whole graph, the edge-chunk stream
over one chunk of vertices at a time.
"""

from __future__ import annotations

import numpy as np

from ...cancel import checkpoint

__all__ = ["most_frequent_label", "propagate"]


def most_frequent_label(xp, owners, neighbour_labels, labels, n_labels: int):
    """One CDLP step: each owner's most frequent neighbour label, smallest on ties.

    Parameters
    ----------
    xp : module
        numpy or cupy.
    owners : array
        int64 local vertex (an index into ``labels``) of each observation.
    neighbour_labels : array
        int64 label that ``owners[i]`` sees; labels are vertex ids, below ``n_labels``, the
        graph's vertex count (``labels`` may cover only a chunk of the vertices).
    labels : array
        Current int64 label per local vertex; vertices that see nothing keep theirs.

    Returns
    -------
    array
        The new int64 label per local vertex.
    """
    new = labels.copy()
    if owners.size == 0:
        return new
    span = int(n_labels)
    key = xp.sort(owners.astype(np.int64) * span + neighbour_labels)
    starts = xp.flatnonzero(xp.concatenate((xp.ones(1, dtype=bool), key[1:] != key[:-1])))
    counts = xp.diff(xp.concatenate((starts, xp.asarray([key.size]))))
    run_key = key[starts]
    owner, label = run_key // span, run_key % span
    # Best run per owner: most frequent, then smallest label. The runs are in (owner, label)
    # order already, so a stable sort by (owner, -count) alone puts it first in each owner's
    # group (one integer key: a three-key lexsort took 2.4 s over 2 M runs on the host).
    widest = int(counts.max()) + 1
    order = xp.argsort(owner * widest + (widest - 1 - counts), kind="stable")
    owner, label = owner[order], label[order]
    first = xp.concatenate((xp.ones(1, dtype=bool), owner[1:] != owner[:-1]))
    new[owner[first]] = label[first]
    return new


def propagate(xp, receivers, senders, n: int, max_iterations: int):
    """Synchronous label propagation over the relations ``senders[i] -> receivers[i]``.

    Returns (int64 label per vertex, iterations that changed a label): the loop stops at a fixed
    point, where further iterations would change nothing."""
    labels = xp.arange(n, dtype=np.int64)
    for iteration in range(max_iterations):
        checkpoint()
        new = most_frequent_label(xp, receivers, labels[senders], labels, n)
        if bool((new == labels).all()):
            return labels, iteration
        labels = new
    return labels, max_iterations
