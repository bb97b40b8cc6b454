"""The rows of one direction of a graph version, as the compiled CPU kernels read them.

An :class:`Adjacency` is the stored base's CSR plus what a version changed (:mod:`..overlay`):
row ``v`` is the base row without its deleted positions, then the row's delta entries::

    for e in range(*base_span(adj, v)):
        if live(adj, e):
            ... adj.targets[e] ...
    for k in range(*delta_span(adj, v)):
        ... adj.dtargets[k] ...

For a graph without a delta (:func:`plain`) the extra arrays are empty and the checks fall
through, so one compiled kernel serves both. A kernel whose edge loop is tight walks a row with
no deleted position (:func:`clean`: its few bitmap words are zero, always so without a delta)
without the per-edge check. Index arrays are unsigned views, as everywhere in the compiled
kernels (:mod:`graphdb.storage.compiled`).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from graphdb.storage.compiled import KernelSet

__all__ = ["KERNELS", "Adjacency", "base_span", "clean", "degree", "delta_span", "live",
           "plain"]

KERNELS = KernelSet(__name__)

#: offsets, targets: the base's CSR (unsigned views); nbase: its vertices (rows from nbase on
#: have no base part); degree: int64 per vertex of the version (empty: the offsets give it);
#: tomb: uint64 bitmap of deleted base positions (empty: none); doffsets, dtargets: the delta
#: entries as a CSR over the version's vertices (empty: none).
Adjacency = namedtuple("Adjacency", "offsets targets nbase degree tomb doffsets dtargets")

_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_SIX = np.uint64(6)
_LOW6 = np.uint64(63)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_EMPTY_OFFSETS = np.zeros(0, dtype=np.uint64)
_EMPTY_DEGREE = np.zeros(0, dtype=np.int64)


def plain(offsets: np.ndarray, targets: np.ndarray) -> Adjacency:
    """The adjacency of a CSR with no delta (offsets ``uint64``, targets ``uint32``/``uint64``
    views: :func:`graphdb.executor.algorithms.common.kernel_csr`)."""
    return Adjacency(offsets, targets, np.uint64(len(offsets) - 1), _EMPTY_DEGREE,
                     _EMPTY_OFFSETS, _EMPTY_OFFSETS, targets[:0])


@KERNELS.kernel(inline="always")
def base_span(adj, v):
    """Positions ``lo, hi`` of vertex ``v``'s base row (empty for a vertex added since)."""
    if v < adj.nbase:
        return adj.offsets[v], adj.offsets[v + _ONE]
    return _ZERO, _ZERO


@KERNELS.kernel(inline="always")
def live(adj, e):
    """Whether base position ``e`` was not deleted."""
    if adj.tomb.size == 0:
        return True
    return ((adj.tomb[e >> _SIX] >> (e & _LOW6)) & _ONE) == _ZERO


@KERNELS.kernel(inline="always")
def clean(adj, lo, hi):
    """Whether no base position in ``lo..hi-1`` was deleted (a row's span)."""
    if adj.tomb.size == 0 or lo >= hi:
        return True
    first = lo >> _SIX
    last = (hi - _ONE) >> _SIX
    for w in range(first, last + _ONE):
        word = adj.tomb[w]
        if word != _ZERO:
            if w == first:
                word &= _ALL << (lo & _LOW6)
            if w == last:
                word &= _ALL >> (_LOW6 - ((hi - _ONE) & _LOW6))
            if word != _ZERO:
                return False
    return True


@KERNELS.kernel(inline="always")
def delta_span(adj, v):
    """Positions ``lo, hi`` of vertex ``v``'s delta entries in ``adj.dtargets``."""
    if adj.doffsets.size == 0:
        return _ZERO, _ZERO
    return adj.doffsets[v], adj.doffsets[v + _ONE]


@KERNELS.kernel(inline="always")
def degree(adj, v):
    """Vertex ``v``'s number of edges in the version."""
    if adj.degree.size == 0:
        return np.int64(adj.offsets[v + _ONE] - adj.offsets[v])
    return adj.degree[v]
