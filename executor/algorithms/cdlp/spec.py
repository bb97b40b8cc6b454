"""Community detection by label propagation (CDLP), LDBC Graphalytics semantics.

Labels start as the vertex ids. In each of ``max_iterations`` synchronous iterations every vertex
takes the most frequent label among its neighbours, ties going to the smallest label; a vertex
with no neighbours keeps its label. For a directed graph the neighbours are the in- and the
out-neighbours, counted with multiplicity (a vertex that is both counts twice, as do parallel
edges); an undirected graph counts each incident edge once (a self loop once). Internal ids
ascend with the user's ids, so "smallest label" is the same on either.
"""

from __future__ import annotations

import pyarrow as pa

from ..spec import MAX_ITERATIONS, AlgorithmSpec, Column, Param, Partitioning, Variant

__all__ = ["CDLP"]

#: Partitioned: labels and new labels per owned vertex (16), the relations' scratch per edge of
#: a rank's rows as on one device (64), the exchanged labels (8 per vertex it reads).
PARTITIONING = Partitioning(
    shared_per_vertex=8, traffic="pull", strategies=("replicated", "split"),
    exchange="the owned vertices' labels to every rank (allgatherv); the count of changes "
             "(allreduce)",
    split_exchange="the labels each rank's rows read, from their owners (alltoallv); the count "
                   "of changes (allreduce)")

CDLP = AlgorithmSpec(
    name="cdlp",
    family="cdlp",
    params=(Param("max_iterations", "int", default=10, minimum=0, maximum=MAX_ITERATIONS),),
    columns=(
        Column("vertex", pa.int64(), vertex=True),
        Column("label", pa.int64(), vertex=True),
    ),
    variants=(
        # labels, new labels (16); the host's pass reads the out- and in-CSR in place (a
        # scratch of its largest degree per thread)
        Variant("cpu", "resident", ".cpu:cdlp", 16, reads=("out", "in")),
        # per relation (an edge, both ways on a directed graph): owner and sender (16), the
        # sort's key and the gathered labels (16)
        Variant("cpu", "edge_centric", ".streamed:edge_centric_cdlp", 16, reads=("out", "in")),
        Variant("gpu", "resident", ".gpu:cdlp", 16, 64.0, reads=("out",)),
        Variant("gpu", "edge_centric", ".streamed:edge_centric_cdlp", 16, reads=("out", "in")),
        *(Variant(device, "partitioned", ".partitioned:cdlp", 16, 64.0, reads=("out", "in"),
                  partitioning=PARTITIONING) for device in ("cpu", "gpu")),
    ),
    doc="Community label of every vertex by deterministic label propagation (Graphalytics).",
    all_active=True,
)
