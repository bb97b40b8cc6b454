"""Graph algorithms: one folder per family (bfs, sssp, pagerank, wcc, cdlp, lcc, paths,
neighbors), each with a ``spec`` (parameters, output columns, variants with the bytes they
keep) and its implementations keyed by (device, variant): ``cpu``, ``gpu`` (+ ``.cu``),
``streamed``. One registry (:mod:`.registry`) finds them; the physical planner chooses among
them; :func:`run` runs one directly.
"""

from __future__ import annotations

from . import bfs, cdlp, lcc, neighbors, pagerank, paths, sssp, wcc  # noqa: F401 (registering)
from .registry import REGISTRY, get, implementation, many, register, run
from .spec import (
    AlgorithmOutput,
    AlgorithmSpec,
    Column,
    OperatorConfig,
    Param,
    Variant,
)

__all__ = ["REGISTRY", "AlgorithmOutput", "AlgorithmSpec", "Column", "OperatorConfig", "Param",
           "Variant", "get", "implementation", "many", "register", "run"]
