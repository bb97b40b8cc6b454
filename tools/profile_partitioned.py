"""Where a partitioned run's time goes on this machine's GPUs (an experiment, not a benchmark).

    python tools/profile_partitioned.py [--scale 24] [--gpus 2] [--repeats 3]

1. Whether two GPUs driven from one host thread run at the same time (a spinning kernel on each,
   launched back to back: the wall time of both against one).
2. For BFS, SSSP, PageRank and WCC on R-MAT ``--scale``, over 1 and ``--gpus`` GPUs: the wall
   time (every GPU synchronized), the host's time to issue the run (``host_seconds``: a run whose
   host time is its wall time is bound by its launches) and each rank's busy span on its GPU
   (``rank_seconds``, CUDA events), with one launching thread and with a thread per GPU.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from graphdb.executor.algorithms.spec import OperatorConfig, Placement  # noqa: E402
from graphdb.executor.operators import partitioned  # noqa: E402
from tools.bench_multi_gpu import build_graph, run_once, sources, synchronize  # noqa: E402

SPIN = r"""
extern "C" __global__ void spin(long long cycles, int* out) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
  if (threadIdx.x == 0) out[blockIdx.x] = 1;
}
"""


def concurrency(gpus: int) -> dict:
    import cupy as cp

    kernels, outs = [], []
    for d in range(gpus):
        with cp.cuda.Device(d):
            kernels.append(cp.RawKernel(SPIN, "spin"))
            outs.append(cp.zeros(1024, dtype=cp.int32))
    cycles = 2_000_000_00 // 4  # ~25 ms at ~2 GHz

    def run(devices):
        synchronize(range(gpus))
        start = time.perf_counter()
        for d in devices:
            with cp.cuda.Device(d):
                kernels[d]((132,), (128,), (cycles, outs[d]))
        synchronize(range(gpus))
        return time.perf_counter() - start

    run([0])
    return {"one_gpu_s": run([0]), "all_gpus_s": run(list(range(gpus)))}


def profile(graph, name: str, gpus: int, repeats: int, threads: bool) -> dict:
    partitioned.THREADS_PER_GPU = threads
    source = sources(graph, 1)[0]
    config = OperatorConfig(device="gpu", variant="partitioned",
                            placement=Placement("nccl", gpus, tuple(range(gpus))))
    run_once(graph, name, config, source)  # shards, kernels
    walls, metrics = [], []
    for _ in range(repeats):
        synchronize(range(gpus))
        start = time.perf_counter()
        out = run_once(graph, name, config, source)
        synchronize(range(gpus))
        walls.append(time.perf_counter() - start)
        metrics.append(out.metrics)
    best = metrics[walls.index(min(walls))]
    return {"algorithm": name, "gpus": gpus, "threads": threads,
            "wall_s": statistics.median(walls), "host_s": best.get("host_seconds"),
            "rank_s": best.get("rank_seconds"), "steps": best.get("levels_run")
            or best.get("iterations") or best.get("relax_rounds") or best.get("hook_rounds"),
            "collective_s": best.get("collective_seconds")}


def host_profile(args) -> int:
    import cProfile
    import pstats

    graph = build_graph("rmat", args.scale)
    source = sources(graph, 1)[0]
    config = OperatorConfig(device="gpu", variant="partitioned",
                            placement=Placement("nccl", args.gpus, tuple(range(args.gpus))))
    run_once(graph, args.cprofile, config, source)
    synchronize(range(args.gpus))
    profiler = cProfile.Profile()
    profiler.enable()
    run_once(graph, args.cprofile, config, source)
    synchronize(range(args.gpus))
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(18)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=24)
    parser.add_argument("--gpus", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None)
    parser.add_argument("--cprofile", default=None, metavar="ALGORITHM",
                        help="only: the host's time in one run of ALGORITHM on --gpus GPUs, by "
                             "function (where the host waits)")
    args = parser.parse_args()
    if args.cprofile:
        return host_profile(args)
    report = {"concurrency": concurrency(args.gpus)}
    print(report, flush=True)
    graph = build_graph("rmat", args.scale)
    rows = []
    for name in ("bfs", "sssp", "pagerank", "wcc"):
        for gpus, threads in ((1, False), (args.gpus, False), (args.gpus, True)):
            row = profile(graph, name, gpus, args.repeats, threads)
            rows.append(row)
            print(json.dumps(row), flush=True)
    report["rows"] = rows
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
