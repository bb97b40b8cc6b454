"""A changed graph version on the GPU: the device's operations on a version's state
(:mod:`graphdb.executor.overlay`) and the merged arrays the GPU operators read.

The base's arrays stay resident across versions (under the base's key); a version's state is
carried over on the device from the previous one with only the write's records uploaded, and
each merged array is built there from the resident base, the bitmaps and the delta rows by one
kernel (``overlay.cu``: a warp per row packs the base row's kept entries by ballot, then adds the
row's delta entries). Nothing in proportion to the graph's edges crosses the bus after the
base's first upload; the in-edges of a directed graph are the base's out-CSR transposed on the
device once per generation (a stable sort by target), so a deleted out-edge names its in-entry.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from .gpu import runtime as rt
from .overlay import splice_xp, transpose

__all__ = ["OVERLAY", "DeviceOps", "base_arrays", "device_ops", "merged", "transposed"]

THREADS = 256
#: A null pointer argument (a kernel's optional array).
_NULL = np.uint64(0)

#: ``overlay.cu``: bit setting, counts, and the merge of one array (ids or weights).
OVERLAY = rt.CudaModule("overlay.cu", (
    "graphdb_overlay_merge<{id}>",
    "graphdb_overlay_merge<double>",
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

    def transpose(self, out_offsets, out_targets, in_offsets):
        """(sources, where) as :meth:`HostOps.transpose`, by a stable sort of the targets on
        the device; None where ``in_offsets`` do not count them."""
        xp = self.xp
        m = int(out_targets.size)
        n = int(in_offsets.size) - 1
        counts = xp.bincount(out_targets.astype(np.int64), minlength=n)
        if counts.size != n or not bool((counts == xp.diff(in_offsets)).all()):
            return None
        order = xp.argsort(out_targets, kind="stable")  # sources ascend within a row
        rows = xp.searchsorted(out_offsets, xp.arange(m, dtype=np.int64), side="right") - 1
        sources = rows[order].astype(out_targets.dtype)
        where = xp.empty(m, dtype=np.int64)
        where[order] = xp.arange(m, dtype=np.int64)
        return sources, where

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


def base_arrays(base) -> tuple[Any, Any, Any]:
    """The base's out-offsets, out-targets and (directed) in-offsets on the current device,
    held by the residency owner under the base's key."""
    out = rt.device_csr(base, "out")
    if not base.directed:
        return out.offsets, out.targets, None

    def upload():
        return rt.cp().asarray(base.array("in_offsets"), dtype=np.int64)

    return out.offsets, out.targets, base.derived("device:in_offsets", upload,
                                                  device=rt.device_name())


def transposed(base) -> tuple[Any, Any]:
    """(sources, where) of the base on the current device, once per generation."""
    def build():
        offsets, targets, inn = base_arrays(base)
        with rt.translate_oom(f"transposing graph '{base.name}' on the GPU"):
            return transpose(device_ops(), offsets, targets, inn, base.name)

    return base.derived("overlay:transpose", build, device=rt.device_name())


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
    elif not len(state.positions):  # no base edge deleted: the stored in-CSR as it is
        csr = rt.device_csr(base, "in", weights=kind == "weights")
        base_offsets, tomb = csr.offsets, None
        values = csr.targets if kind == "targets" else csr.weights
    else:
        base_offsets = base_arrays(base)[2]
        tomb = graph.in_tombstones(device)
        sources, where = transposed(base)
        if kind == "targets":
            values = sources
        else:
            def weights():
                out = cp.empty(base.num_edges, dtype=np.float64)
                out[where] = rt.device_csr(base, "out", weights=True).weights
                return out

            values = base.derived("overlay:transpose:weights", weights, device=device)
    delta = rows.targets if kind == "targets" else rows.weights
    with rt.translate_oom(f"merging the {direction}-{kind} of graph '{graph.name}'"):
        out = ops.merge(offsets, base.num_vertices, base_offsets, values, tomb, rows.offsets,
                        delta)
    if out is None:
        raise CorruptGraph(f"graph '{graph.name}' version {graph.entry.version}: its delta does "
                           "not fit its base's rows", file="meta.lmdb/data.mdb")
    return out.astype(dtype, copy=False)
