"""PageRank past the device budget: every in-edge streams every iteration, as edge chunks from a
page-locked host copy (``edge_centric``) or as slotted pages from storage (``pages``).

The streaming operators (:mod:`graphdb.executor.operators.edge_stream`,
:mod:`~graphdb.executor.operators.page_stream`) compute, each pass, the sum of every vertex's
in-neighbours' contributions; the update between passes is PageRank's own numeric step, the same
one the resident operators apply: :func:`.cpu._update_vertex` through ``pagerank_apply`` on the
CPU, ``pagerank_vertex`` through ``graphdb_pagerank_prepare``/``update`` (``pagerank.cu``) on the
GPU.
"""

from __future__ import annotations

import time

import numpy as np

from ...cancel import checkpoint
from ...graph import Graph
from ...operators.edge_stream import CPUChunks, GPUChunks
from ...operators.metrics import StreamMetrics, check_budget
from ...operators.page_stream import page_engine, predict_seconds
from ..spec import AlgorithmOutput, OperatorConfig
from .cpu import KERNELS, inverse_out_degrees

__all__ = ["edge_centric_pagerank", "pages_pagerank"]


def _cpu_iterations(graph: Graph, pull, damping: float, max_iterations: int, tolerance: float,
                    metrics: StreamMetrics, bytes_per_pass: int, pieces: int) -> np.ndarray:
    n = graph.num_vertices
    kernels = KERNELS.for_work(n + graph.num_edges, parallel=True)
    inverse = inverse_out_degrees(graph)
    rank = np.full(n, 1.0 / n)
    contrib, sums = np.empty(n), np.empty(n)
    dangling = kernels.pagerank_init(rank, inverse, contrib)
    teleport = (1.0 - damping) / n
    for _ in range(max_iterations):
        checkpoint()
        sums[:] = 0.0
        pull(contrib, sums)
        t0 = time.perf_counter()
        dangling, change = kernels.pagerank_apply(sums, inverse, rank, contrib,
                                                  teleport + damping * dangling / n, damping)
        metrics.kernel_s += time.perf_counter() - t0
        metrics.iteration(active_vertices=n, active_edges=graph.num_edges, mode="all",
                          pieces=pieces, nbytes=bytes_per_pass)
        if tolerance > 0 and change < tolerance:
            break
    return rank


def _gpu_iterations(graph: Graph, pull, stream, damping: float, max_iterations: int,
                    tolerance: float, metrics: StreamMetrics, bytes_per_pass: int, pieces: int):
    """The same loop on the device, queued on ``stream`` after each pass; the host waits only
    when a tolerance asks for an iteration's change."""
    from ...gpu import runtime as rt
    from .gpu import PAGERANK

    cp = rt.cp()
    n = graph.num_vertices
    out_degree = graph.derived("pagerank:out_degree:int32",
                               lambda: cp.asarray(graph.out_degrees().astype(np.int32)),
                               device=rt.device_name())
    prepare = PAGERANK.function("graphdb_pagerank_prepare")
    update = PAGERANK.function("graphdb_pagerank_update")
    grid = (rt.grid_for(n, 256),)
    with rt.translate_oom("streamed pagerank"), stream:
        rank = cp.asarray(np.full(n, 1.0 / n))
        contrib, sums = cp.empty(n), cp.empty(n)
        scal = cp.zeros(3)  # the dangling totals, rotating (pagerank.cu: pagerank_base)
        l1 = cp.zeros(max(max_iterations, 1))
        prepare(grid, (256,), (rank, out_degree, np.int64(n), contrib, sums, scal))
        for it in range(max_iterations):
            checkpoint()
            pull(contrib, sums)
            with stream:
                update(grid, (256,), (sums, out_degree, np.int64(n), np.float64(damping), rank,
                                      contrib, scal, l1, np.int32(it)))
            metrics.iteration(active_vertices=n, active_edges=graph.num_edges, mode="all",
                              pieces=pieces, nbytes=bytes_per_pass)
            if tolerance > 0 and float(l1[it].get()) < tolerance:
                break
    return rank


def _run(graph: Graph, config: OperatorConfig, engine, stream, damping: float,
         max_iterations: int, tolerance: float, metrics: StreamMetrics) -> np.ndarray:
    args = (damping, max_iterations, tolerance, metrics, engine.bytes_per_pass, engine.pieces)
    if config.device == "gpu":
        rank = _gpu_iterations(graph, engine.pull, stream, *args)
        engine.finish()
        metrics.bytes_from_device += int(rank.nbytes)
        return rank.get()
    rank = _cpu_iterations(graph, engine.pull, *args)
    engine.finish()
    return rank


def _empty(metrics: StreamMetrics) -> AlgorithmOutput:
    return AlgorithmOutput({"vertex": np.zeros(0, np.int64), "rank": np.zeros(0)},
                           metrics.as_dict())


def edge_centric_pagerank(graph: Graph, config: OperatorConfig, damping: float = 0.85,
                          max_iterations: int = 20, tolerance: float = 0.0) -> AlgorithmOutput:
    """PageRank by edge-chunk streaming of the in-CSR; same columns as the resident pagerank."""
    t_start = time.perf_counter()
    n = graph.num_vertices
    metrics = StreamMetrics("edge_centric", config.device, int(config.budget_bytes))
    check_budget("pagerank", n, config)
    if n == 0:
        return _empty(metrics)
    if config.device == "gpu":
        engine = GPUChunks(graph, config.free_bytes(), metrics)
        stream = engine.stream
    else:
        engine, stream = CPUChunks(graph.in_csr, config.free_bytes(), metrics), None
    t_loop = time.perf_counter()  # the steady state: set-up (plan, staging, uploads) excluded
    rank = _run(graph, config, engine, stream, damping, max_iterations,
                tolerance, metrics)
    loop_s = time.perf_counter() - t_loop
    metrics.partitions = engine.pieces * metrics.outer_iterations
    metrics.extra.update({"setup_s": round(t_loop - t_start, 6), "iterations_s": round(loop_s, 6),
                          "chunk_bytes": int(engine.capacity)})
    if loop_s > 0:
        metrics.extra["streamed_bytes_per_s"] = (engine.bytes_per_pass
                                                 * metrics.outer_iterations / loop_s)
    return AlgorithmOutput({"vertex": np.arange(n, dtype=np.int64), "rank": rank},
                           metrics.as_dict(time.perf_counter() - t_start))


def pages_pagerank(graph: Graph, config: OperatorConfig, damping: float = 0.85,
                   max_iterations: int = 20, tolerance: float = 0.0) -> AlgorithmOutput:
    """PageRank streaming every in-page from storage each iteration; same columns."""
    t_start = time.perf_counter()
    n = graph.num_vertices
    metrics = StreamMetrics("pages", config.device, int(config.budget_bytes))
    state = check_budget("pagerank", n, config)
    if n == 0:
        return _empty(metrics)
    engine = page_engine(graph, config, "in", metrics)
    bm = graph.buffers
    pages = len(graph.page_table("in"))
    engine.bytes_per_pass, engine.pieces = pages * bm.frame_bytes, pages
    read0 = bm.stats()["bytes_read"]
    stream = engine.cp.cuda.get_current_stream() if config.device == "gpu" else None
    rank = _run(graph, config, engine, stream, damping, max_iterations, tolerance,
                metrics)
    steps = metrics.outer_iterations
    hit = metrics.cache_hits / max(1, metrics.cache_hits + metrics.cache_misses)
    metrics.partitions = steps * pages
    metrics.extra.update({
        "pages_total": pages, "page_bytes": bm.frame_bytes,
        "predicted_s": predict_seconds(config.device, state, [pages * bm.frame_bytes] * steps,
                                       [pages] * steps, hit, bm.stats()["bytes_read"] - read0),
        "host_pool": bm.stats()})
    return AlgorithmOutput({"vertex": np.arange(n, dtype=np.int64), "rank": rank},
                           metrics.as_dict(time.perf_counter() - t_start))
