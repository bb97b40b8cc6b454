"""Partitioned operators on 1..N GPUs of one host, through MPI, and on CPU ranks: time, speedup,
parallel efficiency, bytes exchanged per step, imbalance; answers checked against one GPU.

    python tools/bench_multi_gpu.py --out DIR [--scales 25 26] [--grid 4096] [--gpus N]
        [--repeats 3] [--mpi] [--cpu-ranks 1 2] [--quick]

For each graph (R-MAT of each scale, edge factor 16, integer weights 1..100; a grid, undirected)
and each of BFS (median over 8 sources on R-MAT), SSSP, PageRank (20 iterations) and WCC it
times the tuned one-GPU operator, then the partitioned operator over 1, 2, 4, ... GPUs (NCCL, one process),
each after a warm-up run that builds and uploads the segments (reported as ``setup_s``), median
of ``--repeats``. Every partitioned answer is compared with the one-GPU operator's (BFS, SSSP,
WCC exactly; PageRank to 1e-4 relative: the one-GPU operator sums float32 contributions) and with
the one-rank partitioned run (PageRank to 1e-10). It also asks the planner how many GPUs it would
take (``SET gpus = 'all'``) and checks that count is not slower than any smaller one by more than
5%, and prints the per-GPU edge rates the scaling model's RATES should hold. On R-MAT it also
runs PageRank under a per-GPU budget of 60% of what one GPU needs: the planner's one-GPU plan
(streamed) against its plan over the GPUs (partitioned, resident), both within the budget.

``--mpi`` runs the same partitioned operators through ``mpiexec -n G`` with one rank per GPU
(each rank builds the same seeded graph on its GPU); ``--cpu-ranks 1 2`` times CPU ranks (MPI)
on an R-MAT of ``--cpu-scale``. Writes ``DIR/bench_multi_gpu.json`` and ``.md``; prints the
table. ``--quick``: R-MAT 20 and a 512 x 512 grid (a smoke run of a few minutes). A grid's BFS
and SSSP run from one source: partitioned, they pay their collectives at every one of thousands
of levels (which is why the planner keeps them on one GPU), and a run past 20 s is timed once.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from graphdb.executor.algorithms import REGISTRY, implementation  # noqa: E402
from graphdb.executor.algorithms.spec import OperatorConfig, Placement  # noqa: E402
from graphdb.executor.graph import Graph  # noqa: E402
from graphdb.executor.residency import RESIDENCY  # noqa: E402

ALGORITHMS = ("bfs", "sssp", "pagerank", "wcc")
TOLERANCE = {"pagerank": 1e-4}


# -- graphs ---------------------------------------------------------------------------------------


def build_graph(kind: str, size: int, seed: int = 0) -> Graph:
    """R-MAT (``size`` = scale; directed) or a size x size grid (undirected), integer weights
    1..100, generated on the current GPU; its device CSR is the one-GPU operators' and its host
    copies are what the ranks' segments are cut from."""
    import cupy as cp

    from tools.gpu_graphs import graph_from_device_edges, grid_edges_gpu, rmat_edges_gpu

    if kind == "rmat":
        n, (src, dst), directed = 1 << size, rmat_edges_gpu(size, seed=seed), True
    else:
        n, (src, dst), directed = size * size, grid_edges_gpu(size, size), False
    weights = cp.random.RandomState(seed + 1).randint(1, 101, size=src.size).astype(np.float64)
    graph = graph_from_device_edges(src, dst, n, directed=directed, weights=weights,
                                    name=f"{kind}{size}")
    del src, dst, weights
    graph.host_copies()
    cp.get_default_memory_pool().free_all_blocks()
    return graph


def entry_of(graph: Graph) -> SimpleNamespace:
    """What the planner sees of a graph (a catalog entry's fields)."""
    return SimpleNamespace(name=graph.name, num_vertices=graph.num_vertices,
                           num_edges=graph.num_edges, directed=graph.directed,
                           weighted=graph.weighted,
                           stats={"max_out_degree": int(graph.out_degrees().max())})


def sources(graph: Graph, count: int = 8, seed: int = 1) -> list[int]:
    degree = graph.out_degrees()
    candidates = np.flatnonzero(degree > 0)
    return [int(v) for v in np.random.default_rng(seed).choice(candidates, count, replace=False)]


# -- runs -----------------------------------------------------------------------------------------


def options(name: str, source: int) -> dict:
    return {"bfs": {"source": source, "max_depth": None},
            "sssp": {"source": source, "weight": None},
            "pagerank": {"damping": 0.85, "max_iterations": 20, "tolerance": 0.0},
            "wcc": {}}[name]


def _host(values) -> np.ndarray:
    """numpy of an output column (a one-GPU operator's rows stay on the device)."""
    return values.get() if hasattr(values, "get") else np.asarray(values)


def dense(name: str, columns: dict, n: int) -> np.ndarray:
    column = {"bfs": "depth", "sssp": "distance", "pagerank": "rank", "wcc": "component"}[name]
    vertex, values = _host(columns["vertex"]), _host(columns[column])
    if name in ("pagerank", "wcc"):
        return values[np.argsort(vertex)]
    out = np.full(n, np.inf)
    out[vertex] = values
    return out


def agrees(name: str, got: np.ndarray, want: np.ndarray, tolerance: float = 0.0) -> bool:
    if not tolerance:
        return bool(np.array_equal(got, want))
    scale = np.maximum(np.abs(want), 1e-300)
    return bool(np.max(np.abs(got - want) / scale) <= tolerance)


#: A first run longer than this is timed once more only (a high-diameter graph's partitioned
#: traversal pays its collectives at thousands of levels).
SLOW_S = 20.0


def timed(run, repeats: int):
    """(setup seconds of the first run, median seconds of ``repeats`` more, the last output)."""
    start = time.perf_counter()
    output = run()
    setup = time.perf_counter() - start
    times = []
    for _ in range(repeats if setup < SLOW_S else 1):
        start = time.perf_counter()
        output = run()
        times.append(time.perf_counter() - start)
    return setup, statistics.median(times), output


def run_once(graph: Graph, name: str, config: OperatorConfig, source: int):
    spec = REGISTRY[name]
    variant = spec.variant(config.device, config.variant)
    return implementation(spec, variant)(graph, config, **options(name, source))


def bench_graph(graph: Graph, counts: list[int], repeats: int, backend: str = "nccl",
                devices_of=lambda p: tuple(range(p)), bfs_sources: int = 8) -> list[dict]:
    rows = []
    n = graph.num_vertices
    starts = sources(graph, bfs_sources)
    for name in ALGORITHMS:
        todo = starts if name == "bfs" else starts[:1]
        one_gpu = OperatorConfig(device="gpu", variant="resident")
        single = [timed(lambda s=s: run_once(graph, name, one_gpu, s), repeats) for s in todo]
        reference = [dense(name, out.columns, n) for _, _, out in single]
        base = statistics.median(t for _, t, _ in single)
        row = {"graph": graph.name, "algorithm": name, "vertices": n, "edges": graph.num_edges,
               "one_gpu_s": base, "runs": []}
        first = None
        for p in counts:
            config = OperatorConfig(device="gpu", variant="partitioned", placement=Placement(
                backend, p, devices_of(p)))
            runs = [timed(lambda s=s: run_once(graph, name, config, s), repeats) for s in todo]
            answers = [dense(name, out.columns, n) for _, _, out in runs]
            ok = all(agrees(name, a, r, TOLERANCE.get(name, 0.0))
                     for a, r in zip(answers, reference))
            if first is None:
                first = answers
            ok_p1 = all(agrees(name, a, f, 1e-10 if name == "pagerank" else 0.0)
                        for a, f in zip(answers, first))
            seconds = statistics.median(t for _, t, _ in runs)
            metrics = runs[0][2].metrics
            row["runs"].append({
                "gpus": p, "seconds": seconds, "setup_s": statistics.median(s for s, _, _ in runs),
                "speedup_vs_one_gpu": base / seconds, "ok_vs_one_gpu": ok, "ok_vs_one_rank": ok_p1,
                "bytes_per_step": metrics.get("bytes_per_step", 0),
                "bytes_per_step_per_vertex": metrics.get("bytes_per_step", 0) / max(n, 1),
                "collective_s": metrics.get("collective_seconds", 0.0),
                "imbalance": metrics.get("imbalance", 1.0), "steps": metrics.get("levels") or
                metrics.get("iterations") or metrics.get("relax_rounds") or 1})
            for d in devices_of(p):
                RESIDENCY.forget(graph.key, f"gpu:{d}", prefix="part:")
        p1 = row["runs"][0]["seconds"]
        for r in row["runs"]:
            r["speedup_vs_one_rank"] = p1 / r["seconds"]
            r["efficiency"] = r["speedup_vs_one_rank"] / r["gpus"]
        rows.append(row)
        print(_line(row), flush=True)
    return rows


def planner_check(graph: Graph, rows: list[dict], gpus: int) -> None:
    """The count the planner takes with every GPU at hand, and whether it is slower than a
    smaller count (or one GPU) by more than 5%."""
    from graphdb.executor.device import Device
    from graphdb.executor.physical import choose
    from graphdb.executor.physical.scaling import Fleet

    entry = entry_of(graph)
    device = Device("gpu", 120 << 30, name="bench", reason="bench")
    cpu = Device("cpu", 1 << 40, reason="bench")
    for row in rows:
        d = choose(REGISTRY[row["algorithm"]], entry, device, cpu, None,
                   fleet=Fleet("nccl", gpus, tuple(range(gpus)), "gpu"),
                   options=options(row["algorithm"], 0))
        chosen = d.placement.ranks if d.placement else 1
        measured = {r["gpus"]: r["seconds"] for r in row["runs"]}
        at = row["one_gpu_s"] if chosen == 1 else measured.get(chosen)
        smaller = [row["one_gpu_s"]] + [t for p, t in measured.items() if p < chosen]
        row["planner"] = {"gpus": chosen, "reason": d.scaling_reason,
                          "predicted_s": d.estimate.seconds if d.estimate else
                          (d.baseline.seconds if d.baseline else None),
                          "within_5_percent": at is None or at <= 1.05 * min(smaller)}


def beyond_one_gpu(graph: Graph, gpus: int, repeats: int, share: float = 0.6) -> dict:
    """PageRank with a per-GPU budget of ``share`` of what one GPU needs to hold the graph: the
    planner's one-GPU plan (streamed) against its plan over the GPUs (resident per GPU), each
    run as the runner would, within the budget."""
    from graphdb.executor.device import Device
    from graphdb.executor.gpu import runtime as rt
    from graphdb.executor.physical import choose
    from graphdb.executor.physical.scaling import Fleet

    spec, entry = REGISTRY["pagerank"], entry_of(graph)
    cpu = Device("cpu", 1 << 40, reason="bench")
    need = choose(spec, entry, Device("gpu", 1 << 50, reason="bench"), cpu, None).needed_bytes
    device = Device("gpu", int(need * share), name="bench", reason="bench")
    plans = {"one_gpu": choose(spec, entry, device, cpu, None, options={}),
             "gpus": choose(spec, entry, device, cpu, None,
                            fleet=Fleet("nccl", gpus, tuple(range(gpus)), "gpu"), options={})}
    out = {"budget_bytes": device.memory_limit, "one_gpu_resident_needs": need}
    answers = {}
    for name, d in plans.items():
        devices = d.placement.devices if d.placement else None
        impl = implementation(spec, d.variant)

        def run(d=d, impl=impl, devices=devices):
            with rt.memory_budget(d.budget_bytes, devices, reserve=d.reserved_bytes):
                return impl(graph, d.config(), **options("pagerank", 0))

        _, seconds, result = timed(run, repeats)
        answers[name] = dense("pagerank", result.columns, graph.num_vertices)
        out[name] = {"variant": d.variant.name, "ranks": d.placement.ranks if d.placement else 1,
                     "streamed": bool(d.placement and d.placement.streamed), "seconds": seconds}
    out["speedup"] = out["one_gpu"]["seconds"] / out["gpus"]["seconds"]
    out["ok"] = agrees("pagerank", answers["gpus"], answers["one_gpu"], 1e-4)
    print(f"{graph.name} pagerank beyond one GPU's budget: {out}", flush=True)
    return out


def rates(rows: list[dict]) -> dict:
    """Measured edges a second per GPU of each algorithm's runs (the scaling model's inputs)."""
    out = {}
    for row in rows:
        touched = row["edges"] * (20 if row["algorithm"] == "pagerank" else 1)
        out[f"{row['graph']}:{row['algorithm']}"] = {
            "one_gpu_edges_per_s": touched / row["one_gpu_s"],
            "partitioned_edges_per_s_per_gpu": {r["gpus"]: touched / r["seconds"] / r["gpus"]
                                                for r in row["runs"]}}
    return out


def _line(row: dict) -> str:
    runs = "  ".join(f"{r['gpus']}:{r['seconds'] * 1e3:.1f}ms x{r['speedup_vs_one_rank']:.2f}"
                     f"{'' if r['ok_vs_one_gpu'] and r['ok_vs_one_rank'] else ' WRONG'}"
                     for r in row["runs"] if "speedup_vs_one_rank" in r) or \
        "  ".join(f"{r['gpus']}:{r['seconds'] * 1e3:.1f}ms" for r in row["runs"])
    return (f"{row['graph']:>9} {row['algorithm']:>8}  one GPU {row['one_gpu_s'] * 1e3:9.1f} ms"
            f"  partitioned {runs}")


def markdown(rows: list[dict], title: str) -> str:
    lines = [f"## {title}", "",
             "| graph | algorithm | one GPU ms | GPUs | ms | speedup vs 1 rank | efficiency | "
             "vs one GPU | bytes/step/vertex | collective ms | imbalance | ok | planner |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        plan = row.get("planner", {})
        for r in row["runs"]:
            lines.append(
                f"| {row['graph']} | {row['algorithm']} | {row['one_gpu_s'] * 1e3:.1f} | "
                f"{r['gpus']} | {r['seconds'] * 1e3:.1f} | {r.get('speedup_vs_one_rank', 0):.2f}"
                f" | {r.get('efficiency', 0):.2f} | {r['speedup_vs_one_gpu']:.2f} | "
                f"{r['bytes_per_step_per_vertex']:.2f} | {r['collective_s'] * 1e3:.1f} | "
                f"{r['imbalance']:.3f} | {'yes' if r['ok_vs_one_gpu'] and r['ok_vs_one_rank'] else 'NO'}"
                f" | {plan.get('gpus', '')}{'' if plan.get('within_5_percent', True) else ' SLOW'} |")
    return "\n".join(lines) + "\n"


# -- MPI workers ------------------------------------------------------------------------------------


def mpi_worker(args) -> int:
    """One rank of ``mpiexec -n G``: its GPU, the same seeded graphs, the partitioned runs over the
    job; rank 0 writes the rows."""
    import cupy as cp

    from graphdb.cluster import local_rank
    from graphdb.executor.comm import set_cluster
    from graphdb.executor.comm.mpi import MpiComm

    comm = MpiComm(timeout=600)
    set_cluster(comm)
    device = local_rank(comm) % cp.cuda.runtime.getDeviceCount()
    cp.cuda.Device(device).use()
    rows = []
    for kind, size in _graphs(args):
        graph = build_graph(kind, size)
        rows += bench_graph(graph, [comm.size], args.repeats, backend="mpi",
                            devices_of=lambda p: (device,),
                            bfs_sources=args.sources if kind == "rmat" else 1)
    if comm.rank == 0:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "mpi_rows.json").write_text(json.dumps(rows, indent=1))
    return 0


def cpu_worker(args) -> int:
    """One CPU rank of ``mpiexec -n k``: the partitioned operators on an R-MAT of --cpu-scale
    against the compiled one-device CPU operators; rank 0 writes the rows."""
    from graphdb.executor.comm import set_cluster
    from graphdb.executor.comm.mpi import MpiComm
    from graphdb.generators import random_weights, rmat

    comm = MpiComm(timeout=600)
    set_cluster(comm)
    from graphdb.cluster import threads_per_rank
    from graphdb.settings import apply_threads

    apply_threads(threads_per_rank(comm))  # the ranks of this machine share its cores
    src, dst = rmat(args.cpu_scale, seed=0)
    graph = Graph.from_edges(src, dst, 1 << args.cpu_scale,
                             weights=random_weights(len(src), seed=1), name="rmat-cpu")
    rows = []
    for name in ALGORITHMS:
        source = sources(graph, 1)[0]
        one = OperatorConfig()
        _, base, out = timed(lambda: run_once(graph, name, one, source), args.repeats)
        config = OperatorConfig(variant="partitioned", placement=Placement("mpi", comm.size))
        _, seconds, got = timed(lambda: run_once(graph, name, config, source), args.repeats)
        ok = agrees(name, dense(name, got.columns, graph.num_vertices),
                    dense(name, out.columns, graph.num_vertices),
                    1e-9 if name == "pagerank" else 0.0)
        rows.append({"algorithm": name, "ranks": comm.size, "one_rank_compiled_s": base,
                     "partitioned_s": seconds, "ok": ok,
                     "bytes_per_step": got.metrics.get("bytes_per_step", 0)})
    if comm.rank == 0:
        (Path(args.out) / f"cpu_ranks_{comm.size}.json").write_text(json.dumps(rows, indent=1))
    return 0


def _graphs(args) -> list[tuple[str, int]]:
    if args.quick:
        return [("rmat", 20), ("grid", 512)]
    return [("rmat", s) for s in args.scales] + ([("grid", args.grid)] if args.grid else [])


def _mpiexec(ranks: int, extra: list[str], timeout: float) -> subprocess.CompletedProcess:
    mpiexec = Path(sys.executable).with_name("mpiexec")
    command = [str(mpiexec if mpiexec.exists() else "mpiexec"), "-n", str(ranks),
               sys.executable, str(Path(__file__).resolve()), *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="bench-out/multi_gpu")
    parser.add_argument("--scales", type=int, nargs="*", default=[25, 26])
    parser.add_argument("--grid", type=int, default=4096)
    parser.add_argument("--gpus", type=int, default=0, help="most GPUs used (0: all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sources", type=int, default=8, help="BFS sources on R-MAT (grids: 1)")
    parser.add_argument("--mpi", action="store_true", help="also through mpiexec, a rank a GPU")
    parser.add_argument("--cpu-ranks", type=int, nargs="*", default=[])
    parser.add_argument("--cpu-scale", type=int, default=18)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--mpi-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cpu-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mpi_worker:
        return mpi_worker(args)
    if args.cpu_worker:
        return cpu_worker(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report: dict = {"args": vars(args)}
    if args.cpu_ranks:
        report["cpu_ranks"] = {}
        for k in args.cpu_ranks:
            done = _mpiexec(k, ["--cpu-worker", "--out", str(out), "--cpu-scale",
                                str(args.cpu_scale), "--repeats", str(args.repeats)], 1800)
            file = out / f"cpu_ranks_{k}.json"
            report["cpu_ranks"][k] = json.loads(file.read_text()) if file.exists() else \
                {"error": done.stderr[-2000:]}
            print(f"cpu ranks {k}: {report['cpu_ranks'][k]}", flush=True)
    from graphdb.executor.device import gpu_count

    available = gpu_count()
    if not available:  # a machine without GPUs: the CPU ranks alone
        (out / "bench_multi_gpu.json").write_text(json.dumps(report, indent=1, default=str))
        print("no GPU: only the CPU ranks were timed" if args.cpu_ranks else "no GPU here")
        return 0 if args.cpu_ranks else 1
    import cupy as cp

    gpus = min(args.gpus or available, available)
    counts = sorted({1, gpus} | {p for p in (2, 4, 8) if p <= gpus})
    report["gpus"] = [cp.cuda.runtime.getDeviceProperties(d)["name"].decode()
                      if isinstance(cp.cuda.runtime.getDeviceProperties(d)["name"], bytes)
                      else str(cp.cuda.runtime.getDeviceProperties(d)["name"])
                      for d in range(gpus)]
    rows = []
    for kind, size in _graphs(args):
        start = time.perf_counter()
        graph = build_graph(kind, size)
        print(f"{graph.name}: {graph.num_vertices:,} vertices, {graph.num_edges:,} edges "
              f"(built in {time.perf_counter() - start:.1f} s)", flush=True)
        graph_rows = bench_graph(graph, counts, args.repeats,
                                 bfs_sources=args.sources if kind == "rmat" else 1)
        if gpus > 1:
            planner_check(graph, graph_rows, gpus)
            if kind == "rmat":
                report.setdefault("beyond_one_gpu", {})[graph.name] = beyond_one_gpu(
                    graph, gpus, args.repeats)
        rows += graph_rows
        RESIDENCY.forget(graph.key)
        del graph
    report["rows"] = rows
    report["rates"] = rates(rows)
    text = markdown(rows, f"Partitioned operators, NCCL, {gpus} x {report['gpus'][0]}")
    if args.mpi:
        done = _mpiexec(gpus, ["--mpi-worker", "--out", str(out), "--repeats", str(args.repeats),
                               *(["--quick"] if args.quick else ["--scales", *map(
                                   str, args.scales), "--grid", str(args.grid)])], 3600)
        file = out / "mpi_rows.json"
        report["mpi"] = json.loads(file.read_text()) if file.exists() else \
            {"error": done.stderr[-4000:]}
        if file.exists():
            text += "\n" + markdown(report["mpi"], f"Through MPI, a rank per GPU ({gpus})")
    (out / "bench_multi_gpu.json").write_text(json.dumps(report, indent=1, default=str))
    (out / "bench_multi_gpu.md").write_text(text)
    print(text)
    bad = [r for r in rows if not all(x["ok_vs_one_gpu"] and x["ok_vs_one_rank"]
                                      for x in r["runs"])]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
