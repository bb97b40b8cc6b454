"""Shared plumbing for the CPU algorithms: per-graph caches, kernel views, weight checks.

Derived forms of a graph (the unsigned CSR views the compiled kernels of :mod:`._kernels`
take, inverse degrees, bucket widths) are built once per graph handle and kept on it
(:func:`cached`). The ``weight`` argument of the weighted traversals is resolved and checked
here. (The module once wrapped scipy.sparse.csgraph, hence its name; the traversals and
PageRank are compiled kernels now, and only LCC still uses scipy.sparse, imported on first use.)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import InvalidArgument
from ..graph import CSR, Graph
from .registry import Param

__all__ = [
    "WEIGHT_PARAM",
    "cached",
    "check_non_negative",
    "check_weight_argument",
    "edge_weights",
    "kernel_csr",
]

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
