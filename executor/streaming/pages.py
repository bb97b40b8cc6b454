"""Topology streaming from storage (GTS, SIGMOD '16): BFS and PageRank over slotted pages.

For graphs that fit neither the device nor host memory. The topology is never materialised: the
slotted pages stream from the store through the buffer manager (fixed host frames, page-locked
when a GPU is present) and only the vertex state (GTS's WA: depths, or ranks and contributions)
is held for the whole graph.

- BFS-like: a level reads only the pages of its frontier. A vertex reached at this level marks
  the page of its *record* (the page id is part of the neighbour's record id, so no lookup is
  needed): that bitmap is GTS's nextPIDSet, expanded to whole large-page chains by the page table.
- PageRank-like: every page of the in-direction, every iteration (pull: a page's vertices sum
  their in-neighbours' contributions; a hub's large pages add partial sums).
- GPU: pages are copied from their pinned frames on ``STREAMS`` streams (a frame stays pinned
  until its copy has completed, then goes back to the pool), decoded and processed by one kernel
  launch each (``cuda/streaming.cu``); a device page cache (whatever the budget leaves after the
  vertex state and the stream buffers) keeps the first pages that fit and serves them from then
  on: scan-resistant, where LRU would evict every page of an all-pages pass before its reuse. The CPU version decodes the same pages with :func:`graphdb.storage.decode_page`.

The cost model of GTS (its Eq. 1 and 2) predicts the time from the bytes moved:
``2 |WA| / c1 + sum over levels of pages_l * page_size * (1 - hit rate) / c2 + t_call * pages``;
:func:`predict_seconds` evaluates it on what a run moved, so EXPLAIN ANALYZE can show the
prediction beside the measurement.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque

import numpy as np

from graphdb.storage import decode_page
from graphdb.storage.pages import pages_of_vertices

from ..algorithms.registry import AlgorithmOutput, check_source
from ..cancel import checkpoint
from ..errors import DeviceOutOfMemory, InvalidArgument
from .metrics import StreamMetrics, check_state

__all__ = ["bfs_pages", "pagerank_pages", "predict_seconds", "BANDWIDTH", "CALL_SECONDS"]

STREAMS = 4
#: Bytes per second of (c1 chunk copy, c2 streaming copy) by device: an H100 from page-locked
#: memory (measured 54.9 GB/s), and on the CPU a numpy decode of the page (about 110 MB/s, R-MAT
#: 21 pages on the device machine's CPU), which is the CPU's "transfer".
BANDWIDTH = {"gpu": (50e9, 40e9), "cpu": (4e9, 1.1e8)}
#: Per-page fixed cost: on the GPU the Python side of a page (pin, prefetch, copy call, launch),
#: about 150 us measured; on the CPU the decode's fixed part.
CALL_SECONDS = {"gpu": 150e-6, "cpu": 200e-6}
#: Reading a page that missed the host pool out of LMDB and verifying its checksum (GTS's SSD
#: term, c_io): about 3 GB/s measured on the device machine.
STORE_BYTES_PER_SECOND = 3e9
BFS_STATE_BYTES = 4 + 1
#: rank, contributions, sums, inverse degree, the new ranks and the L1 change's temporary
PAGERANK_STATE_BYTES = 8 * 6


def predict_seconds(device: str, state_bytes: int, page_bytes_per_step: list[int],
                    pages_per_step: list[int], hit_rate: float = 0.0,
                    store_bytes: int = 0) -> float:
    """GTS's cost model (Eq. 1/2, one GPU): state both ways at c1, pages at c2 less the device
    cache's hits, per-page calls, and the pages read from the store (host pool misses)."""
    c1, c2 = BANDWIDTH[device]
    t = 2 * state_bytes / c1 + store_bytes / STORE_BYTES_PER_SECOND
    for nbytes, pages in zip(page_bytes_per_step, pages_per_step):
        t += nbytes * (1.0 - hit_rate) / c2 + CALL_SECONDS[device] * pages
    return t


def _stored(graph):
    if getattr(graph, "_buffers", None) is None:
        raise InvalidArgument(f"graph '{graph.name}' has no stored pages (page streaming reads "
                              "a catalog graph through the buffer manager)")
    return graph


class _CPUPages:
    """Pages decoded with numpy, one at a time, straight out of the pinned frame."""

    name = "cpu"

    def __init__(self, graph, direction: str, metrics: StreamMetrics, budget: int):
        self.graph, self.direction, self.metrics = graph, direction, metrics

    def for_each(self, pids, fn) -> None:
        for key, view in self.graph.pages(self.direction, pids):
            self.metrics.bytes_to_device += len(view)
            self.metrics.cache_misses += 1
            fn(key.n, decode_page(view))


def _bfs_cpu_step(depth, pfv, level, next_pages):
    def step(pid, page):
        sel = depth[page.vertices] == level
        if not sel.any():
            return
        mask = np.repeat(sel, page.degrees)
        rid_pid = page.rid_pid[mask]
        u = pfv[rid_pid] + page.rid_slot[mask]
        new = depth[u] < 0
        depth[u[new]] = level + 1
        next_pages[rid_pid[new]] = True
    return step


def bfs_pages(graph, source: int, max_depth: int | None = None, *, device: str = "cpu",
              budget_bytes: int) -> AlgorithmOutput:
    """BFS by frontier pages; same columns as the resident bfs."""
    check_source(graph, source, "bfs")
    graph = _stored(graph)
    t_start = time.perf_counter()
    n = graph.num_vertices
    metrics = StreamMetrics("pages", device, int(budget_bytes))
    state = check_state("bfs", n, BFS_STATE_BYTES, budget_bytes)
    pfv = graph.page_table("out")
    frame = graph._buffers.frame_bytes
    read0 = graph._buffers.stats()["bytes_read"]
    pids = graph.pages_of(np.array([source]), "out")
    level = 0
    pages_per_level = []
    if device == "gpu":
        engine = _GPUPages(graph, "out", metrics, budget_bytes - state, pfv)
        depth = engine.bfs_state(n, source)
    else:
        engine = _CPUPages(graph, "out", metrics, budget_bytes)
        depth = np.full(n, -1, dtype=np.int32)
        depth[source] = 0
    while pids.size and (max_depth is None or level < max_depth):
        checkpoint()
        t0 = time.perf_counter()
        pages_per_level.append(int(pids.size))
        if device == "gpu":
            marked = engine.bfs_level(pids, depth, level)
        else:
            next_pages = np.zeros(len(pfv), dtype=bool)
            engine.for_each(pids, _bfs_cpu_step(depth, pfv, level, next_pages))
            marked = np.flatnonzero(next_pages)
        metrics.kernel_s += time.perf_counter() - t0
        metrics.iteration(active_vertices=0, active_edges=0, mode="pages", pieces=pids.size,
                          nbytes=int(pids.size) * frame)
        pids = pages_of_vertices(pfv, pfv[marked]) if marked.size else marked
        level += 1
    if device == "gpu":
        depth = engine.finish(depth)
    reached = np.flatnonzero(depth >= 0)
    metrics.partitions = sum(pages_per_level)
    hit = metrics.cache_hits / max(1, metrics.cache_hits + metrics.cache_misses)
    metrics.extra.update({
        "pages_per_level": pages_per_level, "pages_total": int(len(pfv)), "page_bytes": frame,
        "predicted_s": predict_seconds(device, state, [p * frame for p in pages_per_level],
                                       pages_per_level, hit,
                                       graph._buffers.stats()["bytes_read"] - read0),
        "host_pool": graph._buffers.stats()})
    out = metrics.as_dict(time.perf_counter() - t_start)
    out["reached"] = int(reached.size)
    return AlgorithmOutput({"vertex": reached, "depth": depth[reached].astype(np.int64)}, out)


def pagerank_pages(graph, damping: float = 0.85, max_iterations: int = 20,
                   tolerance: float = 0.0, *, device: str = "cpu", budget_bytes: int
                   ) -> AlgorithmOutput:
    """PageRank (Graphalytics) streaming every in-page each iteration; same columns."""
    graph = _stored(graph)
    t_start = time.perf_counter()
    n = graph.num_vertices
    metrics = StreamMetrics("pages", device, int(budget_bytes))
    state = check_state("pagerank", n, PAGERANK_STATE_BYTES, budget_bytes)
    bm = graph._buffers
    out_deg = np.diff(bm.read_array(graph._graph_id, "out_offsets"))
    read0 = bm.stats()["bytes_read"]
    pfv = graph.page_table("in")
    pids = np.arange(len(pfv))
    inv = np.zeros(n)
    inv[out_deg > 0] = 1.0 / out_deg[out_deg > 0]
    dangling = out_deg == 0
    del out_deg
    teleport = (1.0 - damping) / n
    if device == "gpu":
        engine = _GPUPages(graph, "in", metrics, budget_bytes - state, pfv)
        xp = engine.cp
        inv_d, dangling_d = xp.asarray(inv), xp.asarray(dangling)
        rank = xp.full(n, 1.0 / n)
    else:
        engine = _CPUPages(graph, "in", metrics, budget_bytes)
        xp, inv_d, dangling_d = np, inv, dangling
        rank = np.full(n, 1.0 / n)
    for _ in range(max_iterations):
        checkpoint()
        t0 = time.perf_counter()
        contrib = rank * inv_d
        nxt = xp.zeros(n)
        if device == "gpu":
            engine.pagerank_pass(pids, contrib, nxt)
        else:
            def step(pid, page, contrib=contrib, nxt=nxt):
                u = pfv[page.rid_pid] + page.rid_slot
                row = np.repeat(np.arange(len(page.vertices)), page.degrees)
                nxt[page.vertices] += np.bincount(row, weights=contrib[u],
                                                  minlength=len(page.vertices))
            engine.for_each(pids, step)
        spread = damping * float(rank[dangling_d].sum()) / n
        new = nxt * damping + (teleport + spread)
        change = float(xp.abs(new - rank).sum())
        rank = new
        metrics.kernel_s += time.perf_counter() - t0
        metrics.iteration(active_vertices=n, active_edges=graph.num_edges, mode="pages",
                          pieces=len(pids), nbytes=len(pids) * bm.frame_bytes)
        if tolerance > 0 and change < tolerance:
            break
    if device == "gpu":
        rank = engine.finish(rank)
    steps = metrics.outer_iterations
    hit = metrics.cache_hits / max(1, metrics.cache_hits + metrics.cache_misses)
    metrics.partitions = steps * len(pids)
    metrics.extra.update({
        "pages_total": int(len(pfv)), "page_bytes": bm.frame_bytes,
        "predicted_s": predict_seconds(device, state, [len(pids) * bm.frame_bytes] * steps,
                                       [len(pids)] * steps, hit, bm.stats()["bytes_read"] - read0),
        "host_pool": bm.stats()})
    return AlgorithmOutput({"vertex": np.arange(n, dtype=np.int64), "rank": rank},
                           metrics.as_dict(time.perf_counter() - t_start))


class _GPUPages:
    """Pages to the device on STREAMS streams from pinned frames, with an LRU device cache."""

    name = "gpu"

    def __init__(self, graph, direction, metrics, free: int, pfv):
        from ..gpu import runtime as rt
        from . import gpu

        cp = rt.cp()
        self.cp, self.rt, self.gpu = cp, rt, gpu
        self.graph, self.direction, self.metrics = graph, direction, metrics
        self.bm = graph._buffers
        self.frame = self.bm.frame_bytes
        free -= gpu.slack(free) + len(pfv) * 9
        if free < STREAMS * self.frame:
            raise DeviceOutOfMemory(f"page streaming: {free} B left for {STREAMS} page buffers "
                                    f"of {self.frame} B")
        with rt.translate_oom("page streaming"):
            self.pfv = cp.asarray(pfv.astype(np.int64))
            self.streams = [cp.cuda.Stream(non_blocking=True) for _ in range(STREAMS)]
            self.buffers = [cp.empty(self.frame, dtype=np.uint8) for _ in range(STREAMS)]
        self.cache: OrderedDict[int, object] = OrderedDict()
        self.cache_slots = max(0, free // self.frame - STREAMS)
        metrics.extra["device_cache_pages"] = int(self.cache_slots)
        self.bfs_kernel = gpu.kernel("graphdb_gts_bfs_page")
        self.pr_kernel = gpu.kernel("graphdb_gts_pagerank_page")

    def bfs_state(self, n, source):
        depth = self.cp.full(n, -1, dtype=np.int32)
        depth[source] = 0
        self.next_pages = self.cp.zeros(len(self.pfv), dtype=np.uint8)
        self.reached = self.cp.zeros(1, dtype=np.int32)
        return depth

    def _stream_pages(self, pids, launch) -> None:
        """Every page of ``pids`` on the device once, ``launch(buffer, stream)`` on each."""
        cp = self.cp
        keys = self.bm.page_keys(self.graph._graph_id, self.graph._direction(self.direction),
                                 pids)
        window = STREAMS
        self.bm.prefetch(keys[:window])
        held: deque = deque()  # (event, pin context) of copies in flight
        for i, key in enumerate(keys):
            if i + window < len(keys):
                self.bm.prefetch([keys[i + window]])
            stream = self.streams[i % STREAMS]
            cached = self.cache.get(key.n)
            if cached is not None:
                self.cache.move_to_end(key.n)
                self.metrics.cache_hits += 1
                with stream:
                    launch(cached, stream)
                continue
            self.metrics.cache_misses += 1
            if len(held) >= STREAMS:
                ev, ctx = held.popleft()
                ev.synchronize()
                ctx.__exit__(None, None, None)
            if len(self.cache) < self.cache_slots:
                buf = cp.empty(self.frame, dtype=np.uint8)
                self.cache[key.n] = buf
            else:  # the stream's own buffer: its previous kernel is ahead of this copy
                buf = self.buffers[i % STREAMS]
            ctx = self.bm.pin(key)
            view = ctx.__enter__()
            self.metrics.bytes_to_device += self.gpu.h2d(buf, view, stream)
            self.bm.note_device_bytes(len(view))
            with stream:
                launch(buf, stream)
            ev = cp.cuda.Event()
            ev.record(stream)
            held.append((ev, ctx))
        while held:
            ev, ctx = held.popleft()
            ev.synchronize()
            ctx.__exit__(None, None, None)
        for s in self.streams:
            s.synchronize()

    def bfs_level(self, pids, depth, level) -> np.ndarray:
        self.next_pages.fill(0)
        self.cp.cuda.get_current_stream().synchronize()
        grid = (self.rt.grid_for(self.frame // 64 * 32, 256),)

        def launch(buf, stream):
            self.bfs_kernel(grid, (256,), (buf, self.pfv, depth, np.int32(level),
                                           self.next_pages, self.reached))
        self._stream_pages(pids, launch)
        marked = self.next_pages.get()
        self.metrics.bytes_from_device += int(marked.nbytes)
        return np.flatnonzero(marked)

    def pagerank_pass(self, pids, contrib, nxt) -> None:
        self.cp.cuda.get_current_stream().synchronize()
        grid = (self.rt.grid_for(self.frame // 64 * 32, 256),)

        def launch(buf, stream):
            self.pr_kernel(grid, (256,), (buf, self.pfv, contrib, nxt))
        self._stream_pages(pids, launch)

    def finish(self, values):
        self.metrics.bytes_from_device += int(values.nbytes)
        return self.cp.asnumpy(values)
