"""The logical plan: plain frozen dataclasses that the front end builds and the executor runs.

Expressions are ``pyarrow.compute.Expression`` objects, so the plan carries no SQL and the
executor needs no import from the layers above it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow.compute as pc

__all__ = [
    "PlanNode",
    "AlgorithmScan",
    "SingleRow",
    "Filter",
    "Project",
    "Sort",
    "Limit",
    "ShowGraphs",
    "DescribeGraph",
]


@dataclass(frozen=True)
class PlanNode:
    def children(self) -> tuple["PlanNode", ...]:
        return tuple(v for v in self.__dict__.values() if isinstance(v, PlanNode))


@dataclass(frozen=True)
class AlgorithmScan(PlanNode):
    """Run a graph algorithm; its rows become the input of the operators above."""

    algorithm: str
    graph: str
    #: bound options (internal values except parameters of kind ``vertex``, still user ids)
    options: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class SingleRow(PlanNode):
    """One row with no columns: the input of ``SELECT`` without ``FROM``."""


@dataclass(frozen=True)
class Filter(PlanNode):
    input: PlanNode
    predicate: pc.Expression = field(compare=False)
    text: str = ""  # the SQL of the predicate, for EXPLAIN


@dataclass(frozen=True)
class Project(PlanNode):
    input: PlanNode
    names: tuple[str, ...]
    expressions: tuple[pc.Expression, ...] = field(compare=False)


@dataclass(frozen=True)
class Sort(PlanNode):
    input: PlanNode
    keys: tuple[tuple[str, str], ...]  # (column, "ascending" | "descending")
    nulls_first: tuple[bool, ...] = ()


@dataclass(frozen=True)
class Limit(PlanNode):
    input: PlanNode
    limit: int | None
    offset: int = 0


@dataclass(frozen=True)
class ShowGraphs(PlanNode):
    pass


@dataclass(frozen=True)
class DescribeGraph(PlanNode):
    graph: str
