"""Breadth-first search and k-hop neighbourhoods: what they take, return and need.

Graphalytics semantics: the source has depth 0, edges are followed in their direction (both
directions for an undirected graph), unreachable vertices are not reported.
"""

from __future__ import annotations

import pyarrow as pa

from ...abi import BFS_UDC_K
from ..spec import AlgorithmSpec, Column, Param, Partitioning, Variant

__all__ = ["BFS", "KHOP"]

#: Queue and depth (4 B each with int32 ids), the visited and frontier bitmaps.
_CPU_STATE = 9
#: Depth (4 B); two piece queues of (vertex, piece) pairs, |V| + |E| / K entries each.
_GPU_STATE, _GPU_STATE_PER_EDGE = 4 + 2 * 8, 2 * 8 / BFS_UDC_K
#: Subway: value (8), label and snapshot flags (2), degree (8); on the GPU also the SubCSR's ids
#: and offsets built on the device (12) and the active-count scan (8).
SUBWAY_STATE, SUBWAY_GPU_STATE = 18, 18 + 20
#: Pages: depth (4) and the next-pages bitmap's byte (1).
PAGES_STATE = 5
#: Partitioned, per owned vertex: depth (8), the frontier and its next (16); every rank holds
#: the frontier bitmap (1/8) and, bottom-up, it unpacked (1) and as values (8) per vertex.
PARTITIONED_STATE = 24
#: Every rank holds the depths and out-degrees of all vertices (4 + 4 B), its shard's offsets
#: over all rows (8 B per direction) and the gathered bitmaps (1 bit per vertex and rank).
PARTITIONING = Partitioning(
    shared_per_vertex=25, traffic="frontier",
    exchange="each level's claimed vertices as a bitmap of |V| bits from every rank (one "
             "AllGather, whichever the direction); the depths replicated on every rank")


def _variants(name: str) -> tuple[Variant, ...]:
    return (
        Variant("cpu", "resident", f".cpu:{name}", _CPU_STATE, reads=("out", "in")),
        Variant("cpu", "subway", f".streamed:subway_{name}", SUBWAY_STATE),
        Variant("cpu", "pages", f".streamed:pages_{name}", PAGES_STATE, reads=()),
        Variant("gpu", "resident", f".gpu:{name}", _GPU_STATE, _GPU_STATE_PER_EDGE,
                reads=("out", "in")),
        Variant("gpu", "subway", f".streamed:subway_{name}", SUBWAY_GPU_STATE),
        Variant("gpu", "pages", f".streamed:pages_{name}", PAGES_STATE, reads=()),
        *(Variant(device, "partitioned", f".partitioned:{name}", PARTITIONED_STATE,
                  reads=("out", "in"), partitioning=PARTITIONING) for device in ("cpu", "gpu")),
    )


BFS = AlgorithmSpec(
    name="bfs",
    family="bfs",
    params=(
        Param("source", "vertex", doc="vertex to start from"),
        Param("max_depth", "int", default=None, minimum=0, doc="stop after this many levels"),
    ),
    columns=(Column("vertex", pa.int64(), vertex=True), Column("depth", pa.int64())),
    variants=_variants("bfs"),
    doc="Vertices reachable from source with their BFS depth (hops).",
    many=("source", ".cpu:bfs_many"),
)

KHOP = AlgorithmSpec(
    name="khop",
    family="bfs",
    params=(
        Param("source", "vertex", doc="vertex to start from"),
        Param("k", "int", minimum=0, doc="largest number of hops"),
    ),
    columns=(Column("vertex", pa.int64(), vertex=True), Column("hops", pa.int64())),
    variants=_variants("khop"),
    doc="Vertices within k hops of source (source included at 0 hops).",
    many=("source", ".cpu:khop_many"),
)
