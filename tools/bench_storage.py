"""Storage benchmark: the buffer manager against raw LMDB reads, and edge-list conversion against
``scipy.sparse.csr_matrix``, side by side in one run.

    python -m tools.bench_storage [--scale 20] [--repeat 3] [--out results.json]

(a) Sequential page reads. The same pages are read (1) straight from LMDB: a read transaction,
    ``get`` and a copy into one reused (cache-hot) buffer, which is the least any reader that
    outlives the transaction must do; (2) the same plus the checksum every page carries, into one
    buffer and into as many rotating buffers as the pool of (3) has frames; (3) through the
    buffer manager with a pool a quarter of the data (every read a miss: copy and checksum; the
    default scan, which reads ahead only when loads wait on a disk, and a scan that always
    prefetches two pages ahead); (4) through a pool that holds everything (all hits).
    Target: (3) reaches at least 70% of (1).
(b) Conversion of an R-MAT edge list to the stored forms (CSR blocks with checksums, page table,
    slotted pages) by the production code path (:func:`graphdb.storage.write_topology`) into a
    transaction that discards the bytes, against building a ``scipy.sparse.csr_matrix`` from the
    same arrays. Target: at least as fast per edge, one adjacency direction against scipy's one
    CSR; both directions (what a directed ingest stores) are shown too. The same conversion
    committed to LMDB is shown for information (it adds the write I/O).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from graphdb.generators import rmat
from graphdb.storage import BufferManager, Environment, csr_from_edges, write_topology
from graphdb.storage.checksum import algorithm_name, default_algorithm
from graphdb.storage.pages import verify_page
from graphdb.storage.topology import page_key


def best_of(repeat: int, fns: dict) -> dict:
    """Best time of each function, run round-robin so that load from other processes on a
    shared machine drifts over all of them alike rather than over whichever ran last."""
    times = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: min(t) for name, t in times.items()}


class _DiscardTxn:
    """Stands in for an LMDB write transaction: takes the bytes, keeps a count."""

    def __init__(self):
        self.bytes = 0

    def put(self, key, value, db=None):
        self.bytes += len(value)


class _LayoutOnly:
    """Stands in for an Environment: a layout, and no map to grow, advise or release."""

    def __init__(self, layout):
        self.layout = layout

    def db(self, name):
        return name

    def map_headroom(self):
        return 1 << 62

    def advise_bulk_write(self, on):
        pass

    def release_resident(self):
        return 0

    def start_writeback(self):
        pass


def topology_arrays(src, dst, n, directions):
    arrays = {}
    off, tgt, _ = csr_from_edges(src, dst, n)
    arrays.update(out_offsets=off, out_targets=tgt)
    if directions == 2:
        off, tgt, _ = csr_from_edges(dst, src, n)
        arrays.update(in_offsets=off, in_targets=tgt)
    return arrays


def bench_conversion(src, dst, n, env, repeat):
    import scipy.sparse as sp

    edges = len(src)
    ones = np.ones(edges)
    def convert(directions):
        arrays = topology_arrays(src, dst, n, directions)
        write_topology(_LayoutOnly(env.layout), _DiscardTxn(), "bench", arrays, pages=True)

    def commit():
        arrays = topology_arrays(src, dst, n, 1)
        env.write(lambda txn: write_topology(env, txn, "commit", arrays, pages=True))

    results = best_of(repeat, {
        "scipy_csr_matrix": lambda: sp.csr_matrix((ones, (src, dst)), shape=(n, n)),
        "pages_and_blocks_1dir": lambda: convert(1),
        "pages_and_blocks_2dir": lambda: convert(2),
    })
    results.update(best_of(1, {"pages_and_blocks_1dir_committed": commit}))
    return {k: {"seconds": v, "ns_per_edge": v / edges * 1e9} for k, v in results.items()}


def bench_reads(env, graph_id, repeat):
    with env.read_txn() as txn:
        count = sum(1 for _ in txn.cursor(db=env.db("pages")).iternext(values=False))
    keys_raw = [page_key(graph_id, "out", p) for p in range(count)]
    size = env.layout.page_size
    total = count * size
    buf = np.empty(size, dtype=np.uint8)

    cold_budget = max(2 * size, total // 4)
    rotating = [np.zeros(size, dtype=np.uint8) for _ in range(cold_budget // size)]

    def raw(verify: bool, buffers=(buf,)):
        def run():
            db = env.db("pages")
            for i, key in enumerate(keys_raw):
                out = buffers[i % len(buffers)]
                with env.read_txn() as txn:
                    value = txn.get(key, db=db)
                    out[: len(value)] = np.frombuffer(value, dtype=np.uint8)
                if verify:
                    verify_page(out[: len(value)])
        return run

    def through_pool(budget, window=None):
        bm = BufferManager(env, budget)
        keys = bm.page_keys(graph_id, "out")

        def run():
            for _key, _view in bm.scan(keys, window):
                pass
        return bm, run

    cold_bm, cold = through_pool(cold_budget)
    ahead_bm, ahead = through_pool(cold_budget, window=2)
    warm_bm, warm = through_pool(total + 4 * size)
    warm()  # fill it: every timed pass is all hits
    results = best_of(repeat, {
        "raw_lmdb": raw(False), "raw_lmdb_verified": raw(True),
        "raw_lmdb_verified_rotating": raw(True, rotating), "buffer_manager_cold": cold,
        "buffer_manager_cold_prefetch": ahead, "buffer_manager_warm": warm,
    })
    cold_stats = cold_bm.stats()
    cold_bm.close()
    ahead_bm.close()
    warm_bm.close()
    out = {k: {"seconds": v, "GB_per_s": total / v / 1e9} for k, v in results.items()}
    out["pages"], out["bytes"], out["cold_pool_stats"] = count, total, cold_stats
    return out


def _rows(reads: dict, conversion: dict) -> list[tuple[str, str, str, str]]:
    """Markdown rows: (measurement, speed, ratio against its baseline, target verdict)."""
    raw = reads["raw_lmdb"]["seconds"]
    sci = conversion["scipy_csr_matrix"]["seconds"]
    check = algorithm_name(default_algorithm())

    def read_row(label, name, target=False):
        ratio = raw / reads[name]["seconds"]
        verdict = ("met" if ratio >= 0.7 else "NOT met (>= 0.70)") if target else ""
        return (label, f"{reads[name]['GB_per_s']:.2f} GB/s", f"{ratio:.2f}", verdict)

    def convert_row(label, name, target=False):
        ratio = sci / conversion[name]["seconds"]
        verdict = ("met" if ratio >= 1.0 else "NOT met (>= 1.00)") if target else ""
        return (label, f"{conversion[name]['ns_per_edge']:.1f} ns/edge", f"{ratio:.2f}", verdict)

    return [
        read_row("(a) pages read straight from LMDB (get + copy)", "raw_lmdb"),
        read_row(f"(a) ... plus the {check} check of every page", "raw_lmdb_verified"),
        read_row("(a) ... into as many rotating buffers as the pool below has frames",
                 "raw_lmdb_verified_rotating"),
        read_row("(a) buffer manager, pool = 1/4 of data (all misses)", "buffer_manager_cold",
                 target=True),
        read_row("(a) ... same, always prefetching 2 pages ahead on 2 threads",
                 "buffer_manager_cold_prefetch"),
        read_row("(a) buffer manager, pool holds all (all hits)", "buffer_manager_warm"),
        convert_row("(b) scipy.sparse.csr_matrix", "scipy_csr_matrix"),
        convert_row("(b) pages + CSR blocks, out direction", "pages_and_blocks_1dir",
                    target=True),
        convert_row("(b) pages + CSR blocks, out + in", "pages_and_blocks_2dir"),
        convert_row("(b) out direction committed to LMDB", "pages_and_blocks_1dir_committed"),
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=20, help="R-MAT scale (2**scale vertices)")
    parser.add_argument("--edge-factor", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", help="write the results as JSON to this file")
    args = parser.parse_args(argv)

    print(f"generating R-MAT scale {args.scale} ...", file=sys.stderr)
    src, dst = rmat(args.scale, args.edge_factor, seed=1)
    n = 1 << args.scale
    workdir = Path(tempfile.mkdtemp(prefix="bench-storage-"))
    try:
        env = Environment(workdir / "db")
        env.reserve(40 * len(src))
        conversion = bench_conversion(src, dst, n, env, args.repeat)
        reads = bench_reads(env, "commit", args.repeat)
        env.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    rows = _rows(reads, conversion)
    print(f"R-MAT scale {args.scale}: {len(src):,} edges; {reads['pages']} pages of "
          f"{reads['bytes'] // max(1, reads['pages']):,} bytes; best of {args.repeat}\n")
    print("| measurement | speed | ratio (vs baseline) | target |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if args.out:
        Path(args.out).write_text(json.dumps(
            {"scale": args.scale, "edges": len(src), "reads": reads, "conversion": conversion},
            indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
