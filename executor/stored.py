"""Graph handles over the catalog: the executor's only way to a stored graph's topology.

Every read goes through the catalog's buffer manager (host frames with a byte budget), never to
LMDB directly: whole CSRs for resident operators, the edges of a vertex range, or slotted pages
for streaming operators.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from graphdb.catalog import Catalog, GraphEntry
from graphdb.storage import BufferManager, ItemKey
from graphdb.storage.pages import pages_of_vertices

from .graph import CSR, Graph

__all__ = ["StoredGraph", "open_graph"]


def _loader(catalog: Catalog, entry: GraphEntry, prefix: str):
    def load() -> CSR:
        weights = catalog.read_array(entry, f"{prefix}_weights") if entry.weighted else None
        return CSR(
            catalog.read_array(entry, f"{prefix}_offsets"),
            catalog.read_array(entry, f"{prefix}_targets"),
            weights,
        )

    return load


@dataclass
class StoredGraph(Graph):
    """A :class:`Graph` whose topology can also be read piecewise through the buffer pool."""

    _buffers: BufferManager | None = field(default=None, repr=False)
    _graph_id: str = field(default="", repr=False)

    def _direction(self, direction: str) -> str:
        return "out" if direction == "in" and not self.directed else direction

    def edge_range(self, start: int, stop: int, direction: str = "out") -> CSR:
        """The edges of vertices ``start..stop-1`` (offsets rebased to 0), read block-wise."""
        d = self._direction(direction)
        read = self._buffers.read_range
        offsets = read(self._graph_id, f"{d}_offsets", start, stop + 1)
        e0, e1 = int(offsets[0]), int(offsets[-1])
        targets = read(self._graph_id, f"{d}_targets", e0, e1)
        weights = read(self._graph_id, f"{d}_weights", e0, e1) if self.weighted else None
        return CSR(offsets - e0, targets, weights)

    def page_table(self, direction: str = "out") -> np.ndarray:
        """First vertex of every page: ``vertex = table[rid_page] + rid_slot``."""
        return self._buffers.read_array(self._graph_id,
                                        f"{self._direction(direction)}_page_first_vertex")

    def page_keys(self, direction: str = "out", pids=None) -> list[ItemKey]:
        return self._buffers.page_keys(self._graph_id, self._direction(direction), pids)

    def pages_of(self, vertices, direction: str = "out") -> np.ndarray:
        """Page ids holding ``vertices`` (a frontier), hubs' whole chains included."""
        return pages_of_vertices(self.page_table(direction), vertices)

    def pages(self, direction: str = "out", pids=None) -> Iterator[tuple[ItemKey, np.ndarray]]:
        """Pinned slotted pages in order, prefetched ahead (decode with storage.decode_page)."""
        return self._buffers.scan(self.page_keys(direction, pids))


def open_graph(catalog: Catalog, entry: GraphEntry) -> Graph:
    """A lazily loaded :class:`StoredGraph` for a committed catalog entry."""
    return StoredGraph(
        name=entry.name,
        num_vertices=entry.num_vertices,
        num_edges=entry.num_edges,
        directed=entry.directed,
        weighted=entry.weighted,
        _load_out=_loader(catalog, entry, "out"),
        _load_in=_loader(catalog, entry, "in") if entry.directed else None,
        _buffers=catalog.buffers,
        _graph_id=entry.graph_id,
    )
