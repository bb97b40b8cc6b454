"""What several algorithm families share: the source check, kernel views of a CSR, weights.

The ``weight`` argument of the weighted families is declared once here (:data:`WEIGHT_PARAM`)
and checked once, at bind time, against the graph's catalog entry (:func:`check_weight`), so the
CPU, GPU and streamed implementations cannot accept different things.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..cancel import checkpoint
from ..errors import InvalidArgument
from ..graph import Graph
from .spec import AlgorithmOutput, Param

__all__ = [
    "GRAPH_WEIGHTS",
    "WEIGHT_PARAM",
    "chosen_weight",
    "per_source",
    "weight_columns",
    "check_non_negative",
    "negative_weights",
    "check_source",
    "check_weight",
    "edge_weights",
    "kernel_adjacency",
    "kernel_csr",
]


def check_source(graph: Graph, source: int, algorithm: str) -> None:
    """An internal vertex id the planner mapped is in range; a direct caller's may not be."""
    if not 0 <= source < graph.num_vertices:
        raise InvalidArgument(f"{algorithm}(): source vertex is not in graph '{graph.name}'")


def unsigned_pair(offsets: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
    return graph.derived(f"kernel_csr:{direction}", lambda: unsigned_pair(csr.offsets,
                                                                            csr.targets))


def kernel_adjacency(graph: Graph, direction: str = "out"):
    """The out- or in-edges as the compiled kernels read them: an
    :class:`~graphdb.executor.operators.adjacency.Adjacency`, a changed version's base and delta
    unmerged where the graph keeps them so (:meth:`DeltaGraph.adjacency
    <graphdb.executor.delta.DeltaGraph.adjacency>`), else the CSR of :func:`kernel_csr`."""
    from ..operators.adjacency import plain

    overlay = getattr(graph, "adjacency", None)
    found = overlay(direction) if overlay is not None else None
    return found if found is not None else plain(*kernel_csr(graph, direction))


class _GraphWeights:
    """The default of ``weight``: the graph's weight column (unit weights without one)."""

    def __repr__(self) -> str:
        return "(the graph's weights)"


#: ``weight``'s default (the argument not given): the column the graph was loaded with.
GRAPH_WEIGHTS: Any = _GraphWeights()

#: The ``weight`` argument of weighted traversals (checked by :func:`check_weight`).
WEIGHT_PARAM = Param(
    "weight",
    "str",
    default=GRAPH_WEIGHTS,
    nullable=True,
    doc="the numeric edge column to add up; NULL: none (hop counts); not given: the graph's "
        "weight column if it has one, else hop counts",
)

#: Arrow type names of the edge properties a traversal can take as weights.
_NUMERIC = ("int", "uint", "float", "double", "halffloat", "decimal")


def weight_columns(entry: Any) -> dict[str, str]:
    """The numeric edge columns of a graph version (lower-cased name -> name), from its catalog
    entry: the weight column it was loaded with and the numeric edge properties."""
    stats = getattr(entry, "stats", None) or {}
    out = {}
    if entry.weighted:
        name = stats.get("weight_column") or "weight"
        out[name.lower()] = name
    for item in (stats.get("edge_properties") or "").split(", "):
        name, _, kind = item.rpartition(" ")
        if name and kind.startswith(_NUMERIC):
            out.setdefault(name.lower(), name)
            if "property_graph" in stats and "." in name:  # a label's: by the property's name
                prop = name.split(".", 1)[1]
                out.setdefault(prop.lower(), prop)
    return out


def check_weight(entry: Any, options: dict[str, Any], *, algorithm: str) -> None:
    """Refuse a ``weight`` argument the graph cannot honour, from its catalog entry alone.

    ``None`` means the graph's own weights when it has them, else unit weights. A named weight
    is the graph's weight column or any numeric edge property (chosen at query time).
    """
    weight = options.get("weight")
    if weight is None or weight is GRAPH_WEIGHTS:
        return
    known = weight_columns(entry)
    if weight.lower() in known:
        return
    if not known:
        raise InvalidArgument(
            f"{algorithm}(): graph '{entry.name}' has no edge weights, so weight => {weight!r} "
            "cannot be used; leave weight NULL for hop counts")
    stats = getattr(entry, "stats", None) or {}
    columns = [item.rpartition(" ")[0].lower()
               for item in (stats.get("edge_properties") or "").split(", ")]
    problem = "is not numeric" if weight.lower() in columns else "does not exist"
    raise InvalidArgument(f"{algorithm}(): weight => {weight!r}: graph '{entry.name}' has no "
                          f"edge column {weight!r} of numbers (it {problem}); available: "
                          + ", ".join(sorted(known.values())))


def chosen_weight(entry: Any, options: dict[str, Any]) -> str | None:
    """The edge column a run's weights come from: the one ``weight`` names (as the graph spells
    it), none for ``weight => NULL`` (hop counts), and when the argument is not given the
    graph's weight column (None on an unweighted graph). Checked by :func:`check_weight`."""
    if "weight" not in options or options["weight"] is GRAPH_WEIGHTS:
        stats = getattr(entry, "stats", None) or {}
        return (stats.get("weight_column") or "weight") if entry.weighted else None
    weight = options["weight"]
    if weight is None:
        return None
    return weight_columns(entry).get(weight.lower(), weight)


def edge_weights(graph: Graph, weight: str | None = None) -> np.ndarray | None:
    """The weights of the out-CSR a weighted traversal uses (the graph's own, or the numeric
    edge column ``weight``), or ``None`` for unit weights."""
    return graph.weights_of(weight)


def check_non_negative(graph: Graph, weights: Any, algorithm: str,
                       weight: str | None = None) -> None:
    """Raise :class:`InvalidArgument` when a shortest-path search meets negative or NaN weights
    (of column ``weight``; None: the graph's own).

    ``weights`` are numpy or CuPy (a GPU operator checks on the device, where they are); the
    verdict is kept per graph version and column, so the scan runs once."""
    if weights is None or weights.size == 0:
        return

    def scan() -> bool:
        return not bool(weights.min() >= 0)  # NaN compares false, so it is refused too

    key = "weights:out:negative_or_nan" + ("" if weight is None else f":{weight.lower()}")
    if graph.derived(key, scan, nbytes=lambda _: 0):
        raise negative_weights(graph, algorithm, weight)


def negative_weights(graph: Graph, algorithm: str, weight: str | None = None) -> InvalidArgument:
    """The error of a shortest-path search that meets negative, NaN or NULL weights (of column
    ``weight``; None: the graph's, or its view's, weight column)."""
    name = weight or getattr(graph, "weight_name", None)
    what = f"values in edge column '{name}'" if name else "edge weights"
    return InvalidArgument(f"{algorithm}(): graph '{graph.name}' has negative (or NaN/NULL) "
                           f"{what}; shortest paths need weights >= 0")


def per_source(run: Callable[[int], AlgorithmOutput], sources: np.ndarray,
               columns: tuple[str, ...], param: str = "source") -> AlgorithmOutput:
    """The multi-source form of a single-source algorithm (:attr:`AlgorithmSpec.many`): the
    rows of ``run(s)`` for every source ``s`` in ``sources``, with column ``param`` saying
    which source each row came from. One operator: the rows stay numpy arrays until the end,
    the user's ids are mapped once, and a cancel stops it between two sources."""
    parts: dict[str, list[np.ndarray]] = {name: [] for name in (param,) + columns}
    for source in np.asarray(sources, dtype=np.int64):
        checkpoint()
        out = run(int(source))
        rows = len(out.columns[columns[0]])
        parts[param].append(np.full(rows, source, dtype=np.int64))
        for name in columns:
            parts[name].append(np.asarray(out.columns[name]))
    merged = {name: np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)
              for name, arrays in parts.items()}
    return AlgorithmOutput(merged, {"sources": int(len(sources))})
