"""Shared plumbing for the CPU algorithms: per-graph caches and scipy.sparse.csgraph access.

The compiled routines of :mod:`scipy.sparse.csgraph` want ``indptr`` and ``indices`` of one
integer type and float64 data. Our CSR keeps int64 offsets and int32 targets, so every call of
the public API would convert (copy) the index arrays, and the undirected/weak variants would
also transpose the whole graph on every call although the graph already holds its in-edges.
This module builds those forms once per graph and keeps them on the graph handle.

It also wraps two private csgraph entry points (the breadth-first walk and the weakly connected
components over an out/in pair). They are what the public functions call after converting their
input; calling them directly skips the per-call conversion and transpose. Each wrapper checks that
the entry point still exists and falls back to the public API when a scipy release changes it.

The compiled kernels of :mod:`._kernels` get their unsigned views of the CSR here too
(:func:`kernel_csr`). scipy is imported on first use, never when the package is imported.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidArgument
from ..graph import CSR, Graph
from .registry import Param

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = [
    "WEIGHT_PARAM",
    "check_weight_argument",
    "cached",
    "edge_weights",
    "index_pair",
    "kernel_csr",
    "scipy_matrix",
    "vertex_range",
    "walk_from",
    "weak_component_labels",
]

#: scipy's marker for "no vertex" in node lists and predecessor arrays.
SCIPY_NULL = -9999

#: Set to ``None`` to force the public scipy API (tests); loaded on first use otherwise.
_scipy_traversal: Any = "unloaded"


def scipy_traversal() -> Any:
    """scipy's private ``_traversal`` module, imported on first use; ``None`` if it is gone.

    Private, see the module docstring; every use has a public fallback.
    """
    global _scipy_traversal
    if isinstance(_scipy_traversal, str):
        try:
            from scipy.sparse.csgraph import _traversal
        except ImportError:  # pragma: no cover - depends on the scipy release
            _traversal = None
        _scipy_traversal = _traversal
    return _scipy_traversal


_CACHE_ATTR = "_cpu_algorithm_cache"
_CACHE_LOCK = threading.Lock()


def cached(graph: Graph, key: str, build: Callable[[], Any]) -> Any:
    """``build()`` once per graph handle and key; later calls return the same object.

    Derived forms (int32 offsets, scipy matrices, transition matrices) are costly to build and
    immutable, so they live as long as the graph handle does. The cache is keyed on the identity
    of the graph's out-CSR, so a handle whose topology is reloaded never sees stale forms.
    """
    store = graph.__dict__.get(_CACHE_ATTR)
    topology = graph.out_csr
    if store is None or store.get("__topology__") is not topology:
        with _CACHE_LOCK:
            store = {"__topology__": topology}
            graph.__dict__[_CACHE_ATTR] = store
    if key not in store:
        value = build()
        with _CACHE_LOCK:
            store.setdefault(key, value)
    return store[key]


def _unsigned_pair_of(csr: CSR) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.ascontiguousarray(csr.offsets, dtype=np.int64)
    targets = csr.targets
    if targets.dtype not in (np.int32, np.int64):
        targets = targets.astype(np.int64)
    targets = np.ascontiguousarray(targets)
    unsigned = np.uint32 if targets.dtype == np.int32 else np.uint64
    return offsets.view(np.uint64), targets.view(unsigned)


def kernel_csr(graph: Graph, direction: str = "out") -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, targets)`` of the out- or in-CSR as the compiled kernels take them.

    Unsigned views of the stored arrays (no copy for the usual int64 offsets and int32 or
    int64 targets): offsets ``uint64``, targets ``uint32`` (``uint64`` for int64 targets).
    See :mod:`._kernels` for why unsigned.
    """
    if direction == "in" and not graph.directed:
        direction = "out"
    csr = graph.out_csr if direction == "out" else graph.in_csr
    return cached(graph, f"kernel_csr:{direction}", lambda: _unsigned_pair_of(csr))


def _index_pair_of(csr: CSR) -> tuple[np.ndarray, np.ndarray]:
    if csr.num_edges < 2**31 - 1 and csr.targets.dtype == np.int32:
        return csr.offsets.astype(np.int32), csr.targets
    return csr.offsets, csr.targets.astype(np.int64)


def index_pair(graph: Graph, direction: str = "out") -> tuple[np.ndarray, np.ndarray]:
    """``(indptr, indices)`` of the out- or in-CSR with one integer type, as csgraph needs."""
    if direction == "in" and not graph.directed:
        direction = "out"
    csr = graph.out_csr if direction == "out" else graph.in_csr
    return cached(graph, f"index_pair:{direction}", lambda: _index_pair_of(csr))


#: The ``weight`` argument of weighted traversals; :func:`edge_weights` resolves it.
WEIGHT_PARAM = Param(
    "weight",
    "str",
    default=None,
    doc="edge weight column; NULL: the graph's weights if any, else hop counts",
)


def check_weight_argument(graph: Graph, weight: str | None, algorithm: str) -> None:
    """Reject a ``weight`` argument the graph cannot honour (without touching its edges).

    ``None`` means the graph's own weights when it has them, else unit weights. A named weight
    needs a weighted graph; the only edge weight column is called ``weight``.
    """
    if weight is None:
        return
    if not graph.weighted:
        raise InvalidArgument(
            f"{algorithm}(): graph '{graph.name}' has no edge weights, so weight => {weight!r} "
            "cannot be used; leave weight NULL for hop counts"
        )
    if weight.lower() != "weight":
        raise InvalidArgument(
            f"{algorithm}(): graph '{graph.name}' has no edge column {weight!r}; available: weight"
        )


def edge_weights(graph: Graph, weight: str | None, algorithm: str) -> np.ndarray | None:
    """Resolve a ``weight`` argument to the out-CSR's weights, or ``None`` for unit weights."""
    check_weight_argument(graph, weight, algorithm)
    return graph.out_csr.weights if graph.weighted else None


def check_non_negative(weights: np.ndarray | None, graph: Graph, algorithm: str) -> None:
    """Raise :class:`InvalidArgument` when a weighted traversal meets negative or NaN weights."""
    if weights is None or weights.size == 0:
        return

    def scan() -> bool:
        return bool(np.isnan(weights).any() or weights.min() < 0)

    if cached(graph, f"bad_weights:{id(weights)}", scan):  # weights belong to the graph
        raise InvalidArgument(
            f"{algorithm}(): graph '{graph.name}' has negative (or NaN) edge weights; "
            "shortest paths need weights >= 0"
        )


def scipy_matrix(graph: Graph, weights: np.ndarray | None, direction: str = "out") -> sp.csr_matrix:
    """The out-CSR (or in-CSR) as a scipy ``csr_matrix`` with the given per-edge data.

    ``weights`` are aligned with that CSR's targets (the graph's own weights are aligned with
    the out-CSR); ``None`` gives unit data. Cached per data array.
    """
    import scipy.sparse as sp

    indptr, indices = index_pair(graph, direction)
    n = graph.num_vertices

    def build() -> sp.csr_matrix:
        data = np.ones(len(indices)) if weights is None else np.ascontiguousarray(weights, float)
        return sp.csr_matrix((data, indices, indptr), shape=(n, n), copy=False)

    key = f"matrix:{direction}:{'unit' if weights is None else id(weights)}"
    return cached(graph, key, build)


def walk_from(graph: Graph, source: int, order: np.ndarray, parent: np.ndarray) -> int | None:
    """scipy's compiled breadth-first walk into the caller's buffers.

    Parameters
    ----------
    graph : Graph
        Walked along its out-edges.
    source : int
        Start vertex.
    order : numpy.ndarray
        Receives the visited vertices in BFS order from index 0; needs room for all of them.
    parent : numpy.ndarray
        One entry per vertex, :data:`SCIPY_NULL` for "not visited yet"; receives each newly
        visited vertex's parent. Vertices already marked are neither visited nor entered.

    Returns
    -------
    int or None
        How many vertices were visited (``order[:count]``), or ``None`` when this scipy has
        no usable private walk (the caller then falls back to the public API).
    """
    walk = getattr(scipy_traversal(), "_breadth_first_directed", None)
    if walk is None:
        return None
    indptr, indices = index_pair(graph, "out")
    try:
        return int(walk(source, indices, indptr, order, parent))
    except (TypeError, ValueError):  # pragma: no cover - signature changed upstream
        return None


def _empty_csr(n: int, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(n + 1, dtype=dtype), np.zeros(0, dtype=dtype)


def vertex_range(graph: Graph, dtype: np.dtype) -> np.ndarray:
    """``arange(num_vertices)`` in ``dtype``, cached and read-only (scratch for scatters)."""

    def build() -> np.ndarray:
        ids = np.arange(graph.num_vertices, dtype=dtype)
        ids.flags.writeable = False
        return ids

    return cached(graph, f"vertex_range:{np.dtype(dtype).str}", build)


def weak_component_labels(graph: Graph) -> np.ndarray:
    """A component number per vertex (weakly connected components), numbered arbitrarily.

    The walk follows out- and in-edges together, so a directed graph needs no transpose beyond
    the in-CSR it already holds; an undirected graph passes its one CSR as both.
    """
    n = graph.num_vertices
    out_ptr, out_idx = index_pair(graph, "out")
    if graph.directed:
        in_ptr, in_idx = index_pair(graph, "in")
    else:  # the out-CSR already holds both directions: an empty second list halves the scan
        in_ptr, in_idx = cached(graph, "empty_csr", lambda: _empty_csr(n, out_idx.dtype))
    walk = getattr(scipy_traversal(), "_connected_components_undirected", None)
    if walk is not None:
        labels = np.full(n, SCIPY_NULL, dtype=np.int32)
        try:
            walk(out_idx, out_ptr, in_idx, in_ptr, labels)
            return labels
        except (TypeError, ValueError):  # pragma: no cover - signature changed upstream
            pass
    from scipy.sparse import csgraph

    matrix = scipy_matrix(graph, None)
    _, labels = csgraph.connected_components(matrix, directed=True, connection="weak")
    return labels
