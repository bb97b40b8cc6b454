"""A changed graph version on the GPU: the device's operations on a version's state
(:mod:`graphdb.executor.overlay`) and the merged arrays the GPU operators read.

The base's arrays stay resident across versions (under the base's key); a version's state is
carried over on the device from the previous one with only the write's records uploaded, and
each merged array is built there from the resident base, the bitmaps and the delta rows by one
kernel (``overlay.cu``: a warp per row packs the base row's kept entries by ballot, then adds the
row's delta entries). Nothing in proportion to the graph's edges crosses the bus after the
base's first upload; the in-edges of a directed graph are the base's stored in-CSR, a deleted
out-edge's entry there found by a warp per in-row that loses entries (``graphdb_overlay_match_in``,
the same entries as the CPU's match).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from .gpu import runtime as rt
from .overlay import splice_xp

__all__ = ["OVERLAY", "DeviceOps", "base_arrays", "device_ops", "merged"]

THREADS = 256
#: A null pointer argument (a kernel's optional array).
_NULL = np.uint64(0)

#: ``overlay.cu``: bit setting, counts, and the merge of one array (ids or weights).
OVERLAY = rt.CudaModule("overlay.cu", (
    "graphdb_overlay_merge<{id}>",
    "graphdb_overlay_merge<double>",
    "graphdb_overlay_match_in<{id}>",
))


class DeviceOps:
    """The operations of :class:`graphdb.executor.overlay_host.HostOps` on the current GPU
    (CuPy arrays; host inputs are uploaded)."""

    def __init__(self, cp):
        self.xp = cp

    def asarray(self, values, dtype=None):
        return self.xp.asarray(values, dtype=dtype)

    def _grid(self, n: int) -> tuple:
        return (rt.grid_for(max(int(n), 1), THREADS),)

    def rows_of(self, offsets, positions):
        xp = self.xp
        return xp.searchsorted(xp.asarray(offsets), xp.asarray(positions), side="right") - 1

    def set_bits(self, bits, positions) -> int:
        xp = self.xp
        positions = xp.asarray(positions, dtype=np.int64)
        again = xp.zeros(1, dtype=np.uint64)
        OVERLAY.function("graphdb_overlay_set_bits")(
            self._grid(positions.size), (THREADS,),
            (bits, positions, np.int64(positions.size), _NULL, again))
        return int(again.get()[0])

    def add_at(self, values, index, amount: int) -> None:
        index = self.xp.asarray(index, dtype=np.int64)
        if index.size:
            OVERLAY.function("graphdb_overlay_add_at")(
                self._grid(index.size), (THREADS,),
                (values, index, np.int64(index.size), np.int64(amount)))

    def map_bits(self, bits, where, positions, size: int):
        xp = self.xp
        out = xp.zeros((size + 63) // 64, dtype=np.uint64) if bits is None else bits.copy()
        positions = xp.asarray(positions, dtype=np.int64)
        if positions.size:
            OVERLAY.function("graphdb_overlay_set_bits")(
                self._grid(positions.size), (THREADS,),
                (out, positions, np.int64(positions.size), where, _NULL))
        return out

    def splice(self, rows, n: int, removed, removed_rows, add_rows, add_targets, add_weights,
               add_edges):
        return splice_xp(self.xp, rows, n, removed, add_rows, add_targets, add_weights,
                         add_edges)

    def match_in(self, in_offsets, in_targets, in_weights, u, v, w, skip):
        """:meth:`HostOps.match_in` on the device (the same positions, in deletion order
        sorted by row, source and weight); None where one has no entry."""
        return self._match(in_offsets, in_targets, in_weights, u, v, w, skip, False)[0]

    def match_in_sources(self, in_offsets, in_targets, u, v, skip):
        """:meth:`HostOps.match_in_sources` on the device: (positions, exact)."""
        return self._match(in_offsets, in_targets, None, u, v, None, skip, True)

    def _match(self, in_offsets, in_targets, in_weights, u, v, w, skip, check):
        xp = self.xp
        v = xp.asarray(v, dtype=np.int64)
        if not v.size:
            return xp.zeros(0, dtype=np.int64), True
        u = xp.asarray(u, dtype=np.int64)
        w = xp.zeros(v.size, dtype=np.int64) if w is None else \
            xp.ascontiguousarray(xp.asarray(w, dtype=np.float64)).view(np.int64)
        order = xp.lexsort(xp.stack([w, u, v]))  # by row, then source, then weight
        v, u, w = v[order], u[order], w[order]
        starts = xp.flatnonzero(xp.concatenate([xp.ones(1, dtype=bool), v[1:] != v[:-1]]))
        bounds = xp.concatenate([starts, xp.asarray([v.size])]).astype(np.int64)
        runs = int(bounds.size) - 1
        taken = xp.zeros(v.size, dtype=np.int64)
        found = xp.full(v.size, -1, dtype=np.int64)
        spare = xp.zeros(1, dtype=np.uint64) if check else None
        OVERLAY.function(f"graphdb_overlay_match_in<{rt.id_ctype(in_targets.dtype)}>")(
            (rt.grid_for(runs * 32, THREADS),), (THREADS,),
            (in_offsets, in_targets, _NULL if in_weights is None else in_weights,
             _NULL if skip is None else skip, v, u, w, bounds, np.int64(runs), taken, found,
             _NULL if spare is None else spare))
        if check and int(spare.get()[0]):
            return None, False
        return (None if bool((found < 0).any()) else found), True

    def merge(self, offsets, nbase: int, base_offsets, base_values, tomb, delta_offsets,
              delta_values):
        xp = self.xp
        n = int(offsets.size) - 1
        out = xp.empty(int(offsets[-1]), dtype=base_values.dtype)
        bad = xp.zeros(1, dtype=np.uint64)
        kind = "double" if base_values.dtype == np.float64 else rt.id_ctype(base_values.dtype)
        OVERLAY.function(f"graphdb_overlay_merge<{kind}>")(
            (rt.grid_for(max(n, 1) * 32, THREADS),), (THREADS,),
            (offsets, np.int64(n), np.int64(nbase), base_offsets, base_values,
             _NULL if tomb is None else tomb, delta_offsets,
             delta_values.astype(base_values.dtype, copy=False), out, bad))
        return None if int(bad.get()[0]) else out


@lru_cache(maxsize=1)
def _ops_for(_module_id: int) -> DeviceOps:
    return DeviceOps(rt.cp())


def device_ops() -> DeviceOps:
    return _ops_for(id(rt.cp()))


def base_arrays(base, *, with_in: bool | None = None):
    """(out-offsets, out-targets, in-offsets, in-CSR) of the base on the current device, held by
    the residency owner under the base's key; the in-CSR (its sources: a DeviceCSR without
    weights) only on a directed graph and where ``with_in`` asks for it (None: where it is
    resident already)."""
    out = rt.device_csr(base, "out")
    if not base.directed:
        return out.offsets, out.targets, None, None
    device = rt.device_name()

    def upload():
        return rt.cp().asarray(base.array("in_offsets"), dtype=np.int64)

    inn = None
    if with_in is None:
        with_in = base.residency.peek(base.key, device, "device:in_targets") is not None
    if with_in:
        inn = rt.device_csr(base, "in")
    return out.offsets, out.targets, base.derived("device:in_offsets", upload,
                                                  device=device), inn


def merged(graph, name: str, dtype, device: str) -> Any:
    """Array ``name`` (``out_targets``, ``in_offsets``, ...) of the changed version ``graph``
    (a :class:`~graphdb.executor.delta.DeltaGraph` read unmerged) on the current device."""
    from graphdb.catalog import CorruptGraph

    cp, ops = rt.cp(), device_ops()
    state = graph.version_delta(device)
    direction, kind = name.split("_", 1)
    direction = graph.stored_direction(direction)
    degree = state.degrees(direction)

    def offsets_of():
        offsets = cp.zeros(state.num_vertices + 1, dtype=np.int64)
        cp.cumsum(degree, out=offsets[1:])
        return offsets

    offsets = graph.derived(f"overlay:offsets:{direction}", offsets_of, device=device)
    if kind == "offsets":
        return offsets.astype(dtype, copy=False)
    base = graph.base
    rows = state.rows(direction)
    if direction == "out":
        csr = rt.device_csr(base, "out", weights=kind == "weights")
        base_offsets, tomb = csr.offsets, state.tomb
        values = csr.targets if kind == "targets" else csr.weights
    else:  # the stored in-CSR without the entries of the deleted out-edges
        csr = rt.device_csr(base, "in", weights=kind == "weights")
        base_offsets = csr.offsets
        tomb = graph.in_tombstones(device) if len(state.positions) else None
        values = csr.targets if kind == "targets" else csr.weights
    delta = rows.targets if kind == "targets" else rows.weights
    with rt.translate_oom(f"merging the {direction}-{kind} of graph '{graph.name}'"):
        out = ops.merge(offsets, base.num_vertices, base_offsets, values, tomb, rows.offsets,
                        delta)
    if out is None:
        raise CorruptGraph(f"graph '{graph.name}' version {graph.entry.version}: its delta does "
                           "not fit its base's rows", file="meta.lmdb/data.mdb")
    return out.astype(dtype, copy=False)
