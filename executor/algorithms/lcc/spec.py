"""Local clustering coefficient (LCC), LDBC Graphalytics definition: what it returns and needs.

For a vertex v let N(v) be its distinct neighbours, in or out, v itself excluded, and d = |N(v)|.
LCC(v) counts the directed edges (a, b) with both a and b in N(v) and divides by d(d - 1); it is
0 when d < 2.
"""

from __future__ import annotations

import pyarrow as pa

from ..spec import AlgorithmSpec, Column, Param, Partitioning, Variant

__all__ = ["LCC"]

PARTITIONING = Partitioning(
    shared_per_vertex=0, traffic="rows",
    exchange="the distinct out-rows of every remote neighbour, fetched from their owners once "
             "(alltoallv)")

LCC = AlgorithmSpec(
    name="lcc",
    family="lcc",
    params=(Param("vertices", "vertices", default=None,
                  doc="only these vertices (a list or a subquery), each computed from its "
                      "neighbourhood alone; NULL: every vertex"),),
    columns=(Column("vertex", pa.int64(), vertex=True), Column("coefficient", pa.float64())),
    variants=(
        # the coefficients and degrees (16); the two distinct-neighbour matrices built from the
        # edges (about 40 B an edge with their sort keys)
        Variant("cpu", "resident", ".cpu:lcc", 16, 40.0),
        Variant("gpu", "resident", ".gpu:lcc", 16, 40.0),
        *(Variant(device, "partitioned", ".partitioned:lcc", 16, 48.0, reads=("out", "in"),
                  partitioning=PARTITIONING) for device in ("cpu", "gpu")),
    ),
    doc="Local clustering coefficient of every vertex, or of the vertices given (Graphalytics "
        "definition).",
    all_active=True,
    local=("vertices", ".local:lcc_local"),
)
