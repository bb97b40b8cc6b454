"""Single-pair shortest path with the path itself: what it takes, returns and needs."""

from __future__ import annotations

import functools

import pyarrow as pa

from ..common import WEIGHT_PARAM, check_weight
from ..spec import AlgorithmSpec, Column, Param, Variant

__all__ = ["K_SHORTEST_PATHS", "SHORTEST_PATH"]

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

K_SHORTEST_PATHS = AlgorithmSpec(
    name="k_shortest_paths",
    family="paths",
    params=(
        Param("source", "vertex", doc="first vertex of the paths"),
        Param("target", "vertex", doc="last vertex of the paths"),
        Param("k", "int", minimum=1, maximum=100_000, doc="how many paths"),
        WEIGHT_PARAM,
    ),
    columns=(
        Column("path", pa.int64()),
        Column("step", pa.int64()),
        Column("vertex", pa.int64(), vertex=True),
        Column("distance", pa.float64()),
    ),
    variants=(
        # each spur search's distances, predecessors, heap and positions (40), the bans (1 per
        # vertex and per edge)
        Variant("cpu", "resident", ".yen:k_shortest_paths", 41, 1.0,
                reads=("out", "weights")),
    ),
    doc="The k shortest loopless paths from source to target (Yen), a row per vertex of each; "
        "path 0 is the shortest.",
    check=functools.partial(check_weight, algorithm="k_shortest_paths"),
    cpu_reason="Yen's spur searches are short Dijkstras, one after another, each stopping at "
               "the target: too little work per search for a device launch",
)
