"""Graph handles over the catalog: the executor's only way to a stored graph's topology.

Every read goes through the catalog's buffer manager (host frames with a byte budget), never to
LMDB directly; what is read is held by the residency owner under the version's key. A graph
changed by writes is its stored base merged with its delta (:mod:`graphdb.executor.delta`).
"""

from __future__ import annotations

from graphdb.catalog import Catalog, GraphEntry

from .delta import open_version
from .graph import Graph, StoredGraph
from .graph_tables import weight_column

__all__ = ["graph_key", "open_graph"]


def graph_key(catalog: Catalog, entry: GraphEntry) -> tuple:
    """The residency key of a graph version: (database, graph id, delta sequence). A version of
    an open write transaction (not committed) carries its transaction's token as well, so
    nothing built from it is taken for a committed version of the same number."""
    pending = entry.delta.get("pending") if entry.changed else None
    version = entry.version if pending is None else f"{entry.version}:{pending}"
    return (str(catalog.path), entry.graph_id, version)


def open_graph(catalog: Catalog, entry: GraphEntry) -> Graph:
    """A lazily read graph handle for a catalog entry: a :class:`StoredGraph` for the stored
    base, merged with the delta of a changed version."""
    base = entry.base
    stored = StoredGraph(
        name=base.name,
        num_vertices=base.num_vertices,
        num_edges=base.num_edges,
        directed=base.directed,
        weighted=base.weighted,
        read=lambda array: catalog.read_array(base, array),
        key=graph_key(catalog, base),
        buffers=catalog.buffers,
        graph_id=base.graph_id,
        ensure_pages=lambda: catalog.ensure_pages(base),
    )
    stored.weight_name = weight_column(base)
    stored.properties = lambda: catalog.edge_properties(base)
    graph = open_version(catalog, entry, stored, graph_key(catalog, entry))
    if graph is not stored:
        graph.weight_name = weight_column(entry)
        graph.properties = graph.edge_properties
    return graph
