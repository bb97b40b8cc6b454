"""The physical plan and its planner: every decision about how a statement runs, made once.

:class:`PhysicalPlanner` turns a logical plan (:mod:`graphdb.executor.plan`) into a tree of
:class:`PhysicalNode` s (:class:`GraphOperator` for graph algorithms, with their
:class:`Decision`); EXPLAIN prints that tree, the runner (:mod:`graphdb.executor.runner`)
executes it. :mod:`.sizing` is the cost model the graph operators are decided by.
"""

from .nodes import GraphOperator, PhysicalNode
from .planner import PatternOperator, PhysicalPlanner, StoredScan, TableScan
from .sizing import Decision, choose, topology_bytes

__all__ = ["Decision", "GraphOperator", "PatternOperator", "PhysicalNode", "PhysicalPlanner",
           "StoredScan", "TableScan", "choose", "topology_bytes"]
