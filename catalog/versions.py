"""Reading graph versions: the delta logs of a catalog, synced from the stored records.

A :class:`Versions` belongs to one :class:`~graphdb.catalog.Catalog` (one connection): it keeps
a :class:`~graphdb.catalog.delta.DeltaLog` per base generation it has read, reads the records a
version needs that the log lacks (one read transaction, never held), and reads a version's
arrays and tables merged (:mod:`graphdb.catalog.merge`). The executor does the same merge on
the arrays it holds resident (``graphdb.executor.delta``); this is the catalog's own path
(``read_csr``, ``g.edges`` of a version, tests).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from graphdb.storage.delta import read_records
from graphdb.storage.errors import CorruptData

from .delta import DeltaLog, DeltaView, decode_op
from .entries import GraphEntry
from .merge import DirectionPlan, in_tombstones, merge_origin, merge_payload, plan_direction

if TYPE_CHECKING:
    from .catalog import Catalog

__all__ = ["Versions"]

#: Generations whose logs a catalog keeps (the least recently used go).
LOGS_KEPT = 16


class Versions:
    """The delta logs of one catalog (see the module docstring)."""

    def __init__(self, catalog: "Catalog"):
        self._catalog = weakref.ref(catalog)  # the catalog owns this: no cycle back to it
        self._logs: OrderedDict[str, DeltaLog] = OrderedDict()
        self._plans: OrderedDict[tuple, DirectionPlan] = OrderedDict()
        self._lock = threading.RLock()

    @property
    def catalog(self) -> "Catalog":
        return self._catalog()

    def log(self, entry: GraphEntry) -> DeltaLog:
        """The log of ``entry``'s generation, holding at least its version's records."""
        catalog = self.catalog
        with self._lock:
            log = self._logs.get(entry.graph_id)
            if log is None:
                base = entry.base
                props = catalog.edge_schema_of_base(base)
                owner = self._catalog
                log = DeltaLog(base, lambda: owner().vertex_ids(base),
                               catalog.vertex_schema(base), props)
                self._logs[entry.graph_id] = log
                while len(self._logs) > LOGS_KEPT:
                    self._logs.popitem(last=False)
            self._logs.move_to_end(entry.graph_id)
        if log.version < entry.version:
            self._sync(log, entry)
        return log

    def _sync(self, log: DeltaLog, entry: GraphEntry) -> None:
        env = self.catalog.env
        with log.lock:
            first = log.version + 1
            if first > entry.version:
                return
            with self.catalog.reading(entry), env.read_txn() as txn:
                payloads = read_records(env, txn, entry.graph_id, first, entry.version)
            for sequence, payload in enumerate(payloads, start=first):
                where = f"delta record {sequence} of graph '{entry.name}'"
                log.append(decode_op(payload, where), where)

    def view(self, entry: GraphEntry) -> DeltaView:
        return self.log(entry).view(entry.version)

    def forget(self, graph_id: str) -> None:
        with self._lock:
            self._logs.pop(graph_id, None)
            for key in [k for k in self._plans if k[0] == graph_id]:
                del self._plans[key]

    def known(self, graph_id: str) -> DeltaLog | None:
        with self._lock:
            return self._logs.get(graph_id)

    # -- merged reads ---------------------------------------------------------------------------
    def plan(self, entry: GraphEntry, direction: str) -> DirectionPlan:
        """The merged layout of one direction of ``entry`` (cached for a few versions)."""
        key = (entry.graph_id, entry.version, entry.delta.get("pending", ""), direction)
        with self._lock:
            plan = self._plans.get(key)
        if plan is not None:
            return plan
        view = self.view(entry)
        base = entry.base
        read = self.catalog.read_array
        if direction == "out" or not entry.directed:
            plan = plan_direction(view, "out", read(base, "out_offsets"))
        else:
            weights = entry.weighted
            tomb = in_tombstones(
                view, read(base, "out_offsets"), read(base, "out_targets"),
                read(base, "out_weights") if weights else None, read(base, "in_offsets"),
                read(base, "in_targets"), read(base, "in_weights") if weights else None)
            plan = plan_direction(view, "in", read(base, "in_offsets"), tomb)
        self.check_counts(entry, view, plan)
        with self._lock:
            self._plans[key] = plan
            while len(self._plans) > 4:
                self._plans.popitem(last=False)
        return plan

    @staticmethod
    def check_counts(entry: GraphEntry, view: DeltaView, plan: DirectionPlan) -> None:
        """CorruptData unless the merged version has the sizes its entry records."""
        if plan.num_edges != entry.num_edges or view.num_vertices != entry.num_vertices:
            raise CorruptData(
                f"graph '{entry.name}' version {entry.version}: its records give "
                f"{view.num_vertices} vertices and {plan.num_edges} stored edges, its catalog "
                f"entry {entry.num_vertices} and {entry.num_edges}")

    def read_array(self, entry: GraphEntry, array: str) -> np.ndarray:
        """A CSR array of version ``entry`` (``out_offsets``, ``in_targets``, ...), merged."""
        direction, kind = array.split("_", 1)
        if direction == "in" and not entry.directed:
            direction = "out"
        plan = self.plan(entry, direction)
        if kind == "offsets":
            return plan.offsets
        base = entry.base
        base_offsets = self.catalog.read_array(base, f"{direction}_offsets")
        values = self.catalog.read_array(base, f"{direction}_{kind}")
        if kind == "targets":
            return merge_payload(plan, base_offsets, values, plan.dtargets, ids=True)
        return merge_payload(plan, base_offsets, values, plan.dweights)

    def origin(self, entry: GraphEntry) -> np.ndarray:
        """Where each merged out-CSR position of ``entry`` comes from (see merge_origin)."""
        return merge_origin(self.plan(entry, "out"))

    def edge_properties(self, entry: GraphEntry) -> pa.Table | None:
        """The edge properties of version ``entry``, aligned with its merged out-CSR."""
        base_props = self.catalog.edge_properties(entry.base)
        if base_props is None:
            return None
        return self.view(entry).edge_properties(base_props, self.origin(entry))

    def vertex_table(self, entry: GraphEntry) -> pa.Table:
        return self.view(entry).vertex_table(self.catalog.vertex_table(entry.base))

    def vertex_ids(self, entry: GraphEntry) -> pa.Array:
        return self.view(entry).user_ids()
