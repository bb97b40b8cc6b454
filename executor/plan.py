"""The logical plan: plain frozen dataclasses that the front end builds and the executor runs.

Expressions are ``pyarrow.compute.Expression`` objects over the input's column names, so the plan
carries no SQL and the executor needs no import from the layers above it. ``text`` fields keep
the SQL of an expression for EXPLAIN only.

A node object may appear under several parents (a CTE referenced twice); the runner computes it
once per query.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "PlanNode", "AlgorithmScan", "GraphTableScan", "ValuesScan", "SingleRow", "Filter",
    "Project", "Rename", "Join", "MarkJoin", "Aggregate", "AggregateCall", "Distinct", "UnionAll",
    "SetOperation", "Sort",
    "Limit", "Hop", "PatternMatch", "ShowGraphs", "DescribeGraph",
]


@dataclass(frozen=True, eq=False)
class PlanNode:
    """Base class. ``eq=False``: nodes compare by identity, which the runner's cache relies on."""

    def children(self) -> tuple["PlanNode", ...]:
        out: list[PlanNode] = []
        for value in self.__dict__.values():
            if isinstance(value, PlanNode):
                out.append(value)
            elif isinstance(value, tuple):
                out.extend(v for v in value if isinstance(v, PlanNode))
        return tuple(out)


# -- leaves -------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class AlgorithmScan(PlanNode):
    """Run a graph algorithm; its rows become the input of the operators above."""

    algorithm: str
    graph: str
    #: bound options (internal values except parameters of kind ``vertex``, still user ids); a
    #: value may be a :class:`PlanNode`, a scalar subquery the runner evaluates first
    options: tuple[tuple[str, Any], ...]

    def children(self) -> tuple["PlanNode", ...]:
        return tuple(v for _, v in self.options if isinstance(v, PlanNode))


@dataclass(frozen=True, eq=False)
class GraphTableScan(PlanNode):
    """``g.vertices`` or ``g.edges`` of a stored graph."""

    graph: str
    table: str  # "vertices" | "edges"


@dataclass(frozen=True, eq=False)
class ValuesScan(PlanNode):
    """A table known when planning (built-in table functions such as ``settings()``)."""

    name: str
    table: pa.Table = field(repr=False)


@dataclass(frozen=True, eq=False)
class SingleRow(PlanNode):
    """One row with no columns: the input of ``SELECT`` without ``FROM``."""


# -- relational operators -----------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Filter(PlanNode):
    input: PlanNode
    predicate: pc.Expression
    text: str = ""


@dataclass(frozen=True, eq=False)
class Project(PlanNode):
    input: PlanNode
    names: tuple[str, ...]
    expressions: tuple[pc.Expression, ...]


@dataclass(frozen=True, eq=False)
class Rename(PlanNode):
    """Relabel the columns by position (no data moves)."""

    input: PlanNode
    names: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class Join(PlanNode):
    """Join two inputs whose column names are disjoint.

    ``kind``: 'inner', 'left', 'cross', or 'single' (a scalar subquery: the right side has at
    most one row, joined to every left row, NULLs when it has none). Equality keys run as an
    Acero hash join; ``residual`` is the rest of the ON condition.
    """

    left: PlanNode
    right: PlanNode
    kind: str
    left_keys: tuple[str, ...] = ()
    right_keys: tuple[str, ...] = ()
    residual: pc.Expression | None = None
    text: str = ""


@dataclass(frozen=True, eq=False)
class MarkJoin(PlanNode):
    """Adds boolean column ``output``: whether ``column`` of a row is in ``right``'s first column
    (``x IN (SELECT ...)``)."""

    left: PlanNode
    right: PlanNode
    column: str
    output: str


@dataclass(frozen=True)
class AggregateCall:
    output: str
    function: str  # Arrow hash aggregate name without the hash_ prefix: sum, mean, count, ...
    column: str | None  # None for count(*)
    distinct: bool = False


@dataclass(frozen=True, eq=False)
class Aggregate(PlanNode):
    """GROUP BY ``keys`` (input column names; none for a global aggregate)."""

    input: PlanNode
    keys: tuple[str, ...]
    aggregates: tuple[AggregateCall, ...]


@dataclass(frozen=True, eq=False)
class Distinct(PlanNode):
    input: PlanNode


@dataclass(frozen=True, eq=False)
class UnionAll(PlanNode):
    """Rows of every input, in order; columns are matched by position and named after the first."""

    inputs: tuple[PlanNode, ...]
    names: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class SetOperation(PlanNode):
    """``intersect`` or ``except`` of two inputs, as sets (distinct rows), by position."""

    left: PlanNode
    right: PlanNode
    kind: str
    names: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class Sort(PlanNode):
    input: PlanNode
    keys: tuple[tuple[str, str], ...]  # (column, "ascending" | "descending")
    nulls_first: tuple[bool, ...] = ()
    labels: tuple[str, ...] = ()  # the keys as written, for EXPLAIN (columns may be internal)


@dataclass(frozen=True, eq=False)
class Limit(PlanNode):
    input: PlanNode
    limit: int | None
    offset: int = 0


# -- graph pattern matching ---------------------------------------------------------------------
@dataclass(frozen=True)
class Hop:
    """One edge of a pattern: from the previous vertex variable to ``target``.

    ``direction`` is 'out', 'in' or 'both'. ``low``/``high`` bound the number of edges; a hop
    of exactly one edge binds ``edge`` (its stored edge position) for edge properties.
    """

    target: str
    direction: str
    low: int = 1
    high: int = 1
    edge: str | None = None


@dataclass(frozen=True, eq=False)
class PatternMatch(PlanNode):
    """Bindings of a linear path pattern, computed by frontier expansion over the CSR.

    Starts from the vertices of ``start`` (all, or those of the vertex table passing
    ``start_filter``), then expands one hop after the other: a single edge gathers the
    frontier's neighbours with their edge positions; ``{m,n}`` keeps one frontier per source and
    level (reachability: each (source, target) pair once). Output columns are
    ``<variable>.<property>`` for the requested ``vertex_properties`` / ``edge_properties``.
    """

    graph: str
    start: str
    start_filter: pc.Expression | None
    hops: tuple[Hop, ...]
    vertex_properties: tuple[tuple[str, str], ...]  # (variable, property)
    edge_properties: tuple[tuple[str, str], ...]
    text: str = ""


# -- catalog statements -------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ShowGraphs(PlanNode):
    pass


@dataclass(frozen=True, eq=False)
class DescribeGraph(PlanNode):
    graph: str
