"""Edge-chunk streaming for all-active algorithms (WolfGraph): PageRank and CDLP past the budget.

Every iteration reads every edge, so nothing can be skipped: the only levers are to move each
edge once per iteration in as few bytes as possible and to hide the computation under the copy.
The vertex state stays in the budget (PageRank: rank, contribution, next sum and the inverse
out-degree, 32 B a vertex; CDLP: two label arrays); the edges stream in chunks:

- PageRank pulls over the in-CSR: a chunk is a range of its edges (the sources, 4 B an edge)
  plus the offsets of the rows it covers (:func:`graphdb.executor.streaming.subway.plan_pieces`, so a
  hub's row may be cut; a cut row adds its partial sum atomically). Pull needs no per-edge
  atomics; the kernel is balanced by edges (a hub's row is spread over many threads), so it runs
  about four times faster than the bus and the copy is the whole cost. On the GPU the copies go
  on one stream, back to back, straight out of the page-locked CSR into ``SLOTS`` device buffers
  taken round-robin over the whole run (triple buffering), and the kernels on another: a copy
  waits only for the kernel that last read its buffer, so the next iteration's first chunks are
  copied while this one's last kernels and the rank update run. NOTES.md has the measurements.
- CDLP needs each vertex's whole neighbourhood at once (the mode of its neighbours' labels), so
  its chunks are vertex ranges of the out- and in-CSR together, never cut; a single vertex
  larger than a chunk gets an oversized chunk of its own (reported in the metrics).

WolfGraph's concatenated edge list (CEL) appends, to each subgraph, the successors of its edges
already processed in the pass, so that values propagate further per pass. It pays for algorithms
that run to a fixed point asynchronously (its SSSP); PageRank and CDLP have Graphalytics' synchronous
semantics (each iteration reads the previous iteration's values only), where a second visit of an
edge in the same iteration is pure extra transfer, so it is not used here.

Graphalytics PageRank: ``PR'(v) = (1-d)/|V| + d * (sum_{u->v} PR(u)/outdeg(u) + D/|V|)``, D the
rank of dangling vertices.
"""

from __future__ import annotations

import time

import numpy as np

from ..algorithms.registry import AlgorithmOutput
from ..cancel import checkpoint
from ..errors import DeviceOutOfMemory
from ..graph import Graph
from .metrics import StreamMetrics, check_state
from .subway import plan_pieces

__all__ = ["pagerank_edge_centric", "cdlp_edge_centric", "PAGERANK_STATE_BYTES", "SLOTS"]

#: rank, next sums, inverse out-degree, contributions (8 B each), the CPU's dangling mask (1; the
#: GPU reads inv == 0) and room for the pool's rounding
PAGERANK_STATE_BYTES = 40
CDLP_STATE_BYTES = 24
SLOTS = 3
#: CPU temporaries per streamed edge: source ids widened (8), gathered contributions (8),
#: row index of the edge (8).
CPU_TEMP_PER_EDGE = 24


def pagerank_edge_centric(graph: Graph, damping: float = 0.85, max_iterations: int = 20,
                          tolerance: float = 0.0, *, device: str = "cpu", budget_bytes: int,
                          slots: int = SLOTS, timeline: bool = False) -> AlgorithmOutput:
    """PageRank by edge-chunk streaming; same columns as the resident pagerank.

    On the GPU, ``slots`` device buffers share the chunk space, and ``timeline`` adds each chunk's
    copy and kernel interval (ms from the first copy) to the metrics."""
    t_start = time.perf_counter()
    n = graph.num_vertices
    metrics = StreamMetrics("edge_centric", device, int(budget_bytes))
    state = check_state("pagerank", n, PAGERANK_STATE_BYTES, budget_bytes)
    if n == 0:
        return AlgorithmOutput({"vertex": np.zeros(0, np.int64), "rank": np.zeros(0)},
                               metrics.as_dict())
    inn = graph.in_csr
    if device == "gpu":
        inv = _inverse_out_degrees(graph.out_csr, pinned=True)
        engine = _GPUPageRank(inn, inv, budget_bytes - state, metrics, slots, timeline)
    else:
        inv = _inverse_out_degrees(graph.out_csr)
        engine = _CPUPageRank(inn, inv, budget_bytes - state, metrics)
    rank = engine.start(1.0 / n)
    teleport = (1.0 - damping) / n
    t_loop = time.perf_counter()  # the steady state: set-up (plan, staging, uploads) excluded
    for _ in range(max_iterations):
        checkpoint()
        engine.iteration(rank)
        rank, change = engine.apply(damping, teleport)
        metrics.outer_iterations += 1
        metrics.per_iteration.append({"active_vertices": n, "active_edges": inn.num_edges,
                                      "mode": "chunks", "pieces": len(engine.pieces),
                                      "bytes": engine.bytes_per_iteration})
        if tolerance > 0 and float(change) < tolerance:  # the GPU's one host wait an iteration
            break
    engine.sync()
    t_end = time.perf_counter()
    iterations_s = t_end - t_loop
    rank = engine.finish(rank)
    metrics.extra["setup_s"] = round(t_loop - t_start, 6)
    metrics.extra["result_s"] = round(time.perf_counter() - t_end, 6)
    metrics.partitions = len(engine.pieces) * metrics.outer_iterations
    metrics.extra["iterations_s"] = round(iterations_s, 6)
    if iterations_s > 0:
        metrics.extra["streamed_bytes_per_s"] = engine.bytes_per_iteration * \
            metrics.outer_iterations / iterations_s
    metrics.extra["chunk_bytes"] = int(engine.capacity)
    return AlgorithmOutput({"vertex": np.arange(n, dtype=np.int64), "rank": rank},
                           metrics.as_dict(time.perf_counter() - t_start))


_INV: dict = {}


def _inverse_out_degrees(out, pinned: bool = False) -> np.ndarray:
    """1 / out-degree (0 for dangling vertices); for the GPU page-locked and kept per graph, so a
    call uploads it at the bus's rate instead of recomputing and copying from pageable memory."""
    if pinned:
        hit = _INV.get(id(out))
        if hit is not None and hit[0] is out:
            return hit[1]
    deg = out.degrees()
    inv = np.zeros(deg.size)
    nz = deg > 0
    np.divide(1.0, deg, out=inv, where=nz)
    if not pinned:
        return inv
    from . import gpu

    buf = gpu.pinned_empty(deg.size, np.float64)
    buf[:] = inv
    _INV.clear()
    _INV[id(out)] = (out, buf)
    return buf


class _CPUPageRank:
    """Chunks of the in-CSR summed with numpy (bincount) into the next-rank array."""

    def __init__(self, inn, inv, free: int, metrics: StreamMetrics):
        self.inn, self.inv, self.metrics = inn, inv, metrics
        self.capacity = free * 4 // (4 + CPU_TEMP_PER_EDGE)
        self.pieces = plan_pieces(inn.offsets, 8, 4, self.capacity)
        self.bytes_per_iteration = sum(p.edges * 4 + (p.r1 - p.r0 + 1) * 8 for p in self.pieces)

    def start(self, value: float):
        self.next = np.zeros(self.inv.size)
        self.dangling = self.inv == 0
        return np.full(self.inv.size, value)

    def iteration(self, rank) -> None:
        t0 = time.perf_counter()
        self._rank = rank
        contrib = rank * self.inv
        self.next[:] = 0.0
        off = self.inn.offsets
        for p in self.pieces:
            local = np.clip(off[p.r0:p.r1 + 1], p.e0, p.e1) - p.e0
            src = self.inn.targets[p.e0:p.e1]  # the chunk that a budgeted reader would copy in
            row = np.repeat(np.arange(p.r1 - p.r0), np.diff(local))
            self.next[p.r0:p.r1] += np.bincount(row, weights=contrib[src], minlength=p.r1 - p.r0)
        self.metrics.bytes_to_device += self.bytes_per_iteration
        self.metrics.kernel_s += time.perf_counter() - t0

    def apply(self, damping, teleport):
        return _apply(self, damping, teleport, self.dangling, self._rank)

    def sync(self) -> None:
        pass

    def finish(self, rank):
        return rank


def _apply(state, damping, teleport, dangling_mask, rank):
    """The rank update after the sums of one iteration, in place: (new rank, L1 change). The
    sums become the new ranks and the old ranks the next iteration's sums."""
    spread = damping * float(rank[dangling_mask].sum()) / rank.size
    new = state.next
    new *= damping
    new += teleport + spread
    change = float(np.abs(new - rank).sum())
    state.next = rank
    return new, change


_PLANS: dict = {}


def _gpu_plan(inn, capacity: int):
    """(pieces, page-locked row offsets of each chunk) for ``inn`` and a chunk capacity, made once
    per graph and capacity (clipping 16 M offsets and page-locking them costs tens of ms)."""
    key = (id(inn), int(capacity))
    hit = _PLANS.get(key)
    if hit is not None and hit[0] is inn:
        return hit[1], hit[2]
    from . import gpu

    pieces = plan_pieces(inn.offsets, 8, 4, capacity)
    local = [np.clip(inn.offsets[p.r0:p.r1 + 1], p.e0, p.e1) - p.e0 for p in pieces]
    buf = gpu.pinned_empty(sum(x.size for x in local), np.int64)
    views, pos = [], 0
    for x in local:
        view = buf[pos:pos + x.size]
        view[:] = x
        views.append(view)
        pos += x.size
    _PLANS.clear()  # one graph's plan at a time, as pinned_csr keeps one graph's edges
    _PLANS[key] = (inn, pieces, views)
    return pieces, views


class _GPUPageRank:
    """The same chunks on the device: copies on one stream, kernels on another (copy/compute
    overlap), the chunks in ``slots`` device buffers taken round-robin over the whole run.

    The copy stream holds only the copies, back to back: the copy into a buffer waits (on the
    device) for the kernel that last read it, and for nothing else, so the next iteration's first
    chunks are copied while this iteration's last kernels and the rank update run (the edges do
    not depend on the ranks). The kernel stream holds the kernels and the rank update in order,
    each kernel after its chunk's copy. The host never waits inside the loop unless a tolerance
    asks for the change; the ranks, the sums and the contributions are updated in place.
    """

    def __init__(self, inn, inv, free: int, metrics: StreamMetrics, slots: int = SLOTS,
                 timeline: bool = False):
        from ..gpu import runtime as rt
        from . import gpu

        self.rt, self.gpu, self.metrics = rt, gpu, metrics
        cp = rt.cp()
        self.cp = cp
        self.inn = inn
        self.n = inv.size
        free -= gpu.slack(free)
        if free < slots * (1 << 16):
            raise DeviceOutOfMemory(f"pagerank: {free} B left for edge chunks")
        slot_bytes = free // slots // 256 * 256
        self.capacity = slot_bytes - 512  # the offsets start 256-B aligned after the sources
        self.pieces, self.local = _gpu_plan(inn, self.capacity)
        self.bytes_per_iteration = sum(p.edges * 4 + (p.r1 - p.r0 + 1) * 8 for p in self.pieces)
        self.copy_stream = cp.cuda.Stream(non_blocking=True)
        self.kernel_stream = cp.cuda.Stream(non_blocking=True)
        # allocated on the current stream, as the rest of the operator's memory (CuPy's pool
        # keeps a stream's freed blocks for that stream)
        with rt.translate_oom("streamed pagerank"):
            self.inv = cp.empty(inv.size)
            gpu.h2d(self.inv, inv, cp.cuda.get_current_stream())  # page-locked: at the bus's rate
            self.next = cp.zeros(inv.size)
            self.contrib = cp.empty(inv.size)
            self.sums = cp.zeros(2)  # dangling rank, L1 change
            self.bufs = [cp.empty(slot_bytes, dtype=np.uint8) for _ in range(slots)]
        _, self.sources, _ = gpu.pinned_csr(inn, False)
        self.kernel = gpu.kernel("graphdb_ec_pagerank_edges")
        self.prepare = gpu.kernel("graphdb_ec_pagerank_prepare")
        self.update = gpu.kernel("graphdb_ec_pagerank_update")
        self.vgrid = (rt.grid_for(self.n, 256),)
        items = 16 * 256  # edges a block takes (streaming.cu: EC_ITEMS x threads)
        # per chunk: host sources, host row offsets, offsets' place in the buffer, launch shape
        self.plan = []
        for p, local in zip(self.pieces, self.local):
            src = self.sources[p.e0:p.e1]
            o_off = (p.edges * 4 + 255) // 256 * 256
            self.plan.append((src.ctypes.data, int(src.nbytes), local.ctypes.data,
                              int(local.nbytes), o_off, np.int64(p.r0), np.int64(p.r1 - p.r0),
                              np.int64(p.edges), (max(1, -(-p.edges // items)),)))
        self.slot_done: list = [None] * slots  # the event after the kernel that read a buffer
        self.k = 0  # chunks enqueued so far (the buffer of the next is k % slots)
        self.timeline = timeline
        self._events: list = []  # (copy start, copy end, kernel start, kernel end) per chunk

    def start(self, value: float):
        with self.rt.translate_oom("streamed pagerank"):
            self.rank = self.cp.full(self.n, value)
        self.cp.cuda.Device().synchronize()  # the set-up is done before the iterations
        return self.rank

    def iteration(self, rank) -> None:
        cs, ks = self.copy_stream, self.kernel_stream
        contrib, nxt, n = self.contrib, self.next, np.int64(self.n)
        with ks:  # the current stream: the kernels below are launched on it
            self.sums.fill(0)
            self.prepare(self.vgrid, (256,), (rank, self.inv, n, contrib, nxt, self.sums))
            self._enqueue_chunks(cs, ks, contrib, nxt)
        self.metrics.bytes_to_device += self.bytes_per_iteration

    def _enqueue_chunks(self, cs, ks, contrib, nxt) -> None:
        cp = self.cp
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
            kernel(grid, (256,), (np.uint64(dev + o_off), np.uint64(dev), r0, rows, edges,
                                  contrib, nxt))
            k1 = cp.cuda.Event()
            k1.record(ks)
            done[slot] = k1
            self._events.append((c0, c1, k0, k1))

    def apply(self, damping, teleport):
        """The new ranks into the sums' array (on the kernel stream, after the chunks' kernels);
        returns the L1 change as a device scalar (read only when a tolerance asks for it)."""
        new, old = self.next, self.rank
        with self.kernel_stream:
            self.update(self.vgrid, (256,), (new, old, np.int64(self.n), np.float64(damping),
                                             np.float64(teleport), np.float64(1.0 / self.n),
                                             self.sums))
        self.next, self.rank = old, new
        return new, self.sums[1]

    def sync(self) -> None:
        self.kernel_stream.synchronize()

    def finish(self, rank):
        cp = self.cp
        cp.cuda.Device().synchronize()
        self._summarise()
        self.metrics.bytes_from_device += int(rank.nbytes)
        return cp.asnumpy(rank)

    def _summarise(self) -> None:
        """transfer_s and kernel_s (sums over the chunks) and the copy/kernel timeline: how busy
        the copy engine was between the first copy and the last kernel, and why it waited."""
        cp, ev = self.cp, self._events
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
            "kernel_longer_than_copy": sum((k1 - k0) > (c1 - c0) for c0, c1, k0, k1 in ms),
            "max_kernel_ms": max(k1 - k0 for _, _, k0, k1 in ms),
            "max_copy_ms": max(c1 - c0 for c0, c1, _, _ in ms)}
        if self.timeline:
            self.metrics.extra["chunk_timeline_ms"] = [[round(x, 4) for x in row] for row in ms]
        self._events.clear()


# -- CDLP ---------------------------------------------------------------------------------------


def chunk_modes(xp, row, nbr_label, nrows: int, current):
    """Most frequent neighbour label per row, ties to the smallest (numpy or cupy ``xp``).

    ``row`` (local row of each neighbour relation) and ``nbr_label`` are aligned; rows without
    neighbours keep ``current``.
    """
    labels = current.copy()
    if row.size == 0:
        return labels
    order = xp.lexsort(xp.stack((nbr_label, row)))
    row, lab = row[order], nbr_label[order]
    new_run = xp.concatenate((xp.ones(1, dtype=bool), (row[1:] != row[:-1]) | (lab[1:] != lab[:-1])))
    starts = xp.flatnonzero(new_run)
    counts = xp.diff(xp.concatenate((starts, xp.asarray([row.size]))))
    r, lab = row[starts], lab[starts]
    best = xp.lexsort(xp.stack((lab, -counts, r)))
    r, lab = r[best], lab[best]
    first = xp.concatenate((xp.ones(1, dtype=bool), r[1:] != r[:-1]))
    labels[r[first]] = lab[first]
    return labels


def cdlp_edge_centric(graph: Graph, max_iterations: int = 10, *, device: str = "cpu",
                      budget_bytes: int) -> AlgorithmOutput:
    """CDLP (Graphalytics) by vertex-range chunks of the out- and in-CSR; same columns as cdlp."""
    t_start = time.perf_counter()
    n = graph.num_vertices
    metrics = StreamMetrics("edge_centric", device, int(budget_bytes))
    state = check_state("cdlp", n, CDLP_STATE_BYTES, budget_bytes)
    csrs = [graph.out_csr] + ([graph.in_csr] if graph.directed else [])
    deg = sum(c.degrees() for c in csrs)
    off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(deg, out=off[1:])
    per_edge = 4 + (16 if device == "gpu" else CPU_TEMP_PER_EDGE) * 2  # ids, sort keys
    capacity = max((budget_bytes - state) * 4 // per_edge, 16)
    pieces = plan_pieces(off, 8 * len(csrs), 4, capacity)
    merged: list[list[int]] = []  # a hub cut over several pieces becomes one oversized chunk
    for p in pieces:
        if merged and merged[-1][1] > p.r0:
            merged[-1][1] = p.r1
        else:
            merged.append([p.r0, p.r1])
    metrics.extra["oversized_chunks"] = len(pieces) - len(merged)
    if device == "gpu":
        from ..gpu import runtime as rt

        xp = rt.cp()
    else:
        xp = np
    labels = xp.arange(n, dtype=np.int64)
    for _ in range(max_iterations):
        checkpoint()
        t0 = time.perf_counter()
        new = labels.copy()
        for a, b in merged:
            rows, nbrs = [], []
            for c in csrs:
                e0, e1 = int(c.offsets[a]), int(c.offsets[b])
                chunk = xp.asarray(c.targets[e0:e1])
                metrics.bytes_to_device += int(chunk.nbytes) + 8 * (b - a + 1)
                local = xp.asarray(np.repeat(np.arange(b - a), np.diff(c.offsets[a:b + 1])))
                rows.append(local)
                nbrs.append(labels[chunk])
            new[a:b] = chunk_modes(xp, xp.concatenate(rows), xp.concatenate(nbrs), b - a,
                                   labels[a:b])
        labels = new
        metrics.kernel_s += time.perf_counter() - t0
        metrics.outer_iterations += 1
        metrics.per_iteration.append({"active_vertices": n, "active_edges": int(off[-1]),
                                      "mode": "chunks", "pieces": len(merged), "bytes": 0})
    metrics.partitions = len(merged) * metrics.outer_iterations
    out = labels if xp is np else xp.asnumpy(labels)
    return AlgorithmOutput({"vertex": np.arange(n, dtype=np.int64), "label": out},
                           metrics.as_dict(time.perf_counter() - t_start))
