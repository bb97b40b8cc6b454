"""Runs a logical plan, leaves first, on Arrow tables.

Graph algorithms run on the chosen device through :mod:`executor.algorithms`; relational
operators run on pyarrow (compute functions and Acero). Every operator's time and output rows
are recorded for ``EXPLAIN ANALYZE``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.acero as acero
import pyarrow.compute as pc

from catalog import Catalog, GraphEntry

from . import algorithms
from .cost import Choice, choose
from .device import Device
from .errors import ExecutionError, InvalidArgument
from .graph import Graph
from .plan import (
    AlgorithmScan,
    DescribeGraph,
    Filter,
    Limit,
    PlanNode,
    Project,
    ShowGraphs,
    SingleRow,
    Sort,
)
from .stored import open_graph

__all__ = ["Runner", "OperatorStats"]

#: pyarrow >= 25 places nulls per sort key (the global option is deprecated there).
_PER_KEY_NULLS = int(pa.__version__.split(".")[0]) >= 25


@dataclass
class OperatorStats:
    operator: str
    seconds: float
    rows: int
    metrics: dict[str, Any] = field(default_factory=dict)


class Runner:
    """Executes plans against one catalog; caches loaded graphs by version."""

    def __init__(self, catalog: Catalog, device_for: Callable[[], Device]):
        self.catalog = catalog
        self.device_for = device_for
        self._graphs: dict[str, tuple[Graph, pa.Array]] = {}
        self.stats: dict[int, OperatorStats] = {}  # id(plan node) -> what it did

    def run(self, plan: PlanNode) -> pa.Table:
        self.stats = {}
        return self._run(plan)

    def choice(self, node: AlgorithmScan) -> Choice:
        """The cost model's choice of device and variant for an algorithm node."""
        from .gpu import implementation_for

        spec = algorithms.get(node.algorithm)
        device = self.device_for()
        has_gpu = device.is_gpu and implementation_for(spec.name) is not None
        return choose(spec, self.catalog.get(node.graph), device, has_gpu)

    def choices(self, plan: PlanNode) -> dict[int, str]:
        out = {}
        stack = [plan]
        while stack:
            node = stack.pop()
            if isinstance(node, AlgorithmScan):
                out[id(node)] = self.choice(node).reason
            stack.extend(node.children())
        return out

    def _run(self, node: PlanNode) -> pa.Table:
        handler = getattr(self, f"_run_{type(node).__name__}")
        start = time.perf_counter()
        metrics: dict[str, Any] = {}
        try:
            table = handler(node, metrics)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            raise ExecutionError(_arrow_error(exc)) from None
        self.stats[id(node)] = OperatorStats(type(node).__name__, time.perf_counter() - start,
                                             table.num_rows, metrics)
        return table

    # -- graph access ---------------------------------------------------------------------------
    def graph(self, entry: GraphEntry) -> tuple[Graph, pa.Array]:
        """The graph handle and user-id column of a catalog entry (cached per version)."""
        cached = self._graphs.get(entry.name)
        if cached is None or cached[0].version != entry.graph_id:
            graph = open_graph(self.catalog, entry)
            graph.version = entry.graph_id  # type: ignore[attr-defined]
            cached = (graph, self.catalog.vertex_ids(entry))
            self._graphs[entry.name] = cached
        return cached

    def forget(self, name: str) -> None:
        self._graphs.pop(name, None)

    # -- operators ------------------------------------------------------------------------------
    def _run_AlgorithmScan(self, node: AlgorithmScan, metrics: dict) -> pa.Table:
        spec = algorithms.get(node.algorithm)
        entry = self.catalog.get(node.graph)
        graph, ids = self.graph(entry)
        options = {}
        for name, value in node.options:
            param = spec.param(name)
            if param is not None and param.kind == "vertex":
                value = internal_id(ids, value, entry, node.algorithm, name)
            options[name] = value
        choice = self.choice(node)
        metrics["variant"] = choice.variant
        output = algorithms.run(spec.name, graph, options, choice.device)
        metrics.update(output.metrics)
        columns = []
        for column in spec.columns:
            values = output.columns[column.name]
            if column.vertex:
                columns.append(ids.take(pa.array(values, type=pa.int64())))
            else:
                columns.append(pa.array(values, type=column.type))
        return pa.table(columns, names=[c.name for c in spec.columns])

    def _run_SingleRow(self, node: SingleRow, metrics: dict) -> pa.Table:
        return pa.table({"__row": pa.array([0], pa.int8())})

    def _run_Filter(self, node: Filter, metrics: dict) -> pa.Table:
        return self._run(node.input).filter(node.predicate)

    def _run_Project(self, node: Project, metrics: dict) -> pa.Table:
        table = self._run(node.input)
        if all(isinstance(e, pc.Expression) and _field_name(e) in table.column_names
               for e in node.expressions):
            # Pure column selection/renaming: no compute needed.
            cols = [table.column(_field_name(e)) for e in node.expressions]
            return pa.table(cols, names=list(node.names))
        decl = acero.Declaration.from_sequence([
            acero.Declaration("table_source", acero.TableSourceNodeOptions(table)),
            acero.Declaration("project", acero.ProjectNodeOptions(list(node.expressions),
                                                                  list(node.names))),
        ])
        return decl.to_table(use_threads=False)

    def _run_Sort(self, node: Sort, metrics: dict) -> pa.Table:
        table = self._run(node.input)
        if not table.num_rows:
            return table
        firsts = node.nulls_first or (False,) * len(node.keys)
        if _PER_KEY_NULLS:
            keys = [(c, d, "at_start" if f else "at_end") for (c, d), f in zip(node.keys, firsts)]
            indices = pc.sort_indices(table, sort_keys=keys)
        else:
            placement = "at_start" if firsts[0] else "at_end"
            indices = pc.sort_indices(table, sort_keys=list(node.keys), null_placement=placement)
        return table.take(indices)

    def _run_Limit(self, node: Limit, metrics: dict) -> pa.Table:
        table = self._run(node.input)
        return table.slice(node.offset, node.limit)

    def _run_ShowGraphs(self, node: ShowGraphs, metrics: dict) -> pa.Table:
        entries = sorted(self.catalog.entries(), key=lambda e: e.name)
        return pa.table({
            "name": pa.array([e.name for e in entries], pa.string()),
            "directed": pa.array([e.directed for e in entries], pa.bool_()),
            "weighted": pa.array([e.weighted for e in entries], pa.bool_()),
            "vertices": pa.array([e.num_vertices for e in entries], pa.int64()),
            "edges": pa.array([e.input_edges for e in entries], pa.int64()),
        })

    def _run_DescribeGraph(self, node: DescribeGraph, metrics: dict) -> pa.Table:
        e = self.catalog.get(node.graph)
        rows = [
            ("name", e.name), ("directed", str(e.directed).lower()),
            ("weighted", str(e.weighted).lower()), ("vertices", str(e.num_vertices)),
            ("edges", str(e.input_edges)), ("stored_edges", str(e.num_edges)),
            ("vertex_id_type", e.id_type), ("source", e.source),
            ("created", time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e.created))),
        ] + [(k, str(v)) for k, v in sorted(e.stats.items())]
        return pa.table({"property": [r[0] for r in rows], "value": [r[1] for r in rows]})


def internal_id(ids: pa.Array, value: Any, entry: GraphEntry, algorithm: str, param: str) -> int:
    """Map a user vertex id to the internal id; a clear error when it is not in the graph."""
    if entry.id_type == "string":
        if not isinstance(value, str):
            value = str(value)
        position = pc.index(ids, pa.scalar(value, pa.string())).as_py()
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
        ids_np = ids.to_numpy(zero_copy_only=False)
        i = int(np.searchsorted(ids_np, value))  # ids are stored in ascending order
        position = i if i < len(ids_np) and ids_np[i] == value else -1
    if position < 0:
        raise InvalidArgument(
            f"{algorithm}(): {param} {value!r} is not a vertex of graph '{entry.name}'")
    return position


def _field_name(expr: pc.Expression) -> str | None:
    text = str(expr)
    # pyarrow prints a bare field reference as its name; anything else has parentheses/operators.
    return text if text.isidentifier() else None


def _arrow_error(exc: Exception) -> str:
    msg = str(exc).split("\n")[0]
    import re

    match = re.search(r"Function '(\w+)' has no kernel matching input types \((.*)\)", msg)
    if match:
        return f"type mismatch: {match.group(1)} cannot take ({match.group(2)})"
    return msg
