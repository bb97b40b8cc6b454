"""Graph handles over the catalog: the executor's only way to a stored graph's topology."""

from __future__ import annotations

from catalog import Catalog, GraphEntry

from .graph import CSR, Graph

__all__ = ["open_graph"]


def _loader(catalog: Catalog, entry: GraphEntry, prefix: str):
    def load() -> CSR:
        weights = catalog.read_array(entry, f"{prefix}_weights") if entry.weighted else None
        return CSR(
            catalog.read_array(entry, f"{prefix}_offsets"),
            catalog.read_array(entry, f"{prefix}_targets"),
            weights,
        )

    return load


def open_graph(catalog: Catalog, entry: GraphEntry) -> Graph:
    """A lazily loaded :class:`Graph` for a committed catalog entry."""
    return Graph(
        name=entry.name,
        num_vertices=entry.num_vertices,
        num_edges=entry.num_edges,
        directed=entry.directed,
        weighted=entry.weighted,
        _load_out=_loader(catalog, entry, "out"),
        _load_in=_loader(catalog, entry, "in") if entry.directed else None,
    )
