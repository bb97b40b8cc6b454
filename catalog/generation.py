"""Base generations written by the catalog itself: an empty graph (CREATE GRAPH g (...)), and
the arrays and files a compaction writes (:mod:`graphdb.catalog.compaction`).

A generation is what an ingest writes: ``vertices.arrow`` (the user's ``id``, then the vertex
properties, in internal order), ``edges.arrow`` when there are edge properties (aligned with
the out-CSR), and the CSR blocks, under a new generated graph id; it becomes visible when the
catalog entry naming it commits.
"""

from __future__ import annotations

import time
import uuid

import numpy as np
import pyarrow as pa

from .cleanup import begin_graph_dir
from .entries import GraphEntry, valid_graph_name
from .errors import CatalogError, GraphExists, GraphNotFound
from .ingest import write_graph

__all__ = ["create_graph", "empty_arrays", "write_arrow"]


def write_arrow(env, graph_id: str, name: str, table: pa.Table) -> None:
    """Write ``table`` as the Arrow file ``name`` of generation ``graph_id``."""
    path = env.graph_dir(graph_id) / name
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def empty_arrays(directed: bool, weighted: bool) -> dict[str, np.ndarray]:
    """The CSR arrays of a graph without vertices."""
    arrays = {}
    for direction in ("out", "in") if directed else ("out",):
        arrays[f"{direction}_offsets"] = np.zeros(1, dtype=np.int64)
        arrays[f"{direction}_targets"] = np.zeros(0, dtype=np.int32)
        if weighted:
            arrays[f"{direction}_weights"] = np.zeros(0, dtype=np.float64)
    return arrays


def create_graph(catalog, name: str, *, directed: bool, weighted: bool, id_type: str,
                 vertex_properties: pa.Schema, edge_properties: pa.Schema,
                 replace: bool = False, stats: dict | None = None, prepare=None) -> GraphEntry:
    """Create graph ``name`` without vertices or edges (writes fill it), with the given
    property columns; ``replace`` replaces an existing graph of that name. ``stats``: more
    of the entry's stats (a property graph's schema); ``prepare()`` runs under the writer
    lock first."""
    if not valid_graph_name(name):
        raise CatalogError(f"invalid graph name '{str(name)[:80]}': use letters, digits and "
                           "underscores, starting with a letter or underscore (at most 255)")
    env = catalog.env
    with env.writer_lock(timeout=catalog.lock_timeout):
        catalog.tidy()
        if prepare is not None:
            prepare()
        try:
            old = catalog.get(name, exact=True)
        except GraphNotFound:
            old = None
        if old is not None and not replace:
            raise GraphExists(name)
        graph_id = uuid.uuid4().hex
        begin_graph_dir(env, graph_id)
        try:
            id_arrow = pa.string() if id_type == "string" else pa.int64()
            vertices = pa.schema([pa.field("id", id_arrow)] + list(vertex_properties))
            write_arrow(env, graph_id, "vertices.arrow",  # (empty_table() imports pandas)
                        pa.Table.from_batches([], schema=vertices))
            if len(edge_properties):
                write_arrow(env, graph_id, "edges.arrow",
                            pa.Table.from_batches([], schema=edge_properties))
            stats = {"max_out_degree": 0, "isolated_vertices": 0, "self_loops": 0,
                     "self_loops_dropped": 0, "duplicates_merged": 0, "csr_bytes": 0,
                     "vertex_properties": ", ".join(f"{f.name} {f.type}"
                                                    for f in vertex_properties),
                     "edge_properties": ", ".join(f"{f.name} {f.type}" for f in edge_properties),
                     **(stats or {})}
            entry = GraphEntry(name=name, graph_id=graph_id, directed=directed,
                               weighted=weighted, num_vertices=0, num_edges=0, input_edges=0,
                               id_type=id_type, created=time.time(), source="CREATE GRAPH",
                               stats=stats)
            return write_graph(env, entry, empty_arrays(directed, weighted), replace_entry=old)
        except BaseException:
            catalog.remove_orphans()
            raise
