"""PageRank on a GPU-built R-MAT graph, layout by layout: a target for Nsight Compute, or a
timed sweep with each iteration split by kernel.

What it compares: the GPU PageRank (``algorithms/pagerank/gpu.py``) in the layouts named by
``--layouts`` (``tools/bench_gpu.py``'s set: default, untiled, no_reorder, unblocked,
unblocked_no_reorder, half_block, double_block) and any ``--custom`` layout (the default with
blocking, relabelling or the hot-source tiles' shape changed), against the cupyx sparse matvec
and the memory-traffic bound, in one process. Kernels are timed with CUDA events around each
launch (``bench_gpu.kernel_times`` wraps the module's kernel lookup from outside: the product
code has no profiling hook). ``tools/bench_gpu.py`` runs the same timing for its fixed layout
set on every GPU check; this tool is for sweeps and for ncu.

On the GPU machine::

    ncu -k regex:"graphdb_pagerank_(rows|heavy|merge|tiles)" --section SpeedOfLight \
        --section MemoryWorkloadAnalysis python tools/profile_pagerank.py --scale 24

    python tools/profile_pagerank.py --scale 24 --bench --out DIR \
        [--layouts default,untiled] [--custom sources=1048576,src=8192] [--custom block=8388608]

``--custom`` keys: ``block`` (vertices per L2 block), ``reorder`` (0/1), ``tiles`` (0/1), and
the tile shape's ``sources``, ``src``, ``dst``, ``min_edges``, ``chunk`` (TileShape fields).
``--bench`` writes ``DIR/profile_pagerank.json``. (The merge-kernel probe of the old tool is
gone: it launched the merge kernel with a copied argument list that drifts from pagerank.cu.)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

LAYOUT_KEYS = ("block", "reorder", "tiles", "sources", "src", "dst", "min_edges", "chunk")


def parse_custom(text: str) -> dict[str, int]:
    """``"sources=1048576,src=8192"`` -> {"sources": 1048576, "src": 8192} (checked keys)."""
    out: dict[str, int] = {}
    for part in filter(None, text.split(",")):
        key, sep, value = part.partition("=")
        if not sep or key not in LAYOUT_KEYS:
            raise argparse.ArgumentTypeError(
                f"--custom takes key=value pairs with keys {', '.join(LAYOUT_KEYS)}; got {part!r}")
        try:
            out[key] = int(value, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"--custom {key}: not an integer: {value!r}") from None
    return out


def custom_layout(base, change: dict[str, int]):
    """The Layout ``base`` with ``change`` (parse_custom's keys) applied; tiles come with the
    default TileShape when asked for and none is there, and go when the relabelling goes."""
    from graphdb.executor.algorithms.pagerank.tiles import TileShape

    reorder = bool(change.get("reorder", base.reorder))
    shape_keys = {k: v for k, v in change.items() if k in ("sources", "src", "dst", "min_edges",
                                                            "chunk")}
    tiles = base.tiles
    if change.get("tiles", 1 if tiles is not None or shape_keys else 0):
        tiles = dataclasses.replace(tiles or TileShape(), **shape_keys)
    else:
        tiles = None
    if not reorder:
        tiles = None  # the partition builds tiles only over relabelled ids
    return dataclasses.replace(base, block_vertices=int(change.get("block", base.block_vertices)),
                               reorder=reorder, tiles=tiles)


def layouts(args, n: int, m: int, l2_bytes: int) -> list[tuple[str, object]]:
    from graphdb.executor.algorithms.pagerank.gpu import default_layout
    from tools.bench_gpu import pagerank_layouts

    named = dict(pagerank_layouts(n, m, l2_bytes))
    wanted = [x for x in args.layouts.split(",") if x]
    unknown = [x for x in wanted if x not in named]
    if unknown:
        raise SystemExit(f"unknown layouts {unknown}; this graph has {sorted(named)}")
    base = default_layout(n, m, l2_bytes)
    return ([(x, named[x]) for x in wanted]
            + [(f"custom{i}", custom_layout(base, c)) for i, c in enumerate(args.custom, 1)])


def bench(g, n: int, args) -> dict:
    from graphdb.executor.gpu import runtime as rt
    from tools.bench_gpu import copy_bandwidth, cupyx_pagerank, time_pagerank

    cp = rt.cp()
    iters = 10
    res: dict = {"gpu": rt.device_info().name, "scale": args.scale, "vertices": n,
                 "edges": g.num_edges, "iterations_timed": iters, "layouts": {}}
    ref = None
    for label, layout in layouts(args, n, g.num_edges, rt.device_info().l2_bytes):
        try:
            row, rank = time_pagerank(g, layout, iters, args.repeats)
            if ref is None:
                ref = rank
            else:
                row["max_rel_diff_vs_first"] = float(cp.abs(rank - ref).max() / ref.max())
            res["layouts"][label] = row
            print("pagerank", label, json.dumps(row, default=str), flush=True)
        except Exception as exc:  # noqa: BLE001  (one failing layout must not end the run)
            res["layouts"][label] = {"error": repr(exc)}
            print("pagerank", label, "FAILED", repr(exc), flush=True)

    out, inn = rt.device_csr(g, "out"), rt.device_csr(g, "in")
    ms, cupyx_rank = cupyx_pagerank(inn, out.degrees(), n, iters, args.repeats)
    res["cupyx_ms_per_iteration"] = ms / iters
    if ref is not None:
        res["max_rel_diff_first_vs_cupyx"] = float(
            cp.abs(ref - cupyx_rank).max() / cupyx_rank.max())
    bw = copy_bandwidth()
    res["copy_bandwidth_GBps"] = bw / 1e9
    bound_bytes = 4 * g.num_edges + 8 * (n + 1) + 8 * n + 8 * n
    res["traffic_bound_ms"] = bound_bytes / bw * 1e3
    for row in res["layouts"].values():
        if "ms_per_iteration" in row:
            row["x_vs_cupyx"] = res["cupyx_ms_per_iteration"] / row["ms_per_iteration"]
            row["x_bound"] = row["ms_per_iteration"] / res["traffic_bound_ms"]
    return res


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--iterations", type=int, default=1, help="without --bench: per layout")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--layouts", default="default,untiled",
                    help="comma-separated, from bench_gpu's set (default, untiled, no_reorder, "
                         "unblocked, unblocked_no_reorder, half_block, double_block)")
    ap.add_argument("--custom", type=parse_custom, action="append", default=[],
                    help="a further layout: key=value,... (" + ", ".join(LAYOUT_KEYS) + ")")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    from graphdb.executor.algorithms.pagerank.gpu import pagerank_gpu
    from graphdb.executor.gpu import runtime as rt
    from tools.gpu_graphs import graph_from_device_edges, rmat_edges_gpu

    t = time.perf_counter()
    src, dst = rmat_edges_gpu(args.scale, 16, seed=1)
    n = 1 << args.scale
    g = graph_from_device_edges(src, dst, n)
    del src, dst
    print(f"rmat {args.scale} built in {time.perf_counter() - t:.1f} s", flush=True)
    if not args.bench:  # one process, one graph build, each layout run once (for ncu)
        for label, layout in layouts(args, n, g.num_edges, rt.device_info().l2_bytes):
            _, _, stats = pagerank_gpu(g, max_iterations=args.iterations, layout=layout)
            print(label, stats, flush=True)
            g.residency.forget(g.key, rt.device_name(), prefix="pagerank:partition:")
        return
    res = bench(g, n, args)
    text = json.dumps(res, indent=1, default=str)
    print(text)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "profile_pagerank.json").write_text(text)
    print("cupyx", round(res["cupyx_ms_per_iteration"], 3), "ms; bound",
          round(res["traffic_bound_ms"], 3), "ms")
    for label, row in res["layouts"].items():
        if "ms_per_iteration" in row:
            print(f"{label:22s} {row['ms_per_iteration']:.3f} ms/iter  "
                  f"{row['x_vs_cupyx']:.2f}x cupyx  {row['x_bound']:.2f}x bound  "
                  f"{row['kernel_ms_per_iteration']}  tiles={row.get('tiles')}")


if __name__ == "__main__":
    main()
