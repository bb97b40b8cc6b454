"""Reads after a write (issue 29): BFS, PageRank and WCC on a graph with an uncompacted delta,
against the same query on the graph compacted, in one run.

    python tools/bench_reads_after_writes.py --quick              # R-MAT 16, a few minutes
    python tools/bench_reads_after_writes.py --scale 20 [--device gpu] [--out r.json]

The graph is R-MAT (graphdb.generators.rmat, ``2**scale`` vertices, 16 edges each, weights
1..97), on disk. For each delta share (1% and 10% of the edges: half inserted edges, half
deleted stored edges) and each algorithm, on a fresh copy of the loaded base:

1. the query runs on the base (its arrays resident, its kernels loaded: the warm state a
   database is in when a write comes);
2. one write inserts the delta's edges (an Arrow batch), one more deletes its stored edges
   (``DELETE ... WHERE``); **after the delta's write** is the first query then (it carries the
   whole delta into the version's state, and matches the deleted edges in the stored in-CSR);
   **delta, warm**: the best of ``--repeat`` more;
3. ``--repeat`` times: one single-row INSERT, then the first query of that version: **after a
   write** (the median), what a reader pays for each write on a graph with that delta;
4. CHECKPOINT (timed, ns per edge of the new base), then the query on the compacted graph:
   **compacted, warm** (the best of ``--repeat``), the denominator of every ratio.

Target: after a write, after the delta's write: at most 1.5x compacted, warm (CPU and GPU).
Kernels are loaded first on a small graph, so no timing includes loading code.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import graphdb  # noqa: E402
from tools.bench_writes import base_graph  # noqa: E402

QUERIES = {"bfs": "SELECT count(*) FROM bfs(g, ?)",
           "pagerank": "SELECT count(*) FROM pagerank(g, max_iterations => 20, tolerance => 0)",
           "wcc": "SELECT count(*) FROM wcc(g)"}
TARGET = 1.5


def _timed(con, sql: str, params) -> float:
    start = time.perf_counter()
    con.execute(sql, params).fetchall()
    return time.perf_counter() - start


def _write_delta(con, delta: pa.Table, share: float) -> None:
    con.insert_edges("g", delta)
    modulus = max(2, int(round(2 / share)))  # deletes about as many stored edges
    con.execute(f"DELETE FROM g.edges WHERE (src * 7 + dst * 13) % {modulus} = 0")


def warm_up(work: Path, device: str) -> None:
    """Load the compiled kernels (the algorithms over base and delta, the state's carrying
    over, merging, compaction) on a small graph."""
    db = work / "warm"
    edges = base_graph(11)
    with graphdb.connect(str(db)) as con:
        con.execute(f"SET device = '{device}'")
        con.ingest("g", edges.slice(0, 30000), vertices=pa.table({"id": np.arange(1 << 11)}))
        con.execute("SET compaction_threshold = 0")
        for sql in QUERIES.values():
            con.execute(sql, [0] if "?" in sql else None).fetchall()
        _write_delta(con, edges.slice(30000), 0.1)
        for _ in range(2):
            for sql in QUERIES.values():
                con.execute(sql, [0] if "?" in sql else None).fetchall()
            con.execute("INSERT INTO g.edges VALUES (1, 2, 1.0)")
        con.execute("SELECT count(*) FROM sssp(g, 0)").fetchall()  # a merged read
        con.execute("CHECKPOINT g")
    shutil.rmtree(db)


def one(base_db: Path, work: Path, name: str, delta: pa.Table, share: float, source: int,
        args) -> dict:
    """Steps 1-4 of the module docstring for one algorithm, on a copy of ``base_db``."""
    db = work / f"run-{name}"
    shutil.copytree(base_db, db)
    sql = QUERIES[name]
    params = [source] if "?" in sql else None
    out = {}
    with graphdb.connect(str(db)) as con:
        con.execute(f"SET device = '{args.device}'")
        con.execute("SET compaction_threshold = 0")
        out["base_warm"] = min(_timed(con, sql, params) for _ in range(args.repeat + 1))
        _write_delta(con, delta, share)
        out["changes"] = con.execute("SELECT inserted_edges, deleted_base_edges, delta_share "
                                     "FROM graph_changes('g')").fetchone()
        out["after_delta_write"] = _timed(con, sql, params)
        out["delta_warm"] = min(_timed(con, sql, params) for _ in range(args.repeat))
        after = []
        for i in range(args.repeat):
            con.execute("INSERT INTO g.edges VALUES (?, ?, 1.0)", [i, i + 1])
            after.append(_timed(con, sql, params))
        out["after_write"] = statistics.median(after)
        start = time.perf_counter()
        con.execute("CHECKPOINT g")
        out["checkpoint_s"] = time.perf_counter() - start
        out["edges_after"] = con.execute("SELECT edges FROM graphs() WHERE name = 'g'"
                                         ).fetchone()[0]
        out["compacted_first"] = _timed(con, sql, params)
        out["compacted_warm"] = min(_timed(con, sql, params) for _ in range(args.repeat))
    shutil.rmtree(db)
    return out


def run(args) -> dict:
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench_reads_after_writes_"))
    work.mkdir(parents=True, exist_ok=True)
    edges = base_graph(args.scale)
    n = 1 << args.scale
    results = {"scale": args.scale, "vertices": n, "edges": edges.num_rows,
               "device": args.device, "runs": []}
    try:
        warm_up(work, args.device)
        source = int(edges.column("src")[0].as_py())
        for share in args.shares:
            keep = edges.num_rows - int(edges.num_rows * share / 2)
            base_db = work / f"base-{share}"
            with graphdb.connect(str(base_db)) as con:
                con.ingest("g", edges.slice(0, keep), vertices=pa.table({"id": np.arange(n)}))
            for name in args.algorithms:
                run_ = one(base_db, work, name, edges.slice(keep), share, source, args)
                run_.update(share=share, algorithm=name)
                results["runs"].append(run_)
                print(line(run_), flush=True)
            shutil.rmtree(base_db)
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    return results


def line(r: dict) -> str:
    c = r["compacted_warm"]
    return (f"{r['share']:>4.0%} {r['algorithm']:9} compacted warm {c:8.4f} s | after a write "
            f"{r['after_write'] / c:5.2f}x | after the delta's write "
            f"{r['after_delta_write'] / c:5.2f}x | delta warm {r['delta_warm'] / c:5.2f}x | "
            f"base warm {r['base_warm'] / c:5.2f}x | CHECKPOINT {r['checkpoint_s']:.2f} s "
            f"({r['checkpoint_s'] * 1e9 / r['edges_after']:.0f} ns/edge)")


def report(results: dict) -> str:
    lines = [f"R-MAT {results['scale']} ({results['vertices']:,} vertices, "
             f"{results['edges']:,} edges), device {results['device']}; ratios over the "
             f"compacted graph's warm query, target {TARGET}x", ""]
    lines += [line(r) for r in results["runs"]]
    worst = max((r[k] / r["compacted_warm"] for r in results["runs"]
                 for k in ("after_write", "after_delta_write")), default=0.0)
    lines.append(f"worst first query after a write: {worst:.2f}x "
                 f"({'met' if worst <= TARGET else 'missed'})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="R-MAT 16, --repeat 2")
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    parser.add_argument("--shares", type=lambda s: [float(x) for x in s.split(",")],
                        default=[0.01, 0.10])
    parser.add_argument("--algorithms", type=lambda s: s.split(","), default=list(QUERIES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", help="scratch directory (default: temporary)")
    parser.add_argument("--out", help="write the results as JSON to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.scale, args.repeat = 16, 2
    results = run(args)
    print()
    print(report(results))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
