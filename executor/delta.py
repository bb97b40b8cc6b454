"""Graph versions changed by writes, as operators see them: the base merged with the delta.

A committed write makes a new version of a graph: its stored base generation (immutable) plus
delta records (:mod:`graphdb.catalog.delta`). :func:`open_version` gives operators a
:class:`DeltaGraph`, a :class:`~graphdb.executor.graph.Graph` whose CSR accessors return the
merged arrays, so every CPU operator runs unchanged and answers what it answers on a fresh
ingest of the same edges. What it reads is held by the residency owner:

- the base's arrays under the *base's* key (``(database, graph id, 0)``): read once per
  generation, shared by every version of it, on the host and on a device;
- the merge plan of each direction (offsets and the delta's own small CSR) and each merged
  array under the *version's* key, built once per version by one compiled pass over the base
  (:func:`graphdb.catalog.merge.merge_payload`), never by rebuilding the CSR from edges.

On a GPU the base stays resident across versions: a version's device array is merged *on the
device* from the resident base and the uploaded delta (:meth:`DeltaGraph.upload_merged`, the
same vectorized merge the tests run with numpy), so a write moves only its delta across the
bus. The merged copy sits beside the base; both are counted against the budget.

The slotted pages and the block ranges that page streaming and cluster ranks read are the
base's only: a changed graph is read whole (the planner offers no page-streamed variant for it
until CHECKPOINT builds a new base).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from graphdb.catalog import Catalog, GraphEntry
from graphdb.catalog.merge import (
    DirectionPlan,
    in_tombstones,
    merge_origin,
    merge_payload,
    merge_payload_xp,
    plan_direction,
)

from .graph import Graph, StoredGraph

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
        plan = self.plan(direction)
        if kind == "offsets":
            return plan.offsets
        base_offsets = self.base.array(f"{direction}_offsets")
        values = self.base.array(name)
        if kind == "targets":
            return merge_payload(plan, base_offsets, values, plan.dtargets, ids=True)
        return merge_payload(plan, base_offsets, values, plan.dweights)

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
        """Array ``name`` of this version on the current GPU: merged there from the base's
        resident copy and the delta (only the delta and the plan's small arrays are copied)."""
        from .gpu import runtime as rt

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
    """The graph handle of ``entry``: the stored graph itself, or its merged version."""
    if not entry.changed:
        return base
    return DeltaGraph(catalog, entry, base, key)


def delta_details(entry: GraphEntry) -> list[str]:
    """EXPLAIN's line on the delta an operator merges (none for an unchanged graph)."""
    if not getattr(entry, "changed", False):
        return []
    d = entry.delta
    changed = d.get("tombstones", 0) + d.get("stored_delta", 0)
    share = changed / max(d.get("base_edges", 0), 1)
    parts = [f"+{d.get('delta_edges', 0)} edges", f"-{d.get('tombstones', 0)} stored base edges"]
    if d.get("new_vertices") or d.get("deleted_vertices"):
        parts.append(f"+{d.get('new_vertices', 0)}/-{d.get('deleted_vertices', 0)} vertices")
    return [f"delta: version {entry.version} over the stored base ({', '.join(parts)}; "
            f"{share:.1%} of its edges), merged into the CSR once per version"]
