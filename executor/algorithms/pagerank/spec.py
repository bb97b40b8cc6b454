"""PageRank with the LDBC Graphalytics semantics: what it takes, returns and needs.

Every vertex starts at 1/|V|. Each iteration:
``PR'(v) = (1 - d)/|V| + d * (sum over in-edges (u, v) of PR(u)/outdeg(u) + D/|V|)``
where D is the total rank of dangling vertices (no out-edges), spread evenly. Parallel edges
count with multiplicity. ``tolerance = 0`` runs exactly ``max_iterations`` iterations; a
positive tolerance stops as soon as the L1 change of an iteration falls below it.
"""

from __future__ import annotations

import pyarrow as pa

from ..spec import MAX_ITERATIONS, AlgorithmSpec, Column, Param, Partitioning, Variant

__all__ = ["PAGERANK"]


def _tune(entry, device, variant: Variant):
    """The GPU's blocking from the device's L2 (GraphCage: a block's contributions in a third
    of it); nothing to tune elsewhere."""
    if variant.device != "gpu" or variant.name != "resident" or not device.l2_bytes:
        return None
    from .gpu import default_layout  # no CuPy import: the module imports it lazily

    return default_layout(entry.num_vertices, entry.num_edges, device.l2_bytes)


#: Partitioned, per owned vertex: rank, inverse out-degree, contribution, sums, the new rank
#: (8 B each); every rank holds the contributions of every vertex and the exchange slots
#: (4 + 4 B on a GPU, 8 + 8 on the CPU), the ranks' vector (8), the dense sums and out-degrees
#: (4 + 4) and, for a shard from the host, its offsets over all rows (8).
PARTITIONING = Partitioning(
    shared_per_vertex=32, traffic="pull", strategies=("replicated", "split"), streams=True,
    exchange="each rank's contributions (float32 on GPUs) and its two totals to every rank: one "
             "AllGather a step, overlapped with the gathers of the rank's own sources",
    split_exchange="the contributions each rank's in-rows read, from their owners (alltoallv); "
                   "the dangling total and the change (allreduce)")

PAGERANK = AlgorithmSpec(
    name="pagerank",
    family="pagerank",
    params=(
        Param("damping", "float", default=0.85, minimum=0.0, maximum=1.0),
        Param("max_iterations", "int", default=20, minimum=0, maximum=MAX_ITERATIONS),
        Param("tolerance", "float", default=0.0, minimum=0.0,
              doc="stop when the L1 change of an iteration is below this (0: never)"),
    ),
    columns=(Column("vertex", pa.int64(), vertex=True), Column("rank", pa.float64())),
    variants=(
        # rank, contribution, next contribution, inverse out-degree (8 B each)
        Variant("cpu", "resident", ".cpu:pagerank", 32, reads=("out", "in")),
        # rank, contribution, sums, inverse out-degree
        Variant("cpu", "edge_centric", ".streamed:edge_centric_pagerank", 32, reads=("in",)),
        Variant("cpu", "pages", ".streamed:pages_pagerank", 32, reads=()),
        # rank (8), contribution and partial or dense sum (4 + 4), out-degree (4), the
        # partition's row ids (4) and offsets (8); the relabelling's scratch (12 B an edge)
        Variant("gpu", "resident", ".gpu:pagerank", 32, 12.0, reads=("out", "in")),
        # rank, contribution, sums (8 B each), out-degree (4)
        Variant("gpu", "edge_centric", ".streamed:edge_centric_pagerank", 28,
                reads=("in",)),
        Variant("gpu", "pages", ".streamed:pages_pagerank", 28, reads=()),
        *(Variant(device, "partitioned", ".partitioned:pagerank", 40, reads=("in",),
                  partitioning=PARTITIONING) for device in ("cpu", "gpu")),
    ),
    doc="PageRank of every vertex (LDBC Graphalytics definition).",
    all_active=True,
    tune=_tune,
)
