"""Runs a logical plan, leaves first, on Arrow tables.

Graph algorithms run on the chosen device through :mod:`graphdb.executor.algorithms`; pattern matching
through the frontier operator in :mod:`graphdb.executor.pattern`; relational operators on pyarrow
(:mod:`graphdb.executor.relational`). Every operator's time, output rows and metrics are recorded for
``EXPLAIN ANALYZE``. A node reached twice (a CTE used twice) is computed once per run.

:meth:`Runner.cancel` may be called from another thread (Ctrl-C in the shell); the running
query stops at the next operator, frontier level or iteration (:func:`graphdb.executor.cancel.checkpoint`)
with :class:`QueryCancelled`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graphdb.catalog import Catalog, GraphEntry

from . import algorithms, relational
from .arrays import scalar, to_arrow, to_numpy, to_table
from .cancel import cancellable
from .cost import DENSE_FRONTIER_BUDGET, HASH_JOIN_REASON, Choice, choose, choose_for
from .device import Device
from .errors import DeviceOutOfMemory, ExecutionError, InvalidArgument, QueryCancelled
from .graph import Graph
from .pattern import InIndex, edge_columns, in_index, match_pattern
from .plan import (
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
from .stored import open_graph

__all__ = ["Runner", "OperatorStats", "internal_id"]


@dataclass
class OperatorStats:
    operator: str
    seconds: float  # inclusive of the inputs' time
    rows: int
    metrics: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Cached:
    version: str
    graph: Graph
    ids: pa.Array
    tables: dict[str, pa.Table] = field(default_factory=dict)
    inverse: InIndex | None = None


class Runner:
    """Executes plans against one catalog; caches loaded graphs by version."""

    def __init__(self, catalog: Catalog, device_for: Callable[[], Device],
                 host_budget_for: Callable[[], int | None] = lambda: None):
        self.catalog = catalog
        self.device_for = device_for
        #: host memory the streamed operators may keep topology in (None: a share of RAM)
        self.host_budget_for = host_budget_for
        self._graphs: dict[str, _Cached] = {}
        self.stats: dict[int, OperatorStats] = {}  # id(plan node) -> what it did
        self._results: dict[int, pa.Table] = {}
        self._cancel = threading.Event()

    def run(self, plan: PlanNode) -> pa.Table:
        self.stats, self._results = {}, {}
        self._cancel.clear()
        try:
            with cancellable(self._cancel):
                return self._run(plan)
        finally:
            self._results = {}

    def cancel(self) -> None:
        self._cancel.set()

    def check_cancelled(self) -> None:
        if self._cancel.is_set():
            raise QueryCancelled("query cancelled")

    # -- operator choice ------------------------------------------------------------------------
    def choice(self, node: PlanNode) -> Choice:
        """The cost model's choice of device and variant for a graph operator."""
        from .gpu import implementation_for

        device = self.device_for()
        entry = self.catalog.get(node.graph)  # type: ignore[attr-defined]
        if isinstance(node, AlgorithmScan):
            spec = algorithms.get(node.algorithm)
            has_gpu = device.is_gpu and implementation_for(spec.name) is not None
            return choose(spec, entry, device, has_gpu, self.host_budget_for())
        return choose_for("pattern matching", entry, device, False, self.host_budget_for())

    def choices(self, plan: PlanNode) -> dict[int, str]:
        out, stack = {}, [plan]
        while stack:
            node = stack.pop()
            if isinstance(node, AlgorithmScan):
                try:
                    out[id(node)] = self.choice(node).reason
                except DeviceOutOfMemory as exc:  # EXPLAIN shows why the query cannot run
                    out[id(node)] = f"refused: {exc}"
            elif isinstance(node, PatternMatch):
                out[id(node)] = self.choice(node).reason + (
                    "; {m,n} hops: a dense bitmap frontier per start vertex unless starts x "
                    f"vertices x levels exceeds {DENSE_FRONTIER_BUDGET:.0e} (then sorted sparse "
                    "keys), decided when the starts are known")
            elif isinstance(node, Join) and node.left_keys:
                out[id(node)] = HASH_JOIN_REASON
            stack.extend(node.children())
        return out

    def _run(self, node: PlanNode) -> pa.Table:
        key = id(node)
        if key in self._results:
            return self._results[key]
        self.check_cancelled()
        handler = getattr(self, f"_run_{type(node).__name__}")
        start = time.perf_counter()
        metrics: dict[str, Any] = {}
        try:
            table = handler(node, metrics)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            raise ExecutionError(_arrow_error(exc)) from None
        self.stats[key] = OperatorStats(type(node).__name__, time.perf_counter() - start,
                                        table.num_rows, metrics)
        self.check_cancelled()  # inputs are computed on the way down; check on the way up too
        self._results[key] = table
        return table

    # -- graph access ---------------------------------------------------------------------------
    def _cached(self, entry: GraphEntry) -> _Cached:
        cached = self._graphs.get(entry.name)
        if cached is None or cached.version != entry.graph_id:
            graph = open_graph(self.catalog, entry)
            graph.version = entry.graph_id  # type: ignore[attr-defined]
            cached = _Cached(entry.graph_id, graph, self.catalog.vertex_ids(entry))
            self._graphs[entry.name] = cached
        return cached

    def graph(self, entry: GraphEntry) -> tuple[Graph, pa.Array]:
        """The graph handle and user-id column of a catalog entry (cached per version)."""
        cached = self._cached(entry)
        return cached.graph, cached.ids

    def graph_table(self, entry: GraphEntry, which: str) -> pa.Table:
        """``g.vertices`` / ``g.edges`` (cached per graph version)."""
        cached = self._cached(entry)
        if which not in cached.tables:
            reader = self.catalog.vertex_table if which == "vertices" else self.catalog.edge_table
            cached.tables[which] = reader(entry)
        return cached.tables[which]

    def graph_columns(self, graph: str, which: str) -> list[str]:
        entry = self.catalog.get(graph)
        if which == "vertices":
            return list(self.graph_table(entry, which).column_names)
        return list(self.catalog.edge_schema(entry).names)  # names only: no edge table built

    def forget(self, name: str) -> None:
        self._graphs.pop(name, None)

    # -- graph operators ------------------------------------------------------------------------
    def _run_AlgorithmScan(self, node: AlgorithmScan, metrics: dict) -> pa.Table:
        spec = algorithms.get(node.algorithm)
        entry = self.catalog.get(node.graph)
        graph, ids = self.graph(entry)
        options = {}
        for name, value in node.options:
            param = spec.param(name)
            if isinstance(value, PlanNode):  # a scalar subquery argument: run it first
                value = param.coerce(_scalar(self._run(value), f"{spec.name}(): argument "
                                                                f"'{name}'"), spec.name)
            if param is not None and param.kind == "vertex" and value is not None:
                value = internal_id(ids, value, entry, node.algorithm, name)
            options[name] = value
        choice = self._runnable_choice(node)
        try:
            output = self._run_variant(choice, spec.name, graph, options)
        except DeviceOutOfMemory as exc:
            if not choice.device.is_gpu:
                raise
            # The GPU ran out within its budget (transients, another process): the CPU answers,
            # planned against the same budget, as algorithms.run does for resident kernels.
            cpu = Device("cpu", choice.device.memory_limit, "cpu", "the GPU ran out of memory")
            choice = choose_for(spec.name, entry, cpu, False, self.host_budget_for())
            output = self._run_variant(choice, spec.name, graph, options)
            output.metrics["fallback"] = f"GPU out of memory ({exc}); ran on the CPU"
        metrics["variant"] = choice.variant
        metrics.update(output.metrics)
        columns = []
        for column in spec.columns:
            values = output.columns[column.name]
            if column.vertex:
                columns.append(ids.take(to_arrow(values, pa.int64())))
            else:
                columns.append(to_arrow(values, column.type))
        return pa.table(columns, names=[c.name for c in spec.columns])

    @staticmethod
    def _run_variant(choice: Choice, name: str, graph: Graph, options: dict):
        """Run the resident or streamed variant ``choice`` names."""
        from .streaming.planner import implementation_for as streamed_implementation

        streamed = streamed_implementation(choice, name)  # None when resident
        if not choice.device.is_gpu:
            if streamed is None:
                return algorithms.run(name, graph, options, choice.device)
            return streamed(graph, **options)
        from .gpu.runtime import memory_budget, translate_oom

        with memory_budget(choice.device.memory_limit):
            if streamed is None:
                return algorithms.run(name, graph, options, choice.device)
            with translate_oom(f"streamed {name}"):
                return streamed(graph, **options)

    def _runnable_choice(self, node: PlanNode) -> Choice:
        choice = self.choice(node)
        if choice.variant == "refused":
            raise DeviceOutOfMemory(choice.reason)
        return choice

    def _run_PatternMatch(self, node: PatternMatch, metrics: dict) -> pa.Table:
        choice = self._runnable_choice(node)
        metrics["variant"] = choice.variant
        entry = self.catalog.get(node.graph)
        cached = self._cached(entry)
        graph, ids = cached.graph, cached.ids
        if node.start_filter is not None:
            vertices = self.graph_table(entry, "vertices")
            mask = pc.fill_null(_mask(vertices, node.start_filter), False)
            start = np.flatnonzero(to_numpy(mask))
        else:
            start = np.arange(graph.num_vertices, dtype=np.int64)
        metrics["start_vertices"] = int(start.size)

        def inverse() -> InIndex:
            if cached.inverse is None:
                cached.inverse = in_index(graph)
            return cached.inverse

        bound, edges = match_pattern(node, graph, start, inverse, metrics, self.check_cancelled,
                                     choice.device.memory_limit)
        # Bytes of CSR targets the expansion read (the edges it gathered).
        scanned = int(metrics.get("edges_scanned", 0))
        metrics["bytes_moved"] = scanned * graph.out_csr.targets.itemsize
        columns: dict[str, pa.Array] = {}
        vertex_table = None
        for var, prop in node.vertex_properties:
            rows = to_arrow(bound[var], pa.int64())
            if prop == "id":
                columns[f"{var}.{prop}"] = ids.take(rows)
            else:
                vertex_table = vertex_table or self.graph_table(entry, "vertices")
                columns[f"{var}.{prop}"] = vertex_table.column(prop).take(rows)
        by_edge: dict[str, list[str]] = {}
        for var, prop in node.edge_properties:
            by_edge.setdefault(var, []).append(prop)
        for var, props in by_edge.items():
            values = edge_columns(graph, edges[var], props, ids,
                                  lambda: self.graph_table(entry, "edges"))
            columns.update({f"{var}.{p}": v for p, v in values.items()})
        return pa.table(columns)

    # -- leaves ---------------------------------------------------------------------------------
    def _run_GraphTableScan(self, node: GraphTableScan, metrics: dict) -> pa.Table:
        return self.graph_table(self.catalog.get(node.graph), node.table)

    def _run_ValuesScan(self, node: ValuesScan, metrics: dict) -> pa.Table:
        return node.table

    def _run_SingleRow(self, node: SingleRow, metrics: dict) -> pa.Table:
        return pa.table({"__row": to_arrow([0], pa.int8())})

    # -- relational operators -------------------------------------------------------------------
    def _run_Filter(self, node: Filter, metrics: dict) -> pa.Table:
        table = self._run(node.input)
        return table.filter(node.predicate) if table.num_rows else table

    def _run_Project(self, node: Project, metrics: dict) -> pa.Table:
        return relational.project(self._run(node.input), node.names, node.expressions)

    def _run_Rename(self, node: Rename, metrics: dict) -> pa.Table:
        return self._run(node.input).rename_columns(list(node.names))

    def _run_Join(self, node: Join, metrics: dict) -> pa.Table:
        left, right = self._run(node.left), self._run(node.right)
        if node.kind == "single":
            return relational.single_join(left, right)
        return relational.join(left, right, node.kind, node.left_keys, node.right_keys,
                               node.residual, metrics, self.check_cancelled)

    def _run_MarkJoin(self, node: MarkJoin, metrics: dict) -> pa.Table:
        return relational.mark_join(self._run(node.left), self._run(node.right), node.column,
                                    node.output)

    def _run_Aggregate(self, node: Aggregate, metrics: dict) -> pa.Table:
        return relational.aggregate(self._run(node.input), node.keys, node.aggregates)

    def _run_Distinct(self, node: Distinct, metrics: dict) -> pa.Table:
        return relational.distinct(self._run(node.input))

    def _run_UnionAll(self, node: UnionAll, metrics: dict) -> pa.Table:
        return relational.union_all([self._run(i) for i in node.inputs], list(node.names))

    def _run_SetOperation(self, node: SetOperation, metrics: dict) -> pa.Table:
        return relational.set_operation(self._run(node.left), self._run(node.right), node.kind,
                                        node.names)

    def _run_Sort(self, node: Sort, metrics: dict) -> pa.Table:
        return relational.sort(self._run(node.input), node.keys, node.nulls_first)

    def _run_Limit(self, node: Limit, metrics: dict) -> pa.Table:
        if isinstance(node.input, Sort) and node.limit is not None:
            # ORDER BY ... LIMIT k: select the first k rows, then order only those (top-k).
            sort = node.input
            table = self._run(sort.input)
            top = relational.top_k(table, sort.keys, sort.nulls_first, node.offset + node.limit)
            if top is not None:
                metrics["top_k"] = node.offset + node.limit
                return top.slice(node.offset, node.limit)
            return relational.sort(table, sort.keys, sort.nulls_first).slice(node.offset,
                                                                              node.limit)
        return self._run(node.input).slice(node.offset, node.limit)

    # -- catalog statements ---------------------------------------------------------------------
    def _run_ShowGraphs(self, node: ShowGraphs, metrics: dict) -> pa.Table:
        return self.graphs_table()

    def graphs_table(self) -> pa.Table:
        """One row per graph: name, directed, weighted, vertices, edges."""
        entries = sorted(self.catalog.entries(), key=lambda e: e.name)
        return pa.table({
            "name": to_arrow([e.name for e in entries], pa.string()),
            "directed": to_arrow([e.directed for e in entries], pa.bool_()),
            "weighted": to_arrow([e.weighted for e in entries], pa.bool_()),
            "vertices": to_arrow([e.num_vertices for e in entries], pa.int64()),
            "edges": to_arrow([e.input_edges for e in entries], pa.int64()),
        })

    def _run_DescribeGraph(self, node: DescribeGraph, metrics: dict) -> pa.Table:
        e = self.catalog.get(node.graph)
        rows = [
            ("name", e.name), ("directed", str(e.directed).lower()),
            ("weighted", str(e.weighted).lower()), ("vertices", str(e.num_vertices)),
            ("edges", str(e.input_edges)), ("stored_edges", str(e.num_edges)),
            ("vertex_id_type", e.id_type), ("source", e.source),
            ("created", time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e.created))),
            ("vertex_columns", ", ".join(self.graph_columns(e.name, "vertices"))),
            ("edge_columns", ", ".join(self.graph_columns(e.name, "edges"))),
        ] + [(k, str(v)) for k, v in sorted(e.stats.items())]
        return to_table({"property": [r[0] for r in rows], "value": [r[1] for r in rows]})


def _scalar(table: pa.Table, what: str) -> Any:
    """The one value of a one-column subquery result (NULL when it has no row)."""
    if table.num_rows > 1:
        raise InvalidArgument(f"{what}: the subquery returned {table.num_rows} rows; it must "
                              "return at most one (add LIMIT 1 or an aggregate)")
    return table.column(0)[0].as_py() if table.num_rows else None


def _mask(table: pa.Table, predicate: pc.Expression) -> pa.Array:
    """The boolean value of ``predicate`` on every row of ``table``."""
    return relational.project(table, ["m"], [predicate]).column(0).combine_chunks()


def internal_id(ids: pa.Array, value: Any, entry: GraphEntry, algorithm: str, param: str) -> int:
    """Map a user vertex id to the internal id; a clear error when it is not in the graph."""
    if entry.id_type == "string":
        if not isinstance(value, str):
            value = str(value)
        position = pc.index(ids, scalar(value, pa.string())).as_py()
    else:
        if isinstance(value, str):
            try:
                value = int(value)
            except ValueError:
                raise InvalidArgument(
                    f"{algorithm}(): {param} {value!r} is not a vertex of graph '{entry.name}' "
                    "(its vertex ids are integers)") from None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise InvalidArgument(f"{algorithm}(): {param} must be a vertex id, got {value!r}")
        ids_np = to_numpy(ids)
        i = int(np.searchsorted(ids_np, value))  # ids are stored in ascending order
        position = i if i < len(ids_np) and ids_np[i] == value else -1
    if position < 0:
        raise InvalidArgument(
            f"{algorithm}(): {param} {value!r} is not a vertex of graph '{entry.name}'")
    return position


def _arrow_error(exc: Exception) -> str:
    import re

    msg = str(exc).split("\n")[0]
    match = re.search(r"Function '(\w+)' has no kernel matching input types \((.*)\)", msg)
    if match:
        return f"type mismatch: {match.group(1)} cannot take ({match.group(2)})"
    return msg
