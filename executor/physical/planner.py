"""The physical planner: one ``plan_<node>`` per logical node (DuckDB's ``plan_<op>``, Kuzu's
``map_*``), each deciding what will run and recording it in the physical plan.

Graph operators are decided here and nowhere else: the catalog entry of the statement's
version (:class:`~graphdb.executor.snapshot.StatementCatalog`), the arguments checked against it
and the source vertices mapped to internal ids (before any device is touched), the device and
variant by :func:`.sizing.choose`, the family's tuning, and, on a GPU, the CPU plan to take if the
device runs out of memory after all; a summary of its rows the query asks for (``count(*)``,
``ORDER BY x LIMIT k``: the logical scan's ``summary``) is computed by the operator itself
(:mod:`.pushdown`). The relational part of a query is one node (:class:`RelationalOperator`):
DuckDB plans it when it runs, over its inputs' results, and EXPLAIN shows DuckDB's plan of it
(:mod:`graphdb.executor.relational`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa

from graphdb.catalog import GraphEntry
from graphdb.storage.lazy import pc

from .. import algorithms
from ..algorithms.common import chosen_weight
from ..algorithms.spec import Variant
from ..arrays import to_arrow
from ..delta import delta_details
from ..device import Device, format_bytes
from ..errors import DeviceOutOfMemory, InvalidArgument
from ..graph_tables import weight_column
from ..ids import VertexIds
from ..pattern_count import countable_by_vertex
from ..plan import (
    AlgorithmScan,
    DescribeGraph,
    GraphTableScan,
    PatternMatch,
    PlanNode,
    RelationalQuery,
    ShowGraphs,
    StoredTableScan,
    Subgraph,
    ValuesScan,
)
from ..snapshot import StatementCatalog
from ..subgraph import RUN_TIME
from . import pushdown
from .nodes import GraphOperator, PhysicalNode
from .scaling import Fleet
from .sizing import Decision, choose, topology_bytes
from .writes import WritePlanning

__all__ = ["PatternOperator", "PhysicalPlanner", "RelationalOperator", "StoredScan",
           "TableScan"]


@dataclass(eq=False, kw_only=True)
class TableScan(PhysicalNode):
    """``g.vertices`` / ``g.edges`` / ``g.adjacency`` of the statement's version of a graph."""

    entry: GraphEntry


@dataclass(eq=False, kw_only=True)
class StoredScan(PhysicalNode):
    """A stored table's rows at the statement's version (all, or those of a key lookup)."""

    table: Any  # its TableEntry


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


@dataclass(eq=False, kw_only=True)
class RelationalOperator(PhysicalNode):
    """The query's relational part: its SQL, run by DuckDB over the inputs' results, each under
    its name (``names[i]`` is the name of ``inputs[i]``)."""

    names: tuple[str, ...]


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


def internal_set(ids: VertexIds, values) -> np.ndarray:
    """The internal ids of a set of vertex ids (a list, an Arrow column), ascending, each once;
    NULLs and ids not in the graph left out."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        column = values
    else:
        column = to_arrow(list(values)) if len(values) else pa.array([], pa.int64())
    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        column = pc.list_flatten(column)
    internal = ids.internal_many(column)
    return np.unique(internal[internal >= 0])


def view_lines(subgraph: Subgraph | None, entry: GraphEntry, weight: Any) -> tuple[str, ...]:
    """EXPLAIN's lines for an operator on a view of its graph (another weight column, none, a
    subgraph); none when it runs on the graph as stored."""
    lines = []
    if weight is RUN_TIME:
        lines.append("weights: the edge column a subquery names (known when it has run)")
    elif weight != weight_column(entry):
        lines.append("weights: none (weight => NULL: every edge counts 1, hop counts)"
                     if weight is None else f"weights: edge column '{weight}'")
    if subgraph is not None:
        masks = [what for what, query in (("an edge mask (one flag per stored edge)",
                                           subgraph.edges),
                                          ("a vertex mask (the vertices kept, renumbered)",
                                           subgraph.vertices)) if query is not None]
        if subgraph.vertex_labels is not None:
            masks.append(f"vertex labels {', '.join(subgraph.vertex_labels)} (their id ranges; "
                         "ids are their keys)")
        if subgraph.edge_labels is not None:
            masks.append(f"edge labels {', '.join(subgraph.edge_labels) or '(none)'}")
        lines.append(f"subgraph {subgraph.text}: " + (" and ".join(masks) or "every edge")
                     + ", from the queries below")
    if lines:
        lines.append("view: the graph's CSR compacted by the masks where the operator runs (on a"
                     " GPU from its resident CSR: only the masks cross the bus); no pages variant")
    return tuple(lines)


def _argument(name: str, value: Any, lateral: set[str]) -> str:
    """An argument as EXPLAIN shows it."""
    if name in lateral:
        return "(each row)"
    return "(subquery)" if isinstance(value, PlanNode) else repr(value)


class PhysicalPlanner(WritePlanning):
    """Plans one statement. ``device`` is the statement's device (the ``device`` setting and
    ``memory_limit``), ``cpu`` the host's (where a GPU cannot run an operator, and the fallback
    of GPU plans); ``vertex_ids(entry)`` gives a graph version's id map; ``force`` is the
    ``debug_variant`` setting; ``fleet`` the ranks graph operators may be partitioned over, or
    a callable giving them, asked only when a graph operator is planned."""

    def __init__(self, snapshot: StatementCatalog, device: Device, cpu: Device,
                 host_budget: int | None, vertex_ids: Callable[[GraphEntry], VertexIds],
                 force: str = "auto",
                 fleet: "Fleet | Callable[[], Fleet | None] | None" = None):
        self.snapshot, self.device, self.cpu = snapshot, device, cpu
        self.host_budget, self.vertex_ids, self.force = host_budget, vertex_ids, force
        self._fleet = fleet
        self._memo: dict[int, PhysicalNode] = {}

    @property
    def fleet(self) -> Fleet | None:
        """The ranks graph operators may be partitioned over (the host's GPUs, a cluster)."""
        if callable(self._fleet):
            self._fleet = self._fleet()
        return self._fleet

    def plan(self, node: PlanNode) -> PhysicalNode:
        """The physical node of ``node`` (one per logical node, however often it is reached)."""
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
    def plan_AlgorithmScan(self, node: AlgorithmScan) -> GraphOperator:
        spec = algorithms.get(node.algorithm)
        pushed = node.summary if pushdown.PUSHDOWN and not node.lateral else None
        entry = self.snapshot.get(node.graph)
        lateral = set(node.lateral)
        shown = ", ".join([entry.name] + [f"{k} => {_argument(k, v, lateral)}"
                                          for k, v in node.options])
        options: dict[str, Any] = {}
        subqueries: dict[str, int] = {}
        inputs: list[PhysicalNode] = []
        # a subgraph of chosen labels has ids of its own: its vertex arguments are mapped when
        # the operator runs, on its view
        labelled = node.subgraph is not None and node.subgraph.vertex_labels is not None
        for name, value in node.options:
            if name in lateral:
                continue
            if isinstance(value, PlanNode):  # a scalar subquery: its value comes at run time
                subqueries[name] = len(inputs)
                inputs.append(self.plan(value))
                continue
            param = spec.param(name)
            if labelled and param.kind in ("vertex", "vertices"):
                options[name] = value
                continue
            if param.kind == "vertex" and value is not None:
                value = self.vertex_ids(entry).internal(value, spec.name, name)
            elif param.kind == "vertices" and value is not None:
                value = internal_set(self.vertex_ids(entry), value)
            options[name] = value
        spec.validate(entry, options)  # (the arguments every row shares)
        if "weight" in lateral:
            raise InvalidArgument(f"{spec.name}(): weight must be the same for every row (a "
                                  "constant, a parameter or a scalar subquery), not a column")
        weight = chosen_weight(entry, options) if "weight" not in subqueries else RUN_TIME
        options.pop("weight", None)  # the view's weights (below): no implementation reads it
        masks: dict[str, int] = {}
        if node.subgraph is not None:
            for kind, query in (("edges", node.subgraph.edges),
                                ("vertices", node.subgraph.vertices)):
                if query is not None:
                    masks[kind] = len(inputs)
                    inputs.append(self.plan(query))
        view = view_lines(node.subgraph, entry, weight)
        why_cpu = []
        if node.sources is not None:
            inputs.append(self.plan(node.sources))
            # One run for every row's arguments: on the CPU, where the per-source searches are
            # cheap to start; a GPU run per source would pay its launch and transfer each time.
            why_cpu.append("one run for the distinct arguments of every row: " + (
                f"{spec.name}'s multi-source form" if spec.many is not None
                and node.lateral == (spec.many[0],) else "one run after another"))
        if spec.local is not None and (options.get(spec.local[0]) is not None
                                       or spec.local[0] in subqueries):
            # the result of the vertices given, from their neighbourhoods: little work, read
            # from the resident graph by the CPU
            spec = replace(spec, variants=(Variant("cpu", "resident", spec.local[1],
                                                   spec.variants[0].state_per_vertex,
                                                   reads=("out", "in")),))
            why_cpu.append(f"{spec.name} of the vertices given ({spec.local[0]} => ...), from "
                           "their neighbourhoods only: a few rows of the CSR each, on the CPU")
        sized = entry
        if view:
            # A view's CSR is compacted from the resident graph, never read from pages.
            spec = replace(spec, variants=tuple(v for v in spec.variants if v.name != "pages"))
            sized = replace(entry, weighted=weight is not None)
        extra = dict(view=view, masks=masks, weight=weight)
        if why_cpu:
            decision = choose(replace(spec, variants=(spec.variant("cpu"),)), sized, self.cpu,
                              self.cpu, self.host_budget)
            return self._operator(node, spec, entry, options, subqueries, inputs, decision, None,
                                  shown, *view, *why_cpu, pushed=pushed, **extra)
        decision = choose(spec, sized, self.device, self.cpu, self.host_budget, self.force,
                          self.fleet, options)
        fallback = None
        in_cluster = decision.placement is not None and decision.placement.backend == "mpi"
        if decision.variant.device == "gpu" and not in_cluster:  # all ranks fall back, or none
            try:
                cpu = choose(spec, sized, self.cpu, self.cpu, self.host_budget, self.force)
                fallback = self._operator(node, spec, entry, options, subqueries, inputs, cpu,
                                          None, shown, *view, pushed=pushed, **extra)
            except DeviceOutOfMemory:
                pass
        return self._operator(node, spec, entry, options, subqueries, inputs, decision, fallback,
                              shown, *view, pushed=pushed, **extra)

    def _operator(self, node, spec, entry, options, subqueries, inputs, decision: Decision,
                  fallback: GraphOperator | None, shown: str, *extra: str,
                  pushed: "pushdown.Reduction | pushdown.TopRows | None" = None,
                  view: tuple[str, ...] = (), masks: dict[str, int] | None = None,
                  weight: Any = None) -> GraphOperator:
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
            if variant.name == "pages":  # built from the CSR blocks on first need, said here
                pages = self.snapshot.catalog.page_status(entry)
                if not pages.built:
                    details.append(f"first: {pages.describe()}")
        if tuning is not None:
            details.append(f"tuning: {tuning}")
        details.extend(extra)
        details.extend(delta_details(entry))
        if fallback is not None:
            details.append(f"if the GPU runs out of memory: cpu · {fallback.variant}")
        if node.subgraph is not None:
            shown = shown.replace(entry.name, node.subgraph.text, 1)
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
                             masks=masks or {}, weight=weight, view=bool(view),
                             reduction=pushed if isinstance(pushed, pushdown.Reduction) else None,
                             top=pushed if isinstance(pushed, pushdown.TopRows) else None)

    def plan_PatternMatch(self, node: PatternMatch) -> PatternOperator:
        entry = self.snapshot.get(node.graph)
        hops = "; ".join(
            f"{h.direction} {h.low}" + (f"..{h.high}" if h.high != h.low else "") + " hop"
            + ("s" if h.high > 1 else "") + f" -> {h.target}"
            + _hop_masks(h) for h in node.hops)
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
        quantified = any((h.low, h.high) != (1, 1) for h in node.hops)
        rows = ""
        if node.mode == "walk" and quantified:
            rows = ("paths: one row per walk (SQL/PGQ's default), counted before any is built "
                    "and refused past max_path_rows" + (f"; {node.path} built step by step"
                                                        if node.path else ""))
        elif node.mode == "any":
            rows = (f"paths: at most {node.k} shortest walk{'s' if node.k > 1 else ''} per pair "
                    f"of endpoints, level by level ({node.k} kept per vertex)"
                    if node.k > 1 or node.path else
                    "paths: one row per pair of endpoints (reachability)")
        elif node.mode == "all_shortest":
            rows = ("paths: every shortest walk per pair of endpoints, counted before any is "
                    "built and refused past max_path_rows")
        if node.mode in ("any", "all_shortest") and node.start_ids is not None and any(
                h.ends is not None for h in node.hops):
            rows += "; from both ends where the (start, end) pairs are few"
        if node.count_only:
            rows = ("count(*) only: walks counted per vertex, no row built (max_path_rows does "
                    "not apply)" if countable_by_vertex(node) else
                    "count(*) only: the bindings counted, no path built")
        bound, cycles = {node.start}, []
        for h in node.hops:
            if h.target in bound and node.mode == "walk" and (h.low, h.high) == (1, 1):
                cycles.append(f"back to {h.target}: the edges looked up, the hop before "
                              "found from the shorter of the two neighbour lists "
                              "(intersected)")
            bound.add(h.target)
        return PatternOperator(
            logical=node, inputs=self._inputs(node), entry=entry, budget_bytes=budget,
            device=device, device_limit_bytes=int(self.device.memory_limit),
            host_budget_bytes=int(self.cpu.memory_limit),
            label=f"GRAPH_TABLE {entry.name} {node.text}".rstrip(),
            details=tuple(d for d in (
                f"{device} · frontier expansion from "
                f"{'filtered' if node.start_ids is not None else 'all'} {node.start}; {hops}",
                rows, *cycles,
                f"expansion bounded by {format_bytes(budget)}; {{m,n}} hops: {frontier}",
                f"why: {why}", *delta_details(entry)) if d))

    def plan_GraphTableScan(self, node: GraphTableScan) -> TableScan:
        entry = self.snapshot.get(node.graph)
        details = ()
        if node.sources is not None:
            shown = ", ".join(repr(v) for v in node.sources[:5]) + (
                ", ..." if len(node.sources) > 5 else "")
            lookup = node.table == "vertices" or node.table.startswith("label:")
            details = (f"key lookup: id IN ({shown}) through the id index: only those rows are read",) \
                if lookup else (f"filter pushed into the scan: src IN ({shown}); only those "
                                "vertices' rows of the CSR are read",)
        elif node.table == "vertex_positions":
            details = ("the vertex table with each vertex's position, for a subgraph's mask",)
        elif node.table != "vertices":
            details = ("every edge, built once from the CSR and kept while the graph is "
                       "resident" + (" (with its stored position, for a subgraph's mask)"
                                     if node.table == "edge_positions" else ""),)
        return TableScan(logical=node, entry=entry, label=f"SCAN {entry.name}.{node.table}",
                         details=details)

    # -- the relational part --------------------------------------------------------------------
    def plan_RelationalQuery(self, node: RelationalQuery) -> RelationalOperator:
        names = tuple(name for name, _ in node.inputs)
        if node.direct is not None:  # columns of the input as they are: no engine
            label = "PROJECT " + ", ".join(n for n, _ in node.direct)
            if node.aggregates:
                label = "AGGREGATE " + ", ".join(n for n, _, _ in node.aggregates)
            if node.order:
                label += " ORDER BY " + ", ".join(c + (" DESC" if d else "")
                                                  for c, d in node.order)
            if node.limit is not None:
                label += f" LIMIT {node.limit}"
            if node.offset:
                label += f" OFFSET {node.offset}"
            return RelationalOperator(logical=node, inputs=self._inputs(node), names=names,
                                      label=label)
        return RelationalOperator(logical=node, inputs=self._inputs(node), names=names,
                                  label="DUCKDB", details=())

    def plan_StoredTableScan(self, node: StoredTableScan) -> StoredScan:
        entry = self.snapshot.table(node.table)
        if node.keys is None:
            return StoredScan(logical=node, table=entry,
                              label=f"SCAN {entry.name} ({entry.rows:,} rows)",
                              details=("the stored rows, read in place (kept registered "
                                       "while this version lasts)",))
        shown = ", ".join(repr(k) for k in node.keys[:5]) + (", ..." if len(node.keys) > 5
                                                               else "")
        key = ", ".join(entry.key_columns)
        return StoredScan(logical=node, table=entry, label=f"KEY LOOKUP {entry.name}",
                          details=(f"{key} IN ({shown}) through the key index: only those "
                                   "rows are read",))

    # -- leaves and statements ------------------------------------------------------------------
    def plan_ValuesScan(self, node: ValuesScan) -> PhysicalNode:
        if node.name == "values":  # the rows of an INSERT's VALUES
            return PhysicalNode(logical=node, label=f"VALUES ({node.table.num_rows} rows)",
                                reads_data=False)
        shown = f"TABLE FUNCTION {node.name}()" if node.name.isidentifier() else node.name
        return PhysicalNode(logical=node, reads_data=False,
                            label=f"{shown} ({node.table.num_rows} rows)")

    def plan_ShowGraphs(self, node: ShowGraphs) -> PhysicalNode:
        return self._simple(node, "SHOW GRAPHS")

    def plan_DescribeGraph(self, node: DescribeGraph) -> TableScan:
        entry = self.snapshot.get(node.graph)
        return TableScan(logical=node, entry=entry, label=f"DESCRIBE {entry.name}")


def _hop_masks(hop) -> str:
    """EXPLAIN's note of a pattern hop's masks: those of every step, and its ends (checked
    once after it; a shortest search stops when it has reached them)."""
    steps = [f"{kind} masked" for kind, _ in hop.masks() if kind != "ends"]
    notes = (["every step: " + ", ".join(steps)] if steps else []) + (
        ["ends masked"] if hop.ends is not None else [])
    return f" ({'; '.join(notes)})" if notes else ""
