"""PageRank on a GPU-built R-MAT graph: one iteration for Nsight Compute, or a timed sweep.

    ncu -k regex:"graphdb_pagerank_(rows|heavy|merge|tiles)" --section SpeedOfLight \
        --section MemoryWorkloadAnalysis python tools/profile_pagerank.py --scale 24

    python tools/profile_pagerank.py --scale 24 --bench --out DIR [--configs default,untiled,...]

``--bench`` times each configuration (CUDA events, median of ``--repeats`` runs of 10
iterations after a warm-up), splits an iteration by kernel, records the partition's (and the
tiles') build time and each result's difference from the first configuration's, then times the
cupyx sparse matvec iteration and computes the memory-traffic bound in the same run (the same
definitions as ``tools/bench_gpu.py``). Writes ``DIR/profile_pagerank.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: Tiles with their kernel on the operator's stream, before the gathers, and split columns
#: summed through scratch slots (what configurations meant before the second stream and the
#: atomic flush became the defaults, TILES_CONCURRENT / TILES_ATOMIC, on 2026-11-22).
SEQ = {"tiles": True, "tiles_concurrent": False, "tiles_atomic": False}
#: Named configurations for --configs (keyword arguments of pagerank_gpu). "default" is what a
#: query gets; "tiles" the tiles' defaults (TILE_SOURCES etc.).
CONFIGS: dict[str, dict] = {
    "default": {},
    "untiled": {"tiles": False},
    "tiles": {"tiles": True},
    "tiles_h16k_all": {**SEQ, "tile_sources": 1 << 14, "tile_min_edges": 0},
    "tiles_h64k": {**SEQ, "tile_sources": 1 << 16},
    "tiles_h256k": {**SEQ, "tile_sources": 1 << 18},
    "tiles_h1m": {**SEQ, "tile_sources": 1 << 20},
    "tiles_h256k_min16k": {**SEQ, "tile_sources": 1 << 18, "tile_min_edges": 1 << 14},
    "tiles_h256k_min4k": {**SEQ, "tile_sources": 1 << 18, "tile_min_edges": 1 << 12},
    "tiles_h256k_s32k_d16k": {**SEQ, "tile_sources": 1 << 18, "tile_src": 1 << 15,
                              "tile_dst": 1 << 14},
    "tiles_h1m_s32k_d16k": {**SEQ, "tile_sources": 1 << 20, "tile_src": 1 << 15,
                            "tile_dst": 1 << 14},
    "tiles_h256k_s8k_d16k": {**SEQ, "tile_sources": 1 << 18, "tile_src": 1 << 13,
                             "tile_dst": 1 << 14},
    "tiles_h4m_s8k_d16k_conc": {**SEQ, "tile_sources": 1 << 22, "tile_src": 1 << 13,
                                "tile_dst": 1 << 14, "tiles_concurrent": True},
    "tiles_last": {**SEQ, "tiles_last": True},
    "tiles_h1m_last": {**SEQ, "tile_sources": 1 << 20, "tiles_last": True},
    "tiles_h1m_item1m": {**SEQ, "tile_sources": 1 << 20, "tile_chunk": 1 << 20},
    "tiles_h4m": {**SEQ, "tile_sources": 1 << 22},
    "tiles_h4m_conc": {**SEQ, "tile_sources": 1 << 22, "tiles_concurrent": True},
    "tiles_h16m_conc": {**SEQ, "tile_sources": 1 << 24, "tiles_concurrent": True},
    "tiles_h1m_conc": {**SEQ, "tile_sources": 1 << 20, "tiles_concurrent": True},
    "tiles_atomic": {**SEQ, "tile_sources": 1 << 18, "tiles_atomic": True},
    "tiles_h1m_atomic": {**SEQ, "tile_sources": 1 << 20, "tiles_atomic": True},
    "tiles_h4m_atomic_conc": {**SEQ, "tile_sources": 1 << 22, "tiles_atomic": True,
                              "tiles_concurrent": True},
    "push": {"variant": "push"},
    "tiles_seq_atomic": {"tiles": True, "tiles_concurrent": False},
    "pipe": {"tiles": True, "tiles_pipeline": True},
    "pipe_seq": {"tiles": True, "tiles_pipeline": True, "tiles_concurrent": False},
    "pipe_b8m": {"tiles": True, "tiles_pipeline": True, "block_size": 1 << 23},
    "pipe_b16m": {"tiles": True, "tiles_pipeline": True, "block_size": 1 << 24},
    "tiles_b16m": {"tiles": True, "block_size": 1 << 24},
    "pipe_b16m_seq": {"tiles": True, "tiles_pipeline": True, "block_size": 1 << 24,
                      "tiles_concurrent": False},
    "pipe_min4k": {"tiles": True, "tiles_pipeline": True, "tile_min_edges": 1 << 12},
    "pipe_b16m_min4k": {"tiles": True, "tiles_pipeline": True, "block_size": 1 << 24,
                        "tile_min_edges": 1 << 12},
    "pipe_min4k_seq": {"tiles": True, "tiles_pipeline": True, "tile_min_edges": 1 << 12,
                       "tiles_concurrent": False},
    "pipe_min2k": {"tiles": True, "tiles_pipeline": True, "tile_min_edges": 1 << 11},
    "pipe_dense": {"tiles": True, "tiles_pipeline": True, "rows_to_dense": True},
    "pipe_dense_seq": {"tiles": True, "tiles_pipeline": True, "rows_to_dense": True,
                       "tiles_concurrent": False},
    "pipe_dense_min4k": {"tiles": True, "tiles_pipeline": True, "rows_to_dense": True,
                         "tile_min_edges": 1 << 12},
    "pipe_dense_b16m": {"tiles": True, "tiles_pipeline": True, "rows_to_dense": True,
                        "block_size": 1 << 24},
    "untiled_dense": {"tiles": False, "rows_to_dense": True},
    "pipe_dense_merge": {"tiles": True, "tiles_pipeline": True, "rows_to_dense": True,
                         "lean_apply": False},
    "pipe_dense_seq_merge": {"tiles": True, "tiles_pipeline": True, "rows_to_dense": True,
                             "tiles_concurrent": False, "lean_apply": False},
    "pipe_dense_seq_min4k": {"tiles": True, "tiles_pipeline": True, "rows_to_dense": True,
                             "tiles_concurrent": False, "tile_min_edges": 1 << 12},
    "pipe_dense_seq_b16m": {"tiles": True, "tiles_pipeline": True, "rows_to_dense": True,
                            "tiles_concurrent": False, "block_size": 1 << 24},
    "pipe_dense_seq_b16m_min4k": {"tiles": True, "tiles_pipeline": True, "rows_to_dense": True,
                                  "tiles_concurrent": False, "block_size": 1 << 24,
                                  "tile_min_edges": 1 << 12},
    "pipe_dense_b16m_min4k": {"tiles": True, "tiles_pipeline": True, "rows_to_dense": True,
                              "block_size": 1 << 24, "tile_min_edges": 1 << 12},
    "pipe_b16m_min2k": {"tiles": True, "tiles_pipeline": True, "block_size": 1 << 24,
                        "tile_min_edges": 1 << 11},
}


def bench(g, n: int, args) -> dict:
    from graphdb.executor.gpu import runtime as rt
    from tools.bench_gpu import copy_bandwidth, cupyx_pagerank, time_pagerank

    cp = rt.cp()
    iters = 10
    res: dict = {"gpu": rt.device_info().name, "scale": args.scale, "vertices": n,
                 "edges": g.num_edges, "iterations_timed": iters, "configs": {}}
    out, inn = rt.device_csr(g, "out"), rt.device_csr(g, "in")
    ref = None
    for label in args.configs.split(","):
        kw = CONFIGS[label]
        try:
            row, rank = time_pagerank(g, kw, iters, args.repeats)
            if ref is None:
                ref = rank
            else:
                row["max_rel_diff_vs_first"] = float(cp.abs(rank - ref).max() / ref.max())
            res["configs"][label] = row
            print("pagerank", label, json.dumps(row, default=str), flush=True)
        except Exception as exc:  # noqa: BLE001  (one failing variant must not end the run)
            res["configs"][label] = {"error": repr(exc)}
            print("pagerank", label, "FAILED", repr(exc), flush=True)
        finally:
            rt._resident(g).clear()  # drop this variant's partition, keep the CSRs
            rt.attach_device_csr(g, "out", out)
            rt.attach_device_csr(g, "in", inn)
            cp.get_default_memory_pool().free_all_blocks()

    if args.merge_probe:
        try:
            res["merge_probe"] = merge_probe(g, n)
            print("merge probe", res["merge_probe"], flush=True)
        except Exception as exc:  # noqa: BLE001
            res["merge_probe"] = {"error": repr(exc)}
            print("merge probe FAILED", repr(exc), flush=True)
        finally:
            rt._resident(g).clear()
            rt.attach_device_csr(g, "out", out)
            rt.attach_device_csr(g, "in", inn)
            cp.get_default_memory_pool().free_all_blocks()

    ms, cupyx_rank = cupyx_pagerank(inn, out.degrees(), n, iters, args.repeats)
    res["cupyx_ms_per_iteration"] = ms / iters
    if ref is not None:
        res["max_rel_diff_first_vs_cupyx"] = float(
            cp.abs(ref - cupyx_rank).max() / cupyx_rank.max())
    bw = copy_bandwidth()
    res["copy_bandwidth_GBps"] = bw / 1e9
    bound_bytes = 4 * g.num_edges + 8 * (n + 1) + 8 * n + 8 * n
    res["traffic_bound_ms"] = bound_bytes / bw * 1e3
    for row in res["configs"].values():
        if "ms_per_iteration" in row:
            row["x_vs_cupyx"] = res["cupyx_ms_per_iteration"] / row["ms_per_iteration"]
            row["x_bound"] = row["ms_per_iteration"] / res["traffic_bound_ms"]
    return res


def merge_probe(g, n: int) -> dict:
    """The merge kernel alone (ms per launch, median of 10; the ranks it computes here are not
    used): the kernel with dense_mode 0/1/2, without and after the tiles kernel. (Copies of
    the kernel before the dense fix, timed the same way, are in git history: 4afc9d7.)"""
    import statistics

    import numpy as np

    from graphdb.executor.gpu import pagerank as prm
    from graphdb.executor.gpu import runtime as rt
    from graphdb.executor.gpu.compiled import set_dynamic_shared

    cp = rt.cp()
    block = prm.block_vertices(rt.device_info().l2_bytes)
    cfg = {"sources": prm.TILE_SOURCES, "src": prm.TILE_SRC, "dst": prm.TILE_DST,
           "min_edges": prm.TILE_MIN_EDGES, "chunk": prm.TILE_CHUNK}
    part = prm._partition_for(g, "pull", block, True, cfg)
    tl = part.tiles
    ids = rt.device_csr(g, "out").targets.dtype
    merge_k = rt.kernel("pagerank", "graphdb_pagerank_merge_apply", ids)
    tiles_k = rt.module("pagerank").get_function("graphdb_pagerank_tiles")
    smem = 4 * (tl.src + tl.dst)
    set_dynamic_shared(tiles_k, smem)
    rank = cp.full(n, 1.0 / n)
    contrib = cp.full(n, 1.0 / n, dtype=np.float32)
    partial = cp.zeros(max(part.rows_total, 1), dtype=np.float32)
    dense = cp.zeros(n, dtype=np.float32)
    scal, l1 = cp.zeros(3), cp.zeros(1)
    blocks = max(1, min(-(-n // prm.RANGE), rt.device_info().multiprocessors * 2))
    stream = cp.cuda.get_current_stream()

    modes = {m: cp.full(-(-n // prm.RANGE), m, dtype=np.uint8) for m in (0, 1, 2)}

    def merge(mode):
        merge_k((blocks,), (prm.RANGE,), (
            np.int32(part.blocks), part.range_ptr, part.id_map_flat, partial,
            np.int32(mode), dense, np.int64(n), part.out_degree, np.float64(0.85), rank,
            contrib, scal, l1, np.int32(0), np.int32(0), modes[mode], np.int32(1),
            part.id_map_flat))

    reduce_k = rt.module("pagerank").get_function("graphdb_pagerank_tiles_reduce")
    scratch = cp.empty(max(tl.slots, 1) * tl.dst, dtype=np.float32)

    def tiles(use_scratch=1):
        tiles_k((tl.items,), (prm.TILE_THREADS,), (
            tl.edges, tl.tile_end, tl.tile_src, tl.item_start, tl.item_end, tl.item_tile,
            tl.item_dst, tl.item_slot, np.int64(tl.items), np.int32(tl.src), np.int32(tl.dst),
            np.int64(n), contrib, dense, scratch, np.int32(use_scratch)), shared_mem=smem)
        if use_scratch and tl.slots:
            k = int(tl.split_slots.size)
            reduce_k((rt.grid_for(k * tl.dst),), (256,), (
                scratch, tl.split_dst, tl.split_slot, tl.split_slots, np.int32(k),
                np.int32(tl.dst), np.int64(n), dense))

    def timed(launch, before=None):
        times = []
        for _ in range(11):
            if before:
                before()
            a, b = cp.cuda.Event(), cp.cuda.Event()
            a.record(stream)
            launch()
            b.record(stream)
            b.synchronize()
            times.append(cp.cuda.get_elapsed_time(a, b))
        return round(statistics.median(times[1:]), 4)

    res = {f"merge_mode{m}": timed(lambda m=m: merge(m)) for m in (0, 1, 2)}
    res.update({f"merge_mode{m}_after_tiles": timed(lambda m=m: merge(m), tiles)
                for m in (0, 1)})
    res["merge_mode2_after_tiles_atomic"] = timed(lambda: merge(2), lambda: tiles(0))
    res.update({"tiles_alone": timed(tiles), "slots": tl.slots, "items": tl.items,
                "owner_items": int((tl.item_slot < 0).sum())})
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--iterations", type=int, default=1)
    ap.add_argument("--hub-cache", action="store_true")
    ap.add_argument("--tiles", action="store_true")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--configs", default="default,untiled")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=None)
    ap.add_argument("--merge-probe", action="store_true")
    ap.add_argument("--config", default=None, help="without --bench: CONFIGS names to run, comma-separated")
    args = ap.parse_args()
    from graphdb.executor.gpu.pagerank import pagerank_gpu
    from tools.gpu_graphs import graph_from_device_edges, rmat_edges_gpu

    t = time.perf_counter()
    src, dst = rmat_edges_gpu(args.scale, 16, seed=1)
    g = graph_from_device_edges(src, dst, 1 << args.scale)
    del src, dst
    print(f"rmat {args.scale} built in {time.perf_counter() - t:.1f} s", flush=True)
    if not args.bench:
        from graphdb.executor.gpu import runtime as rt

        for label in (args.config or "").split(","):  # several: one process, one graph build
            kw = dict(CONFIGS[label]) if label else {}
            kw.setdefault("hub_cache", args.hub_cache)
            if args.tiles:
                kw["tiles"] = True
            _, _, stats = pagerank_gpu(g, max_iterations=args.iterations, **kw)
            print(label, stats, flush=True)
            for key in [k for k in rt._resident(g) if k[0] == "pagerank"]:
                del rt._resident(g)[key]
        return
    res = bench(g, 1 << args.scale, args)
    text = json.dumps(res, indent=1, default=str)
    print(text)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "profile_pagerank.json").write_text(text)
    print("cupyx", round(res["cupyx_ms_per_iteration"], 3), "ms; bound",
          round(res["traffic_bound_ms"], 3), "ms")
    for label, row in res["configs"].items():
        if "ms_per_iteration" in row:
            print(f"{label:28s} {row['ms_per_iteration']:.3f} ms/iter  "
                  f"{row['x_vs_cupyx']:.2f}x cupyx  {row['x_bound']:.2f}x bound  "
                  f"{row['kernel_ms_per_iteration']}  tiles={row.get('tiles')}")


if __name__ == "__main__":
    main()
