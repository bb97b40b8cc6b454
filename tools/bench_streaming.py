"""Benchmark of the streamed operators (issue 8) on one GPU; one run, same graphs, every figure.

    python -m tools.bench_streaming --scale 24 --out results.json

Sections (each records its own failure and the run goes on):

1. host-to-device bandwidth from page-locked memory (1 GiB, CUDA events);
2. R-MAT ``scale`` (weighted, directed) built on the GPU; the resident BFS/SSSP operators timed
   with the graph on the device (kernel only) and with the upload of its CSR added (a cold
   query); then the device copy is dropped and CuPy's pool limited to the budget, a quarter of
   the weighted out-CSR's bytes;
3. Subway BFS and SSSP (host and device gather, async and sync) against the resident results:
   time, bytes moved, and the bytes that streaming every partition every iteration would move
   (outer iterations of the sync run x the graph's bytes);
4. PageRank by edge chunks: achieved bytes per second over the H2D bandwidth of section 1, in
   the iterations (steady state) and per call, with the copy/kernel timeline of every chunk;
   the default slot count and two others;
5. page streaming from LMDB (R-MAT ``--page-scale``) in a child process with a small buffer pool:
   BFS and PageRank correct, peak RSS of the child against its budget plus its fixed overhead
   (the child's RSS after imports, before the run);
6. CPU: Subway SSSP with memory_limit a quarter of the graph against the same operator in memory
   and scipy's Dijkstra (R-MAT ``--cpu-scale``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback

import numpy as np

RESULTS: dict = {}


def section(name):
    def wrap(fn):
        def run(*a, **k):
            t0 = time.perf_counter()
            try:
                fn(*a, **k)
            except Exception as exc:  # noqa: BLE001  (the report says which section failed)
                RESULTS[f"{name}_error"] = f"{type(exc).__name__}: {exc}"
                traceback.print_exc()
            print(f"[{name}] {time.perf_counter() - t0:.1f} s", flush=True)
        return run
    return wrap


def gb(x):
    return f"{x / 1e9:.2f} GB"


@section("h2d")
def bench_h2d():
    from graphdb.executor.gpu import runtime as rt
    from graphdb.executor.streaming.gpu import h2d, pinned_empty

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


@section("rmat")
def bench_traversals(scale, ctx):
    from graphdb.executor.gpu import frontier
    from graphdb.executor.gpu import runtime as rt
    from graphdb.executor.streaming.subway import subway_bfs, subway_sssp

    cp = rt.cp()
    g, graph_bytes = _weighted_rmat(scale)
    n, m = g.num_vertices, g.num_edges
    source = int(cp.argmax(rt.device_csr(g, "out").degrees()))
    budget = RESULTS["budget"]
    bfs_res, t_bfs = timed(lambda: frontier.bfs(g, source))
    sssp_res, t_sssp = timed(lambda: frontier.sssp(g, source))
    # [1]: the time only; keeping the returned device arrays (SSSP's distances, 8 B a vertex)
    # would hold them against the streamed runs' budget below
    RESULTS["resident_bfs_kernel_s"] = timed(lambda: frontier.bfs_depths_gpu(g, source))[1]
    RESULTS["resident_sssp_kernel_s"] = timed(lambda: frontier.sssp_distances_gpu(g, source))[1]
    h2d = RESULTS.get("h2d_GBps", 50.0) * 1e9
    RESULTS.update(resident_bfs_s=t_bfs, resident_sssp_s=t_sssp,
                   resident_bfs_cold_s=t_bfs + (8 * (n + 1) + 4 * m) / h2d,
                   resident_sssp_cold_s=t_sssp + graph_bytes / h2d)
    t0 = time.perf_counter()
    # Host copies (the streamed operators keep the CSR in host memory); then nothing on the
    # device refers to the generated CSRs any more, so the budget below is all there is.
    out_host, in_host = g.out_csr, g.in_csr
    g._load_out, g._load_in = (lambda: out_host), (lambda: in_host)
    RESULTS["host_copy_s"] = time.perf_counter() - t0
    g._gpu_resident = {}
    cp.get_default_memory_pool().free_all_blocks()
    cp.get_default_memory_pool().set_limit(size=budget)
    ref_depth = np.full(n, -1)
    ref_depth[bfs_res.columns["vertex"]] = bfs_res.columns["depth"]
    ref_dist = np.full(n, np.inf)
    ref_dist[sssp_res.columns["vertex"]] = sssp_res.columns["distance"]
    rows = []
    for algo, fn in (("bfs", subway_bfs), ("sssp", subway_sssp)):
        for gather in ("host", "device"):
            for asyn, first_full in ((True, True), (True, False), (False, False)):
                kw = dict(device="gpu", budget_bytes=budget, gather=gather, asynchronous=asyn,
                          first_full=first_full)
                if not any(r["algo"] == algo for r in rows):
                    fn(g, source, **kw)  # warm: compiles, pins the CSR (and weights) once
                out = fn(g, source, **kw)
                mt = out.metrics
                if algo == "bfs":
                    got = np.full(n, -1)
                    got[out.columns["vertex"]] = out.columns["depth"]
                    ok = bool(np.array_equal(got, ref_depth))
                else:
                    got = np.full(n, np.inf)
                    got[out.columns["vertex"]] = out.columns["distance"]
                    ok = bool(np.allclose(got, ref_dist, rtol=1e-9))
                row = {"algo": algo, "gather": gather, "async": asyn, "first_full": first_full,
                       "correct": ok,
                       "wall_s": mt["wall_s"], "bytes": mt["bytes_to_device"],
                       "outer": mt["outer_iterations"], "inner": mt["inner_iterations"],
                       "pieces": mt["partitions"], "transfer_s": mt["transfer_s"],
                       "kernel_s": mt["kernel_s"], "gather_s": mt["gather_s"],
                       "modes": [r["mode"][0] for r in mt["per_iteration"]],
                       # bytes over the copy (or zero-copy gather+relax) intervals
                       "transfer_GBps": mt["bytes_to_device"] / max(mt["transfer_s"], 1e-9)
                       / 1e9,
                       "active_edges": mt["active_edges"]}
                rows.append(row)
                print(row, flush=True)
    for algo in ("bfs", "sssp"):
        sync_iters = max(r["outer"] for r in rows if r["algo"] == algo and not r["async"])
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
    from graphdb.executor.gpu import runtime as rt

    cp = rt.cp()
    g, graph_bytes = _weighted_rmat(scale)
    out_host, in_host = g.out_csr, g.in_csr
    g._load_out, g._load_in = (lambda: out_host), (lambda: in_host)
    g._gpu_resident = {}
    cp.get_default_memory_pool().free_all_blocks()
    cp.get_default_memory_pool().set_limit(size=graph_bytes // 4)
    ctx["graph"] = g


@section("pagerank")
def bench_pagerank(ctx, slot_variants=(2, 4)):
    from graphdb.executor.gpu import pagerank as gpr
    from graphdb.executor.gpu import runtime as rt
    from graphdb.executor.streaming.edge_centric import SLOTS, pagerank_edge_centric

    g = ctx["graph"]
    cp = rt.cp()
    budget = RESULTS["budget"]
    h2d = RESULTS.get("h2d_GBps", float("nan"))
    runs = {}
    for slots in (SLOTS, *slot_variants):
        # warm: compiles, pins the CSR and the chunks' row offsets (once per graph and chunk size)
        pagerank_edge_centric(g, 0.85, 2, device="gpu", budget_bytes=budget, slots=slots)
        runs[slots] = pagerank_edge_centric(g, 0.85, 10, device="gpu", budget_bytes=budget,
                                            slots=slots, timeline=True)
    out = runs[SLOTS]
    mt = out.metrics
    per_iter = mt["per_iteration"][0]["bytes"]
    # per call: bytes moved over the operator's wall time (set-up and result included)
    t_iter = mt["wall_s"]
    RESULTS["pagerank"] = {"slots": SLOTS, "iterations": mt["outer_iterations"],
                           "bytes_per_iteration": per_iter, "chunk_bytes": mt["chunk_bytes"],
                           "wall_s": t_iter, "achieved_GBps": mt["bytes_to_device"] / t_iter / 1e9,
                           "chunks_per_iteration": mt["per_iteration"][0]["pieces"],
                           "sum_transfer_s": mt["transfer_s"], "sum_kernel_s": mt["kernel_s"],
                           "setup_s": mt["setup_s"], "result_s": mt["result_s"],
                           "timeline": mt["timeline"]}
    RESULTS["pagerank"]["fraction_of_h2d"] = RESULTS["pagerank"]["achieved_GBps"] / h2d
    # steady state: the iterations alone (copies and kernels overlapped), without the set-up
    RESULTS["pagerank"]["iterations_s"] = mt["iterations_s"]
    RESULTS["pagerank"]["steady_GBps"] = mt["streamed_bytes_per_s"] / 1e9
    RESULTS["pagerank"]["steady_fraction_of_h2d"] = mt["streamed_bytes_per_s"] / 1e9 / h2d
    RESULTS["pagerank_chunk_timeline_ms"] = mt["chunk_timeline_ms"]
    RESULTS["pagerank_slots"] = [
        {"slots": k, "chunks_per_iteration": r.metrics["per_iteration"][0]["pieces"],
         "steady_GBps": r.metrics["streamed_bytes_per_s"] / 1e9,
         "steady_fraction_of_h2d": r.metrics["streamed_bytes_per_s"] / 1e9 / h2d,
         "per_call_GBps": r.metrics["bytes_to_device"] / r.metrics["wall_s"] / 1e9,
         "sum_transfer_s": r.metrics["transfer_s"], "sum_kernel_s": r.metrics["kernel_s"],
         "timeline": r.metrics["timeline"]} for k, r in runs.items()]
    cp.get_default_memory_pool().set_limit(size=0)
    g._gpu_resident = {}
    res = gpr.pagerank(g, 0.85, 10)
    ref = res.columns["rank"]
    for k, r in runs.items():
        err = float(np.max(np.abs(r.columns["rank"] - ref) / ref))
        RESULTS["pagerank_slots"][list(runs).index(k)]["max_rel_err_vs_resident"] = err
    RESULTS["pagerank"]["max_rel_err_vs_resident"] = float(
        np.max(np.abs(out.columns["rank"] - ref) / ref))
    print(RESULTS["pagerank"], flush=True)
    for row in RESULTS["pagerank_slots"]:
        print(row, flush=True)
    g._gpu_resident = {}


def _rss_kb():
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                fields[k] = int(v.split()[0])
    return fields


def pages_child(path, device, pool, scale):
    """Runs in a fresh process: BFS and PageRank by page streaming, RSS sampled meanwhile."""
    import threading

    from graphdb.catalog.ingest import build_graph_arrays  # noqa: F401  (imports counted in the base)
    from graphdb.executor.algorithms.bfs import bfs_depths
    from graphdb.executor.graph import Graph
    from graphdb.executor.stored import StoredGraph
    from graphdb.executor.streaming.pages import PAGERANK_STATE_BYTES, bfs_pages, pagerank_pages
    from graphdb.storage import BufferManager, Environment

    if device == "gpu":
        from graphdb.executor.gpu import runtime as rt

        rt.cp().zeros(1)
        rt.cp().cuda.Device().synchronize()
    meta = json.load(open(os.path.join(path, "meta.json")))
    n = meta["n"]
    env = Environment(os.path.join(path, "db"))
    bm = BufferManager(env, pool, pinned=(device == "gpu"))
    g = StoredGraph(name="p", num_vertices=n, num_edges=meta["m"], directed=True,
                    weighted=False, _load_out=None, _load_in=None, _buffers=bm, _graph_id="p")
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
    # the host budget: PageRank's vertex state, the out-degrees read once, and the frame pool
    state_budget = (PAGERANK_STATE_BYTES + 8) * n + pool
    dev_budget = PAGERANK_STATE_BYTES * n + (256 << 20)
    out = bfs_pages(g, 0, device=device, budget_bytes=dev_budget)
    pr = pagerank_pages(g, 0.85, 5, device=device, budget_bytes=dev_budget)
    stop.set()
    th.join()
    # correctness against a resident BFS on the CSR read back afterwards (outside the peak)
    off = bm.read_array("p", "out_offsets")
    tgt = bm.read_array("p", "out_targets")
    from graphdb.executor.graph import CSR

    mem = Graph(name="m", num_vertices=n, num_edges=len(tgt), directed=True, weighted=False,
                _load_out=lambda: CSR(off, tgt))
    depth, _ = bfs_depths(mem, 0)
    got = np.full(n, -1)
    got[out.columns["vertex"]] = out.columns["depth"]
    from graphdb.executor.algorithms.pagerank import pagerank_ranks

    ref, _ = pagerank_ranks(mem, 0.85, 5)
    print(json.dumps({
        "device": device, "bfs_correct": bool(np.array_equal(got, depth)),
        "pagerank_max_rel_err": float(np.max(np.abs(pr.columns["rank"] - ref) / ref)),
        "bfs_wall_s": out.metrics["wall_s"], "bfs_predicted_s": out.metrics["predicted_s"],
        "bfs_pages_per_level": out.metrics["pages_per_level"],
        "bfs_cache_hit_rate": out.metrics["cache_hit_rate"],
        "pr_wall_s": pr.metrics["wall_s"], "pr_predicted_s": pr.metrics["predicted_s"],
        "pr_cache_hit_rate": pr.metrics["cache_hit_rate"],
        "pages_total": pr.metrics["pages_total"], "page_bytes": pr.metrics["page_bytes"],
        "host_budget_bytes": state_budget, "rss_base_kb": base, "rss_peak_kb": peak}))


@section("pages")
def bench_pages(scale, workdir, devices):
    from graphdb.catalog.ingest import build_graph_arrays
    from graphdb.generators import rmat
    from graphdb.storage import Environment, write_topology

    src, dst = rmat(scale, 16, seed=3)
    n = 1 << scale
    path = os.path.join(workdir, f"pages{scale}")
    os.makedirs(path, exist_ok=True)
    env = Environment(os.path.join(path, "db"))
    arrays = build_graph_arrays(np.asarray(src), np.asarray(dst), n, None, True)
    t0 = time.perf_counter()
    stats = env.write(lambda txn: write_topology(env, txn, "p", arrays))
    topo = int(sum(a.nbytes for a in arrays.values()))
    arrays.clear()  # the pages are written; free the host CSR before the children run
    env.close()
    json.dump({"n": n, "m": int(len(src))}, open(os.path.join(path, "meta.json"), "w"))
    RESULTS["pages_graph"] = {"scale": scale, "edges": int(len(src)), "csr_bytes": topo,
                              "write_s": time.perf_counter() - t0, **{k: stats[k] for k in stats
                                                                      if k in ("pages",
                                                                               "page_size")}}
    pool = 64 << 20
    for device in devices:
        r = subprocess.run([sys.executable, "-m", "tools.bench_streaming", "--pages-child", path,
                            "--device", device, "--pool", str(pool)], capture_output=True,
                           text=True, timeout=400)
        line = [x for x in r.stdout.splitlines() if x.startswith("{")]
        if not line:
            raise RuntimeError(f"child failed: {r.stderr[-2000:]}")
        child = json.loads(line[-1])
        peak = child["rss_peak_kb"].get("VmRSS", 0) * 1024
        base = child["rss_base_kb"].get("VmRSS", 0) * 1024
        child["peak_minus_base_bytes"] = peak - base
        child["within_budget"] = peak - base <= child["host_budget_bytes"]
        anon = (child["rss_peak_kb"].get("RssAnon", 0) - child["rss_base_kb"].get("RssAnon", 0))
        child["anon_growth_bytes"] = anon * 1024
        RESULTS[f"pages_{device}"] = child
        print(child, flush=True)


@section("cpu")
def bench_cpu(scale):
    import scipy.sparse.csgraph as cg

    from graphdb.executor.graph import Graph
    from graphdb.executor.streaming.subway import subway_sssp
    from graphdb.generators import rmat

    src, dst = rmat(scale, 16, seed=5)
    n = 1 << scale
    w = np.random.default_rng(4).random(len(src)) + 0.01
    g = Graph.from_edges(np.asarray(src), np.asarray(dst), n, weights=w)
    graph_bytes = 8 * (n + 1) + 12 * g.num_edges
    source = int(np.argmax(g.out_csr.degrees()))
    t0 = time.perf_counter()
    ref = cg.dijkstra(g.out_csr.to_scipy(weighted=True), indices=source)
    t_scipy = time.perf_counter() - t0
    mem = subway_sssp(g, source, budget_bytes=1 << 40)
    streamed = subway_sssp(g, source, budget_bytes=graph_bytes // 4)
    d = np.full(n, np.inf)
    d[streamed.columns["vertex"]] = streamed.columns["distance"]
    RESULTS["cpu_sssp"] = {"scale": scale, "edges": g.num_edges, "budget": graph_bytes // 4,
                           "in_memory_s": mem.metrics["wall_s"],
                           "streamed_s": streamed.metrics["wall_s"],
                           "ratio": streamed.metrics["wall_s"] / mem.metrics["wall_s"],
                           "scipy_dijkstra_s": t_scipy,
                           "pieces": streamed.metrics["partitions"],
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
        lines.append(f"resident bfs {r['resident_bfs_s'] * 1e3:.1f} ms (cold "
                     f"{r['resident_bfs_cold_s'] * 1e3:.1f}), sssp {r['resident_sssp_s'] * 1e3:.1f}"
                     f" ms (cold {r['resident_sssp_cold_s'] * 1e3:.1f})")
    for row in r.get("subway", []):
        mode = "sync" if not row["async"] else ("async" if row["first_full"] else "async-nf")
        lines.append(f"subway {row['algo']:4s} gather={row['gather']:6s} {mode:8s}"
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
                     f" max rel err vs resident {p['max_rel_err_vs_resident']:.1e}")
        for row in r.get("pagerank_slots", []):
            t = row["timeline"]
            lines.append(f"  slots={row['slots']} chunks={row['chunks_per_iteration']} steady "
                         f"{row['steady_GBps']:.1f} GB/s ({row['steady_fraction_of_h2d']:.0%}) "
                         f"per call {row['per_call_GBps']:.1f} GB/s; copies "
                         f"{row['sum_transfer_s'] * 1e3:.0f} ms, kernels "
                         f"{row['sum_kernel_s'] * 1e3:.0f} ms, copy engine busy "
                         f"{t['copy_busy_fraction']:.0%} of {t['span_s'] * 1e3:.0f} ms (gaps: "
                         f"{t['copy_gap_waiting_for_kernel_s'] * 1e3:.1f} ms on kernels, "
                         f"{t['copy_gap_other_s'] * 1e3:.1f} ms other); max kernel "
                         f"{t['max_kernel_ms']:.2f} ms, max copy {t['max_copy_ms']:.2f} ms; "
                         f"err {row.get('max_rel_err_vs_resident', float('nan')):.1e}")
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
        lines.append(f"cpu sssp R-MAT {c['scale']}: streamed {c['streamed_s']:.2f}s / in-memory "
                     f"{c['in_memory_s']:.2f}s = {c['ratio']:.2f}x (scipy {c['scipy_dijkstra_s']:.2f}"
                     f"s) ok={c['correct']}")
    for k, v in r.items():
        if k.endswith("_error"):
            lines.append(f"ERROR {k}: {v}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--page-scale", type=int, default=21)
    ap.add_argument("--cpu-scale", type=int, default=18)
    ap.add_argument("--out", default="bench_streaming.json")
    ap.add_argument("--workdir", default="/tmp/bench_streaming")
    ap.add_argument("--skip", default="", help="comma-separated: gpu (sections 1-4), subway "
                    "(section 2's resident runs and 3; the graph is still built), pagerank, "
                    "pages, cpu")
    ap.add_argument("--pages-child")
    ap.add_argument("--device", default="gpu")
    ap.add_argument("--pool", type=int, default=64 << 20)
    ap.add_argument("--page-devices", default="gpu,cpu")
    a = ap.parse_args(argv)
    if a.pages_child:
        pages_child(a.pages_child, a.device, a.pool, None)
        return
    skip = set(a.skip.split(","))
    ctx: dict = {}
    if "gpu" not in skip:
        bench_h2d()
        if "subway" in skip:
            prepare_graph(a.scale, ctx)
        else:
            bench_traversals(a.scale, ctx)
        if "pagerank" not in skip:
            bench_pagerank(ctx)
        ctx.clear()
    if "pages" not in skip:
        devices = [d for d in a.page_devices.split(",") if d != "gpu" or "gpu" not in skip]
        bench_pages(a.page_scale, a.workdir, devices)
    if "cpu" not in skip:
        bench_cpu(a.cpu_scale)
    json.dump(RESULTS, open(a.out, "w"), indent=1, default=str)
    print(table())


if __name__ == "__main__":
    main()
