"""Single-source shortest paths (SSSP) and widest paths (SSWP): what they take, return, need.

SSSP follows the Graphalytics definition: the smallest sum of edge weights over all directed
paths from the source (both directions for an undirected graph), unit weights on an unweighted
graph; unreachable vertices are not reported. SSWP gives every reachable vertex the largest
bottleneck (smallest edge weight) over all paths from the source; the source has width +inf.
"""

from __future__ import annotations

import functools

import pyarrow as pa

from ...abi import UDC_K
from ...errors import InvalidArgument
from ..bfs.spec import SUBWAY_GPU_STATE, SUBWAY_STATE
from ..common import WEIGHT_PARAM, check_weight, chosen_weight
from ..spec import AlgorithmSpec, Column, Param, Partitioning, Variant

__all__ = ["SSSP", "SSWP"]


def _needs_weights(entry, options) -> None:
    check_weight(entry, options, algorithm="sswp")
    if "weight" in options and options["weight"] is None:
        raise InvalidArgument("sswp(): widest paths need weights; weight => NULL gives none "
                              "(name a numeric edge column: weight => 'capacity')")
    if chosen_weight(entry, options) is None:
        raise InvalidArgument(
            f"sswp(): graph '{entry.name}' has no edge weights; widest paths need them (name a "
            "numeric edge column: weight => 'capacity')")


#: Partitioned: distances (8), active flags (1) and the near set (8) per owned vertex; unit
#: weights of an unweighted graph (8 per edge).
#: Every rank holds a distance, a stamp and a flag for all vertices (8 + 4 + 1 B), its shard's
#: offsets over all rows (8 B) and the out-degrees (4 B).
PARTITIONING = Partitioning(
    shared_per_vertex=25, traffic="relax",
    exchange="distances a round lowered for other ranks' vertices, routed to their owners and "
             "merged by MIN (alltoallv of ids and distances); near-far buckets")

SSSP = AlgorithmSpec(
    name="sssp",
    family="sssp",
    params=(Param("source", "vertex", doc="vertex to start from"), WEIGHT_PARAM),
    columns=(Column("vertex", pa.int64(), vertex=True), Column("distance", pa.float64())),
    variants=(
        # distances (8), the bucket lists' links (24), predecessors when a path is asked (8)
        Variant("cpu", "resident", ".cpu:sssp", 40, reads=("out", "weights")),
        Variant("cpu", "subway", ".streamed:subway_sssp", SUBWAY_STATE, reads=("out", "weights")),
        # distances (8), stamps (4), two piece queues of twice the BFS capacity (32 + 2/edge)
        Variant("gpu", "resident", ".gpu:sssp", 44, 2.0, reads=("out", "weights")),
        Variant("gpu", "subway", ".streamed:subway_sssp", SUBWAY_GPU_STATE,
                reads=("out", "weights")),
        *(Variant(device, "partitioned", ".partitioned:sssp", 17, 8.0, reads=("out", "weights"),
                  partitioning=PARTITIONING) for device in ("cpu", "gpu")),
    ),
    doc="Shortest-path distance from source to every reachable vertex.",
    check=functools.partial(check_weight, algorithm="sssp"),
    many=("source", ".cpu:sssp_many"),
)

SSWP = AlgorithmSpec(
    name="sswp",
    family="sssp",
    params=(Param("source", "vertex", doc="vertex to start from"), WEIGHT_PARAM),
    columns=(Column("vertex", pa.int64(), vertex=True), Column("width", pa.float64())),
    variants=(
        # widths (8), the heap's keys (8), vertices (4) and positions (4)
        Variant("cpu", "resident", ".cpu:sswp", 24, reads=("out", "weights")),
        # widths (8), stamps (4), two piece queues (16 + 16 / K per edge)
        Variant("gpu", "resident", ".gpu:sswp", 28, 16 / UDC_K, reads=("out", "weights")),
    ),
    doc="Widest-path width (largest bottleneck edge weight) from source; +inf at source.",
    check=_needs_weights,
)
