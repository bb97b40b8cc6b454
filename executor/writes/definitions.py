"""CREATE GRAPH (an empty graph), DROP GRAPH and loads (the bulk ingest of files, or of the rows
of plan nodes written to temporary Arrow files first). Each returns one row: ``status``, the
line the statement reports, and for a load the ingest's summary."""

from __future__ import annotations

import dataclasses
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from graphdb.catalog import CatalogError, CorruptGraph, GraphEntry, GraphNotFound

from ..arrays import to_arrow, to_table
from ..cancel import CancellableProgress
from ..physical.nodes import PhysicalNode
from ..plan import PlanNode
from .files import write_arrow_file

if TYPE_CHECKING:
    from ..runner import Runner

__all__ = ["CreateGraphOperator", "DropGraphOperator", "LoadGraphOperator", "load",
           "status_table", "summary_table"]


def status_table(line: str) -> pa.Table:
    """The one row of a definition: its status line."""
    return to_table({"status": [line]})


def _existing(runner: "Runner", name: str) -> GraphEntry | None:
    try:
        return runner.catalog.get(name, exact=True)
    except GraphNotFound:
        return None


@dataclass(eq=False, kw_only=True)
class CreateGraphOperator(PhysicalNode):
    """Runs :class:`graphdb.executor.plan.CreateGraph`."""

    reads_data: bool = False

    def run(self, runner: "Runner", metrics: dict) -> pa.Table:
        from graphdb.catalog.generation import create_graph

        node = self.logical
        old = _existing(runner, node.graph)
        if old is not None and not node.replace:
            if node.if_not_exists:
                return status_table(f"graph '{node.graph}' exists; nothing created")
            raise CatalogError(f"graph '{node.graph}' already exists: CREATE OR REPLACE GRAPH "
                               f"{node.graph} (...), or DROP GRAPH {node.graph} first")
        entry = create_graph(runner.catalog, node.graph, directed=node.directed,
                             weighted=node.weighted, id_type=node.id_type,
                             vertex_properties=node.vertex_properties,
                             edge_properties=node.edge_properties, replace=node.replace)
        if old is not None:
            runner.forget(old)
        return status_table(f"created graph '{entry.name}'")


@dataclass(eq=False, kw_only=True)
class DropGraphOperator(PhysicalNode):
    """Runs :class:`graphdb.executor.plan.DropGraph`: the version's data is freed once no
    statement reads it (:mod:`graphdb.catalog.leases`)."""

    reads_data: bool = False

    def run(self, runner: "Runner", metrics: dict) -> pa.Table:
        node = self.logical
        catalog = runner.catalog
        try:
            try:  # what this process holds of the version goes with it
                old = catalog.get(node.graph)
            except CorruptGraph:
                old = None  # a damaged entry can be dropped; nothing of it was loaded
            name = catalog.drop(node.graph)
        except GraphNotFound:
            if node.if_exists:
                return status_table(f"graph '{node.graph}' does not exist; nothing dropped")
            raise
        if old is not None:
            runner.forget(old)
        return status_table(f"dropped graph '{name}'")


def summary_table(entry: GraphEntry, seconds: float) -> pa.Table:
    """What a load reports: |V|, |E| read and stored, what was dropped, bytes, seconds (built
    without pyarrow's pandas probe: a small ingest imports no pandas)."""
    stats = entry.stats
    row = {
        "graph": entry.name, "vertices": entry.num_vertices,
        "edges": entry.input_edges, "stored_edges": entry.num_edges, "directed": entry.directed,
        "weighted": entry.weighted, "self_loops_dropped": stats.get("self_loops_dropped", 0),
        "duplicates_merged": stats.get("duplicates_merged", 0),
        **{f"weights_{k}": stats.get(f"weights_{k}", 0) for k in ("nan", "infinite",
                                                                  "negative")},
        "bytes_stored": stats.get("bytes_stored", 0), "seconds": float(seconds),
    }
    columns = {"status": pa.nulls(1, pa.string())}
    for name, value in row.items():
        columns[name] = to_arrow(np.array([value]) if not isinstance(value, str) else [value])
    return pa.table(columns)


def load(runner: "Runner", graph: str, edges: str, vertices: str | None, options, *,
         replace: bool, progress, prepare=None) -> pa.Table:
    """Ingest files as graph ``graph``; the summary (:func:`summary_table`). ``prepare()`` runs
    under the writer lock before the load (a property graph checks its tables unchanged)."""
    start = time.perf_counter()
    old = _existing(runner, graph)
    options = dataclasses.replace(options, vertices=vertices)
    entry = runner.catalog.ingest(graph, edges, options, replace=replace,
                                  progress=CancellableProgress(progress), prepare=prepare)
    if old is not None:
        runner.forget(old)
    return summary_table(entry, time.perf_counter() - start)


@dataclass(eq=False, kw_only=True)
class LoadGraphOperator(PhysicalNode):
    """Runs :class:`graphdb.executor.plan.LoadGraph`: rows from plan nodes are written to
    temporary Arrow files first."""

    reads_data: bool = False

    def run(self, runner: "Runner", metrics: dict) -> pa.Table:
        node = self.logical
        options = node.options
        if not any(isinstance(v, PlanNode) for v in (node.edges, node.vertices)):
            return load(runner, node.graph, node.edges, node.vertices, options,
                        replace=node.replace, progress=node.progress)
        with tempfile.TemporaryDirectory(prefix="graphdb-load-",
                                         dir=options.temp_dir) as tmp:
            paths = []
            for i, (role, value) in enumerate((("edges", node.edges),
                                               ("vertices", node.vertices))):
                if isinstance(value, PlanNode):
                    path = Path(tmp) / f"{role}.arrow"
                    write_arrow_file(runner.input(self, len(paths)), path)
                    paths.append(path)
                    value = str(path)
                    options = dataclasses.replace(options, **{
                        "format" if role == "edges" else "vertex_format": "arrow"})
                if i == 0:
                    edges = value
                else:
                    vertices = value
            return load(runner, node.graph, edges, vertices, options, replace=node.replace,
                        progress=node.progress)
