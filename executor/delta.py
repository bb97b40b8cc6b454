"""Graph versions changed by writes, as operators see them: the base and the delta.

A committed write makes a new version of a graph: its stored base generation (immutable) plus
delta records (:mod:`graphdb.catalog.delta`). :func:`open_version` gives operators a
:class:`DeltaGraph`, a :class:`~graphdb.executor.graph.Graph` of that version. What it reads is
held by the residency owner: the base's arrays under the *base's* key (``(database, graph id,
0)``, read once per generation and shared by all its versions), everything of the version under
the version's key.

Most versions keep the base's vertices in order, the new ones after them (no vertex deleted, new
ids sorting after the older ones): they are read *unmerged* (:mod:`graphdb.executor.overlay`).
The version's state is carried over from an earlier version's by the records between them;
BFS, PageRank and WCC read base and delta together (:meth:`DeltaGraph.adjacency`), and the
merged arrays that other operators ask for are merged from the same state in one compiled pass
(on a GPU on the device, from the resident base and only the delta uploaded:
:mod:`graphdb.executor.overlay_gpu`). The first query after a write therefore costs the write's
records and a few per-vertex copies, not a pass over the graph's edges.

Other versions are merged whole, by the catalog's merge plan (:mod:`graphdb.catalog.merge`)
over the arrays held resident, once per version.

The slotted pages and the block ranges that page streaming and cluster ranks read are the
base's only: a changed graph is read whole (the planner offers no page-streamed variant for it
until CHECKPOINT builds a new base).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from graphdb.catalog import Catalog, CorruptGraph, GraphEntry
from graphdb.catalog.merge import (
    DirectionPlan,
    in_tombstones,
    merge_origin,
    merge_payload,
    merge_payload_xp,
    plan_direction,
)

from . import overlay
from .graph import Graph, StoredGraph
from .operators.adjacency import Adjacency

__all__ = ["DeltaGraph", "delta_details", "open_version"]


class DeltaGraph(Graph):
    """A changed graph version (see the module docstring)."""

    def __init__(self, catalog: Catalog, entry: GraphEntry, base: StoredGraph, key: Any):
        super().__init__(entry.name, entry.num_vertices, entry.num_edges, entry.directed,
                         entry.weighted, read=self._merged, key=key, residency=base.residency)
        self.catalog = catalog
        self.entry = entry
        self.base = base

    def view(self):
        return self.catalog.versions.view(self.entry)

    # -- the version unmerged -------------------------------------------------------------------
    def version_delta(self, device: str = "cpu") -> overlay.VersionDelta | None:
        """The version's state on ``device`` (None: it is merged whole instead), carried over
        from the newest state held of an earlier version of the same base."""
        return self.derived("overlay:state", lambda: self._carry(device), device=device)

    def _ops(self, device: str):
        if device == "cpu":
            return overlay.HostOps
        from .overlay_gpu import device_ops

        return device_ops()

    def _base_arrays(self, device: str, with_in: bool | None = None) -> overlay.BaseArrays:
        """The base's arrays on ``device``; its stored in-CSR's sources where ``with_in``
        (None: where they are held already). The weights are read only if a match asks."""
        base = self.base
        in_targets = None
        if device == "cpu":
            out = base.csr("out")
            offsets, targets = out.offsets, out.targets
            inn = base.array("in_offsets") if base.directed else None
            if base.directed:
                if with_in is None:
                    with_in = self.residency.peek(base.key, "cpu",
                                                  "array:in_targets") is not None
                if with_in:
                    in_targets = base.array("in_targets")

            def weights():
                return base.array("in_weights"), base.array("out_weights")
        else:
            from .gpu import runtime as rt
            from .overlay_gpu import base_arrays

            offsets, targets, inn, csr = base_arrays(base, with_in=with_in)
            if csr is not None:
                in_targets = csr.targets

            def weights():
                return (rt.device_csr(base, "in", weights=True).weights,
                        rt.device_csr(base, "out", weights=True).weights)
        return overlay.BaseArrays(base.num_vertices, base.num_edges, base.directed,
                                  base.weighted, self.id_dtype(), offsets, targets, inn,
                                  in_targets, weights if base.weighted else None)

    def _where(self, first: int) -> str:
        return (f"the delta records {first + 1}..{self.entry.version} of graph "
                f"'{self.entry.name}'")

    def _carry(self, device: str) -> overlay.VersionDelta | None:
        entry, ops = self.entry, self._ops(device)
        chain = self.base.derived("overlay:chain", overlay.Chain, device=device)
        base = self._base_arrays(device)
        start = chain.nearest(entry.version) or overlay.empty_delta(base, ops)
        changes = self.catalog.versions.log(entry).changes(start.version, entry.version)
        state = overlay.advance(start, changes, entry.version, base, ops,
                                self._where(start.version))
        if state is None:
            return None
        if (state.num_vertices, state.num_edges) != (entry.num_vertices, entry.num_edges):
            raise CorruptGraph(
                f"graph '{entry.name}' version {entry.version}: its records give "
                f"{state.num_vertices} vertices and {state.num_edges} stored edges, its catalog "
                f"entry {entry.num_vertices} and {entry.num_edges}", file="meta.lmdb/data.mdb")
        if "pending" not in entry.delta:  # an open transaction's numbering is its own
            chain.add(state)
        return state

    def base_in(self, kind: str):
        """The base's stored in-``kind`` (``targets`` or ``weights``) on the CPU: a version
        reads it without the entries its in-bitmap holds (:meth:`in_tombstones`)."""
        values = self.base.array(f"in_{kind}")
        return values.astype(self.id_dtype(), copy=False) if kind == "targets" else values

    def in_tombstones(self, device: str = "cpu"):
        """The bitmap of the stored in-CSR's positions the version deleted (directed graphs;
        None while no base edge is deleted): the state's, matched into it the first time it
        is asked for where the state was carried over without the in-CSR at hand (the next
        versions carry it on from there)."""
        state = self.version_delta(device)
        return overlay.in_tombstones(state, lambda: self._base_arrays(device, with_in=True),
                                     self._ops(device), self._where(0))

    def adjacency(self, direction: str) -> Adjacency | None:
        """The version's ``direction`` unmerged, as the compiled CPU kernels read it (None: the
        version is merged whole)."""
        direction = self.stored_direction(direction)
        state = self.version_delta()
        if state is None:
            return None

        def build() -> Adjacency:
            base = self.base
            if direction == "out":
                csr = base.csr("out")
                offsets, targets, tomb = csr.offsets, csr.targets, state.tomb
            else:
                offsets, targets = base.array("in_offsets"), self.base_in("targets")
                tomb = self.in_tombstones()
            rows = state.rows(direction)
            unsigned = np.uint32 if targets.dtype == np.int32 else np.uint64
            empty = np.zeros(0, dtype=np.uint64)
            return Adjacency(np.ascontiguousarray(offsets, np.int64).view(np.uint64),
                             targets.view(unsigned), np.uint64(base.num_vertices),
                             state.degrees(direction), empty if tomb is None else tomb,
                             rows.offsets.view(np.uint64), rows.targets.view(unsigned))

        return self.derived(f"overlay:adjacency:{direction}", build)

    def row(self, direction: str, vertex: int) -> np.ndarray:
        """One vertex's row of the version, as the merged CSR has it (the base's row without
        its deleted positions, then the row's delta entries), read unmerged: O(degree)."""
        state = self.version_delta()
        if state is None:
            return super().row(direction, vertex)
        direction = self.stored_direction(direction)
        rows = state.rows(direction)
        delta = rows.targets[rows.offsets[vertex]:rows.offsets[vertex + 1]]
        base = self.base
        if vertex >= base.num_vertices:
            return delta
        if direction == "out":
            tomb, targets = state.tomb, base.array("out_targets")
        else:
            tomb, targets = self.in_tombstones(), self.base_in("targets")
        start, end = (int(x) for x in base.array(f"{direction}_offsets")[vertex:vertex + 2])
        mine = targets[start:end]
        if tomb is not None and end > start:
            at = np.arange(start, end, dtype=np.uint64)
            kept = ((tomb[at >> np.uint64(6)] >> (at & np.uint64(63))) & np.uint64(1)) == 0
            mine = mine[kept]
        return np.concatenate([mine, delta.astype(mine.dtype, copy=False)])

    def new_ids(self) -> pa.Array | None:
        """The user's ids of the vertices added since the base, in internal order, when the
        version is read unmerged (None otherwise: its view orders the ids)."""
        log = self.catalog.versions.log(self.entry)
        if not log.keeps_order(self.entry.version):  # (asks no state: a GPU query builds none)
            return None
        return log.new_ids(self.entry.version)

    @property
    def in_csr_loaded(self) -> bool:
        if not self.directed:
            return True
        held = self.residency.peek
        return held(self.key, "cpu", "overlay:adjacency:in") is not None or \
            held(self.base.key, "cpu", "array:in_targets") is not None or \
            held(self.key, "cpu", "array:in_targets") is not None

    def out_degrees(self) -> np.ndarray:
        state = self.version_delta()
        return state.out_degree if state is not None else super().out_degrees()

    # -- the version merged ---------------------------------------------------------------------
    def plan(self, direction: str) -> DirectionPlan:
        """The merged layout of ``direction``, once per version."""
        direction = self.stored_direction(direction)

        def build() -> DirectionPlan:
            base, view = self.base, self.view()
            if direction == "out":
                plan = plan_direction(view, "out", base.csr("out").offsets)
            else:
                out = base.csr("out", weights=True)
                inn = base.csr("in", weights=True)
                tomb = in_tombstones(view, out.offsets, out.targets, out.weights, inn.offsets,
                                     inn.targets, inn.weights)
                plan = plan_direction(view, "in", inn.offsets, tomb)
            self.catalog.versions.check_counts(self.entry, view, plan)
            return plan

        return self.derived(f"delta:plan:{direction}", build)

    def _merged(self, name: str) -> np.ndarray:
        direction, kind = name.split("_", 1)
        if self.version_delta() is not None:
            return self._merged_unplanned(direction, kind)
        plan = self.plan(direction)
        if kind == "offsets":
            return plan.offsets
        base_offsets = self.base.array(f"{direction}_offsets")
        values = self.base.array(name)
        if kind == "targets":
            return merge_payload(plan, base_offsets, values, plan.dtargets, ids=True)
        return merge_payload(plan, base_offsets, values, plan.dweights)

    def _merged_unplanned(self, direction: str, kind: str) -> np.ndarray:
        """A merged array from the version's state (see the module docstring); the in-CSR is
        the stored base's without the deleted entries, merged the same way."""
        state = self.version_delta()
        degree = state.degrees(direction)
        offsets = self.derived(f"overlay:offsets:{direction}", lambda: np.concatenate(
            ([0], np.cumsum(degree))).astype(np.int64))
        if kind == "offsets":
            return offsets
        base = self.base
        rows = state.rows(direction)
        if direction == "out":
            base_offsets, tomb = base.array("out_offsets"), state.tomb
            values = base.array(f"out_{kind}")
        else:
            base_offsets, tomb = base.array("in_offsets"), self.in_tombstones()
            values = self.base_in(kind)
        delta = rows.targets if kind == "targets" else rows.weights
        merged = overlay.HostOps.merge(offsets, base.num_vertices, base_offsets, values, tomb,
                                       rows.offsets, delta)
        if merged is None:
            raise CorruptGraph(f"graph '{self.name}' version {self.entry.version}: its delta "
                               "does not fit its base's rows", file="meta.lmdb/data.mdb")
        return merged

    def id_dtype(self) -> np.dtype:
        return self.base.id_dtype()

    def origin(self) -> np.ndarray:
        """Per merged out-CSR position, its edge: a base position, or ``-(d + 1)`` for delta
        edge ``d``."""
        return self.derived("delta:origin", lambda: merge_origin(self.plan("out")))

    def edge_properties(self) -> pa.Table | None:
        """The edge properties aligned with the merged out-CSR (None without any)."""

        def build():
            base_props = self.catalog.edge_properties(self.entry.base)
            if base_props is None:
                return None
            return self.view().edge_properties(base_props, self.origin())

        return self.derived("delta:edge_properties", build)

    def upload_merged(self, name: str, dtype) -> Any:
        """Array ``name`` of this version on the current GPU, merged there from the base's
        resident copy and the delta (only the delta and small per-version arrays are
        copied)."""
        from .gpu import runtime as rt

        device = rt.device_name()
        if self.version_delta(device) is not None:
            from .overlay_gpu import merged

            return merged(self, name, dtype, device)
        cp = rt.cp()
        direction, kind = name.split("_", 1)
        plan = self.plan(direction)
        if kind == "offsets":
            return cp.asarray(plan.offsets, dtype=dtype)
        base = rt.device_csr(self.base, direction, weights=kind == "weights")
        values = base.targets if kind == "targets" else base.weights
        delta = plan.dtargets if kind == "targets" else plan.dweights
        merged = merge_payload_xp(cp, plan, values, delta, ids=kind == "targets")
        return merged.astype(dtype, copy=False)


def open_version(catalog: Catalog, entry: GraphEntry, base: StoredGraph, key: Any) -> Graph:
    """The graph handle of ``entry``: the stored graph itself, or its changed version."""
    if not entry.changed:
        return base
    return DeltaGraph(catalog, entry, base, key)


def delta_details(entry: GraphEntry) -> list[str]:
    """EXPLAIN's line on the delta an operator reads (none for an unchanged graph)."""
    if not getattr(entry, "changed", False):
        return []
    d = entry.delta
    changed = d.get("tombstones", 0) + d.get("stored_delta", 0)
    share = changed / max(d.get("base_edges", 0), 1)
    parts = [f"+{d.get('delta_edges', 0)} edges", f"-{d.get('tombstones', 0)} stored base edges"]
    if d.get("new_vertices") or d.get("deleted_vertices"):
        parts.append(f"+{d.get('new_vertices', 0)}/-{d.get('deleted_vertices', 0)} vertices")
    return [f"delta: version {entry.version} over the stored base ({', '.join(parts)}; "
            f"{share:.1%} of its edges), read with the base"]
