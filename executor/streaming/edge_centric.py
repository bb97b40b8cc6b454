"""Edge-chunk streaming for all-active algorithms (WolfGraph): PageRank and CDLP past the budget.

Every iteration reads every edge, so nothing can be skipped: the only levers are to move each
edge once per iteration in as few bytes as possible and to hide the computation under the copy.
The vertex state stays in the budget (PageRank: rank, contribution, next sum and the inverse
out-degree, 32 B a vertex; CDLP: two label arrays); the edges stream in chunks:

- PageRank pulls over the in-CSR: a chunk is a range of its edges (the sources, 4 B an edge)
  plus the offsets of the rows it covers (:func:`executor.streaming.subway.plan_pieces`, so a
  hub's row may be cut; a cut row adds its partial sum atomically). Pull needs no per-edge
  atomics, so the kernel runs far faster than the bus and the copy is the whole cost. On the GPU
  chunks go round-robin over ``SLOTS`` streams (triple buffering): the copy of chunk k+1 and k+2
  overlaps the kernel of chunk k; the edges are copied straight out of the page-locked CSR.
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
from ..errors import DeviceOutOfMemory
from ..graph import Graph
from .metrics import StreamMetrics, check_state
from .subway import plan_pieces

__all__ = ["pagerank_edge_centric", "cdlp_edge_centric", "PAGERANK_STATE_BYTES", "SLOTS"]

#: rank, next sums, inverse out-degree, contributions (8 B each), the dangling mask (1) and room
#: for the pool's rounding
PAGERANK_STATE_BYTES = 40
CDLP_STATE_BYTES = 24
SLOTS = 3
#: CPU temporaries per streamed edge: source ids widened (8), gathered contributions (8),
#: row index of the edge (8).
CPU_TEMP_PER_EDGE = 24


def pagerank_edge_centric(graph: Graph, damping: float = 0.85, max_iterations: int = 20,
                          tolerance: float = 0.0, *, device: str = "cpu", budget_bytes: int
                          ) -> AlgorithmOutput:
    """PageRank by edge-chunk streaming; same columns as the resident pagerank."""
    t_start = time.perf_counter()
    n = graph.num_vertices
    metrics = StreamMetrics("edge_centric", device, int(budget_bytes))
    state = check_state("pagerank", n, PAGERANK_STATE_BYTES, budget_bytes)
    if n == 0:
        return AlgorithmOutput({"vertex": np.zeros(0, np.int64), "rank": np.zeros(0)},
                               metrics.as_dict())
    inn = graph.in_csr
    out_deg = graph.out_csr.degrees()
    inv = np.zeros(n)
    nz = out_deg > 0
    inv[nz] = 1.0 / out_deg[nz]
    run = _GPUPageRank if device == "gpu" else _CPUPageRank
    engine = run(inn, inv, budget_bytes - state, metrics)
    rank = engine.start(np.full(n, 1.0 / n))
    teleport = (1.0 - damping) / n
    t_loop = time.perf_counter()  # the steady state: set-up (plan, staging, uploads) excluded
    for _ in range(max_iterations):
        engine.iteration(rank)
        rank, change = engine.apply(damping, teleport, ~nz)
        metrics.outer_iterations += 1
        metrics.per_iteration.append({"active_vertices": n, "active_edges": inn.num_edges,
                                      "mode": "chunks", "pieces": len(engine.pieces),
                                      "bytes": engine.bytes_per_iteration})
        if tolerance > 0 and change < tolerance:
            break
    iterations_s = time.perf_counter() - t_loop
    rank = engine.finish(rank)
    metrics.partitions = len(engine.pieces) * metrics.outer_iterations
    metrics.extra["iterations_s"] = round(iterations_s, 6)
    if iterations_s > 0:
        metrics.extra["streamed_bytes_per_s"] = engine.bytes_per_iteration * \
            metrics.outer_iterations / iterations_s
    metrics.extra["chunk_bytes"] = int(engine.capacity)
    return AlgorithmOutput({"vertex": np.arange(n, dtype=np.int64), "rank": rank},
                           metrics.as_dict(time.perf_counter() - t_start))


class _CPUPageRank:
    """Chunks of the in-CSR summed with numpy (bincount) into the next-rank array."""

    def __init__(self, inn, inv, free: int, metrics: StreamMetrics):
        self.inn, self.inv, self.metrics = inn, inv, metrics
        self.capacity = free * 4 // (4 + CPU_TEMP_PER_EDGE)
        self.pieces = plan_pieces(inn.offsets, 8, 4, self.capacity)
        self.bytes_per_iteration = sum(p.edges * 4 + (p.r1 - p.r0 + 1) * 8 for p in self.pieces)

    def start(self, rank):
        self.next = np.zeros_like(rank)
        return rank

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

    def apply(self, damping, teleport, dangling):
        return _apply(np, self, damping, teleport, dangling, self._rank)

    def finish(self, rank):
        return rank


def _apply(xp, state, damping, teleport, dangling_mask, rank):
    """The rank update after the sums of one iteration: (new rank, L1 change).

    In place, and on the GPU without a vertex-sized temporary (two fused reductions): the sums
    become the new ranks and the old ranks the next iteration's sums, so the state stays at the
    bytes the planner counted.
    """
    if xp is np:
        dangling = float(rank[dangling_mask].sum())
    else:
        dangling = float(_gpu_reductions()[0](rank, dangling_mask))
    spread = damping * dangling / rank.size
    new = state.next
    new *= damping
    new += teleport + spread
    if xp is np:
        change = float(np.abs(new - rank).sum())
    else:
        change = float(_gpu_reductions()[1](new, rank))
    state.next = rank
    return new, change


_REDUCTIONS = None


def _gpu_reductions():
    global _REDUCTIONS
    if _REDUCTIONS is None:
        from ..gpu import runtime as rt

        cp = rt.cp()
        _REDUCTIONS = (
            cp.ReductionKernel("float64 r, bool d", "float64 s", "d ? r : 0.0", "a + b",
                               "s = a", "0", "graphdb_dangling_sum"),
            cp.ReductionKernel("float64 a, float64 b", "float64 s", "fabs(a - b)", "a + b",
                               "s = a", "0", "graphdb_l1_change"))
    return _REDUCTIONS


class _GPUPageRank:
    """The same chunks on the device, round-robin over SLOTS streams (copy/compute overlap)."""

    def __init__(self, inn, inv, free: int, metrics: StreamMetrics):
        from ..gpu import runtime as rt
        from . import gpu

        self.rt, self.gpu, self.metrics = rt, gpu, metrics
        cp = rt.cp()
        self.cp = cp
        self.inn = inn
        free -= gpu.slack(free)
        if free < SLOTS * (1 << 16):
            raise DeviceOutOfMemory(f"pagerank: {free} B left for edge chunks")
        self.capacity = free // SLOTS - 64
        self.pieces = plan_pieces(inn.offsets, 8, 4, self.capacity)
        self.bytes_per_iteration = sum(p.edges * 4 + (p.r1 - p.r0 + 1) * 8 for p in self.pieces)
        with rt.translate_oom("streamed pagerank"):
            self.inv = cp.asarray(inv)
            self.next = cp.zeros(inv.size)
            self.slots = [gpu.Slot(free // SLOTS, staging=False) for _ in range(SLOTS)]
        _, self.sources, _ = gpu.pinned_csr(inn, False)
        # Row offsets of every chunk, page-locked once (they do not change between iterations):
        # an iteration's chunks are then enqueued without the host waiting for a slot.
        local = [np.clip(inn.offsets[p.r0:p.r1 + 1], p.e0, p.e1) - p.e0 for p in self.pieces]
        buf = gpu.pinned_empty(sum(x.size for x in local), np.int64)
        self.local, pos = [], 0
        for x in local:
            view = buf[pos:pos + x.size]
            view[:] = x
            self.local.append(view)
            pos += x.size
        self.kernel = gpu.kernel("graphdb_ec_pagerank_pull")
        self._timings: list = []

    def start(self, rank):
        return self.cp.asarray(rank)

    def iteration(self, rank) -> None:
        cp, gpu = self.cp, self.gpu
        cur = cp.cuda.get_current_stream()
        # The last iteration's contributions are read (apply() synchronised): free them before
        # the new ones are allocated, or both would be held against the budget.
        self._contrib = None
        self._contrib = contrib = rank * self.inv  # kept until the slots have read it
        self.next.fill(0)
        ready = cp.cuda.Event()
        ready.record(cur)
        for slot in self.slots:  # non-blocking streams: they wait for contrib and next
            slot.stream.wait_event(ready)
        for k, p in enumerate(self.pieces):
            slot = self.slots[k % SLOTS]  # its stream orders the reuse of its buffer
            local = self.local[k]
            o_off = (p.edges * 4 + 7) // 8 * 8
            start = slot.record()
            gpu.h2d(slot.device, self.sources[p.e0:p.e1], slot.stream)
            gpu.h2d(slot.device, local, slot.stream, o_off)
            mid = slot.record()
            d_src = slot.device[: p.edges * 4].view(np.int32)
            d_off = slot.device[o_off:o_off + local.nbytes].view(np.int64)
            rows = p.r1 - p.r0
            with slot.stream:
                self.kernel((self.rt.grid_for(rows * 32, 256),), (256,),
                            (d_off, d_src, np.int64(p.r0), np.int64(rows), contrib, self.next))
            slot.done = slot.record()
            self._timings.append((start, mid, slot.done))
        for slot in self.slots:  # the rank update waits on the device, not on the host
            if slot.done is not None:
                cur.wait_event(slot.done)
        self.metrics.bytes_to_device += self.bytes_per_iteration
        self._rank = rank

    def apply(self, damping, teleport, dangling):
        if not hasattr(self, "_dangling"):
            self._dangling = self.cp.asarray(dangling)
        new, change = _apply(self.cp, self, damping, teleport, self._dangling, self._rank)
        return new, change

    def finish(self, rank):
        cp = self.cp
        cp.cuda.Device().synchronize()
        for start, mid, end in self._timings:
            self.metrics.transfer_s += cp.cuda.get_elapsed_time(start, mid) / 1e3
            self.metrics.kernel_s += cp.cuda.get_elapsed_time(mid, end) / 1e3
        self._timings.clear()
        self.metrics.bytes_from_device += int(rank.nbytes)
        return cp.asnumpy(rank)


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
