"""The physical plan: what runs, where, and why, as a tree EXPLAIN prints and the runner executes.

Every logical node (:mod:`graphdb.executor.plan`) becomes one :class:`PhysicalNode` that keeps
it (the runner reads the operator's arguments there) and adds what the planner decided: the
line EXPLAIN shows and, for a graph operator (:class:`GraphOperator`), the device, variant,
budget, the bytes it needs and the reason, and the configuration its implementation receives.
A node reached twice (a CTE used twice) is one object: the runner computes it once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphdb.catalog import GraphEntry

from ..algorithms.spec import AlgorithmSpec, OperatorConfig
from ..plan import PlanNode
from ..results import Reduction, TopRows
from .sizing import Decision

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["GraphOperator", "PhysicalNode"]


@dataclass(eq=False, kw_only=True)
class PhysicalNode:
    """One operator of the plan."""

    logical: PlanNode
    inputs: tuple["PhysicalNode", ...] = ()
    #: what EXPLAIN prints for it
    label: str = ""
    #: EXPLAIN's lines under the label (decisions and their reasons)
    details: tuple[str, ...] = ()
    #: whether it reads stored data: a plan none of whose nodes does (an INSERT of VALUES, a
    #: DROP GRAPH) runs without the statement's catalog lease
    reads_data: bool = True

    @property
    def kind(self) -> str:
        """The logical operator's name (the runner dispatches on it)."""
        return type(self.logical).__name__

    def output_schema(self) -> "pa.Schema | None":
        """The columns it outputs, where known without running it (EXPLAIN plans a query over
        empty inputs of them); None: run it to know."""
        return None

    def run(self, runner, metrics: dict) -> "pa.Table":
        """Run this operator (``runner`` computes its inputs): the operators of statements
        that change the database run themselves (:mod:`graphdb.executor.writes`); the others
        are run by the runner's ``_run_<kind>``."""
        raise NotImplementedError(f"{self.kind} is run by the runner")

    def walk(self):
        """This node and every node below it, each once."""
        seen, stack = set(), [self]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            yield node
            stack.extend(node.inputs)


@dataclass(eq=False, kw_only=True)
class GraphOperator(PhysicalNode):
    """A graph algorithm's run: which implementation, on which device, with what budget."""

    spec: AlgorithmSpec
    entry: GraphEntry
    #: bound arguments; vertex ids already internal, except those a subquery computes at run
    #: time (``subqueries`` maps the argument to its input's index)
    options: dict[str, Any]
    subqueries: dict[str, int] = field(default_factory=dict)
    decision: Decision
    config: OperatorConfig
    #: the plan taken if the GPU runs out of memory after all (another process, transients)
    fallback: "GraphOperator | None" = None
    #: an aggregate or a top-k of the operator's rows pushed down onto it by the planner: its
    #: output is then that aggregate's table, computed where the values are
    reduction: "Reduction | None" = None
    top: "TopRows | None" = None
    #: the subgraph's masks: "edges" / "vertices" -> the index of the input computing them
    masks: dict[str, int] = field(default_factory=dict)
    #: the edge column the weights come from (None: unweighted), or subgraph.RUN_TIME when a
    #: subquery names it
    weight: Any = None
    #: whether the operator runs on a view of the graph (another weight, a subgraph)
    view: bool = False

    @property
    def device(self) -> str:
        return self.decision.variant.device

    @property
    def variant(self) -> str:
        return self.decision.variant.name
