"""Neighbours of one vertex: what it takes, returns and needs."""

from __future__ import annotations

import pyarrow as pa

from ..spec import AlgorithmSpec, Column, Param, Variant

__all__ = ["DEGREE", "NEIGHBORS"]

NEIGHBORS = AlgorithmSpec(
    name="neighbors",
    family="neighbors",
    params=(
        Param("vertex", "vertex", doc="whose neighbours"),
        Param("direction", "str", default="out", choices=("out", "in", "both"),
              doc="follow out-edges, in-edges or both"),
    ),
    columns=(Column("neighbor", pa.int64(), vertex=True),),
    variants=(Variant("cpu", "resident", ".cpu:neighbors", 0, reads=("out", "in")),
              Variant("gpu", "resident", ".gpu:neighbors", 0, reads=("out", "in"))),
    doc="Neighbours of a vertex, one row per edge.",
)

DEGREE = AlgorithmSpec(
    name="degree",
    family="neighbors",
    params=(
        Param("vertices", "vertices", default=None,
              doc="only these vertices (a list or a subquery); NULL: every vertex"),
        Param("direction", "str", default="out", choices=("out", "in", "both"),
              doc="count out-edges, in-edges or both"),
    ),
    columns=(Column("vertex", pa.int64(), vertex=True), Column("degree", pa.int64())),
    variants=(Variant("cpu", "resident", ".degree:degree", 8, reads=("out", "in")),),
    doc="Degree of every vertex, or of the vertices given, from the CSR's offsets.",
    cpu_reason="it reads one offset per vertex and direction: no work for a device",
)
