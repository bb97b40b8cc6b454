"""Graph handles over the catalog: the executor's only way to a stored graph's topology.

Every read goes through the catalog's buffer manager (host frames with a byte budget), never to
LMDB directly; what is read is held by the residency owner under the version's key.
"""

from __future__ import annotations

from graphdb.catalog import Catalog, GraphEntry

from .graph import StoredGraph
from .graph_tables import weight_column

__all__ = ["graph_key", "open_graph"]


def graph_key(catalog: Catalog, entry: GraphEntry) -> tuple:
    """The residency key of a stored graph version: (database, graph id, delta sequence)."""
    return (str(catalog.path), entry.graph_id, 0)


def open_graph(catalog: Catalog, entry: GraphEntry) -> StoredGraph:
    """A lazily read :class:`StoredGraph` for a committed catalog entry."""
    graph = StoredGraph(
        name=entry.name,
        num_vertices=entry.num_vertices,
        num_edges=entry.num_edges,
        directed=entry.directed,
        weighted=entry.weighted,
        read=lambda array: catalog.read_array(entry, array),
        key=graph_key(catalog, entry),
        buffers=catalog.buffers,
        graph_id=entry.graph_id,
        ensure_pages=lambda: catalog.ensure_pages(entry),
    )
    graph.weight_name = weight_column(entry)
    graph.properties = lambda: catalog.edge_properties(entry)
    return graph
