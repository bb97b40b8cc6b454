"""The physical planner: one ``plan_<node>`` per logical node (DuckDB's ``plan_<op>``, Kuzu's
``map_*``), each deciding what will run and recording it in the physical plan.

Graph operators are decided here and nowhere else: the catalog entry of the statement's
version (:class:`~graphdb.executor.snapshot.StatementCatalog`), the arguments checked against it
and the source vertices mapped to internal ids (before any device is touched), the device and
variant by :func:`.sizing.choose`, the family's tuning, and, on a GPU, the CPU plan to take if the
device runs out of memory after all. Relational operators are mapped one to one; their few
run-time choices (a hash join's build side, a pattern's dense or sparse frontiers) depend on
sizes known only when their inputs exist, and EXPLAIN says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphdb.catalog import GraphEntry

from .. import algorithms
from ..device import Device, format_bytes
from ..errors import DeviceOutOfMemory
from ..ids import VertexIds
from ..plan import (
    Aggregate,
    AlgorithmScan,
    DescribeGraph,
    Distinct,
    Filter,
    GraphTableScan,
    Join,
    Limit,
    MarkJoin,
    PatternMatch,
    PlanNode,
    Project,
    Rename,
    SetOperation,
    ShowGraphs,
    SingleRow,
    Sort,
    UnionAll,
    ValuesScan,
)
from ..relational import HASH_JOIN_REASON
from ..snapshot import StatementCatalog
from . import pushdown
from .nodes import GraphOperator, PhysicalNode
from .scaling import Fleet
from .sizing import Decision, choose, topology_bytes

__all__ = ["PatternOperator", "PhysicalPlanner", "TableScan"]


@dataclass(eq=False, kw_only=True)
class TableScan(PhysicalNode):
    """``g.vertices`` / ``g.edges`` of the statement's version of a graph."""

    entry: GraphEntry


@dataclass(eq=False, kw_only=True)
class PatternOperator(PhysicalNode):
    """GRAPH_TABLE's frontier expansion, on the CPU or a GPU (``device``), its expansion
    bounded by the budget."""

    entry: GraphEntry
    budget_bytes: int
    device: str = "cpu"
    #: on a GPU: the device's whole budget (the arrays and the expansion), and the expansion's
    #: bound on the CPU should the device run out of memory after all
    device_limit_bytes: int = 0
    host_budget_bytes: int = 0


_WHERE = {"nccl": "NCCL", "mpi": "MPI", "local": "simulated in this process"}


def partitioned_details(decision: Decision, entry: GraphEntry) -> list[str]:
    """EXPLAIN's lines for a partitioned plan: ranks and budget, the segments, the vertex
    state, what travels and how much per step, and why this many ranks."""
    placement, variant = decision.placement, decision.variant
    ranks = placement.ranks
    unit = "GPU" if variant.device == "gpu" else "rank"
    where = _WHERE[placement.backend]
    if placement.backend == "nccl":
        where += ", GPUs " + ", ".join(str(d) for d in placement.devices)
    elif placement.backend == "mpi" and variant.device == "gpu":
        where += ", NCCL between the GPUs"
    edges = topology_bytes(entry, tuple(f for f in variant.reads if f != "weights"))
    directions = sorted({"out" if r == "in" and not entry.directed else r
                         for r in variant.reads if r != "weights"})
    read = entry.num_edges * len(directions)
    partitioning = variant.partitioning
    if partitioning.traffic == "pull":
        state = ("replicated on every rank (GTS Strategy-P)" if placement.strategy == "replicated"
                 else "split: each rank keeps its vertices and the remote ones its rows read "
                      "(GTS Strategy-S)")
    elif partitioning.traffic == "labels":
        state = "a label per vertex on every rank"
    else:
        state = "each rank keeps its own vertices' (owner computes)"
    if placement.streamed:
        state += "; each rank streams its rows every pass (they do not fit its budget)"
    est = decision.estimate
    lines = [
        f"{variant.device} · partitioned · {ranks} {unit}{'s' if ranks > 1 else ''} ({where}) · "
        f"needs {format_bytes(decision.needed_bytes)} of {format_bytes(decision.budget_bytes)} "
        f"per {unit} ({decision.device.name})",
        f"partitions: {ranks} vertex-range segments balanced by {' + '.join(directions)}-edges, "
        f"about {read // max(ranks, 1):,} edges ({format_bytes(edges // max(ranks, 1))}) each",
        f"vertex state: {state}",
        f"exchange: {partitioning.describe(placement.strategy)}"
        + (f"; about {format_bytes(est.bytes_per_step)} per {unit} per step, {est.steps} steps"
           if est is not None else ""),
        f"why {decision.scaling_reason or decision.reason}",
    ]
    return lines


def _names(names) -> str:
    shown = [n for n in names if not n.startswith("__")]
    if not names:
        return "(no columns: only the row count is used)"
    return ", ".join(shown) if shown else f"{len(names)} computed column" + (
        "s" if len(names) > 1 else "")


def _sort_keys(node: Sort) -> str:
    labels = node.labels or tuple(c for c, _ in node.keys)
    return ", ".join(f"{label} {'DESC' if d == 'descending' else 'ASC'}"
                     for label, (_, d) in zip(labels, node.keys))


class PhysicalPlanner:
    """Plans one statement. ``device`` is the statement's device (the ``device`` setting and
    ``memory_limit``), ``cpu`` the host's (where a GPU cannot run an operator, and the fallback
    of GPU plans); ``vertex_ids(entry)`` gives a graph version's id map; ``force`` is the
    ``debug_variant`` setting."""

    def __init__(self, snapshot: StatementCatalog, device: Device, cpu: Device,
                 host_budget: int | None, vertex_ids: Callable[[GraphEntry], VertexIds],
                 force: str = "auto", fleet: Fleet | None = None):
        self.snapshot, self.device, self.cpu = snapshot, device, cpu
        self.host_budget, self.vertex_ids, self.force = host_budget, vertex_ids, force
        #: the ranks graph operators may be partitioned over (the host's GPUs, a cluster)
        self.fleet = fleet
        self._memo: dict[int, PhysicalNode] = {}
        self._parents: Counter | None = None  # parents of each logical node, by id

    def plan(self, node: PlanNode) -> PhysicalNode:
        """The physical node of ``node`` (one per logical node, however often it is reached)."""
        if self._parents is None:  # the root: count every node's parents once
            self._parents = Counter()
            seen, stack = set(), [node]
            while stack:
                current = stack.pop()
                if id(current) not in seen:
                    seen.add(id(current))
                    for child in current.children():
                        self._parents[id(child)] += 1
                        stack.append(child)
        done = self._memo.get(id(node))
        if done is None:
            done = getattr(self, f"plan_{type(node).__name__}")(node)
            self._memo[id(node)] = done
        return done

    def _inputs(self, node: PlanNode) -> tuple[PhysicalNode, ...]:
        return tuple(self.plan(child) for child in node.children())

    def _simple(self, node: PlanNode, label: str, *details: str) -> PhysicalNode:
        return PhysicalNode(logical=node, inputs=self._inputs(node), label=label,
                            details=tuple(details))

    # -- graph operators ------------------------------------------------------------------------
    def _pushed_down(self, node: Aggregate | Limit) -> GraphOperator | None:
        """``node`` (an aggregate, or a LIMIT over a sort) computed by the graph operator below
        it (:mod:`.pushdown`), or None where it stays relational."""
        if not pushdown.PUSHDOWN:
            return None
        below = node.input.input if isinstance(node, Limit) else node.input
        found = pushdown.reach(below, lambda scan: [c.name for c in
                                                    algorithms.get(scan.algorithm).columns])
        between = found.chain + (found.scan,) if found else ()
        if isinstance(node, Limit):
            between += (node.input,)
        if found is None or any(self._parents[id(n)] > 1 for n in between):
            return None  # a node another parent reads too (a CTE used twice) keeps its rows
        spec = algorithms.get(found.scan.algorithm)
        types = {c.name: c.type for c in spec.columns}
        vertex = {c.name for c in spec.columns if c.vertex}
        if isinstance(node, Aggregate):
            entry = self.snapshot.get(found.scan.graph)
            extra = pushdown.reduction_for(node, found, types, vertex,
                                           entry.id_type == "string")
        else:
            extra = pushdown.top_for(node, found, types, vertex)
        return None if extra is None else self.plan_AlgorithmScan(found.scan, extra)

    def plan_AlgorithmScan(self, node: AlgorithmScan,
                           pushed: "pushdown.Reduction | pushdown.TopRows | None" = None
                           ) -> GraphOperator:
        spec = algorithms.get(node.algorithm)
        entry = self.snapshot.get(node.graph)
        shown = ", ".join([entry.name] + [
            f"{k} => {'(subquery)' if isinstance(v, PlanNode) else repr(v)}"
            for k, v in node.options])
        options: dict[str, Any] = {}
        subqueries: dict[str, int] = {}
        inputs: list[PhysicalNode] = []
        for name, value in node.options:
            if isinstance(value, PlanNode):  # a scalar subquery: its value comes at run time
                subqueries[name] = len(inputs)
                inputs.append(self.plan(value))
                continue
            param = spec.param(name)
            if param.kind == "vertex" and value is not None:
                value = self.vertex_ids(entry).internal(value, spec.name, name)
            options[name] = value
        spec.validate(entry, options)
        decision = choose(spec, entry, self.device, self.cpu, self.host_budget, self.force,
                          self.fleet, options)
        fallback = None
        in_cluster = decision.placement is not None and decision.placement.backend == "mpi"
        if decision.variant.device == "gpu" and not in_cluster:  # all ranks fall back, or none
            try:
                cpu = choose(spec, entry, self.cpu, self.cpu, self.host_budget, self.force)
                fallback = self._operator(node, spec, entry, options, subqueries, inputs, cpu,
                                          None, shown)
            except DeviceOutOfMemory:
                pass
        return self._operator(node, spec, entry, options, subqueries, inputs, decision, fallback,
                              shown, pushed)

    def _operator(self, node, spec, entry, options, subqueries, inputs, decision: Decision,
                  fallback: GraphOperator | None, shown: str,
                  pushed: "pushdown.Reduction | pushdown.TopRows | None" = None
                  ) -> GraphOperator:
        tuning = spec.tune(entry, decision.device, decision.variant) if spec.tune else None
        variant = decision.variant
        if decision.placement is not None:
            details = partitioned_details(decision, entry)
        else:
            details = [f"{variant.device} · {variant.name} · needs "
                       f"{format_bytes(decision.needed_bytes)} of "
                       f"{format_bytes(decision.budget_bytes)} ({decision.device.name})",
                       f"why: {decision.reason}"]
            if decision.scaling_reason:
                details.append(f"why {decision.scaling_reason}")
        if tuning is not None:
            details.append(f"tuning: {tuning}")
        if fallback is not None:
            details.append(f"if the GPU runs out of memory: cpu · {fallback.variant}")
        label = f"{spec.name}({shown})"
        if pushed is not None:
            label += f" → {pushed.describe()}"
            where = ("on the GPU: only its rows cross the bus" if variant.device == "gpu"
                     else "over the operator's values, not a table of its rows")
            details.append(f"pushed down: {pushed.describe()} computed {where}")
        return GraphOperator(logical=node, inputs=tuple(inputs), label=label,
                             details=tuple(details), spec=spec, entry=entry, options=options,
                             subqueries=subqueries, decision=decision,
                             config=decision.config(tuning), fallback=fallback,
                             reduction=pushed if isinstance(pushed, pushdown.Reduction) else None,
                             top=pushed if isinstance(pushed, pushdown.TopRows) else None)

    def plan_PatternMatch(self, node: PatternMatch) -> PatternOperator:
        entry = self.snapshot.get(node.graph)
        hops = "; ".join(
            f"{h.direction} {h.low}" + (f"..{h.high}" if h.high != h.low else "") + " hop"
            + ("s" if h.high > 1 else "") + f" -> {h.target}" for h in node.hops)
        # On a GPU: the out-CSR and, for hops against the edges' direction, the in-edge index
        # (offsets, sources, positions) resident; what is left of the budget bounds a hop.
        n, m = entry.num_vertices, entry.num_edges
        inward = entry.directed and any(h.direction != "out" for h in node.hops)
        resident = topology_bytes(entry, ("out",)) + (8 * (n + 1) + 16 * m if inward else 0)
        device, budget = "cpu", int(self.cpu.memory_limit)
        if not self.device.is_gpu:
            why = self.device.reason
        elif resident < self.device.memory_limit // 2:
            device, budget = "gpu", int(self.device.memory_limit) - resident
            why = (f"{self.device.reason}; the out-CSR{' and the in-edge index' if inward else ''}"
                   f" ({format_bytes(resident)}) fit the GPU budget "
                   f"({format_bytes(self.device.memory_limit)})")
        else:
            why = (f"the graph's arrays ({format_bytes(resident)}) take more than half the GPU "
                   f"budget ({format_bytes(self.device.memory_limit)}): on the CPU")
        frontier = ("sorted sparse keys for all rows at once" if device == "gpu" else
                    "a dense bitmap frontier per start vertex, or sorted sparse keys past "
                    "starts x vertices x levels = 2e10 (decided when the starts are known)")
        return PatternOperator(
            logical=node, inputs=self._inputs(node), entry=entry, budget_bytes=budget,
            device=device, device_limit_bytes=int(self.device.memory_limit),
            host_budget_bytes=int(self.cpu.memory_limit),
            label=f"GRAPH_TABLE {entry.name} {node.text}".rstrip(),
            details=(f"{device} · frontier expansion from "
                     f"{'filtered' if node.start_filter is not None else 'all'} {node.start}; "
                     f"{hops}",
                     f"expansion bounded by {format_bytes(budget)}; {{m,n}} hops: {frontier}",
                     f"why: {why}"))

    def plan_GraphTableScan(self, node: GraphTableScan) -> TableScan:
        entry = self.snapshot.get(node.graph)
        return TableScan(logical=node, entry=entry, label=f"SCAN {entry.name}.{node.table}")

    # -- leaves and statements ------------------------------------------------------------------
    def plan_ValuesScan(self, node: ValuesScan) -> PhysicalNode:
        return self._simple(node, f"TABLE FUNCTION {node.name}() ({node.table.num_rows} rows)")

    def plan_SingleRow(self, node: SingleRow) -> PhysicalNode:
        return self._simple(node, "SINGLE ROW")

    def plan_ShowGraphs(self, node: ShowGraphs) -> PhysicalNode:
        return self._simple(node, "SHOW GRAPHS")

    def plan_DescribeGraph(self, node: DescribeGraph) -> TableScan:
        entry = self.snapshot.get(node.graph)
        return TableScan(logical=node, entry=entry, label=f"DESCRIBE {entry.name}")

    # -- relational operators -------------------------------------------------------------------
    def plan_Filter(self, node: Filter) -> PhysicalNode:
        return self._simple(node, f"FILTER {node.text}")

    def plan_Project(self, node: Project) -> PhysicalNode:
        return self._simple(node, f"PROJECT {_names(node.names)}")

    def plan_Rename(self, node: Rename) -> PhysicalNode:
        planned = self._simple(node, f"RENAME {_names(node.names)}")
        planned.folded = True
        return planned

    def plan_Join(self, node: Join) -> PhysicalNode:
        if node.kind == "single":
            return self._simple(node, f"SCALAR SUBQUERY {node.text}")
        kind = {"cross": "CROSS JOIN", "inner": "HASH JOIN", "left": "LEFT HASH JOIN",
                "right": "RIGHT HASH JOIN", "full": "FULL HASH JOIN"}[node.kind]
        if node.kind == "left" and not node.left_keys:
            kind = "LEFT NESTED-LOOP JOIN"
        details = (HASH_JOIN_REASON,) if node.left_keys else ()
        return self._simple(node, f"{kind}{' ON ' + node.text if node.text else ''}", *details)

    def plan_MarkJoin(self, node: MarkJoin) -> PhysicalNode:
        return self._simple(node, "IN (SUBQUERY) as a hash set")

    def plan_Aggregate(self, node: Aggregate) -> PhysicalNode:
        pushed = self._pushed_down(node)
        if pushed is not None:
            return pushed
        calls = ", ".join(f"{c.function}({c.column or '*'})" for c in node.aggregates)
        keys = f" GROUP BY {len(node.keys)} key{'s' if len(node.keys) != 1 else ''}" \
            if node.keys else ""
        return self._simple(node, f"HASH AGGREGATE {calls}{keys}".rstrip())

    def plan_Distinct(self, node: Distinct) -> PhysicalNode:
        return self._simple(node, "DISTINCT (hash)")

    def plan_UnionAll(self, node: UnionAll) -> PhysicalNode:
        return self._simple(node, f"UNION ALL of {len(node.inputs)} inputs")

    def plan_SetOperation(self, node: SetOperation) -> PhysicalNode:
        return self._simple(node, f"{node.kind.upper()} (hash semi/anti join on all columns)")

    def plan_Sort(self, node: Sort) -> PhysicalNode:
        return self._simple(node, f"SORT {_sort_keys(node)}")

    def plan_Limit(self, node: Limit) -> PhysicalNode:
        if isinstance(node.input, Sort) and node.limit is not None:
            pushed = self._pushed_down(node)
            if pushed is not None:
                return pushed
            # ORDER BY + LIMIT run as one top-k selection: one node, the sort's input below it
            sort = node.input
            text = (f"TOP {node.offset + node.limit} BY {_sort_keys(sort)}"
                    + (f" OFFSET {node.offset}" if node.offset else ""))
            return PhysicalNode(logical=node, inputs=(self.plan(sort.input),), label=text,
                                details=("a partial sort; a full sort when a key has NULLs",))
        return self._simple(node, f"LIMIT {node.limit if node.limit is not None else 'ALL'} "
                                  f"OFFSET {node.offset}")
