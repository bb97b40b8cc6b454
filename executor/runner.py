"""Runs a physical plan, leaves first, on Arrow tables.

The plan says what runs where (:mod:`graphdb.executor.physical`); the runner only executes it:
graph operators through the implementation their decision names (on a GPU inside its memory
budget, taking the planned CPU fallback if the device runs out of memory after all), pattern
matching through :mod:`graphdb.executor.pattern`, the relational part on the connection's DuckDB
(:mod:`graphdb.executor.relational`), which reads the graph operators' results in place. Every
operator's time, output rows and metrics are recorded for ``EXPLAIN ANALYZE``. A node reached
twice (the source list of a LATERAL and the query around it) is computed once, and every
intermediate is released as soon as its last consumer has read it.

:meth:`Runner.cancel` may be called from another thread (Ctrl-C in the shell); the running
query stops at the next operator, frontier level or iteration (:func:`graphdb.executor.cancel.
checkpoint`) with :class:`QueryCancelled`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pyarrow as pa

from graphdb.catalog import Catalog, GraphEntry
from graphdb.storage.lazy import pc

from . import algorithms, results
from .algorithms.common import chosen_weight
from .algorithms.spec import AlgorithmOutput
from .arrays import to_arrow, to_numpy, to_table
from .cancel import cancellable, operator, reporting
from .device import Device, select_device
from .errors import DeviceOutOfMemory, ExecutionError, InvalidArgument, QueryCancelled
from .graph_tables import (
    POSITION_TABLES,
    edge_table,
    graph_prefix,
    position_table,
    table_name,
    weight_column,
)
from .ids import VertexIds
from .paths import DEFAULT_PATH_ROWS
from .pattern import (
    HopMasks,
    count_matches,
    device_arrays,
    edge_columns,
    host_arrays,
    in_index,
    match_pattern,
    path_column,
)
from .physical import (
    GraphOperator,
    PatternOperator,
    PhysicalNode,
    PhysicalPlanner,
    StoredScan,
    TableScan,
)
from .physical.planner import RelationalOperator, internal_set
from .physical.scaling import Fleet
from .plan import (
    GraphTableScan,
    PlanNode,
    RelationalQuery,
    StoredTableScan,
    ValuesScan,
    lateral_column,
)
from .property_graph import (
    PROPERTY_GRAPH,
    PropertySchema,
    describe_rows,
    edge_label_table,
    label_weights,
    user_id_type,
    vertex_label_table,
    vertex_row_ids,
)
from .relational import SQLEngine
from .residency import RESIDENCY
from .snapshot import StatementCatalog
from .stored import graph_key, open_graph
from .subgraph import RUN_TIME, GraphView

__all__ = ["OperatorStats", "Runner"]


@dataclass
class OperatorStats:
    operator: str
    seconds: float  # inclusive of the inputs' time
    rows: int
    metrics: dict[str, Any] = field(default_factory=dict)


class Runner:
    """Plans and executes statements against one catalog."""

    def __init__(self, catalog: Catalog, device_for: Callable[[], Device],
                 host_budget_for: Callable[[], int | None] = lambda: None,
                 force_for: Callable[[], str] = lambda: "auto",
                 fleet_for: Callable[[Device], Fleet | None] = lambda device: None):
        self.catalog = catalog
        self.device_for = device_for
        #: the ranks a statement on ``device`` may partition graph operators over
        self.fleet_for = fleet_for
        #: host memory the streamed operators may keep topology in (None: a share of RAM)
        self.host_budget_for = host_budget_for
        #: the debug_variant setting
        self.force_for = force_for
        self.stats: dict[int, OperatorStats] = {}  # id(physical node) -> what it did
        self._results: dict[int, pa.Table] = {}
        self._remaining: dict[int, int] = {}  # id(node) -> consumers yet to read it
        self._cancel = threading.Event()
        self._cancel_lock = threading.RLock()
        self._statements = 0  # statements running (nested count) on this connection
        #: ``callback(operator, step, total)`` for the progress of running operators, or None
        self.progress: Callable[[str, int, int | None], None] | None = None
        #: the relational engine (this connection's DuckDB)
        self.sql = SQLEngine()
        self.sql.cancelled = self._cancel.is_set
        #: graph name -> the generation whose tables the engine keeps registered
        self._generations: dict[str, str] = {}
        #: profile the relational part (EXPLAIN ANALYZE)
        self.profile = False
        #: the most rows a pattern's quantified hop may make (one per path): max_path_rows
        self.path_rows_for: Callable[[], int] = lambda: DEFAULT_PATH_ROWS
        #: the session's writer (:class:`graphdb.catalog.writer.Writer`), which writes run in
        self.writer_for: Callable[[], Any] = _no_writer

    # -- planning -------------------------------------------------------------------------------
    def snapshot(self) -> StatementCatalog:
        """The catalog as the next statement sees it."""
        return StatementCatalog(self.catalog)

    def plan(self, logical: PlanNode, snapshot: StatementCatalog | None = None) -> PhysicalNode:
        """The physical plan of ``logical`` (on the statement's ``snapshot``)."""
        device = self.device_for()
        cpu = device if not device.is_gpu else select_device("cpu")
        planner = PhysicalPlanner(snapshot or self.snapshot(), device, cpu,
                                  self.host_budget_for(), self.vertex_ids, self.force_for(),
                                  lambda: self.fleet_for(device))
        return planner.plan(logical)

    # -- running --------------------------------------------------------------------------------
    def run(self, plan: PhysicalNode) -> pa.Table:
        self.stats, self._results = {}, {}
        remaining: dict[int, int] = {}
        reads = False
        for node in plan.walk():
            reads = reads or node.reads_data
            for child in node.inputs:
                remaining[id(child)] = remaining.get(id(child), 0) + 1
        self._remaining = remaining
        if not self._statements:  # run on its own (a tool, a test): its own cancellation
            self._cancel.clear()
        # The versions the statement reads stay on disk until it ends, whatever other processes
        # drop or replace (Catalog.snapshot; joins the statement's if it is open); a plan that
        # reads no stored data (an INSERT of VALUES, a DROP GRAPH) takes no lease.
        lease = self.catalog.snapshot() if reads else contextlib.nullcontext()
        try:
            with lease, cancellable(self._cancel), reporting(self.progress):
                return self._run(plan)
        finally:
            self._results, self._remaining = {}, {}

    @contextlib.contextmanager
    def statement(self):
        """One statement of the connection, parsing to commit: :meth:`cancel` reaches it from
        its first moment to its last, at every checkpoint (writes included) and inside DuckDB;
        a cancel while none runs is dropped. Nested uses join the outer statement."""
        with self._cancel_lock:
            outer = self._statements == 0
            if outer:
                self._cancel.clear()
            self._statements += 1
        try:
            if outer:
                with cancellable(self._cancel):
                    yield
            else:
                yield
        finally:
            with self._cancel_lock:
                self._statements -= 1

    def cancel(self) -> None:
        """Cancel the running statement (from any thread); nothing when none runs."""
        with self._cancel_lock:
            if not self._statements:
                return
            self._cancel.set()
        self.sql.interrupt()

    def check_cancelled(self) -> None:
        if self._cancel.is_set():
            raise QueryCancelled("query cancelled")

    def input(self, node: PhysicalNode, index: int = 0) -> pa.Table:
        """Input ``index`` of ``node``, computed once; released after its last consumer."""
        child = node.inputs[index]
        table = self._run(child)
        key = id(child)
        self._remaining[key] = self._remaining.get(key, 0) - 1
        if self._remaining[key] <= 0:
            self._results.pop(key, None)
        return table

    def _run(self, node: PhysicalNode) -> pa.Table:
        key = id(node)
        if key in self._results:
            return self._results[key]
        self.check_cancelled()
        handler = getattr(self, f"_run_{node.kind}", None) or self._run_itself
        start = time.perf_counter()
        metrics: dict[str, Any] = {}
        # a graph's blocks read while its node runs (a GPU upload, pages, a pattern's rows) fail
        # naming the graph (an input's own graph is named by its own node, the innermost)
        entry = getattr(node, "entry", None)
        reading = self.catalog.reading(entry) if entry is not None else contextlib.nullcontext()
        try:
            with operator(*_progress_label(node)), reading:
                table = handler(node, metrics)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            raise ExecutionError(_arrow_error(exc)) from None
        self.stats[key] = OperatorStats(node.label, time.perf_counter() - start, table.num_rows,
                                        metrics)
        self.check_cancelled()  # inputs are computed on the way down; check on the way up too
        if self._remaining.get(key, 0) > 0:
            self._results[key] = table
        return table

    def _run_itself(self, node: PhysicalNode, metrics: dict) -> pa.Table:
        """An operator that runs itself (writes, definitions: :mod:`.writes`)."""
        return node.run(self, metrics)

    # -- graph data -----------------------------------------------------------------------------
    def graph(self, entry: GraphEntry):
        """The graph handle of a catalog entry (its data held by the residency owner)."""
        return open_graph(self.catalog, entry)

    def vertex_ids(self, entry: GraphEntry) -> VertexIds:
        """The user's vertex ids of a graph version, both ways (a property graph's: its labels'
        keys, :mod:`.property_graph`)."""
        schema = PropertySchema.of(entry)
        if schema is not None:
            return RESIDENCY.get(graph_key(self.catalog, entry), "cpu", "ids", lambda: schema.ids(
                self.graph_table(entry, "stored_vertices"), graph=entry.name))
        return RESIDENCY.get(graph_key(self.catalog, entry), "cpu", "ids",
                             lambda: self._version_ids(entry))

    def _version_ids(self, entry: GraphEntry) -> VertexIds:
        """A version read unmerged has the base's ids, then its new vertices' (in id order):
        no view of the version is materialized for them."""
        if entry.changed:
            new = getattr(self.graph(entry), "new_ids", lambda: None)()
            if new is not None:
                base = self.vertex_ids(entry.base)
                if not len(new):
                    return base
                return VertexIds(pa.concat_arrays([base.ids, new.cast(base.ids.type)]),
                                 entry.name, entry.id_type)
        return VertexIds(self.catalog.vertex_ids(entry), entry.name, entry.id_type)

    def graph_table(self, entry: GraphEntry, which: str) -> pa.Table:
        """``g.vertices`` / ``g.edges`` / ``g.adjacency`` of a graph version, whole; of a property
        graph also ``g.<label>`` (``label:<label>``), and its vertex table as stored
        (``stored_vertices``, ids internal)."""
        if which == "adjacency" and entry.directed:
            which = "edges"
        schema = PropertySchema.of(entry)
        if which == "stored_vertices" or (which == "vertices" and schema is None):
            build = lambda: self.catalog.vertex_table(entry)  # noqa: E731
        elif which == "vertices":  # a property graph's: the user's ids, not the internal ones
            build = lambda: self.graph_table(entry, "stored_vertices").set_column(  # noqa: E731
                0, "id", self.vertex_ids(entry).ids)
        elif which.startswith("label:"):
            label = which[len("label:"):]
            if any(v.name == label for v in schema.vertex_labels):  # (an element's name)
                build = lambda: vertex_label_table(  # noqa: E731
                    schema, self.graph_table(entry, "stored_vertices"), label)
            else:
                build = lambda: edge_label_table(  # noqa: E731
                    schema, self.graph(entry), self.graph_table(entry, "stored_vertices"),
                    self.edge_properties(entry), label)
        elif which in POSITION_TABLES:
            build = lambda: position_table(  # noqa: E731
                entry, self.graph(entry), self.vertex_ids(entry), which,
                self.edge_properties(entry), self.graph_table(entry, "vertices"))
        else:
            build = lambda: edge_table(entry, self.graph(entry),  # noqa: E731
                                       self.vertex_ids(entry), which, self.edge_properties(entry))
        return RESIDENCY.get(graph_key(self.catalog, entry), "cpu", f"table:{which}", build)

    def edge_properties(self, entry: GraphEntry) -> pa.Table | None:
        """The stored edge properties of a graph version (memory-mapped), held while it lives."""
        return RESIDENCY.get(graph_key(self.catalog, entry), "cpu", "edge_properties",
                             lambda: self.catalog.edge_properties(entry))

    def forget(self, entry: GraphEntry) -> None:
        """Release everything held for a dropped or replaced graph version."""
        RESIDENCY.forget(graph_key(self.catalog, entry))
        self.sql.forget(table_name(entry, ""))

    def close(self, last: bool) -> None:
        """Release what this runner holds now: its results, and when ``last`` (no other
        connection of this process has the database open) all the process holds of its
        graphs."""
        self._results, self._remaining, self.stats = {}, {}, {}
        self.sql.close()
        if last:
            RESIDENCY.forget_database(str(self.catalog.path))

    # -- graph operators ------------------------------------------------------------------------
    def _run_AlgorithmScan(self, node: GraphOperator, metrics: dict) -> pa.Table:
        spec, entry = node.spec, node.entry
        options = dict(node.options)
        # A subgraph of chosen labels has ids of its own (its labels' keys): vertex arguments
        # are mapped when its view is known, not by the whole graph's ids.
        labelled = _labelled(node)
        for name, index in node.subqueries.items():
            param = spec.param(name)
            if param.kind == "vertices":  # a set: every row of the query's first column
                column = self.input(node, index).column(0)
                options[name] = column if labelled else internal_set(self.vertex_ids(entry),
                                                                     column)
                continue
            value = param.coerce(_scalar(self.input(node, index),
                                         f"{spec.name}(): argument '{name}'"), spec.name)
            if param.kind == "vertex" and value is not None and not labelled:
                value = self.vertex_ids(entry).internal(value, spec.name, name)
            options[name] = value
        if node.logical.lateral:
            return self._run_many(node, options, self.input(node, len(node.inputs) - 1),
                                  metrics)
        if node.subqueries:
            spec.validate(entry, options)
        with self._view(node, options, metrics) as (graph, ids):
            for name, value in list(options.items()):
                kind = spec.param(name).kind
                if value is None:
                    continue
                if kind == "vertex":
                    options[name] = (ids.internal(value, spec.name, name) if labelled else
                                     _in_view(graph, value, ids, self.vertex_ids(entry), spec,
                                              name))
                elif kind == "vertices" and labelled:
                    options[name] = internal_set(ids, value)
                elif kind == "vertices" and isinstance(graph, GraphView):
                    local = graph.local_many(value)
                    options[name] = local[local >= 0]
            output = self._execute(node, graph, options, metrics)

            def device_ids():
                from .operators.results_gpu import user_ids_on_device

                return user_ids_on_device(graph, ids)

            if output.per_vertex is None or not output.per_vertex.on_device:
                return results.finish(node.spec.columns, output, ids, device_ids, metrics,
                                      reduction=node.reduction, top=node.top)
            from .gpu.runtime import translate_oom

            with translate_oom(f"the result of {node.label}"):
                return results.finish(node.spec.columns, output, ids, device_ids, metrics,
                                      reduction=node.reduction, top=node.top)

    @contextlib.contextmanager
    def _view(self, node: GraphOperator, options: dict, metrics: dict):
        """(graph, ids) an operator runs on: the stored graph, or a view of it (another weight
        column, a subgraph; :mod:`.subgraph`) with its own ids when its vertices are a subset.
        A view whose masks came from a query of more than the graph is dropped after the run."""
        entry = node.entry
        graph, ids = self.graph(entry), self.vertex_ids(entry)
        weight = node.weight
        if weight is RUN_TIME:
            weight = chosen_weight(entry, options)
        options.pop("weight", None)
        subgraph = node.logical.subgraph
        schema = PropertySchema.of(entry)
        if not node.view or (weight == weight_column(entry) and not node.masks
                             and not _labelled(node, edges=True)):
            yield graph, ids
            return
        masks, keys = {}, []
        for kind, size in (("edges", entry.num_edges), ("vertices", entry.num_vertices)):
            masks[kind], key = self._mask(node, node.masks.get(kind), size, graph)
            if masks[kind] is not None and _keeps_all(masks[kind]):
                masks[kind], key = None, None  # nothing to compact or renumber
            keys.append(key)
        if subgraph is not None and subgraph.vertex_labels is not None:
            chosen = schema.vertex_mask(subgraph.vertex_labels, entry.num_vertices)
            masks["vertices"] = chosen if masks["vertices"] is None else \
                masks["vertices"] & chosen
            keys.append(("vertex labels", subgraph.vertex_labels))
        if subgraph is not None and subgraph.edge_labels is not None:
            chosen = self._edge_labels(entry, graph, subgraph.edge_labels)
            masks["edges"] = chosen if masks["edges"] is None else masks["edges"] & chosen
            keys.append(("edge labels", subgraph.edge_labels))
        if weight == weight_column(entry) and masks["edges"] is None \
                and masks["vertices"] is None:  # the stored graph itself: no view to build
            metrics.update(view="the stored graph (every edge and vertex kept)")
            yield graph, ids
            return
        values = None
        if weight == weight_column(entry):
            values = lambda: graph.weights("out")  # noqa: E731
        elif weight is not None and schema is not None and "." not in weight:
            labels = subgraph.edge_labels if subgraph is not None and \
                subgraph.edge_labels is not None else tuple(e.name for e in schema.edge_labels)
            values = lambda: graph.derived(  # noqa: E731  (each edge its label's column)
                f"weights:out:{weight.lower()}:{','.join(labels)}", lambda: label_weights(
                    self.edge_properties(entry), schema.edge_columns(labels, weight)))
        elif weight is not None:
            values = lambda: graph.weights_of(weight)  # noqa: E731
        view = GraphView(graph, ("view", weight, *keys), edge_mask=masks["edges"],
                         vertex_mask=masks["vertices"], weight=weight, weight_values=values)
        if subgraph is not None and subgraph.vertex_labels is not None:
            # the labels' keys (typed by the one label's key column), of the vertices kept
            def labelled_ids() -> VertexIds:
                chosen = schema.vertex_mask(subgraph.vertex_labels, entry.num_vertices)
                rank = np.cumsum(chosen) - 1
                return schema.ids(self.graph_table(entry, "stored_vertices"),
                                  subgraph.vertex_labels, entry.name).subset(
                                      rank[view.parent_ids()])

            ids = view.derived("ids", labelled_ids)
        elif masks["vertices"] is not None:
            parent_ids = ids
            ids = view.derived("ids", lambda: parent_ids.subset(view.parent_ids()))
        metrics.update(view_vertices=view.num_vertices)
        try:
            yield view, ids
        finally:
            metrics.update(view_edges=view.num_edges)
            if any(isinstance(k, int) for k in keys):  # masks of this run only
                RESIDENCY.forget(view.key)

    def _edge_labels(self, entry: GraphEntry, graph, labels: tuple[str, ...]) -> np.ndarray:
        """Which stored edges have one of ``labels`` (a property graph's), kept per version."""
        def build() -> np.ndarray:
            column = self.edge_properties(entry).column("label")
            found = pc.is_in(column, value_set=pa.array(list(labels), pa.string()))
            return found.fill_null(False).combine_chunks().to_numpy(zero_copy_only=False)

        return graph.derived(f"mask:edge_labels:{','.join(labels)}", build)

    def _mask(self, node: PhysicalNode, index: int | None, size: int, graph):
        """(bool mask of ``size`` entries, cache key) from the query of the positions kept that
        is input ``index`` of ``node`` (a subgraph's or a pattern hop's), or (None, None). A
        query over the graph's own tables alone is kept per graph version and query text."""
        if index is None:
            return None, None
        query = node.inputs[index].logical

        def build() -> np.ndarray:
            positions = self.input(node, index).column(0)
            if len(positions) == size and positions.null_count == 0:
                # every position once (a query of a position table's rows): all of them kept
                return np.ones(size, dtype=bool)
            mask = np.zeros(size, dtype=bool)
            for chunk in positions.chunks:  # no combined copy; NULL (no position) keeps nothing
                chunk = chunk.drop_null() if chunk.null_count else chunk
                mask[to_numpy(chunk).astype(np.int64, copy=False)] = True
            return mask

        if all(isinstance(n, GraphTableScan) and n.sources is None for _, n in query.inputs):
            return graph.derived(f"mask:{size}:{query.sql}", build), query.sql
        return build(), id(query)

    def _columns(self, node: GraphOperator, output: AlgorithmOutput, ids: VertexIds,
                 lead: dict[str, pa.Array] | None = None) -> pa.Table:
        """The operator's output as Arrow, vertex columns as the user's ids; ``lead`` columns
        first (a multi-source run's arguments)."""
        columns = dict(lead or {})
        for column in node.spec.columns:
            values = output.columns[column.name]
            columns[column.name] = (ids.user(values) if column.vertex
                                    else to_arrow(values, column.type))
        return pa.table(columns)

    def _run_many(self, node: GraphOperator, options: dict, rows: pa.Table,
                  metrics: dict) -> pa.Table:
        """The multi-source form: one run for the distinct argument rows of ``rows`` (NULLs and
        vertices not in the graph, or not in its subgraph, give no rows, as an inner join
        would)."""
        spec, entry, lateral = node.spec, node.entry, node.logical.lateral
        rows = rows.rename_columns([f"c{i}" for i in range(rows.num_columns)]).drop_null()
        if rows.num_rows:
            rows = rows.group_by(rows.column_names, use_threads=False).aggregate([])
        with self._view(node, options, metrics) as (graph, ids):
            values: dict[str, list] = {}
            keep = np.ones(rows.num_rows, dtype=bool)
            for i, name in enumerate(lateral):
                param = spec.param(name)
                column = rows.column(i)
                if param.kind == "vertex":
                    if _labelled(node):  # the subgraph's own ids
                        internal = ids.internal_many(column)
                    else:
                        internal = self.vertex_ids(entry).internal_many(column)
                        if isinstance(graph, GraphView):
                            internal = graph.local_many(internal)
                    keep &= internal >= 0
                    values[name] = internal.tolist()
                else:
                    values[name] = [param.coerce(v, spec.name) for v in column.to_pylist()]
            runs = np.flatnonzero(keep)
            metrics["runs"] = int(runs.size)
            if spec.many is not None and lateral == (spec.many[0],):
                impl = algorithms.many(spec)
                found = np.asarray(values[lateral[0]], dtype=np.int64)[runs]
                output = impl(graph, node.config, **{**options, lateral[0]: found})
                metrics.update(output.metrics)
                internal = output.columns[lateral[0]]
                lead = {lateral_column(lateral[0]): ids.user(internal)}
                return self._columns(node, output, ids, lead)
            tables = []
            for r in runs:
                run = {**options, **{name: values[name][r] for name in lateral}}
                spec.validate(entry, run)
                self.check_cancelled()
                output = self._execute(node, graph, run, {})
                table = self._columns(node, output, ids)
                lead = {lateral_column(name): pa.repeat(rows.column(i)[int(r)], table.num_rows)
                        for i, name in enumerate(lateral)}
                tables.append(pa.table({**lead, **dict(zip(table.column_names,
                                                           table.columns))}))
            if not tables:
                empty = self._columns(node, AlgorithmOutput(
                    {c.name: np.zeros(0, dtype=np.int64) for c in spec.columns}), ids)
                lead = {lateral_column(name): pa.array([], rows.schema.field(i).type)
                        for i, name in enumerate(lateral)}
                return pa.table({**lead, **dict(zip(empty.column_names, empty.columns))})
            return pa.concat_tables(tables)

    def _execute(self, node: GraphOperator, graph, options: dict,
                 metrics: dict) -> AlgorithmOutput:
        """Run the implementation the plan names; on a GPU within its budget, with the residency
        owner's device entries kept inside it, and the planned CPU fallback on exhaustion."""
        impl = algorithms.implementation(node.spec, node.decision.variant)
        metrics.update(device=node.device, variant=node.variant)
        forecast = node.decision.estimate or node.decision.baseline
        if forecast is not None:  # the scaling model's seconds, beside the actual (ANALYZE)
            metrics["predicted_s"] = round(forecast.seconds, 6)
        # Host data (loaded CSRs, page-locked copies) stays within the host's budget.
        RESIDENCY.set_budget("cpu", max(node.decision.host_budget_bytes,
                                        node.decision.budget_bytes if node.device == "cpu" else 0))
        if node.device != "gpu":
            output = impl(graph, node.config, **options)
        else:
            from .gpu.runtime import device_names, memory_budget, translate_oom

            placement = node.decision.placement
            devices = placement.devices if placement is not None and placement.devices else None
            names = device_names(devices)
            for device in names:
                RESIDENCY.set_budget(device, node.decision.budget_bytes)
                RESIDENCY.make_room(device, node.decision.reserved_bytes)
            try:
                budget = memory_budget(node.decision.budget_bytes, devices,
                                       reserve=node.decision.reserved_bytes)
                # the operator's vertex state (every rank's, when partitioned) is counted by
                # the residency owner while it runs: shards built meanwhile make room around it
                with RESIDENCY.reserve(names, node.decision.state_bytes), budget, \
                        translate_oom(node.label):
                    output = impl(graph, node.config, **options)
            except DeviceOutOfMemory as exc:
                if node.fallback is None:
                    raise
                for device in device_names(devices):  # what it holds there may be the cause
                    RESIDENCY.forget(graph.key, device)
                output = self._execute(node.fallback, graph, options, metrics)
                metrics["fallback"] = f"GPU out of memory ({exc}); ran on the CPU"
        metrics.update(output.metrics)
        return output

    def _run_PatternMatch(self, node: PatternOperator, metrics: dict) -> pa.Table:
        logical, entry = node.logical, node.entry
        graph = self.graph(entry)
        ids = self.vertex_ids(entry)
        at = 1 if isinstance(logical.start_ids, PlanNode) else 0
        start = self._pattern_starts(node, graph, ids)
        masks = {}
        for i, hop in enumerate(logical.hops):
            found, keys = {}, {}
            for kind, _ in hop.masks():
                size = entry.num_edges if kind == "edges" else entry.num_vertices
                found[kind], keys[kind] = self._mask(node, at, size, graph)
                at += 1
            if found:  # a mask kept per graph version (a str key) keeps its compacted CSR
                key = keys.get("edges")
                masks[i] = HopMasks(**found, edges_key=key if isinstance(key, str) else None)
        metrics["start_vertices"] = int(start.size)
        if logical.count_only:
            count = self._match(node, graph, start, metrics, masks, count=True)
            metrics["bytes_moved"] = int(metrics.get("edges_scanned", 0)) * \
                graph.id_dtype().itemsize
            return pa.table([to_arrow([count], pa.int64())], names=["count"])
        bound, edges, path = self._match(node, graph, start, metrics, masks)
        # Bytes of CSR targets the expansion read (the edges it gathered).
        scanned = int(metrics.get("edges_scanned", 0))
        metrics["bytes_moved"] = scanned * graph.id_dtype().itemsize
        columns: dict[str, pa.Array] = {}
        vertex_table = None
        stored = {(var, prop): found for var, prop, found in logical.stored if found}
        for var, prop in logical.vertex_properties + logical.edge_properties:
            if (var, prop) in stored:  # a property graph's: in its labels' columns
                table, rows = ((self.graph_table(entry, "stored_vertices"), bound[var])
                               if var in bound else (self.edge_properties(entry), edges[var]))
                columns[f"{var}.{prop}"] = pc.coalesce(*[
                    table.column(c).take(to_arrow(rows, pa.int64())) for c in stored[var, prop]
                ]) if len(stored[var, prop]) > 1 else table.column(stored[var, prop][0]).take(
                    to_arrow(rows, pa.int64()))
        for var, prop in logical.vertex_properties:
            if (var, prop) in stored:
                continue
            if var == logical.path:
                columns[f"{var}.{prop}"] = path_column(
                    graph, path, prop, ids, weight_column(entry),
                    lambda: self.edge_properties(entry),
                    lambda keys: vertex_row_ids(self.catalog, entry, keys))
                continue
            rows = to_arrow(bound[var], pa.int64())
            if prop in ("id", "__vid"):  # (__vid: the graph's id whatever the properties)
                columns[f"{var}.{prop}"] = ids.user(bound[var])
            else:
                vertex_table = vertex_table or self.graph_table(entry, "vertices")
                columns[f"{var}.{prop}"] = vertex_table.column(prop).take(rows)
        by_edge: dict[str, list[str]] = {}
        for var, prop in logical.edge_properties:
            if (var, prop) not in stored:
                by_edge.setdefault(var, []).append(prop)
        for var, props in by_edge.items():
            values = edge_columns(graph, edges[var], props, ids.ids, weight_column(entry),
                                  lambda: self.edge_properties(entry))
            columns.update({f"{var}.{p}": v for p, v in values.items()})
        if logical.outputs is not None:
            return pa.table([columns[c] for _, c in logical.outputs],
                            names=[n for n, _ in logical.outputs])
        return pa.table(columns)

    #: Start sets of at least this many vertices, found by a query over the graph's own tables
    #: alone (a label, a property condition), are kept per graph version and query text, as
    #: masks are: 5 k persons of 15 k vertices cost 24 ms of DuckDB each time. Smaller ones (a
    #: key looked up) are not worth an entry.
    KEPT_STARTS = 256

    def _pattern_starts(self, node: PatternOperator, graph, ids) -> np.ndarray:
        """The internal ids a pattern starts from, ascending and distinct."""
        start_ids = node.logical.start_ids
        if start_ids is None:
            return np.arange(graph.num_vertices, dtype=np.int64)
        if isinstance(start_ids, tuple) and node.logical.start_label is not None:
            entry, label = node.entry, node.logical.start_label
            schema = PropertySchema.of(entry)
            keys = graph.derived(f"pattern:keys:{label}", lambda: schema.ids(
                self.graph_table(entry, "stored_vertices"), (label,), entry.name))
            internal = keys.internal_of(start_ids)
            return np.unique(internal[internal >= 0]) + schema.vertex_label(label).start
        if isinstance(start_ids, tuple):
            internal = ids.internal_of(start_ids)
            return np.unique(internal[internal >= 0])
        own = isinstance(start_ids, RelationalQuery) and all(
            isinstance(n, GraphTableScan) and n.sources is None for _, n in start_ids.inputs)
        name = f"pattern:start:{start_ids.sql}" if own else None
        kept = graph.residency.peek(graph.key, "cpu", name) if own else None
        if kept is not None:
            return kept
        internal = ids.internal_many(self.input(node).column(0))
        start = np.unique(internal[internal >= 0])
        if own and start.size >= self.KEPT_STARTS:
            graph.residency.put(graph.key, "cpu", name, start)
        return start

    def _match(self, node: PatternOperator, graph, start: np.ndarray, metrics: dict,
               masks: dict, count: bool = False):
        """The pattern's bindings (with ``count``, their number): on the GPU the plan names
        (within its budget; the CPU if the device runs out of memory after all), else on the
        host."""
        limit = self.path_rows_for()
        match = count_matches if count else match_pattern
        if node.device == "gpu":
            from .gpu.runtime import cp, device_name, memory_budget, operator_stream, translate_oom

            RESIDENCY.set_budget(device_name(), node.device_limit_bytes)
            try:
                with memory_budget(node.device_limit_bytes, reserve=node.budget_bytes), \
                        translate_oom(node.label), \
                        operator_stream():
                    on_device = {i: HopMasks(*(None if m is None else cp().asarray(m) for m in
                                               (h.edges, h.sources, h.targets, h.ends)),
                                             edges_key=h.edges_key)
                                 for i, h in masks.items()}
                    return match(node.logical, device_arrays(graph), start, metrics,
                                 self.check_cancelled, node.budget_bytes, on_device, limit)
            except DeviceOutOfMemory as exc:
                metrics["fallback"] = f"GPU out of memory ({exc}); ran on the CPU"
        budget = node.host_budget_bytes if node.device == "gpu" else node.budget_bytes
        return match(node.logical, host_arrays(graph, lambda: in_index(graph)), start, metrics,
                     self.check_cancelled, budget, masks, limit)

    # -- leaves ---------------------------------------------------------------------------------
    def _run_GraphTableScan(self, node: TableScan, metrics: dict) -> pa.Table:
        scan, entry = node.logical, node.entry
        if scan.sources is None:
            return self.graph_table(entry, scan.table)
        if scan.table == "vertices" or scan.table.startswith("label:"):
            return self._vertex_lookup(entry, scan, metrics)
        ids = self.vertex_ids(entry)
        internal = ids.internal_of(scan.sources)
        sources = np.unique(internal[internal >= 0])
        metrics["sources"] = int(sources.size)
        return edge_table(entry, self.graph(entry), ids, scan.table, self.edge_properties(entry),
                          sources)

    def _vertex_lookup(self, entry: GraphEntry, scan: GraphTableScan, metrics: dict
                       ) -> pa.Table:
        """The rows of ``g.vertices`` (or of a vertex label's table) with the ids (keys)
        ``scan.sources``, found through the id index."""
        if scan.table == "vertices":
            ids = self.vertex_ids(entry)
        else:
            label = scan.table[len("label:"):]
            schema = PropertySchema.of(entry)
            ids = RESIDENCY.get(graph_key(self.catalog, entry), "cpu", f"ids:{label}",
                                lambda: schema.ids(self.graph_table(entry, "stored_vertices"),
                                                   (label,), entry.name))
        table = self.graph_table(entry, scan.table)
        rows = sorted(set(_lookup(ids, list(scan.sources))))
        metrics["rows_read"] = len(rows)
        if len(rows) == 1:
            return table.slice(rows[0], 1)
        return table.take(to_arrow(np.asarray(rows, dtype=np.int64), pa.int64()))

    def _run_ValuesScan(self, node: PhysicalNode, metrics: dict) -> pa.Table:
        return node.logical.table

    def _run_StoredTableScan(self, node: StoredScan, metrics: dict) -> pa.Table:
        entry, keys = node.table, node.logical.keys
        tables = self.catalog.tables
        if keys is None:
            return tables.view(entry).table
        log = tables.log(entry)
        positions = log.positions(list(keys), entry.version)
        metrics["rows_read"] = int(positions.size)
        view = tables.view(entry)
        if positions.size == 1:
            return view.table.slice(int(positions[0]), 1)
        return view.table.take(to_arrow(np.sort(positions), pa.int64()))

    # -- the relational part --------------------------------------------------------------------
    def _relations(self, node: RelationalOperator, run: bool
                   ) -> tuple[dict[str, pa.Table], dict[str, pa.Table]]:
        """(inputs of this statement, inputs kept registered) of ``node``, each table under its
        name: computed (``run``) or, for EXPLAIN, empty tables of the right schema where
        computing would run a graph operator."""
        inputs: dict[str, pa.Table] = {}
        kept: dict[str, pa.Table] = {}
        for i, (name, child) in enumerate(zip(node.names, node.inputs)):
            logical = child.logical
            whole = (isinstance(logical, GraphTableScan) and logical.sources is None) or (
                isinstance(logical, ValuesScan) and logical.kept) or (
                isinstance(logical, StoredTableScan) and logical.keys is None)
            if whole and isinstance(logical, GraphTableScan):
                self._registering(child.entry)
            elif whole and isinstance(logical, StoredTableScan):
                self._registering_table(name, child.table)
            if run:
                table = self.input(node, i)
            elif isinstance(child, (GraphOperator, PatternOperator)) or \
                    child.output_schema() is not None:
                table = self.empty_result(child)
            else:
                table = self._run(child)
            (kept if whole else inputs)[name] = table
        return inputs, kept

    def _registering(self, entry: GraphEntry) -> None:
        """A graph's whole table is registered in the relational engine: those of its older
        versions (writes since, or an older base generation) are no longer kept there."""
        previous = self._generations.get(entry.name)
        if previous is not None and previous != graph_prefix(entry):
            self.sql.forget(previous)
        self._generations[entry.name] = graph_prefix(entry)
        if entry.changed:
            self.sql.forget(graph_prefix(entry), keep=table_name(entry, ""))

    def _registering_table(self, relation: str, entry) -> None:
        """A stored table's rows are kept registered under ``relation`` (one name per
        generation): an older generation's registration of the table goes."""
        key = "table:" + entry.name.lower()
        previous = self._generations.get(key)
        if previous is not None and previous != relation:
            self.sql.forget(previous)
        self._generations[key] = relation

    def _run_RelationalQuery(self, node: RelationalOperator, metrics: dict) -> pa.Table:
        direct = node.logical.direct
        if direct is not None:
            table = self.input(node)
            if node.logical.order or node.logical.limit is not None or node.logical.offset:
                ordered = _ordered(table, node.logical)
                if ordered is None:  # (a descending float key with a NaN: DuckDB's order)
                    name = node.names[0]
                    return self.sql.run(node.logical.sql, {name: table}, {},
                                        dict(node.logical.shown))[0]
                table = ordered
            if node.logical.aggregates:
                found = _aggregated(table, node.logical.aggregates)
                if found is None:  # (a sum that might not fit 64 bits: DuckDB's exact one)
                    return self.sql.run(node.logical.sql, {node.names[0]: table}, {},
                                        dict(node.logical.shown))[0]
                return found
            counted = getattr(node.inputs[0].logical, "count_only", False)
            if direct[0][1] is None:  # count(*)
                rows = table.column(0)[0].as_py() if counted else table.num_rows
                return pa.table([to_arrow([rows], pa.int64())], names=[direct[0][0]])
            return table.select([c for _, c in direct]).rename_columns([n for n, _ in direct])
        inputs, kept = self._relations(node, run=True)
        table, profile = self.sql.run(node.logical.sql, inputs, kept,
                                      dict(node.logical.shown), profile=self.profile)
        if profile is not None:
            metrics["duckdb_profile"] = profile
        return table

    def sql_plan(self, node: RelationalOperator) -> list[dict]:
        """DuckDB's plan of a relational node, without running any graph operator: the whole
        graph tables as they are, empty results of the right columns for the rest."""
        inputs, kept = self._relations(node, run=False)
        return self.sql.explain(node.logical.sql, inputs, kept, dict(node.logical.shown))

    def relations(self, node: RelationalOperator) -> dict[str, list[str]]:
        """What each input of a relational node is (as the user wrote it) -> its columns."""
        shown = dict(node.logical.shown)
        out = {}
        for name, child in zip(node.names, node.inputs):
            if isinstance(child, StoredScan):
                columns = child.table.schema.names
            elif isinstance(child, TableScan):
                schema = (self.catalog.vertex_schema(child.entry)
                          if child.logical.table == "vertices"
                          else self.catalog.edge_schema(child.entry))
                columns = schema.names
            elif isinstance(child, (GraphOperator, PatternOperator)) or \
                    child.output_schema() is not None:
                columns = self.empty_result(child).column_names
            else:
                columns = child.logical.table.column_names
            out[shown.get(name, name)] = columns
        return out

    def empty_result(self, node: PhysicalNode) -> pa.Table:
        """A table with no rows and the columns ``node`` outputs."""
        logical = node.logical
        schema = node.output_schema()
        if schema is not None:
            return _empty(list(schema))
        if isinstance(node, GraphOperator):
            id_type = pa.string() if user_id_type(node.entry) == "string" else pa.int64()
            fields = [pa.field(c.name, id_type if c.vertex else c.type) for c in node.spec.columns]
            kinds = {"vertex": id_type, "int": pa.int64(), "float": pa.float64(),
                     "bool": pa.bool_(), "str": pa.string()}
            fields[:0] = [pa.field(lateral_column(name), kinds[node.spec.param(name).kind])
                          for name in logical.lateral]
            return _empty(fields)
        if isinstance(node, PatternOperator):
            stored = {(var, prop): found for var, prop, found in logical.stored if found}
            path_types = {"length": pa.int64(), "cost": pa.float64()}

            def kind(schema: pa.Schema, var: str, prop: str) -> pa.DataType:
                # a property graph's property is its labels' stored column; a path's, computed
                name = stored[var, prop][0] if (var, prop) in stored else prop
                if var == logical.path:
                    return path_types.get(prop, pa.null())
                index = schema.get_field_index(name)
                return schema.field(index).type if index >= 0 else pa.null()

            vertices = self.catalog.vertex_schema(node.entry)
            edges = self.catalog.edge_schema(node.entry)
            fields = [pa.field(f"{v}.{p}", kind(vertices, v, p))
                      for v, p in logical.vertex_properties]
            fields += [pa.field(f"{v}.{p}", kind(edges, v, p))
                       for v, p in logical.edge_properties]
            if logical.outputs is not None:  # named as the run names them (COLUMNS' aliases)
                types = {f.name: f.type for f in fields}
                fields = [pa.field(name, types[column]) for name, column in logical.outputs]
            return _empty(fields)
        return self._run(node).slice(0, 0)

    # -- catalog statements ---------------------------------------------------------------------
    def _run_ShowGraphs(self, node: PhysicalNode, metrics: dict) -> pa.Table:
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

    def _run_DescribeGraph(self, node: TableScan, metrics: dict) -> pa.Table:
        e = node.entry
        rows = [
            ("name", e.name), ("directed", str(e.directed).lower()),
            ("weighted", str(e.weighted).lower()), ("vertices", str(e.num_vertices)),
            ("edges", str(e.input_edges)), ("stored_edges", str(e.num_edges)),
            ("vertex_id_type", e.id_type), ("source", e.source),
            ("created", time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e.created))),
            ("vertex_columns", ", ".join(self.catalog.vertex_schema(e).names)),
            ("edge_columns", ", ".join(self.catalog.edge_schema(e).names)),
        ] + [(k, str(v)) for k, v in sorted(e.stats.items()) if k != PROPERTY_GRAPH]
        schema = PropertySchema.of(e)
        if schema is not None:  # the labels' keys are the ids; the tables are the source
            rows = [("vertex_id_type", f"{user_id_type(e)} (the labels' keys"
                     + (": 'Label:key'" if len(schema.vertex_labels) > 1 else "") + ")")
                    if k == "vertex_id_type" else
                    ("source", "tables " + ", ".join(v.table for v in schema.vertex_labels
                                                     + schema.edge_labels))
                    if k == "source" else (k, v) for k, v in rows]
            rows += describe_rows(schema, self.catalog.vertex_schema(e),
                                  self.catalog.edge_schema(e))
        return to_table({"property": [r[0] for r in rows], "value": [r[1] for r in rows]})


def _no_writer():
    raise ExecutionError("this runner has no writer: writes run in a session")


def _empty(fields: list[pa.Field]) -> pa.Table:
    """A table of no rows (``Schema.empty_table`` would import pandas)."""
    return pa.Table.from_batches([], schema=pa.schema(fields))


def _scalar(table: pa.Table, what: str) -> Any:
    """The one value of a one-column subquery result (NULL when it has no row)."""
    if table.num_rows > 1:
        raise InvalidArgument(f"{what}: the subquery returned {table.num_rows} rows; it must "
                              "return at most one (add LIMIT 1 or an aggregate)")
    return table.column(0)[0].as_py() if table.num_rows else None


def _progress_label(node: PhysicalNode) -> tuple[str, int | None]:
    """(name, total steps if known) of an operator in progress reports: an algorithm by its
    name, with its ``max_iterations`` argument as the total."""
    spec = getattr(node, "spec", None)
    if spec is None:
        return node.label or node.kind, None
    total = getattr(node, "options", {}).get("max_iterations")
    return spec.name, total if isinstance(total, int) else None


def _arrow_error(exc: Exception) -> str:
    import re

    msg = str(exc).split("\n")[0]
    match = re.search(r"Function '(\w+)' has no kernel matching input types \((.*)\)", msg)
    if match:
        return f"type mismatch: {match.group(1)} cannot take ({match.group(2)})"
    return msg


def _in_view(graph, vertex: int, ids: VertexIds, parent_ids: VertexIds, spec, param: str) -> int:
    """The view's id of a vertex argument (the graph's internal id); a clear error when the
    subgraph does not have it."""
    local = graph.local(vertex) if isinstance(graph, GraphView) else vertex
    if local < 0:
        user = parent_ids.user([vertex])[0].as_py()
        raise InvalidArgument(f"{spec.name}(): {param} {user!r} is not a vertex of the subgraph "
                              f"(it is in graph '{graph.name}', but not among the vertices "
                              "the subgraph keeps)")
    return local


def _keeps_all(mask: np.ndarray) -> bool:
    """Whether a subgraph's mask keeps every edge (vertex): the view is then the graph itself."""
    return bool(mask.all())


#: Integer sums whose float estimate passes this may not fit int64: DuckDB's exact HUGEINT.
_EXACT_SUM = float(2**62)


def _aggregated(table: pa.Table, calls) -> pa.Table | None:
    """One row of ``calls`` (output name, function, column) over ``table``, typed as DuckDB
    types them (counts BIGINT, an integer sum BIGINT, avg DOUBLE, min/max the column's); None
    where an integer sum might not fit 64 bits."""
    names, values = [], []
    for name, function, column in calls:
        data = table.column(column) if column is not None else None
        kind = data.type if data is not None else None
        numeric = kind is not None and (pa.types.is_integer(kind) or pa.types.is_floating(kind))
        if kind is not None and (pa.types.is_nested(kind) or (
                function in ("sum", "mean") and not numeric) or (
                function in ("min", "max") and pa.types.is_floating(kind)
                and pc.any(pc.is_nan(data)).as_py())):
            return None  # (DuckDB's: nested values, decimals' sums, NaN as the largest)
        if function == "count_all":
            value = pa.scalar(table.num_rows, pa.int64())
        elif function == "count":
            value = pa.scalar(len(data) - data.null_count, pa.int64())
        elif function == "count_distinct":
            value = pa.scalar(pc.count_distinct(data, mode="only_valid").as_py(), pa.int64())
        elif function == "sum" and pa.types.is_integer(data.type):
            estimate = pc.sum(pc.abs(data.cast(pa.float64()))).as_py() or 0.0
            if estimate > _EXACT_SUM:
                return None
            value = pc.sum(data.cast(pa.int64()))
        elif function == "sum":
            value = pc.sum(data.cast(pa.float64()) if pa.types.is_floating(data.type) else data)
        elif function == "mean":
            value = pc.mean(data.cast(pa.float64()))
        else:  # min, max
            value = pc.min_max(data)[function]
        names.append(name)
        values.append(pa.array([value.as_py()], value.type))
    return pa.table(values, names=names)


def _ordered(table: pa.Table, query: RelationalQuery) -> pa.Table | None:
    """``table`` sorted by ``query.order`` (NULLs last), then sliced by its offset and limit;
    None where Arrow's order is not DuckDB's: a descending float key holding a NaN (DuckDB
    sorts NaN above every number, Arrow with the NULLs, last)."""
    for column, descending in query.order:
        values = table.column(column)
        if descending and pa.types.is_floating(values.type) and \
                pc.any(pc.is_nan(values)).as_py():
            return None
    if query.order:
        table = table.take(pc.sort_indices(table, sort_keys=[
            (column, "descending" if descending else "ascending")
            for column, descending in query.order]))
    end = None if query.limit is None else query.offset + query.limit
    return table.slice(query.offset, None if end is None else end - query.offset)


def _lookup(ids: VertexIds, values: list) -> list[int]:
    """Internal ids of a few user ids (those in the graph), without Arrow's per-call costs."""
    if ids.strings or len(values) > 64:
        if not values:
            return []
        found = ids.internal_many(to_arrow(values))
        return found[found >= 0].tolist()
    numbers = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    if ids.identity:
        n = len(ids.ids)
        return [v for v in numbers if 0 <= v < n]
    numeric = ids.numeric
    at = np.searchsorted(numeric, np.asarray(numbers, dtype=np.int64)).tolist()
    return [a for a, v in zip(at, numbers) if a < len(numeric) and numeric[a] == v]


def _labelled(node: GraphOperator, edges: bool = False) -> bool:
    """Whether the operator runs on a subgraph of chosen vertex labels (``edges``: or of chosen
    edge labels)."""
    subgraph = node.logical.subgraph
    return subgraph is not None and (subgraph.vertex_labels is not None
                                     or (edges and subgraph.edge_labels is not None))
