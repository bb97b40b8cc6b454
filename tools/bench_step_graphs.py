"""PageRank (20 iterations) on one GPU and partitioned over 2 GPUs, each rank's iteration
replayed as CUDA graphs against launched kernel by kernel (``GRAPHDB_CUDA_GRAPHS=0``): the
lever against the launching thread's bound (docs/performance/2026-11-28-multi-gpu.md).

    python tools/bench_step_graphs.py [--scales 25 26] [--repeats 3] [--gpus 2]

R-MAT graphs built on GPU 0 (Graph500, edge factor 16), no host copies (PageRank's layout is
cut on the device). Every clock is read after every GPU was synchronized; the partitioned
ranks are checked against the one-GPU operator's to 1e-4 relative. Prints one line a cell and
the rank 0 busy span against the host's time (``rank_seconds``, ``host_seconds``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from graphdb.executor.algorithms.spec import OperatorConfig, Placement  # noqa: E402
from graphdb.executor.residency import RESIDENCY  # noqa: E402
from tools.bench_multi_gpu import agrees, dense, run_once, timed  # noqa: E402
from tools.gpu_graphs import graph_from_device_edges, rmat_edges_gpu  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", type=int, nargs="*", default=[25, 26])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--gpus", type=int, default=2)
    parser.add_argument("--out", default=None, help="also write the rows as JSON here")
    args = parser.parse_args()
    import cupy as cp

    rows = []
    devices = tuple(range(args.gpus))
    for scale in args.scales:
        with cp.cuda.Device(0):
            src, dst = rmat_edges_gpu(scale, seed=0)
            graph = graph_from_device_edges(src, dst, 1 << scale, name=f"rmat{scale}")
            del src, dst
            cp.get_default_memory_pool().free_all_blocks()
        n = graph.num_vertices
        one = OperatorConfig(device="gpu", variant="resident")
        _, base, out = timed(lambda: run_once(graph, "pagerank", one, 0), args.repeats, (0,))
        want = dense("pagerank", out.columns, n)
        row = {"graph": graph.name, "edges": graph.num_edges, "one_gpu_s": base}
        for p in sorted({1, args.gpus}):
            config = OperatorConfig(device="gpu", variant="partitioned",
                                    placement=Placement("nccl", p, devices[:p]))
            for mode in ("graphs", "eager"):
                os.environ["GRAPHDB_CUDA_GRAPHS"] = "1" if mode == "graphs" else "0"
                _, seconds, out = timed(lambda: run_once(graph, "pagerank", config, 0),
                                        args.repeats, devices[:p])
                m = out.metrics
                cell = {"seconds": seconds, "speedup": base / seconds,
                        "ok": agrees("pagerank", dense("pagerank", out.columns, n), want, 1e-4),
                        "host_s": m.get("host_seconds"), "rank_s": m.get("rank_seconds"),
                        "collective_s": m.get("collective_seconds"),
                        "captured": m.get("graphs_captured"), "replays": m.get("graph_replays")}
                row[f"{p}gpu_{mode}"] = cell
                print(f"{graph.name} pagerank {p} GPU(s) {mode}: {seconds * 1e3:.1f} ms "
                      f"(one GPU {base * 1e3:.1f} ms, x{base / seconds:.2f}) {cell}", flush=True)
            os.environ.pop("GRAPHDB_CUDA_GRAPHS", None)
            for d in devices:
                RESIDENCY.forget(graph.key, f"gpu:{d}", prefix="pagerank:shard:")
        rows.append(row)
        RESIDENCY.forget(graph.key)
        for d in devices:
            with cp.cuda.Device(d):
                cp.get_default_memory_pool().free_all_blocks()
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    return 0 if all(c["ok"] for r in rows for k, c in r.items() if k.endswith(("graphs", "eager")))\
        else 1


if __name__ == "__main__":
    sys.exit(main())
