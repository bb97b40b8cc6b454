"""The calibration run: this machine's GPUs timed on two synthetic graphs, the scaling model's
rates fitted to the times and kept beside the kernel cache (:mod:`.calibration`).

Until a machine's GPUs are calibrated the planner prices partitioned plans with conservative
constants (:data:`.scaling.RATES`) and keeps every query that fits one GPU there. One run of
:func:`calibrate_gpus` (about a minute on an H200 host, most of it generating the graphs and
compiling kernels once) lets it predict from this machine's own rates: BFS, SSSP, PageRank (20
iterations) and WCC on an R-MAT graph (few steps, many edges) and a grid (many steps, few
edges), each by the one-GPU operator and partitioned over 2, 4, 8 ... up to every GPU, the
median of ``repeats`` runs after a first one, every clock read after every GPU in use was
synchronized. The file is keyed by the GPUs' name and count and the driver and runtime
versions, so a new driver or GPU starts uncalibrated again.

``graphdb warmup`` calls it (after compiling the kernels); ``tools/bench_multi_gpu.py
--calibrate`` does the same with its own checks, and every full benchmark run refits with all
its cells (:func:`samples_of` turns either's rows into the fit's samples).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..algorithms import REGISTRY, implementation
from ..algorithms.spec import OperatorConfig, Placement
from . import calibration
from .scaling import work_terms

__all__ = ["ALGORITHMS", "calibrate_gpus", "rank_counts", "run_options", "samples_of"]

#: The algorithms timed, one per traffic pattern the model prices.
ALGORITHMS = ("bfs", "sssp", "pagerank", "wcc")


def run_options(name: str, source: int) -> dict:
    """The arguments every calibration and benchmark run passes (PageRank: 20 iterations)."""
    return {"bfs": {"source": source, "max_depth": None},
            "sssp": {"source": source, "weight": None},
            "pagerank": {"damping": 0.85, "max_iterations": 20, "tolerance": 0.0},
            "wcc": {}}[name]


def rank_counts(gpus: int) -> list[int]:
    """The GPU counts timed: 1 (the one-GPU operator), 2, 4, 8 ... and every GPU."""
    return sorted({1, gpus} | {p for p in (2, 4, 8, 16) if p <= gpus})


def samples_of(rows: list[dict]) -> list[dict]:
    """The fit's samples from timed rows: each row one graph and algorithm (``algorithm``,
    ``vertices``, ``edges``, ``directed``, ``max_out_degree``, ``one_gpu_s``, ``runs``: a list
    of ``{"gpus", "seconds"}``), priced as the scaling model counts them (its steps and edges);
    the one-GPU operator is 1 rank, the partitioned runs over 2 or more GPUs the rest."""
    out = []
    for row in rows:
        entry = SimpleNamespace(num_vertices=row["vertices"], num_edges=row["edges"],
                                directed=row["directed"],
                                stats={"max_out_degree": row["max_out_degree"]})
        traffic, steps, work = work_terms(REGISTRY[row["algorithm"]], entry,
                                          run_options(row["algorithm"], 0))
        cells = [(1, row["one_gpu_s"])] + [(r["gpus"], r["seconds"]) for r in row["runs"]
                                           if r["gpus"] > 1]
        out += [{"traffic": traffic, "ranks": p, "steps": steps, "work": work, "seconds": t}
                for p, t in cells]
    return out


def _synchronize(cp, devices) -> None:
    for d in devices:
        cp.cuda.Device(d).synchronize()


def _median_seconds(cp, run: Callable[[], Any], repeats: int, devices) -> float:
    """Median of ``repeats`` runs after a first (compiles, builds the shards), synchronized."""
    _synchronize(cp, devices)
    run()
    times = []
    for _ in range(max(repeats, 1)):
        _synchronize(cp, devices)
        start = time.perf_counter()
        run()
        _synchronize(cp, devices)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _time_graph(graph, counts: list[int], repeats: int, backend: str) -> list[dict]:
    from ..gpu import runtime as rt

    cp = rt.cp()
    degree = graph.out_degrees()
    source = int(np.flatnonzero(degree > 0)[0]) if graph.num_edges else 0
    rows = []
    for name in ALGORITHMS:
        spec = REGISTRY[name]
        args = run_options(name, source)

        def run(config):
            variant = spec.variant(config.device, config.variant)
            return implementation(spec, variant)(graph, config, **args)

        one = OperatorConfig(device="gpu", variant="resident")
        row = {"graph": graph.name, "algorithm": name, "vertices": graph.num_vertices,
               "edges": graph.num_edges, "directed": graph.directed,
               "max_out_degree": int(degree.max()) if degree.size else 0,
               "one_gpu_s": _median_seconds(cp, lambda: run(one), repeats, (0,)), "runs": []}
        for p in counts[1:]:
            devices = tuple(range(p))
            config = OperatorConfig(device="gpu", variant="partitioned",
                                    placement=Placement(backend, p, devices))
            row["runs"].append({"gpus": p, "seconds": _median_seconds(
                cp, lambda: run(config), repeats, devices)})
        rows.append(row)
    return rows


def calibrate_gpus(rmat_abc: tuple[float, float, float], *, rmat_scale: int = 22,
                   grid_side: int = 1024, repeats: int = 2, backend: str = "nccl",
                   progress: Callable[[str], None] | None = None) -> calibration.Calibration | None:
    """Time this machine's GPUs (see the module docstring), fit and save the rates; the
    calibration written, or None without a GPU. ``rmat_abc``: the R-MAT graph's quadrant
    probabilities (the front end passes Graph500's, as the benchmarks use)."""
    key = calibration.device_key(backend)
    if key is None:
        return None
    from ..gpu import runtime as rt
    from ..gpu.synthetic import graph_from_device_edges, grid_edges_gpu, rmat_edges_gpu

    cp = rt.cp()
    say = progress or (lambda line: None)
    counts = rank_counts(cp.cuda.runtime.getDeviceCount())
    rows: list[dict] = []
    for kind, size in (("rmat", rmat_scale), ("grid", grid_side)):
        started = time.perf_counter()
        with cp.cuda.Device(0):
            if kind == "rmat":
                n, (src, dst), directed = 1 << size, rmat_edges_gpu(size, abc=rmat_abc), True
            else:
                n, (src, dst), directed = size * size, grid_edges_gpu(size, size), False
            weights = cp.random.RandomState(1).randint(1, 101, size=src.size)
            graph = graph_from_device_edges(src, dst, n, directed=directed,
                                            weights=weights.astype(np.float64),
                                            name=f"calibration-{kind}{size}")
            del src, dst, weights
            graph.host_copies()
            try:
                rows += _time_graph(graph, counts, repeats, backend)
            finally:
                graph.residency.forget(graph.key)
                del graph
                for d in range(counts[-1]):
                    with cp.cuda.Device(d):
                        cp.get_default_memory_pool().free_all_blocks()
        say(f"{kind} {size}: timed on {', '.join(map(str, counts))} GPU(s) in "
            f"{time.perf_counter() - started:.1f} s")
    fitted = calibration.fit(samples_of(rows), key)
    path = calibration.save(fitted)
    say(f"calibration written to {path}:\n{calibration.describe(fitted)}")
    return fitted
