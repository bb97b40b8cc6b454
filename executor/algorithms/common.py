"""What several algorithm families share: the source check, kernel views of a CSR, weights.

The ``weight`` argument of the weighted families is declared once here (:data:`WEIGHT_PARAM`)
and checked once, at bind time, against the graph's catalog entry (:func:`check_weight`), so the
CPU, GPU and streamed implementations cannot accept different things.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidArgument
from ..graph import Graph
from .spec import Param

__all__ = [
    "WEIGHT_PARAM",
    "check_non_negative",
    "check_source",
    "check_weight",
    "edge_weights",
    "kernel_csr",
]


def check_source(graph: Graph, source: int, algorithm: str) -> None:
    """An internal vertex id the planner mapped is in range; a direct caller's may not be."""
    if not 0 <= source < graph.num_vertices:
        raise InvalidArgument(f"{algorithm}(): source vertex is not in graph '{graph.name}'")


def _unsigned_pair(offsets: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    if targets.dtype not in (np.int32, np.int64):
        targets = targets.astype(np.int64)
    targets = np.ascontiguousarray(targets)
    unsigned = np.uint32 if targets.dtype == np.int32 else np.uint64
    return offsets.view(np.uint64), targets.view(unsigned)


def kernel_csr(graph: Graph, direction: str = "out") -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, targets)`` of the out- or in-CSR as the compiled kernels take them.

    Unsigned views of the stored arrays (no copy for the usual int64 offsets and int32 or
    int64 targets): offsets ``uint64``, targets ``uint32`` (``uint64`` for int64 targets).
    See :mod:`graphdb.storage.compiled` for why unsigned.
    """
    if direction == "in" and not graph.directed:
        direction = "out"
    csr = graph.csr(direction)
    return graph.derived(f"kernel_csr:{direction}", lambda: _unsigned_pair(csr.offsets,
                                                                            csr.targets))


#: The ``weight`` argument of weighted traversals (checked by :func:`check_weight`).
WEIGHT_PARAM = Param(
    "weight",
    "str",
    default=None,
    doc="edge weight column; NULL: the graph's weights if any, else hop counts",
)


def check_weight(entry: Any, options: dict[str, Any], *, algorithm: str) -> None:
    """Refuse a ``weight`` argument the graph cannot honour, from its catalog entry alone.

    ``None`` means the graph's own weights when it has them, else unit weights. A named weight
    needs a weighted graph; the only edge weight column is called ``weight``.
    """
    weight = options.get("weight")
    if weight is None:
        return
    if not entry.weighted:
        raise InvalidArgument(
            f"{algorithm}(): graph '{entry.name}' has no edge weights, so weight => {weight!r} "
            "cannot be used; leave weight NULL for hop counts"
        )
    if weight.lower() != "weight":
        raise InvalidArgument(
            f"{algorithm}(): graph '{entry.name}' has no edge column {weight!r}; available: weight"
        )


def edge_weights(graph: Graph) -> np.ndarray | None:
    """The weights of the out-CSR a weighted traversal uses, or ``None`` for unit weights."""
    return graph.weights("out")


def check_non_negative(graph: Graph, weights: Any, algorithm: str) -> None:
    """Raise :class:`InvalidArgument` when a shortest-path search meets negative or NaN weights.

    ``weights`` are numpy or CuPy (a GPU operator checks on the device, where they are); the
    verdict is kept per graph version, so the scan runs once."""
    if weights is None or weights.size == 0:
        return

    def scan() -> bool:
        return not bool(weights.min() >= 0)  # NaN compares false, so it is refused too

    if graph.derived("weights:out:negative_or_nan", scan, nbytes=lambda _: 0):
        raise InvalidArgument(
            f"{algorithm}(): graph '{graph.name}' has negative (or NaN) edge weights; "
            "shortest paths need weights >= 0"
        )
