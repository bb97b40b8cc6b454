"""Neighbours of one vertex: what it takes, returns and needs."""

from __future__ import annotations

import pyarrow as pa

from ..spec import AlgorithmSpec, Column, Param, Variant

__all__ = ["NEIGHBORS"]

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
