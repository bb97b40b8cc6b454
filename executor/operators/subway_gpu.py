"""Subway on the GPU: the SubCSR built on the device, its edges read by a zero-copy gather.

Imported only when a streamed traversal runs on a GPU (CuPy is imported inside functions).

Host memory. Copies to the device are DMA only from page-locked memory (54 GB/s on an H100,
7 GB/s from ordinary memory), so the topology a streamed operator reads is held page-locked:
:func:`pinned_csr` makes one page-locked copy of a CSR per graph version, held by the residency
owner (GTS and Subway both assume the edges sit in pinned host memory).

:class:`GPUBackend` (the driver is :func:`graphdb.executor.operators.subway.subway`): the CSR
offsets are resident on the device and the SubCSR's vertex side (active ids, offsets: Subway's
steps 1-5) is built there by ``subway.cu``; the host reads three counters an outer iteration
(active vertices, rows, edges) and no ids. The edges (step 6) are read by a flattened, coalesced
zero-copy gather out of the page-locked CSR (UVA maps it into the device's address space) and
relaxed in the same kernel: in the synchronous mode the SubCSR's edges cross the bus once and
are never staged, so such an iteration is one launch and its "pieces" is 1; in the asynchronous
mode they are also stored into a slot's device buffer, in pieces that fit, for the inner
iterations. Whole partitions (the fallback above the threshold) are copied by DMA from the
page-locked CSR into the slots, edges only. The result columns are compacted on the device, as
the resident operators build theirs. (Subway's own split, active ids to the host and a host
gather into staging buffers, measured 3-13x slower on R-MAT 24: docs/performance/streaming.md.)
"""

from __future__ import annotations

from collections import deque

import numpy as np

from ..errors import DeviceOutOfMemory
from ..gpu import runtime as rt
from ..gpu.pinned import h2d, pinned_csr
from .subway import MAX_INNER

__all__ = ["GPUBackend", "SUBWAY", "Slot"]

THREADS = 256
#: Vertices of one tile of the device SubCSR build (subway.cu: threads x items).
TILE_VERTICES = 256 * 16
#: Edges a block of the streaming kernel takes at a time (subway.cu: threads x items).
STREAM_THREADS = 256

#: ``subway.cu``: the SubCSR count and compaction, the fused gather-and-relax stream kernels and
#: the inner iterations, one instantiation per traversal.
SUBWAY = rt.CudaModule("operators/subway.cu")


def _align(n: int) -> int:
    return (n + 7) // 8 * 8


class Slot:
    """One piece in flight: a device buffer, a stream, the changed flag, timers."""

    def __init__(self, nbytes: int):
        cp = rt.cp()
        self.device = cp.empty(nbytes, dtype=np.uint8)
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.done = None
        self.changed = cp.zeros(1, dtype=np.int32)
        self.timings: list = []

    def record(self):
        ev = rt.cp().cuda.Event()
        ev.record(self.stream)
        return ev


class GPUBackend:
    """Vertex state on the device; the SubCSR built there and its edges streamed by zero copy,
    whole partitions through two slots."""

    name = "gpu"
    #: the driver asks this backend for counts and lets it build and stream SubCSRs
    device_subcsr = True

    def __init__(self, algorithm: str, n: int, source, metrics):
        cp = rt.cp()
        self.cp, self.algorithm, self.metrics = cp, algorithm, metrics
        # The plan fills the budget: release the pool's cached blocks first, or a large array
        # may land in the free part of an old chunk and leave the rest too fragmented to use.
        cp.get_default_memory_pool().free_all_blocks()
        self.stream_kernel = SUBWAY.function(f"graphdb_subway_stream_{algorithm}")
        self.inner_kernel = SUBWAY.function(f"graphdb_subway_inner_{algorithm}")
        with rt.translate_oom(f"streamed {algorithm}: vertex state"):
            if algorithm == "wcc":
                self.value = cp.arange(n, dtype=np.float64)
                self.label = cp.ones(n, dtype=np.uint8)
            else:
                self.value = cp.full(n, np.inf, dtype=np.float64)
                self.label = cp.zeros(n, dtype=np.uint8)
                self.value[source] = 0.0
                self.label[source] = 1
            self.snap = cp.zeros(n, dtype=np.uint8)
        self.slots: list[Slot] = []
        self.n = n
        self.tiles = max(1, -(-n // TILE_VERTICES))
        self._events: list = []  # (start, end, kind) on the current stream, read at the end

    # -- the SubCSR built on the device -----------------------------------------------------------

    def bind(self, graph, csr, weighted: bool) -> None:
        """Pin the CSR (once per graph version), upload its offsets, allocate the SubCSR
        scratch."""
        cp, n = self.cp, self.n
        name = "csr:symmetric" if self.algorithm == "wcc" and graph.directed else "csr:out"
        hoff, htgt, hw = pinned_csr(graph, name, csr, weighted)
        self._host = (htgt, hw)
        with rt.translate_oom(f"streamed {self.algorithm}: CSR offsets and SubCSR"):
            self.d_off = cp.empty(n + 1, dtype=np.int64)
            self.ids = cp.empty(max(n, 1), dtype=np.int32)
            self.sub_off = cp.empty(n + 1, dtype=np.int64)
            self.tile_sums = cp.empty((3, self.tiles), dtype=np.int64)
        stream = cp.cuda.get_current_stream()
        start = rt.cp().cuda.Event()
        start.record(stream)
        self.metrics.bytes_to_device += h2d(self.d_off, hoff, stream)
        end = rt.cp().cuda.Event()
        end.record(stream)
        self._events.append((start, end, "transfer"))
        self._sub_kernels = (SUBWAY.function("graphdb_subway_count"),
                             SUBWAY.function("graphdb_subway_compact"))

    def _count(self, mode: int):
        count, _ = self._sub_kernels
        ta, tr, te = self.tile_sums
        count((self.tiles,), (256,), (self.label, self.d_off, self.value, np.int64(self.n),
                                      np.int32(mode), ta, tr, te))
        rows_incl, edges_incl = self.cp.cumsum(tr), self.cp.cumsum(te)
        return ta, rows_incl, edges_incl

    def count_active(self) -> tuple[int, int, int]:
        """(active vertices, active rows with edges, their edges): the one read of an iteration."""
        ta, rows_incl, edges_incl = self._count(0)
        self._incl = (rows_incl, edges_incl)
        tot = self.cp.stack((ta.sum(), rows_incl[-1], edges_incl[-1])).get()
        self.metrics.bytes_from_device += 24
        return int(tot[0]), int(tot[1]), int(tot[2])

    def _compact(self, mode: int, rows_incl, edges_incl, out, as_int: bool = False) -> None:
        _, compact = self._sub_kernels
        _, tr, te = self.tile_sums
        compact((self.tiles,), (256,), (self.label, self.d_off, self.value, np.int64(self.n),
                                        np.int32(mode), np.int32(as_int), rows_incl - tr,
                                        edges_incl - te, self.ids, self.sub_off, out))

    def _stream_args(self, off, ids, csr_off, row_lo, row_hi, e0, e1, src_t, src_w, shift,
                     out_t=None, out_w=None, snap=None):
        null = np.uint64(0)
        return (off, ids if ids is not None else null, csr_off if csr_off is not None else null,
                np.int64(row_lo), np.int64(row_hi), np.int64(e0), np.int64(e1),
                np.uint64(src_t), np.uint64(src_w), np.int64(shift),
                out_t if out_t is not None else null, out_w if out_w is not None else null,
                self.value, self.label, snap if snap is not None else null)

    def _stream(self, args, edges: int) -> None:
        span = STREAM_THREADS * 8
        grid = (rt.grid_for(max(-(-edges // span), 1) * STREAM_THREADS, STREAM_THREADS, 16),)
        self.stream_kernel(grid, (STREAM_THREADS,), args)

    def run_subcsr(self, n_rows: int, n_edges: int, capacity: int, edge_bytes: int,
                   weighted: bool, asynchronous: bool) -> int:
        """Build the SubCSR of the active vertices (steps 1-5), clear the labels, stream its edges
        (step 6) and relax them; returns the pieces (1: the synchronous mode stages nothing)."""
        cp = self.cp
        if n_rows:
            rows_incl, edges_incl = self._incl
            self._compact(0, rows_incl, edges_incl, np.uint64(0))
            self.sub_off[n_rows] = n_edges
        self.label.fill(0)  # every active row relaxes now, with its current value
        if not n_edges:
            return 0
        htgt, hw = self._host
        hw_ptr = hw.ctypes.data if weighted else 0
        self.metrics.bytes_to_device += n_edges * edge_bytes
        if not asynchronous:
            stream = cp.cuda.get_current_stream()
            start = cp.cuda.Event()
            start.record(stream)
            self._stream(self._stream_args(self.sub_off, self.ids, self.d_off, 0, n_rows - 1, 0,
                                           n_edges, htgt.ctypes.data, hw_ptr, 0), n_edges)
            end = cp.cuda.Event()
            end.record(stream)
            self._events.append((start, end, "transfer"))
            return 1
        # asynchronous: pieces that fit a slot, stored on the device for the inner iterations
        per = max(1, capacity // edge_bytes)
        o_w = _align(per * 4)

        def loads():
            for k, e0 in enumerate(range(0, n_edges, per)):
                e1 = min(n_edges, e0 + per)
                slot = self.slots[k % 2]
                dev = slot.device
                out_t = dev[:(e1 - e0) * 4].view(np.int32)
                out_w = dev[o_w:o_w + (e1 - e0) * 8].view(np.float64) if weighted else None
                with slot.stream:
                    start = slot.record()
                    self._stream(self._stream_args(self.sub_off, self.ids, self.d_off, 0,
                                                   n_rows - 1, e0, e1, htgt.ctypes.data, hw_ptr,
                                                   0, out_t, out_w), e1 - e0)
                    mid = slot.record()
                inner = (self.sub_off, self.ids, np.int64(0), np.int64(n_rows - 1), np.int64(e0),
                         np.int64(e1), out_t, out_w if weighted else np.uint64(0), self.value,
                         self.label, slot.changed)
                yield slot, self._inner_launch(inner), start, mid

        self._slots_after_current()
        return self._pipelined(loads())

    def _pipelined(self, loads) -> int:
        """Settle each loaded piece (:meth:`_settle`) one piece behind the loads, so that one
        slot's copy and relaxation overlap the other slot's inner iterations. ``loads`` yields
        (slot, launch or None, start event, mid event) after queueing a piece on its slot's
        stream; returns the pieces."""
        pending: deque = deque()
        pieces = 0
        for load in loads:
            pieces += 1
            pending.append(load)
            if len(pending) == 2:
                self._settle(*pending.popleft())
        while pending:
            self._settle(*pending.popleft())
        self._collect_slots()
        return pieces

    def _slots_after_current(self) -> None:
        """The slots' (non-blocking) streams wait for the work queued on the current stream."""
        ev = self.cp.cuda.Event()
        ev.record(self.cp.cuda.get_current_stream())
        for slot in self.slots:
            slot.stream.wait_event(ev)

    def _inner_launch(self, inner_args):
        """What queues one inner iteration of the device-resident piece ``inner_args`` (None:
        no inner iterations)."""
        if inner_args is None:
            return None
        grid = (rt.grid_for(1 << 30, THREADS),)
        return lambda: self.inner_kernel(grid, (THREADS,), inner_args)

    def _settle(self, slot: Slot, launch, start, mid) -> None:
        """Inner iterations (asynchronous mode: ``launch`` queues one on the slot's stream) on a
        loaded piece until none of its rows is active again, the changed flag read once an
        iteration; then the piece's timings."""
        if launch is not None:
            for _ in range(MAX_INNER):
                with slot.stream:  # the slot's stream orders the flag with its kernels
                    slot.changed.fill(0)
                    launch()
                self.metrics.inner_iterations += 1
                if not int(slot.changed.get(stream=slot.stream)[0]):
                    break
        end = slot.record()
        slot.timings.append((start, mid, end))
        slot.done = end

    def _collect_slots(self) -> None:
        for slot in self.slots:
            slot.stream.synchronize()
            for start, mid, end in slot.timings:
                self.metrics.transfer_s += self.cp.cuda.get_elapsed_time(start, mid) / 1e3
                self.metrics.kernel_s += self.cp.cuda.get_elapsed_time(mid, end) / 1e3
            slot.timings.clear()

    def _full_device(self, csr, pieces, weighted, asynchronous) -> None:
        """Whole partitions: edges copied by DMA from the page-locked CSR into the slots (the
        offsets are resident), relaxed for the snapshot's rows, then the inner iterations."""
        htgt, hw = self._host

        def loads():
            for k, piece in enumerate(pieces):
                slot = self.slots[k % 2]
                dev, n_e = slot.device, piece.edges
                o_w = _align(n_e * 4)
                d_t = dev[:n_e * 4].view(np.int32)
                d_w = dev[o_w:o_w + n_e * 8].view(np.float64) if weighted else None
                with slot.stream:
                    start = slot.record()
                    moved = h2d(dev, htgt[piece.e0:piece.e1], slot.stream)
                    if weighted:
                        moved += h2d(dev, hw[piece.e0:piece.e1], slot.stream, o_w)
                    mid = slot.record()
                    self._stream(self._stream_args(self.d_off, None, None, piece.r0,
                                                   piece.r1 - 1, piece.e0, piece.e1,
                                                   d_t.data.ptr, d_w.data.ptr if weighted else 0,
                                                   -piece.e0, snap=self.snap), n_e)
                self.metrics.bytes_to_device += moved
                inner = None
                if asynchronous:
                    inner = (self.d_off, np.uint64(0), np.int64(piece.r0),
                             np.int64(piece.r1 - 1), np.int64(piece.e0), np.int64(piece.e1),
                             d_t, d_w if weighted else np.uint64(0), self.value, self.label,
                             slot.changed)
                yield slot, self._inner_launch(inner), start, mid

        self._slots_after_current()
        self._pipelined(loads())

    # -- both ---------------------------------------------------------------------------------------

    def piece_capacity(self, free: int, edge_bytes: int) -> int:
        """Bytes of one of the two slots: ``free`` (the budget less the vertex state, which
        includes the SubCSR's ids and offsets, and the slack) less the tiles' counters."""
        free -= 3 * 8 * self.tiles * 3
        if free < 1 << 12:
            raise DeviceOutOfMemory(f"streamed {self.algorithm}: the budget leaves {free} B for "
                                    "edges beside the vertex state")
        with rt.translate_oom(f"streamed {self.algorithm}: piece buffers"):
            self.slots = [Slot(free // 2) for _ in range(2)]
        return free // 2 - 64  # alignment padding between the sections of a piece

    def begin_iteration(self, full: bool) -> None:
        if full:
            self.snap, self.label = self.label, self.snap
        self.label.fill(0)

    def run_pieces(self, csr, rows, sub_off, pieces, weighted, full, asynchronous) -> None:
        """Whole partitions (the only pieces the driver hands a device-SubCSR backend)."""
        self._full_device(csr, pieces, weighted, asynchronous)

    def result(self):
        """The value per vertex (numpy), or for BFS and SSSP with the device SubCSR the result
        columns compacted on the device (:class:`~graphdb.executor.operators.subway.Reached`)."""
        cp = self.cp
        if self.algorithm != "wcc":
            from .subway import Reached

            _, rows_incl, _ = self._count(1)
            k = int(rows_incl[-1].get())
            bfs = self.algorithm == "bfs"
            self._compact(1, rows_incl, rows_incl, self.sub_off, as_int=bfs)
            vertex = self.ids[:k].get().astype(np.int64)
            values = self.sub_off[:k].view(np.int64 if bfs else np.float64).get()
            self.metrics.bytes_from_device += 8 + 12 * k
            out = Reached(vertex, values)
        else:
            cp.cuda.Device().synchronize()
            self.metrics.bytes_from_device += int(self.value.nbytes)
            out = self.value.get()
        for start, end, kind in self._events:
            t = cp.cuda.get_elapsed_time(start, end) / 1e3
            if kind == "transfer":
                self.metrics.transfer_s += t
            else:
                self.metrics.kernel_s += t
        self._events.clear()
        return out
