"""GPU operators side by side with the straightforward CuPy versions, scipy and the memory bound.

What it compares, in one process on one GPU (R-MAT graphs built on the device, tools/gpu_graphs):

- BFS (``algorithms/bfs/gpu.py``) vs a CuPy gather/unique BFS and scipy's breadth_first_order,
  with the degree limit K and top-down-only beside the default;
- WCC vs scipy's connected_components; SSSP (R-MAT ``--sssp-scale`` and a grid) vs scipy's
  dijkstra; BFS on the grid in us per level vs CuPy;
- PageRank (``algorithms/pagerank/gpu.py``) in its default :class:`Layout` and with each part of
  it taken away (tiles, relabelling, blocking) or changed (half and double blocks), per
  iteration, split by kernel (CUDA events around each launch, :func:`kernel_times`), against
  the cupyx sparse matvec, scipy's matvec, our CPU operator and the memory-traffic bound;
- start-up: what a query in a fresh process spends before its kernels run (warm kernel cache),
  and the cold compile of every kernel module.

One run on a GPU machine (about 2-3 minutes on an H100/H200 at the defaults)::

    python tools/bench_gpu.py --out DIR [--scale 24] [--sssp-scale 22] [--grid 2048]

writes ``DIR/bench_gpu.json`` (every number) and ``DIR/bench_gpu.md`` (the short table, with the
GPU's name) and prints the table last. GPU times are CUDA events around the call after a warm-up,
median of ``--repeats``; scipy runs once (it takes seconds). Each GPU result is checked against
its peer's on the same graph, and the check is reported. Sections record their errors and the
run goes on.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from graphdb.executor.gpu import runtime as rt  # noqa: E402


def gpu_time(fn, repeats: int, warmup: int = 1):
    """Median milliseconds of fn() over repeats, CUDA events on the operator stream."""
    cp = rt.cp()
    stream = rt.operator_stream()
    result = None
    with stream:  # peers' CuPy calls run on the stream the events are recorded on
        for _ in range(warmup):
            result = fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeats):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record(stream)
        with stream:
            result = fn()
        end.record(stream)
        end.synchronize()
        cp.cuda.Device().synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return statistics.median(times), result


def cpu_time(fn):
    t = time.perf_counter()
    result = fn()
    return (time.perf_counter() - t) * 1e3, result


def copy_bandwidth() -> float:
    """Device memory bandwidth in bytes/s, counting bytes read plus bytes written."""
    cp = rt.cp()
    a = cp.ones(1 << 28, dtype=np.float64)  # 2 GiB
    b = cp.empty_like(a)
    ms, _ = gpu_time(lambda: cp.copyto(b, a), 10)
    return 2 * (1 << 28) * 8 / (ms / 1e3)


# ------------------------------------------------------------------ straightforward CuPy peers


def cupy_bfs(offsets, targets, source: int, n: int, max_levels: int | None = None):
    """Frontier BFS by gather/unique, the straightforward CuPy way."""
    cp = rt.cp()
    depth = cp.full(n, -1, dtype=np.int32)
    depth[source] = 0
    frontier = cp.asarray([source], dtype=np.int64)
    level = 0
    while frontier.size and (max_levels is None or level < max_levels):
        starts = offsets[frontier]
        counts = offsets[frontier + 1] - starts
        ends = cp.cumsum(counts)
        total = int(ends[-1])
        if total == 0:
            break
        pos = cp.arange(total, dtype=np.int64)
        owner = cp.searchsorted(ends, pos, side="right")
        nbrs = targets[starts[owner] + pos - (ends[owner] - counts[owner])]
        nbrs = nbrs[depth[nbrs] < 0]
        frontier = cp.unique(nbrs).astype(np.int64)
        level += 1
        depth[frontier] = level
    return depth, level


def cupyx_pagerank_iteration(matrix, rank, dangling, damping, n):
    spread = damping * float(rank[dangling].sum()) / n
    new = matrix @ rank
    new *= damping
    new += (1.0 - damping) / n + spread
    return new


class _TimedKernel:
    """A kernel whose launches are bracketed by CUDA events on the stream they run on."""

    def __init__(self, function, name: str, events: list):
        self._function, self._name, self._events = function, name, events

    @property
    def ptr(self):  # set_dynamic_shared sets attributes through the function's handle
        return self._function.ptr

    def __call__(self, grid, block, args, **kw):
        cp = rt.cp()
        stream = cp.cuda.get_current_stream()  # the operator's, where the launch goes
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record(stream)
        self._function(grid, block, args, **kw)
        end.record(stream)
        self._events.append((self._name, start, end))


def _kernel_label(expression: str) -> str:
    """``graphdb_pagerank_rows<int,8>`` -> ``rows<8>``: the kernel without its module's prefix
    and its vertex-id type."""
    name = re.sub(r"^graphdb_[a-z]+_", "", expression)
    name = re.sub(r"<(int|long long),?", "<", name)
    return name.replace("<>", "")


@contextlib.contextmanager
def kernel_times(module: "rt.CudaModule", into: dict):
    """While active, every kernel that code takes from ``module`` (a :class:`CudaModule`, e.g.
    ``PAGERANK``) is timed at each launch with CUDA events; on exit ``into`` holds the summed
    milliseconds by kernel. The product code has no profiling hook: this wraps the module's
    ``function`` lookup (which ``kernel`` goes through too) from outside, for this block only."""
    cp = rt.cp()
    events: list = []
    lookup = module.function
    module.function = lambda name: _TimedKernel(lookup(name), _kernel_label(name), events)
    try:
        yield into
    finally:
        del module.function  # the class's method again
        cp.cuda.Device().synchronize()
        for name, start, end in events:
            into[name] = into.get(name, 0.0) + cp.cuda.get_elapsed_time(start, end)


def pagerank_layouts(n: int, m: int, l2_bytes: int) -> list[tuple[str, object]]:
    """(label, Layout) of the PageRank layouts compared: the default (None: what a query gets,
    ``default_layout`` for this device) and the default with each of its parts taken away or
    changed; a layout equal to an earlier one is left out (e.g. no tiles below 2^27 edges)."""
    from graphdb.executor.algorithms.pagerank.gpu import Layout, default_layout

    base = default_layout(n, m, l2_bytes)
    candidates = [
        ("default", base),
        ("untiled", dataclasses.replace(base, tiles=None)),
        ("no_reorder", Layout(base.block_vertices, False, None)),  # tiles need the relabelling
        ("unblocked", Layout(n, base.reorder, None)),
        ("unblocked_no_reorder", Layout(n, False, None)),
        ("half_block", dataclasses.replace(base, block_vertices=max(1, base.block_vertices // 2))),
        ("double_block", dataclasses.replace(base, block_vertices=base.block_vertices * 2)),
    ]
    seen, out = set(), []
    for label, layout in candidates:
        if layout not in seen:
            seen.add(layout)
            out.append((label, None if label == "default" else layout))
    return out


def time_pagerank(g, layout, iterations: int, repeats: int):
    """PageRank in one layout (None: the default) timed: the first call builds the partition
    (``prepare_s``), then the median of ``repeats`` timed runs, then one run with every launch
    timed (:func:`kernel_times`: ms per iteration by kernel). The partition is forgotten at the
    end (the residency owner holds one per layout). Returns (the row, the ranks)."""
    from graphdb.executor.algorithms.pagerank.gpu import PAGERANK, pagerank_gpu

    cp = rt.cp()
    try:
        t = time.perf_counter()
        pagerank_gpu(g, max_iterations=1, layout=layout)
        cp.cuda.Device().synchronize()
        prep_s = time.perf_counter() - t
        ms, (rank, _, stats) = gpu_time(
            lambda: pagerank_gpu(g, max_iterations=iterations, layout=layout), repeats)
        kernels: dict = {}
        with kernel_times(PAGERANK, kernels):
            pagerank_gpu(g, max_iterations=iterations, layout=layout)
    finally:
        g.residency.forget(g.key, rt.device_name(), prefix="pagerank:partition:")
        cp.get_default_memory_pool().free_all_blocks()
    row = {"layout": repr(layout) if layout is not None else "default",
           "ms_per_iteration": ms / iterations, "prepare_s": prep_s, **stats,
           "kernel_ms_per_iteration": {k: round(v / iterations, 4) for k, v in kernels.items()}}
    return row, rank


def cupyx_pagerank(inn, out_degree, n: int, iterations: int, repeats: int):
    """The straightforward peer: PageRank as a cupyx sparse matrix-vector loop over the in-CSR
    ``inn`` (device arrays). Returns (ms for ``iterations`` iterations, the last ranks)."""
    import cupy as cp
    import cupyx.scipy.sparse as csp

    outdeg = out_degree.astype(np.float64)
    inv = cp.where(outdeg > 0, 1.0 / cp.maximum(outdeg, 1), 0.0)
    matrix = csp.csr_matrix((inv[inn.targets], inn.targets, inn.offsets), shape=(n, n))
    dangling = outdeg == 0

    def run():
        r = cp.full(n, 1.0 / n)
        for _ in range(iterations):
            r = cupyx_pagerank_iteration(matrix, r, dangling, 0.85, n)
        return r

    return gpu_time(run, repeats)


# ------------------------------------------------------------------ start-up


COMPILE_SNIPPET = r"""
import time, sys
sys.path.insert(0, {root!r})
from graphdb.executor.device import select_device
select_device("gpu")
from tools.check_cuda import modules
found = modules()  # every CudaModule of the executor (importing them compiles nothing)
t = time.perf_counter()
for module in found:
    module.get()
print((time.perf_counter() - t) * 1e3)
"""

QUERY_SNIPPET = r"""
import time, sys
sys.path.insert(0, {root!r})
t0 = time.perf_counter()
import graphdb
con = graphdb.connect({db!r})
t1 = time.perf_counter()
con.execute({query!r}).fetchall()
t2 = time.perf_counter()
con.execute({query!r}).fetchall()
t3 = time.perf_counter()
import graphdb.executor.device as d
ms = lambda a, b: (b - a) * 1e3
print(ms(t0, t1), ms(t1, t2), ms(t2, t3), int(d.gpu_available()), int("cupyx.linalg" in sys.modules),
      int("pandas" in sys.modules))
"""

STARTUP_QUERIES = {"bfs": "SELECT count(*) FROM bfs(social, 0)",
                   "pagerank": "SELECT count(*) FROM pagerank(social)"}


def startup_times(runs: int = 3, db: str | None = None) -> dict:
    """What a query in a fresh process spends on start-up and kernel loading, in ms: its time
    minus the same query's time when repeated in that process (the device probe, CuPy's
    import, the CUDA context, kernel loading, the graph's first read from storage and upload),
    warm kernel cache; and the cold compile of every kernel module (empty cache). The queries
    run on the demo database ``db`` (built here when None)."""
    out: dict = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, GRAPHDB_CACHE_DIR=cache)

        def python(code: str) -> list[float]:
            res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                 text=True)
            if res.returncode:
                raise RuntimeError(f"start-up child failed: {res.stderr[-2000:]}")
            return [float(x) for x in res.stdout.split()]

        out["cold_compile_all_modules_ms"] = python(COMPILE_SNIPPET.format(root=str(ROOT)))[0]
        if db is None:
            db = str(Path(cache) / "demo-db")
            subprocess.run([sys.executable, "-m", "graphdb", "demo", db], env=env, cwd=ROOT,
                           capture_output=True, check=True)
        for name, query in STARTUP_QUERIES.items():
            samples = []
            for _ in range(runs):
                imports, first, again, gpu, cupyx, pandas = python(
                    QUERY_SNIPPET.format(root=str(ROOT), db=db, query=query))
                assert gpu, "the start-up queries ran without a GPU"
                samples.append({"import_and_connect_ms": imports, "first_query_ms": first,
                                "repeated_query_ms": again, "startup_ms": first - again,
                                "cupyx_imported": bool(cupyx),
                                "pandas_imported": bool(pandas)})
            out[f"{name}_query"] = {
                "runs": samples,
                "startup_ms_median": statistics.median(x["startup_ms"] for x in samples)}
    return out


# ------------------------------------------------------------------ the benchmark


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--sssp-scale", type=int, default=22)
    ap.add_argument("--grid", type=int, default=2048)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sources", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--skip-scipy", action="store_true")
    ap.add_argument("--startup-runs", type=int, default=5)
    ap.add_argument("--startup-only", action="store_true",
                    help="measure the start-up of a fresh process's query only")
    ap.add_argument("--startup-db", help="a demo database (graphdb demo DB) for the start-up "
                    "queries; default: one is built (about 15 s)")
    args = ap.parse_args(argv)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    cp = rt.cp()
    from scipy.sparse import csgraph

    from graphdb.executor.algorithms import OperatorConfig, run
    from graphdb.executor.algorithms.bfs.gpu import bfs_depths_gpu
    from graphdb.executor.algorithms.sssp.gpu import sssp_distances_gpu
    from graphdb.executor.algorithms.wcc.gpu import wcc_labels_gpu
    from tools.gpu_graphs import graph_from_device_edges, grid_edges_gpu, rmat_edges_gpu

    info = rt.device_info()
    res: dict = {"gpu": info.name, "multiprocessors": info.multiprocessors,
                 "l2_bytes": info.l2_bytes, "cupy": cp.__version__, "repeats": args.repeats}
    log = lambda *a: print(*a, flush=True)  # noqa: E731
    log(f"GPU {info.name}, {info.multiprocessors} SMs, L2 {info.l2_bytes >> 20} MiB")

    # Sections run in order; each records its results or its error, so a failure late in the
    # run keeps what came before.
    state: dict = {}

    def section(name, fn):
        t = time.perf_counter()
        try:
            fn()
        except Exception as exc:  # noqa: BLE001
            import traceback

            res.setdefault("errors", {})[name] = repr(exc)
            log(f"section {name} FAILED:", traceback.format_exc())
        res.setdefault("section_s", {})[name] = round(time.perf_counter() - t, 1)
        # what is done so far, in case the run is stopped from outside (a timeout)
        (out_dir / "bench_gpu.json").write_text(json.dumps(res, indent=1, default=str))

    def startup():
        res["startup"] = startup_times(args.startup_runs, args.startup_db)
        log("startup", res["startup"])

    def bandwidth():
        res["copy_bandwidth_GBps"] = copy_bandwidth() / 1e9
        log(f"copy bandwidth {res['copy_bandwidth_GBps']:.0f} GB/s")

    section("startup", startup)
    if args.startup_only:
        (out_dir / "startup.json").write_text(json.dumps(res, indent=2))
        return 0
    section("copy_bandwidth", bandwidth)

    def build_rmat():
        t = time.perf_counter()
        src, dst = rmat_edges_gpu(args.scale, 16, seed=args.seed)
        n = 1 << args.scale
        g = graph_from_device_edges(src, dst, n, directed=True, name=f"rmat{args.scale}")
        del src, dst
        cp.get_default_memory_pool().free_all_blocks()
        res["rmat"] = {"scale": args.scale, "vertices": n, "edges": g.num_edges,
                       "build_s": time.perf_counter() - t}
        log("rmat built", res["rmat"])
        out = rt.device_csr(g, "out")
        state.update(g=g, n=n, out=out, inn=rt.device_csr(g, "in"), deg=out.degrees())

    def bfs_rmat():
        g, n, out, deg = state["g"], state["n"], state["out"], state["deg"]
        rng = np.random.default_rng(args.seed)
        candidates = cp.asnumpy(cp.flatnonzero(deg > 0))
        sources = [int(s) for s in rng.choice(candidates, size=args.sources, replace=False)]
        rows = []
        for s in sources:
            ms, (depth, stats) = gpu_time(lambda s=s: bfs_depths_gpu(g, s), args.repeats)
            base_ms, (base_depth, levels) = gpu_time(
                lambda s=s: cupy_bfs(out.offsets, out.targets, s, n), max(1, args.repeats // 2))
            same = bool(cp.array_equal(depth, base_depth))
            edges = int(deg[depth >= 0].sum())
            rows.append({"source": s, "ms": ms, "cupy_ms": base_ms, "levels": levels,
                         "edges_traversed": edges, "matches_cupy": same, **stats})
            log("bfs", rows[-1])
        res["bfs_rmat"] = rows
        sweep = {}
        for K in (4, 8, 16, 32):
            sweep[K] = gpu_time(lambda K=K: bfs_depths_gpu(g, sources[0], K=K), args.repeats)[0]
        # every source per K (a source's direction switches move its time more than K does):
        # the median over the sources, and GTEPS on the median edges traversed
        per_source = {K: [gpu_time(lambda K=K, s=s: bfs_depths_gpu(g, s, K=K), args.repeats)[0]
                          for s in sources] for K in (4, 8, 16, 32)}
        edges = statistics.median(r["edges_traversed"] for r in rows)
        sweep["median_over_sources_ms"] = {K: statistics.median(v) for K, v in
                                           per_source.items()}
        sweep["median_over_sources_gteps"] = {K: edges / (statistics.median(v) * 1e6)
                                              for K, v in per_source.items()}
        sweep["top_down_only"] = gpu_time(
            lambda: bfs_depths_gpu(g, sources[0], direction_optimizing=False), args.repeats)[0]
        # the operator a query runs: the same kernels, plus the reached vertices and their depths
        # picked on the host
        sweep["operator_with_result_columns"] = gpu_time(
            lambda: run("bfs", g, {"source": sources[0]}, OperatorConfig("gpu")), args.repeats)[0]
        res["bfs_rmat_sweep_ms"] = sweep
        log("bfs sweep", sweep)
        if not args.skip_scipy:
            host = g.out_csr.to_scipy()
            res["bfs_rmat_scipy_ms"] = cpu_time(
                lambda: csgraph.breadth_first_order(host, sources[0], directed=True,
                                                    return_predecessors=False))[0]
            log("scipy bfs", res["bfs_rmat_scipy_ms"])

    def wcc_rmat():
        g, n = state["g"], state["n"]
        ms, (labels, wstats) = gpu_time(lambda: wcc_labels_gpu(g), args.repeats)
        res["wcc_rmat"] = {"ms": ms, **wstats}
        if not args.skip_scipy:
            scipy_ms, (_, lab) = cpu_time(lambda: csgraph.connected_components(
                g.out_csr.to_scipy(), directed=True, connection="weak"))
            smallest = np.full(lab.max() + 1, n, dtype=np.int64)
            np.minimum.at(smallest, lab, np.arange(n))
            res["wcc_rmat"].update(scipy_ms=scipy_ms,
                                   matches_scipy=bool(np.array_equal(cp.asnumpy(labels),
                                                                     smallest[lab])))
        log("wcc", res["wcc_rmat"])

    iters = 10
    pr: dict = {}
    res["pagerank_rmat"] = pr

    def pagerank_layouts_section():
        g, n = state["g"], state["n"]
        for label, layout in pagerank_layouts(n, g.num_edges, info.l2_bytes):
            try:
                pr[label], rank = time_pagerank(g, layout, iters, args.repeats)
                if "ref_rank" in state:
                    pr[label]["max_rel_diff_vs_default"] = float(
                        cp.abs(rank - state["ref_rank"]).max() / state["ref_rank"].max())
                else:
                    state["ref_rank"] = rank
                log("pagerank", label, pr[label])
            except Exception as exc:  # noqa: BLE001  (one failing layout must not end the run)
                pr[label] = {"error": repr(exc)}
                log("pagerank", label, "FAILED", repr(exc))

    def pagerank_peers():
        g, n, inn, deg = state["g"], state["n"], state["inn"], state["deg"]
        ms, cupyx_rank = cupyx_pagerank(inn, deg, n, iters, args.repeats)
        pr["cupyx_matvec"] = {"ms_per_iteration": ms / iters}
        if "ref_rank" in state:
            pr["max_rel_diff_vs_cupyx"] = float(
                cp.abs(state["ref_rank"] - cupyx_rank).max() / cupyx_rank.max())
        bound_bytes = 4 * g.num_edges + 8 * (n + 1) + 8 * n + 8 * n
        pr["traffic_bound_bytes"] = bound_bytes
        pr["traffic_bound_ms"] = bound_bytes / res["copy_bandwidth_GBps"] / 1e9 * 1e3
        if not args.skip_scipy:
            import scipy.sparse as sp

            # scipy's matvec on the host in-CSR (what a scipy PageRank pays per iteration), and
            # our own CPU operator beside it (3 iterations less 1: without its set-up)
            host = sp.csr_matrix((np.ones(g.num_edges), cp.asnumpy(inn.targets),
                                  cp.asnumpy(inn.offsets)), shape=(n, n))
            x = np.full(n, 1.0 / n)
            pr["scipy_ms_per_iteration"] = cpu_time(lambda: host @ x)[0]
            one = cpu_time(lambda: run("pagerank", g, {"max_iterations": 1}))[0]
            three = cpu_time(lambda: run("pagerank", g, {"max_iterations": 3}))[0]
            pr["cpu_ms_per_iteration"] = (three - one) / 2
        log("pagerank peers", {k: v for k, v in pr.items() if not isinstance(v, dict)},
            pr["cupyx_matvec"])

    def grid_section():
        side = args.grid
        gs, gd = grid_edges_gpu(side, side)
        gw = cp.random.RandomState(args.seed).randint(1, 101, size=gs.size).astype(np.float64)
        grid_g = graph_from_device_edges(gs, gd, side * side, directed=False, weights=gw,
                                         name=f"grid{side}")
        del gs, gd, gw
        gout = rt.device_csr(grid_g, "out")
        ms, (depth, stats) = gpu_time(lambda: bfs_depths_gpu(grid_g, 0), args.repeats)
        levels = int(depth.max()) + 1
        base_ms, (_, base_levels) = gpu_time(
            lambda: cupy_bfs(gout.offsets, gout.targets, 0, side * side, max_levels=200), 1)
        res["bfs_grid"] = {"side": side, "ms": ms, "levels": levels,
                           "us_per_level": ms * 1e3 / levels,
                           "cupy_us_per_level_first_200": base_ms * 1e3 / base_levels, **stats}
        log("grid bfs", res["bfs_grid"])
        # the variant in measurement (tools/gpu_variants): the single-block levels with their
        # queues and counters in shared memory, in the same run as the default
        from tools.gpu_variants.bfs_small_shared import bfs_depths_shared

        try:
            vms, (vdepth, vstats) = gpu_time(lambda: bfs_depths_shared(grid_g, 0), args.repeats)
            res["bfs_grid_small_shared"] = {
                "ms": vms, "us_per_level": vms * 1e3 / levels,
                "over_default": vms / ms, "same_depths": bool(cp.array_equal(vdepth, depth)),
                **vstats}
        except Exception as exc:  # noqa: BLE001  (a variant must not end the run)
            res["bfs_grid_small_shared"] = {"error": repr(exc)}
        log("grid bfs, small levels in shared memory", res["bfs_grid_small_shared"])
        ms, (gdist, sstats) = gpu_time(lambda: sssp_distances_gpu(grid_g, 0),
                                       max(1, args.repeats // 2))
        res["sssp_grid"] = {"ms": ms, **sstats}
        if not args.skip_scipy:
            scipy_ms, ref = cpu_time(lambda: csgraph.dijkstra(
                grid_g.csr("out", weights=True).to_scipy(weighted=True), indices=0))
            res["sssp_grid"].update(scipy_ms=scipy_ms,
                                    matches_scipy=bool(np.allclose(cp.asnumpy(gdist), ref)))
        log("grid sssp", res["sssp_grid"])

    def sssp_rmat():
        src, dst = rmat_edges_gpu(args.sssp_scale, 16, seed=args.seed)
        w = cp.random.RandomState(args.seed + 1).randint(1, 101, size=src.size).astype(np.float64)
        sg = graph_from_device_edges(src, dst, 1 << args.sssp_scale, directed=True, weights=w,
                                     name=f"rmat{args.sssp_scale}w")
        del src, dst, w
        sdeg = rt.device_csr(sg, "out").degrees()
        s = int(cp.argmax(sdeg))
        ms, (sdist, sstats) = gpu_time(lambda: sssp_distances_gpu(sg, s), args.repeats)
        res["sssp_rmat"] = {"scale": args.sssp_scale, "source": s, "ms": ms, **sstats}
        if not args.skip_scipy:
            scipy_ms, ref = cpu_time(lambda: csgraph.dijkstra(
                sg.csr("out", weights=True).to_scipy(weighted=True), indices=s))
            res["sssp_rmat"].update(scipy_ms=scipy_ms,
                                    matches_scipy=bool(np.allclose(cp.asnumpy(sdist), ref)))
        log("rmat sssp", res["sssp_rmat"])

    try:
        section("build_rmat", build_rmat)
        section("bfs_rmat", bfs_rmat)
        section("wcc_rmat", wcc_rmat)
        section("pagerank_layouts", pagerank_layouts_section)
        section("pagerank_peers", pagerank_peers)
        if "g" in state:
            state["g"].drop_device()  # the R-MAT graph's device CSR, before the next graphs
        state.clear()
        section("grid", grid_section)
        section("sssp_rmat", sssp_rmat)
    finally:
        (out_dir / "bench_gpu.json").write_text(json.dumps(res, indent=1, default=str))
        try:
            table = markdown(res)
        except Exception as exc:  # noqa: BLE001
            table = f"(no table: {exc!r})\n"
        (out_dir / "bench_gpu.md").write_text(table)
        print(table)
    return 0


def markdown(res: dict) -> str:
    """The short table: one row per target, a row whose numbers are missing says so."""

    def scipy_row(name, key, target):
        d = res[key]
        return (name, f"{d['ms']:.1f} ms", f"scipy {d['scipy_ms']:.0f} ms",
                f"{d['scipy_ms'] / d['ms']:.1f}x", target)

    def bfs_rmat():
        bfs = res["bfs_rmat"]
        ours = statistics.median(r["ms"] for r in bfs)
        base = statistics.median(r["cupy_ms"] for r in bfs)
        gteps = statistics.median(r["edges_traversed"] / r["ms"] / 1e6 for r in bfs)
        return (f"BFS RMAT-{res['rmat']['scale']} (median of {len(bfs)} sources)",
                f"{ours:.2f} ms ({gteps:.0f} GTEPS)", f"CuPy gather/unique {base:.2f} ms",
                f"{base / ours:.1f}x", ">= 10x")

    def bfs_grid():
        grid = res["bfs_grid"]
        base = grid["cupy_us_per_level_first_200"]
        shared = res.get("bfs_grid_small_shared", {})
        variant = (f"; shared-memory variant {shared['us_per_level']:.1f}"
                   if "us_per_level" in shared else "")
        return (f"BFS grid {grid['side']}^2 ({grid['levels']} levels)",
                f"{grid['us_per_level']:.1f} us/level{variant}", f"CuPy {base:.0f} us/level",
                f"{base / grid['us_per_level']:.0f}x", "<= 30 us/level; 5 us (issue 31)")

    def pagerank(label, title, target):
        pr = res["pagerank_rmat"]
        ours = pr[label]["ms_per_iteration"]
        peer = pr["cupyx_matvec"]["ms_per_iteration"]
        return (f"PageRank RMAT-{res['rmat']['scale']} {title}", f"{ours:.3f} ms/iter",
                f"cupyx matvec {peer:.3f} ms/iter",
                f"{peer / ours:.1f}x; {ours / pr['traffic_bound_ms']:.2f}x bound", target)

    def startup():
        st = res["startup"]
        pr = st.get("pagerank_query", {}).get("startup_ms_median", float("nan"))
        return ("Start-up + kernel load of a query in a fresh process, warm cache (BFS query)",
                f"{st['bfs_query']['startup_ms_median']:.0f} ms (PageRank query {pr:.0f} ms)",
                f"cold compile, all modules {st['cold_compile_all_modules_ms']:.0f} ms",
                "", "< 300 ms")

    makers = [
        bfs_rmat, bfs_grid,
        lambda: pagerank("default", "(default layout: relabelled, L2 blocks, hot-source tiles "
                         "from 2^27 edges)", ">= 3x; <= 2.5x bound"),
        lambda: pagerank("untiled", "without tiles", "(comparison)"),
        lambda: scipy_row(f"SSSP RMAT-{res['sssp_rmat']['scale']} w 1..100", "sssp_rmat",
                          ">= 20x"),
        lambda: scipy_row(f"SSSP grid {res['bfs_grid']['side']}^2 w 1..100", "sssp_grid",
                          ">= 3x"),
        lambda: scipy_row(f"WCC RMAT-{res['rmat']['scale']}", "wcc_rmat", ">= 20x"),
        startup,
    ]
    rows = []
    for make in makers:
        try:
            rows.append(make())
        except (KeyError, TypeError, ZeroDivisionError, statistics.StatisticsError) as exc:
            rows.append((f"(row missing: {exc!r})", "", "", "", ""))
    pr = res.get("pagerank_rmat", {})
    bound = pr.get("traffic_bound_ms", float("nan"))
    lines = [f"GPU: {res['gpu']} ({res['multiprocessors']} SMs, L2 {res['l2_bytes'] >> 20} MiB), "
             f"CuPy {res['cupy']}, copy bandwidth {res.get('copy_bandwidth_GBps', 0):.0f} GB/s; "
             f"PageRank traffic bound {bound:.3f} ms/iter",
             "", "| operator | ours | peer | ratio | target |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    layouts = [(k, v) for k, v in pr.items() if isinstance(v, dict) and "layout" in v]
    if layouts:
        lines += ["", "PageRank layouts (ms per iteration; by kernel):", "",
                  "| layout | ms/iter | x bound | prepare s | kernels | diff vs default |",
                  "|---|---|---|---|---|---|"]
        for label, row in layouts:
            kernels = ", ".join(f"{k} {v:.3f}" for k, v in row["kernel_ms_per_iteration"].items())
            lines.append(f"| {label} | {row['ms_per_iteration']:.3f} | "
                         f"{row['ms_per_iteration'] / bound:.2f} | {row['prepare_s']:.2f} | "
                         f"{kernels} | {row.get('max_rel_diff_vs_default', 0.0):.1e} |")
    if res.get("errors"):
        lines += ["", f"Errors: {res['errors']}"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
