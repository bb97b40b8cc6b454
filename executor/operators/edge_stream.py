"""Edge-chunk streaming (WolfGraph) for all-active algorithms past the budget: PageRank, CDLP.

Every iteration reads every edge, so nothing can be skipped: the only levers are to move each
edge once per iteration in as few bytes as possible and to hide the computation under the copy.
The vertex state stays in the budget; the edges stream in chunks.

- :class:`CPUChunks` / :class:`GPUChunks` pull over the in-CSR: ``pull(contrib, sums)`` adds,
  for every vertex v, the contributions of its in-neighbours into ``sums[v]``. A chunk is a
  range of the in-CSR's edges (the sources, 4 B an edge) plus the offsets of the rows it covers
  (:func:`graphdb.executor.operators.subway.plan_pieces`, so a hub's row may be cut; a cut row adds
  its partial sum atomically). On the GPU the kernel is balanced by edges (a hub's row is spread
  over many threads), so it runs about four times faster than the bus and the copy is the whole
  cost: the copies go on one stream, back to back, straight out of the page-locked CSR into
  ``SLOTS`` device buffers taken round-robin over the whole run (triple buffering), and the
  kernels on another (:attr:`GPUChunks.stream`, where the caller queues its own step too). A copy
  waits only for the kernel that last read its buffer, so the next iteration's first chunks are
  copied while this one's last kernels and the update run. The family's numeric step (PageRank's
  update) runs between passes; this module knows nothing of it.
- :func:`vertex_chunks` cuts vertex ranges of the out- and in-CSR together, never splitting a
  vertex, for CDLP (each vertex needs its whole neighbourhood at once); a vertex larger than a
  chunk gets an oversized chunk of its own.

WolfGraph's concatenated edge list (CEL) appends to each subgraph the successors of its edges
already processed in the pass, so that values propagate further per pass. It pays for algorithms
that run to a fixed point asynchronously; PageRank and CDLP have Graphalytics' synchronous
semantics (each iteration reads the previous iteration's values only), where a second visit of
an edge in the same iteration is pure extra transfer, so it is not used here.
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import DeviceOutOfMemory
from ..gpu.runtime import CudaModule
from ..graph import CSR, Graph
from .metrics import StreamMetrics
from .subway import Piece, plan_pieces

__all__ = ["CPUChunks", "GPUChunks", "SLOTS", "vertex_chunks"]

SLOTS = 3
#: CPU temporaries per streamed edge: source ids widened (8), gathered contributions (8),
#: row index of the edge (8).
CPU_TEMP_PER_EDGE = 24


def _bytes_per_pass(pieces: list[Piece]) -> int:
    return sum(p.edges * 4 + (p.r1 - p.r0 + 1) * 8 for p in pieces)


class CPUChunks:
    """Chunks of the in-CSR summed with numpy (bincount) into the sums."""

    def __init__(self, inn: CSR, free_bytes: int, metrics: StreamMetrics):
        self.inn, self.metrics = inn, metrics
        self.capacity = max(free_bytes * 4 // (4 + CPU_TEMP_PER_EDGE), 16)
        self.chunks = plan_pieces(inn.offsets, 8, 4, self.capacity)
        self.pieces = len(self.chunks)
        self.bytes_per_pass = _bytes_per_pass(self.chunks)

    def pull(self, contrib: np.ndarray, sums: np.ndarray) -> None:
        t0 = time.perf_counter()
        off = self.inn.offsets
        for p in self.chunks:
            local = np.clip(off[p.r0:p.r1 + 1], p.e0, p.e1) - p.e0
            src = self.inn.targets[p.e0:p.e1]  # the chunk that a budgeted reader would copy in
            row = np.repeat(np.arange(p.r1 - p.r0), np.diff(local))
            sums[p.r0:p.r1] += np.bincount(row, weights=contrib[src], minlength=p.r1 - p.r0)
        self.metrics.bytes_to_device += self.bytes_per_pass
        self.metrics.kernel_s += time.perf_counter() - t0

    def finish(self) -> None:
        pass


class GPUChunks:
    """The same chunks on the device: copies on one stream, kernels on :attr:`stream`, the
    chunks in ``slots`` device buffers taken round-robin over the whole run.

    The copy stream holds only the copies, back to back: the copy into a buffer waits (on the
    device) for the kernel that last read it, and for nothing else. The host never waits in
    :meth:`pull`."""

    def __init__(self, graph: Graph, free_bytes: int, metrics: StreamMetrics,
                 slots: int = SLOTS):
        from ..gpu import runtime as rt
        from ..gpu.pinned import pinned_csr, pinned_empty

        self.rt, self.metrics = rt, metrics
        cp = rt.cp()
        self.cp = cp
        free = free_bytes  # the planner's room less the slack (OperatorConfig.free_bytes)
        if free < slots * (1 << 16):
            raise DeviceOutOfMemory(f"edge-chunk streaming: {free} B left for edge chunks")
        slot_bytes = free // slots // 256 * 256
        self.capacity = slot_bytes - 512  # the offsets start 256-B aligned after the sources
        inn = graph.in_csr
        _, self.sources, _ = pinned_csr(graph, "csr:in", inn, False)

        def plan():
            """(pieces, page-locked row offsets of each chunk): clipping 16 M offsets and
            page-locking them costs tens of ms, so once per graph version and capacity."""
            pieces = plan_pieces(inn.offsets, 8, 4, self.capacity)
            local = [np.clip(inn.offsets[p.r0:p.r1 + 1], p.e0, p.e1) - p.e0 for p in pieces]
            buf = pinned_empty(sum(x.size for x in local), np.int64)
            views, pos = [], 0
            for x in local:
                view = buf[pos:pos + x.size]
                view[:] = x
                views.append(view)
                pos += x.size
            return pieces, views

        self.chunks, local = graph.derived(f"edge_chunks:in:{self.capacity}", plan)
        self.pieces = len(self.chunks)
        self.bytes_per_pass = _bytes_per_pass(self.chunks)
        self.copy_stream = cp.cuda.Stream(non_blocking=True)
        self.stream = cp.cuda.Stream(non_blocking=True)
        with rt.translate_oom("edge-chunk streaming"):
            self.bufs = [cp.empty(slot_bytes, dtype=np.uint8) for _ in range(slots)]
        self.kernel = EDGE_STREAM.function("graphdb_ec_pagerank_edges")
        items = 16 * 256  # edges a block takes (edge_stream.cu: EC_ITEMS x threads)
        # per chunk: host sources, host row offsets, offsets' place in the buffer, launch shape
        self.plan = []
        for p, offsets in zip(self.chunks, local):
            src = self.sources[p.e0:p.e1]
            o_off = (p.edges * 4 + 255) // 256 * 256
            self.plan.append((src.ctypes.data, int(src.nbytes), offsets.ctypes.data,
                              int(offsets.nbytes), o_off, np.int64(p.r0), np.int64(p.r1 - p.r0),
                              np.int64(p.edges), (max(1, -(-p.edges // items)),)))
        self.slot_done: list = [None] * slots  # the event after the kernel that read a buffer
        self.k = 0  # chunks enqueued so far (the buffer of the next is k % slots)
        self._events: list = []  # (copy start, copy end, kernel start, kernel end) per chunk

    def pull(self, contrib, sums) -> None:
        """Queue every chunk's copy and kernel: ``sums[v] += contrib[u]`` over the in-edges."""
        cp, cs, ks = self.cp, self.copy_stream, self.stream
        memcpy = cp.cuda.runtime.memcpyAsync
        kernel, bufs, done, nslots = self.kernel, self.bufs, self.slot_done, len(self.bufs)
        for (src, src_n, off, off_n, o_off, r0, rows, edges, grid) in self.plan:
            slot = self.k % nslots
            self.k += 1
            dev = bufs[slot].data.ptr
            if done[slot] is not None:
                cs.wait_event(done[slot])  # the last kernel that read this buffer
            c0 = cp.cuda.Event()
            c0.record(cs)
            memcpy(dev, src, src_n, 1, cs.ptr)  # 1 = cudaMemcpyHostToDevice
            memcpy(dev + o_off, off, off_n, 1, cs.ptr)
            c1 = cp.cuda.Event()
            c1.record(cs)
            ks.wait_event(c1)
            k0 = cp.cuda.Event()
            k0.record(ks)
            with ks:
                kernel(grid, (256,), (np.uint64(dev + o_off), np.uint64(dev), r0, rows, edges,
                                      contrib, sums))
            k1 = cp.cuda.Event()
            k1.record(ks)
            done[slot] = k1
            self._events.append((c0, c1, k0, k1))
        self.metrics.bytes_to_device += self.bytes_per_pass

    def finish(self) -> None:
        """Wait for the device, then fold the chunks' timings into the metrics: transfer and
        kernel time, and how busy the copy engine was between the first copy and the last kernel
        (and why it waited)."""
        cp, ev = self.cp, self._events
        cp.cuda.Device().synchronize()
        if not ev:
            return
        t0 = ev[0][0]
        ms = [[cp.cuda.get_elapsed_time(t0, e) for e in row] for row in ev]
        nslots = len(self.bufs)
        copy = sum(c1 - c0 for c0, c1, _, _ in ms)
        kern = sum(k1 - k0 for _, _, k0, k1 in ms)
        span = ms[-1][3]
        slot_wait = other_gap = 0.0
        for j in range(1, len(ms)):
            gap = ms[j][0] - ms[j - 1][1]
            if gap <= 0:
                continue
            if j >= nslots and ms[j][0] - ms[j - nslots][3] < 0.02:
                slot_wait += gap  # the copy waited for the kernel that read its buffer
            else:
                other_gap += gap
        self.metrics.transfer_s += copy / 1e3
        self.metrics.kernel_s += kern / 1e3
        self.metrics.extra["timeline"] = {
            "chunks": len(ms), "slots": nslots, "span_s": span / 1e3,
            "copy_busy_fraction": copy / span if span > 0 else None,
            "copy_gap_waiting_for_kernel_s": slot_wait / 1e3,
            "copy_gap_other_s": other_gap / 1e3,
            "kernel_longer_than_copy": sum((k1 - k0) > (c1 - c0) for c0, c1, k0, k1 in ms)}
        self._events.clear()


def vertex_chunks(graph: Graph, free_bytes: int, bytes_per_edge: int
                  ) -> tuple[list[CSR], list[tuple[int, int]], int]:
    """(the CSRs a vertex's neighbourhood spans: out, and in for a directed graph; vertex
    ranges [a, b) whose edges fit ``free_bytes`` at ``bytes_per_edge``; the number of
    oversized chunks, single vertices larger than a chunk)."""
    csrs = [graph.out_csr] + ([graph.in_csr] if graph.directed else [])
    deg = sum(c.degrees() for c in csrs)
    off = np.zeros(graph.num_vertices + 1, dtype=np.int64)
    np.cumsum(deg, out=off[1:])
    capacity = max(free_bytes * 4 // bytes_per_edge, 16)
    pieces = plan_pieces(off, 8 * len(csrs), 4, capacity)
    merged: list[list[int]] = []  # a hub cut over several pieces becomes one oversized chunk
    for p in pieces:
        if merged and merged[-1][1] > p.r0:
            merged[-1][1] = p.r1
        else:
            merged.append([p.r0, p.r1])
    return csrs, [(a, b) for a, b in merged], len(pieces) - len(merged)


#: ``edge_stream.cu``: the pull sum of one chunk.
EDGE_STREAM = CudaModule("operators/edge_stream.cu")
