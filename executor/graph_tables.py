"""``g.vertices``, ``g.edges`` and ``g.adjacency`` as Arrow tables, built from the stored graph.

- ``g.vertices``: the vertex file as stored (the user's ``id`` and the vertex properties, in
  internal order), memory-mapped: no copy.
- ``g.edges``: every edge once, as loaded: ``src``, ``dst`` (the user's ids), the weight under
  its own column name, the edge properties. A directed graph lists its out-CSR; an undirected
  graph stores each edge both ways and lists it once, from its smaller endpoint to its larger
  (ids ascend with internal ids), so ``count(*)`` is the number of edges SHOW GRAPHS reports.
- ``g.adjacency``: every (src, dst) pair a traversal follows: ``g.edges`` on a directed graph,
  both directions of every edge on an undirected one (a self loop once). Joins that walk
  neighbours (``a.dst = b.src``) want this one on an undirected graph.

A whole table is built once per graph version and held by the residency owner; a scan with a
``src IN (...)`` filter pushed into it (:attr:`~graphdb.executor.plan.GraphTableScan.sources`)
reads only those vertices' rows of the CSR, never building the rest.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from graphdb.catalog import GraphEntry
from graphdb.catalog.catalog import edge_rows as assemble

from .arrays import to_arrow
from .graph import Graph
from .ids import VertexIds

__all__ = ["GRAPH_TABLES", "POSITION_TABLES", "edge_table", "graph_prefix", "position_table",
           "select_edges", "table_name", "weight_column"]

#: The tables of a graph, as ``g.<name>``.
GRAPH_TABLES = ("vertices", "edges", "adjacency")
#: The tables subgraph masks are computed over (see :class:`~graphdb.executor.plan.
#: GraphTableScan`): rows by stored position, with that position as ``__pos``.
POSITION_TABLES = ("edge_positions", "vertex_positions")
#: The column of a position table holding the position.
POSITION = "__pos"
#: The stored edge column of a property graph over tables naming each edge's table row (not a
#: column of ``g.edges``).
HIDDEN = "__row"


def table_name(entry: GraphEntry, table: str) -> str:
    """The name a whole graph table has in the relational engine: unique to the graph version
    (the engine keeps it registered from one statement to the next), its generation and its
    delta version (a write's version of an open transaction carries its token)."""
    version = entry.version
    pending = entry.delta.get("pending") if entry.changed else None
    tag = f"v{version}" + (f"p{pending}" if pending else "")
    return f"{graph_prefix(entry)}{tag}_{table}"


def graph_prefix(entry: GraphEntry) -> str:
    """What the names of every version of a generation's tables start with."""
    return f"__graphdb_{entry.graph_id}_"


def weight_column(entry: GraphEntry) -> str | None:
    """The name of a weighted graph's weight column as loaded (None: unweighted)."""
    if not entry.weighted:
        return None
    return entry.stats.get("weight_column") or "weight"


def select_edges(graph: Graph, which: str, sources: np.ndarray | None
                 ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """(stored positions or None for all, internal src, internal dst) of the rows of ``which``
    (``"edges"`` or ``"adjacency"``), of every vertex or only of ``sources`` (internal ids)."""
    csr = graph.out_csr
    if sources is None:
        positions = None
        src, dst = csr.sources(), csr.targets
    else:
        starts = csr.offsets[sources]
        counts = csr.offsets[sources + 1] - starts
        total = int(counts.sum())
        shift = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
        positions = np.arange(total, dtype=np.int64) + shift
        src = np.repeat(sources, counts)
        dst = csr.targets[positions]
    if which == "edges" and not graph.directed:
        keep = src <= dst
        positions = np.flatnonzero(keep) if positions is None else positions[keep]
        src, dst = src[keep], dst[keep]
    return positions, src, dst


def edge_table(entry: GraphEntry, graph: Graph, ids: VertexIds, which: str,
               properties: pa.Table | None, sources: np.ndarray | None = None) -> pa.Table:
    """``g.edges`` or ``g.adjacency`` (see the module docstring), all of it or the rows of
    ``sources`` (internal ids); ``properties`` are the stored edge properties."""
    positions, src, dst = select_edges(graph, which, sources)
    weights = graph.weights("out") if entry.weighted else None
    if properties is not None and HIDDEN in properties.column_names:
        properties = properties.drop_columns([HIDDEN])  # a property graph's rows' identities
    if positions is not None:
        weights = None if weights is None else weights[positions]
        if properties is not None:
            properties = properties.take(to_arrow(positions, pa.int64()))
    return assemble(entry, ids.user(src), ids.user(dst), weights, properties)


def position_table(entry: GraphEntry, graph: Graph, ids: VertexIds, which: str,
                   properties: pa.Table | None, vertices: pa.Table) -> pa.Table:
    """``edge_positions`` (every stored edge in out-CSR order, an undirected edge's copies with
    the endpoints ``g.edges`` lists it with, so that both copies pass a mask or neither) or
    ``vertex_positions`` (``vertices``, the vertex table), with the position as ``__pos``."""
    if which == "vertex_positions":
        n = vertices.num_rows
        return vertices.append_column(POSITION, to_arrow(np.arange(n, dtype=np.int64)))
    csr = graph.out_csr
    src, dst = csr.sources().astype(np.int64), csr.targets.astype(np.int64)
    if not graph.directed:
        src, dst = np.minimum(src, dst), np.maximum(src, dst)
    weights = graph.weights("out") if entry.weighted else None
    table = assemble(entry, ids.user(src), ids.user(dst), weights, properties)
    return table.append_column(POSITION, to_arrow(np.arange(len(dst), dtype=np.int64)))
