"""Topology streaming from storage (GTS, SIGMOD '16): BFS and PageRank over slotted pages.

For graphs that fit neither the device nor host memory. The topology is never materialised: the
slotted pages stream from the store through the buffer manager (fixed host frames, page-locked
when a GPU is present) and only the vertex state (GTS's WA: depths, or ranks and contributions)
is held for the whole graph.

- BFS-like: a level reads only the pages of its frontier. A vertex reached at this level marks
  the page of its *record* (the page id is part of the neighbour's record id, so no lookup is
  needed): that bitmap is GTS's nextPIDSet, expanded to whole large-page chains by the page table.
- PageRank-like (:meth:`CPUPages.pull`, :meth:`GPUPages.pull`): every page of the
  in-direction, every iteration (a page's vertices sum their in-neighbours' contributions into
  the sums; a hub's large pages add partial sums); the family's numeric step runs between
  passes.
- GPU: pages are copied from their pinned frames on ``STREAMS`` streams (a frame stays pinned
  until its copy has completed, then goes back to the pool), decoded and processed by one kernel
  launch each (``page_stream.cu``); a device page cache (whatever the budget leaves after the
  vertex state and the stream buffers) keeps the first pages that fit and serves them from then
  on: scan-resistant, where LRU would evict every page of an all-pages pass before its reuse.
  The cache is held by the residency owner, so a later query on the same graph version starts
  with it filled. The CPU version decodes the same pages with :func:`graphdb.storage.decode_page`.

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
from graphdb.storage.errors import CorruptData
from graphdb.storage.pages import PageContext, pages_of_vertices, read_header

from ..algorithms.spec import AlgorithmOutput, OperatorConfig
from ..cancel import checkpoint
from ..errors import DeviceOutOfMemory, InvalidArgument
from ..gpu.runtime import CudaModule
from ..graph import StoredGraph
from .metrics import StreamMetrics, check_budget

__all__ = ["BANDWIDTH", "CALL_SECONDS", "PAGE_STREAM", "bfs_pages", "page_engine",
           "predict_seconds"]

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


#: ``page_stream.cu``: a BFS level and a pull sum over one page decoded on the device.
PAGE_STREAM = CudaModule("operators/page_stream.cu")


def _stored(graph) -> StoredGraph:
    if not isinstance(graph, StoredGraph):
        raise InvalidArgument(f"graph '{graph.name}' has no stored pages (page streaming reads "
                              "a catalog graph through the buffer manager)")
    graph.ensure_pages()  # built from the CSR blocks on first need (catalog.pages)
    return graph


class CPUPages:
    """Pages decoded with numpy, one at a time, straight out of the pinned frame."""

    name = "cpu"

    def __init__(self, graph: StoredGraph, direction: str, metrics: StreamMetrics, free: int):
        self.graph, self.direction, self.metrics = graph, direction, metrics
        self.pfv = graph.page_table(direction)
        # every page is checked against the graph's page table before its records are used
        self.context = PageContext(graph.buffers.env.layout, graph.num_vertices, self.pfv)

    def for_each(self, pids, fn) -> None:
        for key, view in self.graph.pages(self.direction, pids):
            self.metrics.bytes_to_device += len(view)
            self.metrics.cache_misses += 1
            fn(key.n, decode_page(view, self.context))

    def pull(self, contrib: np.ndarray, sums: np.ndarray) -> None:
        """``sums[v] += contrib[u]`` over every in-edge, page after page."""

        def step(pid, page):
            u = page.targets
            row = np.repeat(np.arange(len(page.vertices)), page.degrees)
            sums[page.vertices] += np.bincount(row, weights=contrib[u],
                                               minlength=len(page.vertices))

        t0 = time.perf_counter()
        self.for_each(np.arange(len(self.pfv)), step)
        self.metrics.kernel_s += time.perf_counter() - t0

    def finish(self) -> None:
        pass


def page_engine(graph, config: OperatorConfig, direction: str, metrics: StreamMetrics):
    """The page streamer of ``config``'s device over ``graph``'s ``direction`` pages, with the
    budget left beside the vertex state."""
    graph = _stored(graph)
    free = config.free_bytes()
    return GPUPages(graph, direction, metrics, free) if config.device == "gpu" \
        else CPUPages(graph, direction, metrics, free)


def _bfs_cpu_step(depth, pfv, level, next_pages):
    def step(pid, page):
        sel = depth[page.vertices] == level
        if not sel.any():
            return
        mask = np.repeat(sel, page.degrees)
        rid_pid = page.rid_pid[mask]
        u = page.targets[mask]
        new = depth[u] < 0
        depth[u[new]] = level + 1
        next_pages[rid_pid[new]] = True
    return step


def bfs_pages(graph, config: OperatorConfig, source: int,
              max_depth: int | None = None) -> AlgorithmOutput:
    """BFS by frontier pages; same columns as the resident bfs."""
    graph = _stored(graph)
    t_start = time.perf_counter()
    n = graph.num_vertices
    metrics = StreamMetrics("pages", config.device, int(config.budget_bytes))
    state = check_budget("bfs", n, config)
    engine = page_engine(graph, config, "out", metrics)
    pfv = graph.page_table("out")
    frame = graph.buffers.frame_bytes
    read0 = graph.buffers.stats()["bytes_read"]
    pids = graph.pages_of(np.array([source]), "out")
    level = 0
    pages_per_level = []
    gpu = config.device == "gpu"
    if gpu:
        depth = engine.bfs_state(n, source)
    else:
        depth = np.full(n, -1, dtype=np.int32)
        depth[source] = 0
    while pids.size and (max_depth is None or level < max_depth):
        checkpoint()
        t0 = time.perf_counter()
        pages_per_level.append(int(pids.size))
        if gpu:
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
    if gpu:
        depth = engine.result(depth)
    reached = np.flatnonzero(depth >= 0)
    metrics.partitions = sum(pages_per_level)
    hit = metrics.cache_hits / max(1, metrics.cache_hits + metrics.cache_misses)
    metrics.extra.update({
        "pages_per_level": pages_per_level, "pages_total": int(len(pfv)), "page_bytes": frame,
        "predicted_s": predict_seconds(config.device, state,
                                       [p * frame for p in pages_per_level], pages_per_level,
                                       hit, graph.buffers.stats()["bytes_read"] - read0),
        "host_pool": graph.buffers.stats()})
    out = metrics.as_dict(time.perf_counter() - t_start)
    out["reached"] = int(reached.size)
    return AlgorithmOutput({"vertex": reached, "depth": depth[reached].astype(np.int64)}, out)


class _PageCache:
    """Device copies of the first pages that fit ``slots`` (scan-resistant: kept once cached)."""

    def __init__(self, frame: int, slots: int):
        self.frame, self.slots = frame, slots
        self.pages: OrderedDict[int, object] = OrderedDict()

    @property
    def nbytes(self) -> int:  # reserved: what the residency owner counts for it
        return self.frame * self.slots


class GPUPages:
    """Pages to the device on STREAMS streams from pinned frames, with a device page cache that
    the residency owner holds per graph version and direction."""

    name = "gpu"

    def __init__(self, graph: StoredGraph, direction: str, metrics: StreamMetrics, free: int):
        from ..gpu import runtime as rt
        from ..gpu.pinned import h2d

        cp = rt.cp()
        self.cp, self.rt, self.h2d = cp, rt, h2d
        self.graph, self.direction, self.metrics = graph, direction, metrics
        self.bm = graph.buffers
        self.frame = self.bm.frame_bytes
        pfv = graph.page_table(direction)
        free -= len(pfv) * 9  # free: OperatorConfig.free_bytes, the slack taken
        if free < STREAMS * self.frame:
            raise DeviceOutOfMemory(f"page streaming: {free} B left for {STREAMS} page buffers "
                                    f"of {self.frame} B")
        # the host checks each page against the table; the kernels check each record id
        self.context = PageContext(graph.buffers.env.layout, graph.num_vertices, pfv)
        with rt.translate_oom("page streaming"):
            self.pfv = cp.asarray(pfv.astype(np.int64))
            self.run_end = cp.asarray(self.context.run_end)
            self.num_pages = np.int64(len(pfv))
            self.bad = cp.zeros(1, dtype=np.int32)
            self.streams = [cp.cuda.Stream(non_blocking=True) for _ in range(STREAMS)]
            self.buffers = [cp.empty(self.frame, dtype=np.uint8) for _ in range(STREAMS)]
        slots = max(0, free // self.frame - STREAMS)
        self.cache = graph.derived(f"pages:{direction}:device_cache:{slots}",
                                   lambda: _PageCache(self.frame, slots),
                                   device=rt.device_name())
        metrics.extra["device_cache_pages"] = int(slots)
        self.bfs_kernel = PAGE_STREAM.function("graphdb_gts_bfs_page")
        self.pull_kernel = PAGE_STREAM.function("graphdb_gts_pagerank_page")

    def bfs_state(self, n, source):
        depth = self.cp.full(n, -1, dtype=np.int32)
        depth[source] = 0
        self.next_pages = self.cp.zeros(len(self.pfv), dtype=np.uint8)
        self.reached = self.cp.zeros(1, dtype=np.int32)
        return depth

    def _stream_pages(self, pids, launch) -> None:
        """Every page of ``pids`` on the device once, ``launch(buffer, stream)`` on each."""
        cp = self.cp
        keys = self.graph.page_keys(self.direction, pids)
        window = STREAMS
        self.bm.prefetch(keys[:window])
        held: deque = deque()  # (event, pin context) of copies in flight
        cache = self.cache.pages
        for i, key in enumerate(keys):
            if i + window < len(keys):
                self.bm.prefetch([keys[i + window]])
            stream = self.streams[i % STREAMS]
            cached = cache.get(key.n)
            if cached is not None:
                self.metrics.cache_hits += 1
                with stream:
                    launch(cached, stream)
                continue
            self.metrics.cache_misses += 1
            if len(held) >= STREAMS:
                ev, ctx = held.popleft()
                ev.synchronize()
                ctx.__exit__(None, None, None)
            if len(cache) < self.cache.slots:
                buf = cp.empty(self.frame, dtype=np.uint8)
                cache[key.n] = buf
            else:  # the stream's own buffer: its previous kernel is ahead of this copy
                buf = self.buffers[i % STREAMS]
            ctx = self.bm.pin(key)
            view = ctx.__enter__()
            try:
                self._check(view)
            except BaseException:
                ctx.__exit__(None, None, None)
                cache.pop(key.n, None)
                raise
            self.metrics.bytes_to_device += self.h2d(buf, view, stream)
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

    def _check(self, view) -> None:
        """The page (verified when it was loaded: storage.page_checks) against the page
        table, before it goes to the device."""
        header = read_header(view)
        problem = self.context.page_problem(header)
        if problem is not None:
            raise CorruptData(f"page {header.page_id} {problem}")

    def _raise_bad(self) -> None:
        if int(self.bad.get()[0]):
            raise CorruptData(f"a slotted page of graph '{self.graph.name}' holds a record id "
                              "outside the page table (its fields were changed and it was "
                              "sealed again)")

    def bfs_level(self, pids, depth, level) -> np.ndarray:
        self.next_pages.fill(0)
        self.cp.cuda.get_current_stream().synchronize()
        grid = (self.rt.grid_for(self.frame // 64 * 32, 256),)

        def launch(buf, stream):
            self.bfs_kernel(grid, (256,), (buf, self.pfv, self.run_end, self.num_pages, depth,
                                           np.int32(level), self.next_pages, self.reached,
                                           self.bad))
        self._stream_pages(pids, launch)
        self._raise_bad()
        marked = self.next_pages.get()
        self.metrics.bytes_from_device += int(marked.nbytes)
        return np.flatnonzero(marked)

    def pull(self, contrib, sums) -> None:
        """``sums[v] += contrib[u]`` over every in-edge, page after page, on the device."""
        self.cp.cuda.get_current_stream().synchronize()
        grid = (self.rt.grid_for(self.frame // 64 * 32, 256),)

        def launch(buf, stream):
            self.pull_kernel(grid, (256,), (buf, self.pfv, self.run_end, self.num_pages,
                                            contrib, sums, self.bad))
        t0 = time.perf_counter()
        self._stream_pages(np.arange(len(self.pfv)), launch)
        self._raise_bad()
        self.metrics.kernel_s += time.perf_counter() - t0

    def result(self, values):
        self.metrics.bytes_from_device += int(values.nbytes)
        return self.cp.asnumpy(values)

    def finish(self) -> None:
        self.cp.cuda.Device().synchronize()
