"""Partitioned operators on 1..N GPUs of one host, through MPI, and on CPU ranks: time, speedup,
parallel efficiency, bytes exchanged per step, imbalance, the planner's prediction beside every
measured cell; answers checked against one GPU (and scipy where that is cheap).

    python tools/bench_multi_gpu.py --out DIR [--scales 25 26] [--grid 4096] [--gpus N]
        [--repeats 3] [--algorithms bfs sssp pagerank wcc] [--mpi] [--cpu-ranks 1 2]
        [--budget-scale S] [--quick]

For each graph (R-MAT of each scale, edge factor 16, integer weights 1..100; a grid, undirected)
and each of BFS (median over 8 sources on R-MAT), SSSP, PageRank (20 iterations) and WCC it
times the tuned one-GPU operator, then the partitioned operator over 1, 2, 4, ... GPUs (NCCL,
one process), each after a warm-up run that builds the shards (reported as ``setup_s``), median
of ``--repeats``. Every clock is read after every GPU in use is synchronized. Every partitioned
answer is compared with the one-GPU operator's (BFS, SSSP, WCC exactly; PageRank to 1e-4
relative: both sum float32 contributions, in different orders) and, on graphs of at most 2**25
edges, with scipy. Each cell carries the planner's predicted seconds (the scaling model with
this machine's calibrated rates: ``executor/physical/calibration.py``) and measured/predicted.
It also asks the planner which GPU count it would take by default (``gpus = 'all'``) and checks
that count is not slower than the best one by more than 5%. On R-MAT (``--budget-scale``, the
smallest scale by default) it runs PageRank under a per-GPU budget of 60% of what one GPU needs:
the planner's one-GPU plan (streamed) against its plan over the GPUs (partitioned, resident),
each from a clean pool within the budget.

``--mpi`` runs the same partitioned operators through ``mpiexec -n G`` with one rank per GPU
(each rank builds the same seeded graph on its GPU); ``--cpu-ranks 1 2`` times CPU ranks (MPI)
on an R-MAT of ``--cpu-scale``. Writes ``DIR/bench_multi_gpu.json`` and ``.md``; prints the
table. ``--quick``: R-MAT 20 and a 512 x 512 grid (a smoke run of a few minutes). A grid's BFS
and SSSP run from one source: partitioned, they pay an exchange at each of thousands of levels
(which is why the planner keeps them on one GPU), and a run past 20 s is timed once.
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
from graphdb.executor.physical.measure import ALGORITHMS, rank_counts, samples_of  # noqa: E402
from graphdb.executor.physical.measure import run_options as options  # noqa: E402
from graphdb.executor.residency import RESIDENCY  # noqa: E402

#: PageRank on the GPU sums float32 contributions (one GPU and partitioned, in different orders)
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


def synchronize(devices) -> None:
    """Wait for every GPU in ``devices`` (None: every GPU of the machine)."""
    import cupy as cp

    for d in range(cp.cuda.runtime.getDeviceCount()) if devices is None else devices:
        cp.cuda.Device(d).synchronize()


def timed(run, repeats: int, devices=None):
    """(setup seconds of the first run, median seconds of ``repeats`` more, the last output),
    every clock read after every GPU of ``devices`` finished its work."""
    synchronize(devices)
    start = time.perf_counter()
    output = run()
    synchronize(devices)
    setup = time.perf_counter() - start
    times = []
    for _ in range(repeats if setup < SLOW_S else 1):
        synchronize(devices)
        start = time.perf_counter()
        output = run()
        synchronize(devices)
        times.append(time.perf_counter() - start)
    return setup, statistics.median(times), output


def run_once(graph: Graph, name: str, config: OperatorConfig, source: int):
    spec = REGISTRY[name]
    variant = spec.variant(config.device, config.variant)
    return implementation(spec, variant)(graph, config, **options(name, source))


def predicted(graph: Graph, name: str, gpus: int, backend: str = "nccl") -> float:
    """The scaling model's seconds for ``name`` on ``gpus`` GPUs (1: the one-GPU operator)."""
    from graphdb.executor.physical.scaling import Fleet, estimate

    spec = REGISTRY[name]
    fleet = Fleet(backend, max(gpus, 1), tuple(range(gpus)), "gpu")
    est = estimate(spec, spec.partitioned("gpu"), entry_of(graph), fleet, gpus, "replicated",
                   options(name, 0))
    return est.seconds


def scipy_answer(graph: Graph, name: str, source: int) -> np.ndarray | None:
    """scipy's answer on a graph small enough for it (None otherwise): BFS depths and SSSP
    distances (inf unreached), PageRank by power iteration in float64, WCC labels as the
    smallest vertex of each component."""
    if graph.num_edges > 1 << 25:
        return None
    import scipy.sparse as sp
    from scipy.sparse import csgraph

    csr = graph.csr("out", weights=True)
    n = graph.num_vertices
    matrix = sp.csr_matrix((csr.weights if csr.weights is not None else
                            np.ones(csr.num_edges), csr.targets, csr.offsets), shape=(n, n))
    if name in ("bfs", "sssp"):
        return csgraph.dijkstra(matrix, indices=source, unweighted=name == "bfs")
    if name == "wcc":
        _, labels = csgraph.connected_components(matrix, directed=True, connection="weak")
        first = np.full(labels.max() + 1, n)
        np.minimum.at(first, labels, np.arange(n))
        return first[labels].astype(np.float64)
    ones = sp.csr_matrix((np.ones(csr.num_edges), csr.targets, csr.offsets), shape=(n, n))
    degree = np.asarray(ones.sum(axis=1)).ravel()
    rank = np.full(n, 1.0 / n)
    transposed = ones.T.tocsr()
    for _ in range(20):
        contrib = np.where(degree > 0, rank / np.maximum(degree, 1), 0.0)
        rank = 0.15 / n + 0.85 * (transposed @ contrib + rank[degree == 0].sum() / n)
    return rank


def bench_graph(graph: Graph, counts: list[int], repeats: int, backend: str = "nccl",
                devices_of=lambda p: tuple(range(p)), bfs_sources: int = 8,
                algorithms=ALGORITHMS) -> list[dict]:
    rows = []
    n = graph.num_vertices
    starts = sources(graph, bfs_sources)
    for name in algorithms:
        todo = starts if name == "bfs" else starts[:1]
        one_gpu = OperatorConfig(device="gpu", variant="resident")
        here = devices_of(1)[:1]
        single = [timed(lambda s=s: run_once(graph, name, one_gpu, s), repeats, here)
                  for s in todo]
        reference = [dense(name, out.columns, n) for _, _, out in single]
        base = statistics.median(t for _, t, _ in single)
        scipy_ok = None
        if backend != "mpi":
            cheap = scipy_answer(graph, name, todo[0])
            if cheap is not None:
                scipy_ok = agrees(name, reference[0], cheap, TOLERANCE.get(name, 0.0))
        entry = entry_of(graph)
        row = {"graph": graph.name, "algorithm": name, "vertices": n, "edges": graph.num_edges,
               "directed": graph.directed, "max_out_degree": entry.stats["max_out_degree"],
               "one_gpu_s": base, "one_gpu_predicted_s": predicted(graph, name, 1, backend),
               "one_gpu_ok_vs_scipy": scipy_ok, "runs": []}
        first = None
        for p in counts:
            config = OperatorConfig(device="gpu", variant="partitioned", placement=Placement(
                backend, p, devices_of(p)))
            every = devices_of(p)
            runs = [timed(lambda s=s: run_once(graph, name, config, s), repeats, every)
                    for s in todo]
            answers = [dense(name, out.columns, n) for _, _, out in runs]
            ok = all(agrees(name, a, r, TOLERANCE.get(name, 0.0))
                     for a, r in zip(answers, reference))
            if first is None:
                first = answers
            ok_p1 = all(agrees(name, a, f, TOLERANCE.get(name, 0.0))
                        for a, f in zip(answers, first))
            seconds = statistics.median(t for _, t, _ in runs)
            metrics = runs[0][2].metrics
            forecast = predicted(graph, name, p if backend != "mpi" else p, backend)
            row["runs"].append({
                "gpus": p, "seconds": seconds, "setup_s": statistics.median(s for s, _, _ in runs),
                "predicted_s": forecast, "measured_over_predicted": seconds / forecast,
                "speedup_vs_one_gpu": base / seconds, "ok_vs_one_gpu": ok, "ok_vs_one_rank": ok_p1,
                "bytes_per_step": metrics.get("bytes_per_step", 0),
                "bytes_per_step_per_vertex": metrics.get("bytes_per_step", 0) / max(n, 1),
                "collective_s": metrics.get("collective_seconds", 0.0),
                "imbalance": metrics.get("imbalance", 1.0),
                "steps": metrics.get("levels_run") or metrics.get("iterations")
                or metrics.get("relax_rounds") or metrics.get("hook_rounds") or 1})
            for d in devices_of(p):
                for prefix in ("shard:", "pagerank:shard:", "part:"):
                    RESIDENCY.forget(graph.key, f"gpu:{d}", prefix=prefix)
        p1 = row["runs"][0]["seconds"]
        for r in row["runs"]:
            r["speedup_vs_one_rank"] = p1 / r["seconds"]
            r["efficiency"] = r["speedup_vs_one_gpu"] / r["gpus"]
        rows.append(row)
        print(_line(row), flush=True)
    return rows


def planner_check(graph: Graph, rows: list[dict], gpus: int) -> None:
    """The count the planner takes with every GPU at hand (the default, ``gpus = 'all'``), its
    prediction, and whether that count is slower than the best measured one by more than 5%."""
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
        measured = {r["gpus"]: r["seconds"] for r in row["runs"] if r["gpus"] > 1}
        measured[1] = row["one_gpu_s"]
        at = measured.get(chosen)
        best = min(measured.values())
        row["planner"] = {"gpus": chosen, "reason": d.scaling_reason,
                          "predicted_s": d.estimate.seconds if d.estimate else
                          (d.baseline.seconds if d.baseline else None),
                          "measured_s": at, "best_s": best,
                          "within_5_percent": at is not None and at <= 1.05 * best}


def beyond_one_gpu(graph: Graph, gpus: int, repeats: int, share: float = 0.6) -> dict:
    """PageRank with a per-GPU budget of ``share`` of what one GPU needs to hold the graph: the
    planner's one-GPU plan (streamed) against its plan over the GPUs (resident per GPU), each
    run as the runner would, within the budget, from a clean pool: the graph's device copies are
    dropped first (a GPU holding the whole graph is what the budget rules out) and the pools'
    cached blocks released (CuPy counts them against the cap)."""
    import cupy as cp

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
    for d in range(gpus):
        RESIDENCY.forget(graph.key, f"gpu:{d}")
        with cp.cuda.Device(d):
            cp.get_default_memory_pool().free_all_blocks()
    for name, d in plans.items():
        devices = d.placement.devices if d.placement else None
        impl = implementation(spec, d.variant)

        def run(d=d, impl=impl, devices=devices):
            with rt.memory_budget(d.budget_bytes, devices, reserve=d.reserved_bytes):
                return impl(graph, d.config(), **options("pagerank", 0))

        _, seconds, result = timed(run, 1 if name == "one_gpu" else repeats,
                                   tuple(range(gpus)))
        answers[name] = dense("pagerank", result.columns, graph.num_vertices)
        out[name] = {"variant": d.variant.name, "ranks": d.placement.ranks if d.placement else 1,
                     "streamed": bool(d.placement and d.placement.streamed) or d.variant.streamed,
                     "seconds": seconds,
                     "predicted_s": (d.estimate or d.baseline).seconds
                     if (d.estimate or d.baseline) else None,
                     "peak_pool_bytes": [int(cp.get_default_memory_pool().total_bytes())]}
        for dev in range(gpus):
            RESIDENCY.forget(graph.key, f"gpu:{dev}")
            with cp.cuda.Device(dev):
                cp.get_default_memory_pool().free_all_blocks()
    out["speedup"] = out["one_gpu"]["seconds"] / out["gpus"]["seconds"]
    out["ok"] = agrees("pagerank", answers["gpus"], answers["one_gpu"], 1e-4)
    print(f"{graph.name} pagerank beyond one GPU's budget: {out}", flush=True)
    return out


def calibrate(rows: list[dict], backend: str = "nccl") -> dict | None:
    """Fit this machine's rates to ``rows`` and write them beside the kernel cache (the
    planner's predictions from then on); what was written."""
    from graphdb.executor.physical import calibration

    key = calibration.device_key(backend)
    if key is None:
        return None
    fitted = calibration.fit(samples_of(rows), key)
    path = calibration.save(fitted)
    print(f"calibration written to {path}:\n{calibration.describe(fitted)}", flush=True)
    return {"path": str(path), **fitted.to_json()}


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
    runs = "  ".join(
        f"{r['gpus']}:{r['seconds'] * 1e3:.1f}ms (pred {r['predicted_s'] * 1e3:.1f}) "
        f"x{r['speedup_vs_one_gpu']:.2f}"
        f"{'' if r['ok_vs_one_gpu'] and r['ok_vs_one_rank'] else ' WRONG'}" for r in row["runs"])
    scipy_ok = row.get("one_gpu_ok_vs_scipy")
    return (f"{row['graph']:>9} {row['algorithm']:>8}  one GPU {row['one_gpu_s'] * 1e3:9.1f} ms"
            f" (pred {row['one_gpu_predicted_s'] * 1e3:.1f})"
            f"{'' if scipy_ok is None else ' scipy ok' if scipy_ok else ' SCIPY DIFFERS'}"
            f"  partitioned {runs}")


def markdown(rows: list[dict], title: str) -> str:
    lines = [f"## {title}", "",
             "| graph | algorithm | one GPU ms (pred) | GPUs | ms | pred ms | speedup vs one GPU "
             "| efficiency | bytes/step/vertex | collective ms | imbalance | ok | default plan |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        plan = row.get("planner", {})
        for r in row["runs"]:
            ok = r["ok_vs_one_gpu"] and r["ok_vs_one_rank"] and \
                row.get("one_gpu_ok_vs_scipy") is not False
            lines.append(
                f"| {row['graph']} | {row['algorithm']} | {row['one_gpu_s'] * 1e3:.1f} "
                f"({row['one_gpu_predicted_s'] * 1e3:.1f}) | {r['gpus']} | "
                f"{r['seconds'] * 1e3:.1f} | {r['predicted_s'] * 1e3:.1f} | "
                f"{r['speedup_vs_one_gpu']:.2f} | {r.get('efficiency', 0):.2f} | "
                f"{r['bytes_per_step_per_vertex']:.2f} | {r['collective_s'] * 1e3:.1f} | "
                f"{r['imbalance']:.3f} | {'yes' if ok else 'NO'} | "
                f"{plan.get('gpus', '')}{'' if plan.get('within_5_percent', True) else ' SLOW'} |")
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
                            bfs_sources=args.sources if kind == "rmat" else 1,
                            algorithms=args.algorithms)
        RESIDENCY.forget(graph.key)
        del graph
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


def mpi_against_one_process(mpi_rows: list[dict], rows: list[dict], gpus: int) -> str:
    """MPI (a rank a GPU) over one process driving the same GPUs, per cell (target: 1.2)."""
    lines = ["| graph | algorithm | one process ms | MPI ms | MPI / one process |",
             "|---|---|---|---|---|"]
    one = {(r["graph"], r["algorithm"]): {x["gpus"]: x["seconds"] for x in r["runs"]}
           for r in rows}
    for r in mpi_rows:
        here = one.get((r["graph"], r["algorithm"]), {}).get(gpus)
        there = r["runs"][0]["seconds"]
        r["runs"][0]["mpi_over_one_process"] = there / here if here else None
        if here:
            lines.append(f"| {r['graph']} | {r['algorithm']} | {here * 1e3:.1f} | "
                         f"{there * 1e3:.1f} | {there / here:.2f} |")
    return "\n".join(lines) + "\n"


def _graphs(args) -> list[tuple[str, int]]:
    if args.quick:
        return [("rmat", 20), ("grid", 512)]
    return [("rmat", s) for s in args.scales] + ([("grid", args.grid)] if args.grid else [])


def _mpiexec(ranks: int, extra: list[str], timeout: float) -> subprocess.CompletedProcess:
    from tools.mpi_runtime import mpi_environment, mpiexec

    command = [mpiexec() or "mpiexec", "-n", str(ranks),
               sys.executable, str(Path(__file__).resolve()), *extra]
    env = mpi_environment()
    env["NCCL_NVLS_ENABLE"] = "0"
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env=env)


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
    parser.add_argument("--calibrate", action="store_true",
                        help="first a short calibration run (R-MAT 22, a 1024 x 1024 grid) whose "
                             "fitted rates the planner and the predictions below use")
    parser.add_argument("--algorithms", nargs="*", default=list(ALGORITHMS),
                        choices=ALGORITHMS)
    parser.add_argument("--budget-scale", type=int, default=None,
                        help="R-MAT scale of the budget section (default: the smallest; 0: none)")
    parser.add_argument("--mpi-scales", type=int, nargs="*", default=None,
                        help="R-MAT scales of the MPI run (default: --scales)")
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
    counts = rank_counts(gpus)
    report["gpus"] = [cp.cuda.runtime.getDeviceProperties(d)["name"].decode()
                      if isinstance(cp.cuda.runtime.getDeviceProperties(d)["name"], bytes)
                      else str(cp.cuda.runtime.getDeviceProperties(d)["name"])
                      for d in range(gpus)]
    if args.calibrate:
        calibration_rows = []
        for kind, size in (("rmat", 22), ("grid", 1024)):
            graph = build_graph(kind, size)
            calibration_rows += bench_graph(graph, counts, 2, bfs_sources=1)
            RESIDENCY.forget(graph.key)
            del graph
        report["calibration_rows"] = calibration_rows
        report["calibration"] = calibrate(calibration_rows)
    rows = []
    graphs = _graphs(args)
    budget_scale = args.budget_scale if args.budget_scale is not None else \
        min((size for kind, size in graphs if kind == "rmat"), default=0)
    for kind, size in graphs:
        start = time.perf_counter()
        graph = build_graph(kind, size)
        print(f"{graph.name}: {graph.num_vertices:,} vertices, {graph.num_edges:,} edges "
              f"(built in {time.perf_counter() - start:.1f} s)", flush=True)
        graph_rows = bench_graph(graph, counts, args.repeats,
                                 bfs_sources=args.sources if kind == "rmat" else 1,
                                 algorithms=args.algorithms)
        if gpus > 1:
            planner_check(graph, graph_rows, gpus)
            if kind == "rmat" and size == budget_scale:
                report.setdefault("beyond_one_gpu", {})[graph.name] = beyond_one_gpu(
                    graph, gpus, args.repeats)
        rows += graph_rows
        RESIDENCY.forget(graph.key)
        del graph
        partial = {**report, "rows": rows}  # what a run cut short still leaves
        (out / "bench_multi_gpu.json").write_text(json.dumps(partial, indent=1, default=str))
    report["rows"] = rows
    report["rates"] = rates(rows)
    report["within_2x"] = [
        {"graph": r["graph"], "algorithm": r["algorithm"], "gpus": x["gpus"],
         "ratio": x["measured_over_predicted"]} for r in rows for x in r["runs"]
        if not 0.5 <= x["measured_over_predicted"] <= 2.0]
    if gpus > 1:  # refit with every cell timed here (the next run's predictions)
        report["refit"] = calibrate(report.get("calibration_rows", []) + rows)
    text = markdown(rows, f"Partitioned operators, NCCL, {gpus} x {report['gpus'][0]}")
    for name, budget in report.get("beyond_one_gpu", {}).items():
        text += (f"\n{name} PageRank under a per-GPU budget of {budget['budget_bytes'] >> 20} MiB "
                 f"(one GPU resident needs {budget['one_gpu_resident_needs'] >> 20} MiB): one GPU "
                 f"{budget['one_gpu']['variant']} {budget['one_gpu']['seconds'] * 1e3:.1f} ms, "
                 f"{budget['gpus']['ranks']} GPUs {budget['gpus']['variant']} "
                 f"{budget['gpus']['seconds'] * 1e3:.1f} ms: x{budget['speedup']:.2f}, "
                 f"{'agree' if budget['ok'] else 'DIFFER'}\n")
    if args.mpi:
        scales = args.scales if args.mpi_scales is None else args.mpi_scales
        done = _mpiexec(gpus, ["--mpi-worker", "--out", str(out), "--repeats", str(args.repeats),
                               "--algorithms", *args.algorithms,
                               *(["--quick"] if args.quick else ["--scales", *map(
                                   str, scales), "--grid", "0"])], 3600)
        file = out / "mpi_rows.json"
        report["mpi"] = json.loads(file.read_text()) if file.exists() else \
            {"error": done.stderr[-4000:], "out": done.stdout[-2000:]}
        if file.exists():
            text += "\n" + markdown(report["mpi"], f"Through MPI, a rank per GPU ({gpus})")
            text += "\n" + mpi_against_one_process(report["mpi"], rows, gpus)
    (out / "bench_multi_gpu.json").write_text(json.dumps(report, indent=1, default=str))
    (out / "bench_multi_gpu.md").write_text(text)
    print(text)
    bad = [r for r in rows if not all(x["ok_vs_one_gpu"] and x["ok_vs_one_rank"]
                                      for x in r["runs"])]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
