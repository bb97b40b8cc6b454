"""Weakly connected components (WCC), Graphalytics semantics: what it returns and needs.

Two vertices share a component when a path joins them ignoring edge directions. Each vertex's
component is reported as the smallest internal vertex id in it (internal ids ascend with the
user's ids, so that is also the smallest user id), which makes the labels deterministic.
"""

from __future__ import annotations

import pyarrow as pa

from ..bfs.spec import SUBWAY_GPU_STATE, SUBWAY_STATE
from ..spec import AlgorithmSpec, Column, Partitioning, Variant

__all__ = ["WCC"]

#: Partitioned: every rank holds the local labels, its rows' offsets over all vertices, the
#: merged labels, the proposals and a jump's temporary (8 B each) per vertex.
PARTITIONING = Partitioning(
    shared_per_vertex=40, traffic="labels",
    exchange="each rank's union-find forest after Afforest on its rows, merged by MIN (allreduce "
             "of a label per vertex), then its links replayed in a few rounds")

WCC = AlgorithmSpec(
    name="wcc",
    family="wcc",
    params=(),
    columns=(
        Column("vertex", pa.int64(), vertex=True),
        Column("component", pa.int64(), vertex=True),
    ),
    variants=(
        # the union-find parents (int64)
        Variant("cpu", "resident", ".cpu:wcc", 8),
        Variant("cpu", "subway", ".streamed:subway_wcc", SUBWAY_STATE, reads=("out", "in")),
        # the parents (4 B with int32 ids); a directed graph's in-edges are hooked too
        Variant("gpu", "resident", ".gpu:wcc", 4, reads=("out", "in")),
        Variant("gpu", "subway", ".streamed:subway_wcc", SUBWAY_GPU_STATE, reads=("out", "in")),
        *(Variant(device, "partitioned", ".partitioned:wcc", 0, reads=("out", "in"),
                  partitioning=PARTITIONING) for device in ("cpu", "gpu")),
    ),
    doc="Weakly connected component of every vertex, named by its smallest vertex.",
    all_active=True,
)
