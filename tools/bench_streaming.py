"""Benchmark of the streamed operators against the resident ones on one GPU; one run, same
graphs, every figure: time, bytes moved, bandwidth.

Every streamed operator runs the way a query runs it: ``graphdb.executor.algorithms.run(name,
graph, options, OperatorConfig(device, variant, budget_bytes, state_bytes))`` with
``state_bytes`` the family spec's figure (``spec.variant(device, variant).state_bytes(n, m)``),
and on the GPU the residency owner's and CuPy's pool capped at the budget, as the runner does.

On the GPU machine::

    python tools/bench_streaming.py --out DIR [--scale 24] [--page-scale 21] [--cpu-scale 18]

writes ``DIR/bench_streaming.json`` and ``DIR/bench_streaming.md`` (the table, printed last).
Sections (each records its own failure and the run goes on):

1. host-to-device bandwidth from page-locked memory (1 GiB, CUDA events);
2. R-MAT ``scale`` (weighted, directed) built on the GPU; the resident BFS/SSSP operators timed
   with the graph on the device (kernels only, and the operator with its result columns) and
   with the upload of its CSR added (a cold query); then the device copy is dropped and the
   budget set to a quarter of the weighted out-CSR's bytes;
3. Subway BFS and SSSP (``operators/subway.py``) under that budget against the resident
   results: the family's default (through ``algorithms.run``) and the operator's three modes
   (synchronous; asynchronous with and without the first full pass), time, bytes moved, and the
   bytes that streaming every partition every iteration would move (outer iterations of the
   synchronous run x the graph's bytes);
4. PageRank by edge chunks (``edge_centric``): achieved bytes per second over the H2D bandwidth
   of section 1, in the iterations (steady state) and per call, with the copy engine's
   timeline, and its error against the resident GPU PageRank;
5. page streaming from LMDB (R-MAT ``--page-scale``) in a child process with a small buffer pool:
   BFS and PageRank correct, peak RSS of the child against its budget plus its fixed overhead
   (the child's RSS after imports, before the run);
6. CPU: Subway SSSP with a quarter of the graph as budget against the resident CPU SSSP, Subway
   without a budget, and scipy's Dijkstra (R-MAT ``--cpu-scale``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

RESULTS: dict = {}
#: Where RESULTS are written after every section (main sets it), so that a run stopped from
#: outside keeps what it measured.
RESULTS_PATH: list[Path] = []


def _col(output, name):
    """An operator output's column on the host (a GPU operator may hand back device arrays)."""
    column = output.columns[name]
    return column.get() if hasattr(column, "get") else np.asarray(column)


def section(name):
    def wrap(fn):
        def run(*a, **k):
            t0 = time.perf_counter()
            try:
                fn(*a, **k)
            except Exception as exc:  # noqa: BLE001  (the report says which section failed)
                RESULTS[f"{name}_error"] = f"{type(exc).__name__}: {exc}"
                traceback.print_exc()
            RESULTS.setdefault("section_s", {})[name] = round(time.perf_counter() - t0, 1)
            print(f"[{name}] {time.perf_counter() - t0:.1f} s", flush=True)
            for path in RESULTS_PATH:
                path.write_text(json.dumps(RESULTS, indent=1, default=str))
        return run
    return wrap


def gb(x):
    return f"{x / 1e9:.2f} GB"


def streamed(name: str, graph, options: dict, device: str, variant: str, budget: int,
             **operator_options):
    """Run ``variant`` of algorithm ``name`` within ``budget`` bytes, configured as the physical
    planner configures it (the spec's vertex-state bytes) and, on the GPU, with the residency
    owner and CuPy's pool capped at the budget as the runner caps them.

    ``operator_options`` (Subway's ``asynchronous``/``first_full``) call the shared operator
    directly instead of the family's default, for the mode comparison."""
    from graphdb.executor import algorithms
    from graphdb.executor.algorithms import OperatorConfig

    spec = algorithms.get(name)
    state = spec.variant(device, variant).state_bytes(graph.num_vertices, graph.num_edges)
    config = OperatorConfig(device, variant, int(budget), state)

    def call():
        if not operator_options:
            return algorithms.run(name, graph, options, config)
        from graphdb.executor.operators.subway import run_subway

        return run_subway(graph, config, name, options.get("source"), **operator_options)

    if device != "gpu":
        return call()
    from graphdb.executor.gpu import runtime as rt
    from graphdb.executor.residency import RESIDENCY

    dev = rt.device_name()
    RESIDENCY.set_budget(dev, int(budget))
    RESIDENCY.make_room(dev, int(budget))  # as the runner does for a streamed variant
    with rt.memory_budget(int(budget), reserve=int(budget)):
        return call()


@section("h2d")
def bench_h2d():
    from graphdb.executor.gpu import runtime as rt
    from graphdb.executor.gpu.pinned import h2d, pinned_empty

    cp = rt.cp()
    host = pinned_empty(1 << 30, np.uint8)
    host[:] = 1
    dev = cp.empty(1 << 30, dtype=np.uint8)
    s = cp.cuda.Stream(non_blocking=True)
    times = []
    for _ in range(5):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record(s)
        h2d(dev, host, s)
        b.record(s)
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b) / 1e3)
    RESULTS["h2d_GBps"] = (1 << 30) / np.median(times) / 1e9
    del dev, host


def timed(fn, repeat=3):
    from graphdb.executor.gpu import runtime as rt

    cp = rt.cp()
    out, ts = None, []
    for _ in range(repeat):
        cp.cuda.Device().synchronize()
        t0 = time.perf_counter()
        out = fn()
        cp.cuda.Device().synchronize()
        ts.append(time.perf_counter() - t0)
    return out, float(np.median(ts))


def _weighted_rmat(scale):
    """The weighted R-MAT graph of sections 2-4 on the device, and its weighted out-CSR's bytes
    (what the traversals read); RESULTS gets its sizes and the budget, a quarter of that."""
    from graphdb.executor.gpu import runtime as rt
    from tools.gpu_graphs import graph_from_device_edges, rmat_edges_gpu

    cp = rt.cp()
    src, dst = rmat_edges_gpu(scale, 16, seed=1)
    w = cp.random.RandomState(2).random_sample(src.size) + 0.01
    g = graph_from_device_edges(src, dst, 1 << scale, directed=True, weights=w, name="rmat")
    del src, dst, w
    n, m = g.num_vertices, g.num_edges
    graph_bytes = 8 * (n + 1) + 12 * m
    RESULTS.update(scale=scale, vertices=n, edges=m, graph_bytes=graph_bytes,
                   budget=graph_bytes // 4)
    return g, graph_bytes


def _off_device(g):
    """Host copies of the graph (the streamed operators keep the topology in host memory), then
    every device copy dropped, so the budget is all there is on the device."""
    t0 = time.perf_counter()
    g.host_copies()
    RESULTS["host_copy_s"] = time.perf_counter() - t0
    g.drop_device()


#: Subway's modes: (label, asynchronous, first_full).
SUBWAY_MODES = (("sync", False, False), ("async", True, True), ("async-nf", True, False))


def _subway_row(algo, mode, out, ref, n):
    mt = out.metrics
    if algo == "bfs":
        got = np.full(n, -1)
        got[_col(out, "vertex")] = _col(out, "depth")
        ok = bool(np.array_equal(got, ref))
    else:
        got = np.full(n, np.inf)
        got[_col(out, "vertex")] = _col(out, "distance")
        ok = bool(np.allclose(got, ref, rtol=1e-9))
    return {"algo": algo, "mode": mode, "async": mt.get("asynchronous"),
            "first_full": mt.get("first_full"), "correct": ok,
            "wall_s": mt["wall_s"], "bytes": mt["bytes_to_device"],
            "outer": mt["outer_iterations"], "inner": mt["inner_iterations"],
            "pieces": mt["partitions"], "transfer_s": mt["transfer_s"],
            "kernel_s": mt["kernel_s"], "gather_s": mt["gather_s"],
            "modes": [r["mode"][0] for r in mt["per_iteration"]],
            # bytes over the copy (or zero-copy gather+relax) intervals
            "transfer_GBps": mt["bytes_to_device"] / max(mt["transfer_s"], 1e-9) / 1e9,
            "active_edges": mt["active_edges"]}


@section("rmat")
def bench_traversals(scale, ctx):
    from graphdb.executor.algorithms import OperatorConfig, run
    from graphdb.executor.algorithms.bfs.gpu import bfs_depths_gpu
    from graphdb.executor.algorithms.sssp.gpu import sssp_distances_gpu
    from graphdb.executor.gpu import runtime as rt

    cp = rt.cp()
    g, graph_bytes = _weighted_rmat(scale)
    n, m = g.num_vertices, g.num_edges
    source = int(cp.argmax(rt.device_csr(g, "out").degrees()))
    budget = RESULTS["budget"]
    gpu = OperatorConfig("gpu")
    bfs_res, t_bfs = timed(lambda: run("bfs", g, {"source": source}, gpu))
    sssp_res, t_sssp = timed(lambda: run("sssp", g, {"source": source}, gpu))
    # [1]: the time only; keeping the returned device arrays (SSSP's distances, 8 B a vertex)
    # would hold them against the streamed runs' budget below
    RESULTS["resident_bfs_kernel_s"] = timed(lambda: bfs_depths_gpu(g, source))[1]
    RESULTS["resident_sssp_kernel_s"] = timed(lambda: sssp_distances_gpu(g, source))[1]
    h2d = RESULTS.get("h2d_GBps", 50.0) * 1e9
    RESULTS.update(resident_bfs_s=t_bfs, resident_sssp_s=t_sssp,
                   resident_bfs_cold_s=t_bfs + (8 * (n + 1) + 4 * m) / h2d,
                   resident_sssp_cold_s=t_sssp + graph_bytes / h2d)
    _off_device(g)
    ref = {"bfs": np.full(n, -1), "sssp": np.full(n, np.inf)}
    ref["bfs"][_col(bfs_res, "vertex")] = _col(bfs_res, "depth")
    ref["sssp"][_col(sssp_res, "vertex")] = _col(sssp_res, "distance")
    del bfs_res, sssp_res  # their device columns would count against the streamed budget
    rows = []
    for algo in ("bfs", "sssp"):
        args = (algo, g, {"source": source}, "gpu", "subway", budget)
        streamed(*args)  # warm: compiles, pins the CSR (and weights) once
        rows.append(_subway_row(algo, "default", streamed(*args), ref[algo], n))
        print(rows[-1], flush=True)
        for mode, asyn, first_full in SUBWAY_MODES:
            out = streamed(*args, asynchronous=asyn, first_full=first_full)
            rows.append(_subway_row(algo, mode, out, ref[algo], n))
            print(rows[-1], flush=True)
    for algo in ("bfs", "sssp"):
        sync_iters = max(r["outer"] for r in rows if r["algo"] == algo and r["mode"] == "sync")
        ebytes = 4 if algo == "bfs" else 12
        full = sync_iters * (8 * (n + 1) + ebytes * m)
        for r in rows:
            if r["algo"] == algo:
                r["bytes_over_full"] = r["bytes"] / full
                r["time_over_resident"] = r["wall_s"] / RESULTS[f"resident_{algo}_s"]
                r["time_over_resident_cold"] = r["wall_s"] / RESULTS[f"resident_{algo}_cold_s"]
        RESULTS[f"{algo}_full_streaming_bytes"] = full
    RESULTS["subway"] = rows
    ctx["graph"] = g


@section("graph")
def prepare_graph(scale, ctx):
    """The R-MAT graph and budget of section 2 without the resident and Subway runs (--skip
    subway): for running the PageRank section alone."""
    g, _ = _weighted_rmat(scale)
    _off_device(g)
    ctx["graph"] = g


@section("pagerank")
def bench_pagerank(ctx):
    from graphdb.executor.algorithms import OperatorConfig, run
    from graphdb.executor.gpu import runtime as rt
    from graphdb.executor.residency import RESIDENCY

    g = ctx["graph"]
    budget = RESULTS["budget"]
    h2d = RESULTS.get("h2d_GBps", float("nan"))
    args = ("pagerank", g, {"max_iterations": 2}, "gpu", "edge_centric", budget)
    streamed(*args)  # warm: compiles, pins the in-CSR and the chunks' row offsets once
    out = streamed(*args[:2], {"max_iterations": 10}, *args[3:])
    mt = out.metrics
    per_iter = mt["per_iteration"][0]["bytes"]
    # per call: bytes moved over the operator's wall time (set-up and result included)
    t_call = mt["wall_s"]
    p = {"iterations": mt["outer_iterations"], "bytes_per_iteration": per_iter,
         "chunk_bytes": mt["chunk_bytes"], "wall_s": t_call,
         "achieved_GBps": mt["bytes_to_device"] / t_call / 1e9,
         "chunks_per_iteration": mt["per_iteration"][0]["pieces"],
         "sum_transfer_s": mt["transfer_s"], "sum_kernel_s": mt["kernel_s"],
         "setup_s": mt["setup_s"], "timeline": mt.get("timeline"),
         # steady state: the iterations alone (copies and kernels overlapped), without set-up
         "iterations_s": mt["iterations_s"],
         "steady_GBps": mt["streamed_bytes_per_s"] / 1e9}
    p["fraction_of_h2d"] = p["achieved_GBps"] / h2d
    p["steady_fraction_of_h2d"] = p["steady_GBps"] / h2d
    RESULTS["pagerank"] = p
    # the reference: the resident GPU operator, without a budget (uploads the CSR again)
    dev = rt.device_name()
    RESIDENCY.set_budget(dev, None)
    res = run("pagerank", g, {"max_iterations": 10}, OperatorConfig("gpu"))
    g.drop_device()
    ref = _col(res, "rank")
    p["max_rel_err_vs_resident"] = float(np.max(np.abs(_col(out, "rank") - ref) / ref))
    print(p, flush=True)


def _rss_kb():
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                fields[k] = int(v.split()[0])
    return fields


def pages_child(path, device, pool):
    """Runs in a fresh process: BFS and PageRank by page streaming, RSS sampled meanwhile."""
    import threading

    from graphdb.catalog.ingest import build_graph_arrays  # noqa: F401  (imports counted in the base)
    from graphdb.executor import algorithms
    from graphdb.executor.graph import CSR, Graph, StoredGraph
    from graphdb.storage import BufferManager, Environment

    if device == "gpu":
        from graphdb.executor.gpu import runtime as rt

        rt.cp().zeros(1)
        rt.cp().cuda.Device().synchronize()
    meta = json.load(open(os.path.join(path, "meta.json")))
    n, m = meta["n"], meta["m"]
    env = Environment(os.path.join(path, "db"))
    bm = BufferManager(env, pool, pinned=(device == "gpu"))
    g = StoredGraph("p", n, m, True, False, read=lambda a: bm.read_array("p", a),
                    key=("bench_streaming", path), buffers=bm, graph_id="p")
    pr_state = algorithms.get("pagerank").variant(device, "pages").state_bytes(n, m)
    # the host budget: PageRank's vertex state, the out-degrees read once, and the frame pool
    host_budget = pr_state + 8 * (n + 1) + pool
    dev_budget = pr_state + (256 << 20)
    base = _rss_kb()
    peak = dict(base)
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            for k, v in _rss_kb().items():
                peak[k] = max(peak.get(k, 0), v)
            time.sleep(0.01)
    th = threading.Thread(target=sample, daemon=True)
    th.start()
    out = streamed("bfs", g, {"source": 0}, device, "pages", dev_budget)
    pr = streamed("pagerank", g, {"max_iterations": 5}, device, "pages", dev_budget)
    stop.set()
    th.join()
    # correctness against the resident CPU operators on the CSR read back afterwards (outside
    # the peak)
    mem = Graph.from_csr("m", CSR(bm.read_array("p", "out_offsets"),
                                  bm.read_array("p", "out_targets")))
    ref_bfs = algorithms.run("bfs", mem, {"source": 0})
    depth = np.full(n, -1)
    depth[_col(ref_bfs, "vertex")] = _col(ref_bfs, "depth")
    got = np.full(n, -1)
    got[_col(out, "vertex")] = _col(out, "depth")
    ref = algorithms.run("pagerank", mem, {"max_iterations": 5}).columns["rank"]
    print(json.dumps({
        "device": device, "bfs_correct": bool(np.array_equal(got, depth)),
        "pagerank_max_rel_err": float(np.max(np.abs(_col(pr, "rank") - ref) / ref)),
        "bfs_wall_s": out.metrics["wall_s"], "bfs_predicted_s": out.metrics["predicted_s"],
        "bfs_pages_per_level": out.metrics["pages_per_level"],
        "bfs_cache_hit_rate": out.metrics["cache_hit_rate"],
        "pr_wall_s": pr.metrics["wall_s"], "pr_predicted_s": pr.metrics["predicted_s"],
        "pr_cache_hit_rate": pr.metrics["cache_hit_rate"],
        "pages_total": pr.metrics["pages_total"], "page_bytes": pr.metrics["page_bytes"],
        "host_budget_bytes": host_budget, "device_budget_bytes": dev_budget,
        "rss_base_kb": base, "rss_peak_kb": peak}))


@section("pages")
def bench_pages(scale, workdir, devices):
    from graphdb.catalog.ingest import build_graph_arrays
    from graphdb.generators import rmat
    from graphdb.storage import Environment, write_topology

    src, dst = rmat(scale, 16, seed=3)
    n = 1 << scale
    path = os.path.join(workdir, f"pages{scale}")
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    env = Environment(os.path.join(path, "db"))
    arrays = build_graph_arrays(np.asarray(src), np.asarray(dst), n, None, True)
    t0 = time.perf_counter()
    stats = env.write(lambda txn: write_topology(env, txn, "p", arrays, pages=True))
    topo = int(sum(a.nbytes for a in arrays.values()))
    arrays.clear()  # the pages are written; free the host CSR before the children run
    env.close()
    json.dump({"n": n, "m": int(len(src))}, open(os.path.join(path, "meta.json"), "w"))
    RESULTS["pages_graph"] = {"scale": scale, "edges": int(len(src)), "csr_bytes": topo,
                              "write_s": time.perf_counter() - t0,
                              **{k: stats[k] for k in ("pages", "page_size") if k in stats}}
    pool = 64 << 20
    for device in devices:
        r = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--pages-child", path,
                            "--device", device, "--pool", str(pool)], capture_output=True,
                           text=True, timeout=400, cwd=ROOT)
        line = [x for x in r.stdout.splitlines() if x.startswith("{")]
        if not line:  # this device's error, and the next device still runs
            RESULTS[f"pages_{device}_error"] = f"child failed: {r.stderr[-2000:]}"
            continue
        child = json.loads(line[-1])
        peak = child["rss_peak_kb"].get("VmRSS", 0) * 1024
        base = child["rss_base_kb"].get("VmRSS", 0) * 1024
        child["peak_minus_base_bytes"] = peak - base
        child["within_budget"] = peak - base <= child["host_budget_bytes"]
        anon = (child["rss_peak_kb"].get("RssAnon", 0) - child["rss_base_kb"].get("RssAnon", 0))
        child["anon_growth_bytes"] = anon * 1024
        RESULTS[f"pages_{device}"] = child
        print(child, flush=True)
    shutil.rmtree(path, ignore_errors=True)


@section("cpu")
def bench_cpu(scale):
    import scipy.sparse.csgraph as cg

    from graphdb.executor.algorithms import run
    from graphdb.executor.graph import Graph
    from graphdb.generators import rmat

    src, dst = rmat(scale, 16, seed=5)
    n = 1 << scale
    w = np.random.default_rng(4).random(len(src)) + 0.01
    g = Graph.from_edges(np.asarray(src), np.asarray(dst), n, weights=w)
    graph_bytes = 8 * (n + 1) + 12 * g.num_edges
    source = int(np.argmax(g.out_degrees()))
    t0 = time.perf_counter()
    ref = cg.dijkstra(g.csr("out", weights=True).to_scipy(weighted=True), indices=source)
    t_scipy = time.perf_counter() - t0
    run("sssp", g, {"source": source})  # warm: the kernels and the forms cached on the graph
    t0 = time.perf_counter()
    run("sssp", g, {"source": source})
    t_resident = time.perf_counter() - t0
    unbounded = streamed("sssp", g, {"source": source}, "cpu", "subway", 1 << 40)
    out = streamed("sssp", g, {"source": source}, "cpu", "subway", graph_bytes // 4)
    d = np.full(n, np.inf)
    d[_col(out, "vertex")] = _col(out, "distance")
    RESULTS["cpu_sssp"] = {"scale": scale, "edges": g.num_edges, "budget": graph_bytes // 4,
                           "resident_s": t_resident,
                           "subway_unbounded_s": unbounded.metrics["wall_s"],
                           "streamed_s": out.metrics["wall_s"],
                           "ratio": out.metrics["wall_s"] / t_resident,
                           "scipy_dijkstra_s": t_scipy,
                           "pieces": out.metrics["partitions"],
                           "correct": bool(np.allclose(d, ref, rtol=1e-9))}
    print(RESULTS["cpu_sssp"], flush=True)


def table():
    r = RESULTS
    lines = [f"H2D from page-locked memory: {r.get('h2d_GBps', float('nan')):.1f} GB/s"]
    if "graph_bytes" in r:
        lines.append(f"R-MAT {r['scale']}: {r['vertices']} V, {r['edges']} E, weighted out-CSR "
                     f"{gb(r['graph_bytes'])}, budget {gb(r['budget'])}")
    if "resident_bfs_s" in r:  # not with --skip subway
        lines.append(f"resident kernels only: bfs {r['resident_bfs_kernel_s'] * 1e3:.1f} ms, "
                     f"sssp {r['resident_sssp_kernel_s'] * 1e3:.1f} ms")
        lines.append(f"resident operator bfs {r['resident_bfs_s'] * 1e3:.1f} ms (cold "
                     f"{r['resident_bfs_cold_s'] * 1e3:.1f}), sssp {r['resident_sssp_s'] * 1e3:.1f}"
                     f" ms (cold {r['resident_sssp_cold_s'] * 1e3:.1f})")
    for row in r.get("subway", []):
        lines.append(f"subway {row['algo']:4s} {row['mode']:8s}"
                     f" ok={row['correct']} {row['wall_s'] * 1e3:8.1f} ms  bytes/full="
                     f"{row.get('bytes_over_full', float('nan')):.3f}  t/resident="
                     f"{row.get('time_over_resident', float('nan')):.1f} (cold "
                     f"{row.get('time_over_resident_cold', float('nan')):.2f})  outer={row['outer']}"
                     f" pieces={row['pieces']} modes={''.join(row['modes'])}"
                     f" xfer={row['transfer_s'] * 1e3:.0f}ms@{row['transfer_GBps']:.1f}GB/s"
                     f" kern={row['kernel_s'] * 1e3:.0f}ms inner={row['inner']}")
    if "pagerank" in r:
        p = r["pagerank"]
        lines.append(f"pagerank edge-centric: {p['achieved_GBps']:.1f} GB/s = "
                     f"{p['fraction_of_h2d']:.0%} of H2D per call, {p['steady_GBps']:.1f} GB/s = "
                     f"{p['steady_fraction_of_h2d']:.0%} in the iterations; "
                     f"{p['chunks_per_iteration']} chunks/iter;"
                     f" max rel err vs resident {p.get('max_rel_err_vs_resident', float('nan')):.1e}")
        t = p.get("timeline")
        if t:
            lines.append(f"  copies {p['sum_transfer_s'] * 1e3:.0f} ms, kernels "
                         f"{p['sum_kernel_s'] * 1e3:.0f} ms, copy engine busy "
                         f"{t['copy_busy_fraction']:.0%} of {t['span_s'] * 1e3:.0f} ms (gaps: "
                         f"{t['copy_gap_waiting_for_kernel_s'] * 1e3:.1f} ms on kernels, "
                         f"{t['copy_gap_other_s'] * 1e3:.1f} ms other); "
                         f"{t['kernel_longer_than_copy']} chunks' kernel longer than its copy")
    for dev in ("cpu", "gpu"):
        c = r.get(f"pages_{dev}")
        if c:
            lines.append(f"pages[{dev}]: bfs ok={c['bfs_correct']} {c['bfs_wall_s']:.2f}s "
                         f"(pred {c['bfs_predicted_s']:.2f}) pr err={c['pagerank_max_rel_err']:.1e} "
                         f"{c['pr_wall_s']:.2f}s (pred {c['pr_predicted_s']:.2f}); peak-base "
                         f"{c['peak_minus_base_bytes'] / 2**20:.0f} MiB (anonymous "
                         f"{c['anon_growth_bytes'] / 2**20:.0f} MiB) vs budget "
                         f"{c['host_budget_bytes'] / 2**20:.0f} MiB; base "
                         f"{c['rss_base_kb'].get('VmRSS', 0) / 1024:.0f} MiB")
    if "cpu_sssp" in r:
        c = r["cpu_sssp"]
        lines.append(f"cpu sssp R-MAT {c['scale']}: streamed {c['streamed_s']:.2f}s / resident "
                     f"{c['resident_s']:.2f}s = {c['ratio']:.2f}x (subway unbounded "
                     f"{c['subway_unbounded_s']:.2f}s, scipy {c['scipy_dijkstra_s']:.2f}s) "
                     f"ok={c['correct']}")
    for k, v in r.items():
        if k.endswith("_error"):
            lines.append(f"ERROR {k}: {v}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--page-scale", type=int, default=21)
    ap.add_argument("--cpu-scale", type=int, default=18)
    ap.add_argument("--out", default=".", help="directory for bench_streaming.json and .md")
    ap.add_argument("--workdir", default="/tmp/bench_streaming",
                    help="where the page section's database is written (removed after)")
    ap.add_argument("--skip", default="", help="comma-separated: gpu (sections 1-4), subway "
                    "(section 2's resident runs and 3; the graph is still built), pagerank, "
                    "pages, cpu")
    ap.add_argument("--pages-child", help=argparse.SUPPRESS)
    ap.add_argument("--device", default="gpu", help=argparse.SUPPRESS)
    ap.add_argument("--pool", type=int, default=64 << 20, help=argparse.SUPPRESS)
    ap.add_argument("--page-devices", default="gpu,cpu")
    a = ap.parse_args(argv)
    if a.pages_child:
        pages_child(a.pages_child, a.device, a.pool)
        return
    skip = set(a.skip.split(","))
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    RESULTS_PATH.append(out / "bench_streaming.json")
    ctx: dict = {}
    if "gpu" not in skip:
        bench_h2d()
        if "subway" in skip:
            prepare_graph(a.scale, ctx)
        else:
            bench_traversals(a.scale, ctx)
        if "pagerank" not in skip and "graph" in ctx:
            bench_pagerank(ctx)
        ctx.clear()
    if "pages" not in skip:
        devices = [d for d in a.page_devices.split(",") if d and (d != "gpu" or "gpu" not in skip)]
        bench_pages(a.page_scale, a.workdir, devices)
    if "cpu" not in skip:
        bench_cpu(a.cpu_scale)
    (out / "bench_streaming.json").write_text(json.dumps(RESULTS, indent=1, default=str))
    text = table()
    (out / "bench_streaming.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
