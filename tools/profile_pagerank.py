"""One PageRank iteration on a GPU-built R-MAT graph, for Nsight Compute.

    ncu -k regex:"graphdb_pagerank_(rows|heavy|merge)" --section SpeedOfLight \
        --section MemoryWorkloadAnalysis python tools/profile_pagerank.py --scale 24
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--iterations", type=int, default=1)
    ap.add_argument("--hub-cache", action="store_true")
    args = ap.parse_args()
    from executor.gpu.pagerank import pagerank_gpu
    from tools.gpu_graphs import graph_from_device_edges, rmat_edges_gpu

    src, dst = rmat_edges_gpu(args.scale, 16, seed=1)
    g = graph_from_device_edges(src, dst, 1 << args.scale)
    del src, dst
    _, _, stats = pagerank_gpu(g, max_iterations=args.iterations, hub_cache=args.hub_cache)
    print(stats)


if __name__ == "__main__":
    main()
