"""Single-pair shortest path with the path itself: what it takes, returns and needs."""

from __future__ import annotations

import functools

import pyarrow as pa

from ..common import WEIGHT_PARAM, check_weight
from ..spec import AlgorithmSpec, Column, Param, Variant

__all__ = ["SHORTEST_PATH"]

SHORTEST_PATH = AlgorithmSpec(
    name="shortest_path",
    family="paths",
    params=(
        Param("source", "vertex", doc="first vertex of the path"),
        Param("target", "vertex", doc="last vertex of the path"),
        WEIGHT_PARAM,
    ),
    columns=(
        Column("step", pa.int64()),
        Column("vertex", pa.int64(), vertex=True),
        Column("distance", pa.float64()),
    ),
    variants=(
        # two sides' parents and hop counts (32), or Dijkstra's distances, predecessors, links
        Variant("cpu", "resident", ".cpu:shortest_path", 48, reads=("out", "in", "weights")),
        # the SSSP family's GPU state (distances, stamps, piece queues) and the path (4)
        Variant("gpu", "resident", ".gpu:shortest_path", 48, 2.0,
                reads=("out", "in", "weights")),
    ),
    doc="One shortest path from source to target, a row per vertex; empty if unreachable.",
    check=functools.partial(check_weight, algorithm="shortest_path"),
)
