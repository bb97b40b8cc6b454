"""Graphs chosen at query time: another weight column, no weights, a subgraph.

A graph operator runs on a stored graph as it was loaded, or on a **view** of it
(:class:`GraphView`): the same vertices and edges with another numeric edge column as the
weights (``weight => 'interactions'``), with none (``weight => NULL``: hop counts), and/or a
subgraph given by masks over the stored edges and vertices (``bfs(GRAPH g WHERE e.year = 2020,
1)``). Nothing is re-ingested: the view's CSR is derived from the parent's by a compaction
that keeps the edges whose mask is set (and, with a vertex mask, the kept vertices renumbered
densely, in their order, so ids still ascend with the user's), written once for numpy and CuPy
(:func:`compact`). On a GPU the compaction runs on the device from the parent's resident CSR:
only the masks (a byte per edge and per vertex) cross the bus, never the graph. Every operator
and variant then runs unchanged on the view, which the residency owner holds under a key of its
own (the parent's key plus the view's fingerprint, so dropping the graph drops its views).
Masks that keep every edge and vertex make no view: the runner drops them, and with the
graph's own weights the operator runs on the stored graph itself.

Semantics:

- an edge mask removes edges and keeps every vertex (networkx: ``G.copy()`` less those edges);
- a vertex mask keeps those vertices and the edges between two kept vertices (networkx:
  ``G.subgraph(nodes)``), renumbered; PageRank then counts only the kept vertices;
- both together: the edges that pass the edge mask between kept vertices;
- an undirected graph's two stored copies of an edge carry the same properties, and a mask over
  them is evaluated on the edge as ``g.edges`` lists it (see :mod:`.masks`), so a view of an
  undirected graph stays undirected.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .graph import Graph

__all__ = ["RUN_TIME", "Compacted", "GraphView", "compact", "owners"]


class _RunTime:
    def __repr__(self) -> str:
        return "(decided at run time)"


#: An operator's weight column when a subquery names it (known when the statement runs).
RUN_TIME: Any = _RunTime()


def owners(xp, offsets, total: int):
    """The row of each of ``total`` CSR slots (numpy's repeat; a search on CuPy, whose repeat
    takes no array of counts)."""
    counts = offsets[1:] - offsets[:-1]
    if xp is np:
        return np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    return xp.searchsorted(offsets[1:], xp.arange(total, dtype=np.int64), side="right")


@dataclass
class Compacted:
    """A direction of a view: offsets, targets (the parent's id dtype), and ``kept``, the
    positions in the parent's arrays of the edges kept (to gather weights with)."""

    offsets: Any
    targets: Any
    kept: Any


def compact(xp, offsets, targets, keep_edge=None, keep_vertex=None, new_id=None) -> Compacted:
    """The rows of a CSR (``offsets``, ``targets``) restricted to the edges with ``keep_edge``
    set (None: all) between vertices with ``keep_vertex`` set (None: all), the kept vertices
    renumbered by ``new_id`` (their rank among the kept). ``xp`` is numpy or CuPy; so are the
    arrays.

    The kept slots are listed once (``flatnonzero``) and each row's new start is the number of
    kept slots before its old start, a search of the |V| + 1 offsets in that sorted list: no
    prefix sum over the |E| slots (which, measured on 1 M edges, was most of a compaction)."""
    m = int(targets.size)
    offsets = offsets.astype(np.int64, copy=False)
    keep = xp.ones(m, dtype=bool) if keep_edge is None else keep_edge.astype(bool, copy=True)
    if keep_vertex is not None:
        keep &= keep_vertex[targets]
        keep &= _row_flags(xp, offsets, keep_vertex, m)
    kept = xp.flatnonzero(keep)
    starts = xp.searchsorted(kept, offsets).astype(np.int64, copy=False)
    if keep_vertex is None:
        new_offsets = starts
    else:
        counts = (starts[1:] - starts[:-1])[keep_vertex]
        new_offsets = xp.zeros(int(counts.size) + 1, dtype=np.int64)
        xp.cumsum(counts, out=new_offsets[1:])
    new_targets = targets[kept]
    if new_id is not None:
        new_targets = new_id[new_targets].astype(targets.dtype)
    return Compacted(new_offsets, new_targets, kept)


def _row_flags(xp, offsets, flags, total: int):
    """``flags`` of each CSR slot's row: numpy repeats them; CuPy, whose repeat takes no array
    of counts, gathers them by the slots' rows (:func:`owners`)."""
    if xp is np:
        return np.repeat(flags, offsets[1:] - offsets[:-1])
    return flags[owners(xp, offsets, total)]


class GraphView(Graph):
    """A view of ``parent`` (see the module docstring): ``edge_mask`` (bool per stored edge, in
    out-CSR order) and ``vertex_mask`` (bool per vertex) or None for all; ``weight`` the name of
    the edge column the weights come from (None: unweighted) and ``weight_values()`` its values
    aligned with the parent's out-CSR; ``fingerprint`` identifies the view within the parent
    version (the residency key is the parent's plus it)."""

    def __init__(self, parent: Graph, fingerprint: Hashable, *,
                 edge_mask: np.ndarray | None = None, vertex_mask: np.ndarray | None = None,
                 weight: str | None = None,
                 weight_values: Callable[[], np.ndarray] | None = None,
                 in_index: Callable[[], Any] | None = None):
        self.parent = parent
        self.edge_mask = None if edge_mask is None else np.asarray(edge_mask, dtype=bool)
        self.vertex_mask = None if vertex_mask is None else np.asarray(vertex_mask, dtype=bool)
        self.weight_values = weight_values
        if in_index is None:
            from .pattern import in_index_on

            in_index = lambda xp: in_index_on(parent, xp)  # noqa: E731
        self._in_index = in_index
        key = parent.key + (fingerprint,) if isinstance(parent.key, tuple) else (
            parent.key, fingerprint)
        n = parent.num_vertices if self.vertex_mask is None else int(self.vertex_mask.sum())
        super().__init__(parent.name, n, 0, parent.directed, weight is not None,
                         read=self._read_view, key=key, residency=parent.residency)
        self._num_edges: int | None = None
        self.weight_name = weight
        self.properties = None

    # -- sizes ------------------------------------------------------------------------------------
    @property
    def num_edges(self) -> int:
        if self._num_edges is None:
            self._num_edges = int(self._host("out").targets.size)
        return self._num_edges

    @num_edges.setter
    def num_edges(self, value: int) -> None:  # Graph.__init__ sets it; the view counts its own
        pass

    def id_dtype(self) -> np.dtype:
        return self.parent.id_dtype()

    # -- ids ----------------------------------------------------------------------------------
    def new_ids(self) -> np.ndarray | None:
        """Each parent vertex's id in the view (-1: not in it), or None when they coincide."""
        if self.vertex_mask is None:
            return None

        def build() -> np.ndarray:
            out = np.full(self.vertex_mask.size, -1, dtype=np.int64)
            out[self.vertex_mask] = np.arange(self.num_vertices, dtype=np.int64)
            return out

        return self.derived("view:new_ids", build)

    def parent_ids(self) -> np.ndarray | None:
        """The parent's id of each of the view's vertices, or None when they coincide."""
        if self.vertex_mask is None:
            return None
        return self.derived("view:parent_ids", lambda: np.flatnonzero(self.vertex_mask))

    def local(self, parent_vertex: int) -> int:
        """The view's id of the parent's vertex (-1: the view does not have it)."""
        new = self.new_ids()
        return int(parent_vertex) if new is None else int(new[int(parent_vertex)])

    def local_many(self, parent_vertices: np.ndarray) -> np.ndarray:
        parent_vertices = np.asarray(parent_vertices, dtype=np.int64)
        new = self.new_ids()
        if new is None:
            return parent_vertices
        out = np.full(parent_vertices.size, -1, dtype=np.int64)
        inside = parent_vertices >= 0
        out[inside] = new[parent_vertices[inside]]
        return out

    # -- the arrays ---------------------------------------------------------------------------
    def _source(self, xp, direction: str):
        """(offsets, targets, positions or None) of the parent's ``direction`` in ``xp``: the
        out-CSR, or the in-edges with the out-CSR position of each (None: positions are the
        slots themselves)."""
        if direction == "out":
            if xp is np:
                csr = self.parent.csr("out")
            else:
                from .gpu import runtime as rt

                csr = rt.device_csr(self.parent, "out")
            return csr.offsets, csr.targets, None
        index = self._in_index(xp)
        return index.offsets, index.sources, index.positions

    def _compact(self, xp, direction: str, masks) -> Compacted:
        offsets, targets, positions = self._source(xp, direction)
        keep_edge, keep_vertex, new_id = masks
        if keep_edge is not None and positions is not None:
            keep_edge = keep_edge[positions]
        out = compact(xp, offsets, targets, keep_edge, keep_vertex, new_id)
        if positions is not None:
            out.kept = positions[out.kept]
        if direction == "out" and self._num_edges is None:
            self._num_edges = int(out.targets.size)
        return out

    def _host(self, direction: str) -> Compacted:
        d = self.stored_direction(direction)
        new = self.new_ids()
        return self.derived(f"view:{d}", lambda: self._compact(
            np, d, (self.edge_mask, self.vertex_mask, new)))

    def _read_view(self, name: str) -> np.ndarray:
        d, kind = name.split("_", 1)
        part = self._host(d)
        if kind == "offsets":
            return part.offsets
        if kind == "targets":
            return part.targets
        if kind == "weights" and self.weight_values is not None:
            return np.ascontiguousarray(self.weight_values()[part.kept], dtype=np.float64)
        raise KeyError(name)

    def device_csr(self, direction: str = "out", *, weights: bool = False):
        """The view's CSR on the current GPU, compacted there from the parent's resident CSR
        (what :func:`graphdb.executor.gpu.runtime.device_csr` returns for a view)."""
        from .gpu import runtime as rt

        cp = rt.cp()
        device = rt.device_name()
        d = self.stored_direction(direction)

        def upload(name: str, array: np.ndarray | None):
            if array is None:
                return None
            return self.derived(f"device:view:{name}", lambda: cp.asarray(array), device=device)

        def build() -> Compacted:
            masks = (upload("edge_mask", self.edge_mask), upload("vertex_mask", self.vertex_mask),
                     upload("new_ids", self.new_ids()))
            with rt.translate_oom(f"the subgraph of graph '{self.name}'"):
                return self._compact(cp, d, masks)

        part = self.derived(f"device:view:{d}", build, device=device)
        csr = rt.DeviceCSR(part.offsets, part.targets)
        if weights and self.weighted:
            def gather():
                values = self.parent.derived(
                    f"device:weights:{self.weight_name.lower()}",
                    lambda: cp.asarray(self.weight_values(), dtype=np.float64), device=device)
                return values[part.kept]

            csr.weights = self.derived(f"device:view:{d}_weights", gather, device=device)
        return csr
