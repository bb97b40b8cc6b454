"""Writes after load (issue 19), side by side with Kuzu in one run.

    python tools/bench_writes.py --quick            # < 2 minutes on two cores
    python tools/bench_writes.py [--scale 18] [--device cpu|gpu] [--out bench.json]
    python tools/bench_writes.py --device gpu --skip-kuzu --scale 20   # the slowdown on a GPU

Both engines write to an on-disk database that holds an R-MAT graph (graphdb.generators.rmat,
``2**scale`` vertices, 16 edges each); every write is durable when its commit returns (graphdb:
LMDB's synced commit; Kuzu: its WAL). The inserted edges join vertices that exist (Kuzu's CREATE
needs them; graphdb would add missing ones).

* single-row autocommit INSERTs of an edge, one statement each, with parameters (graphdb:
  ``INSERT INTO g.edges VALUES (?, ?)``; Kuzu: a prepared ``MATCH (a), (b) ... CREATE``);
* ``--txn-rows`` single-row INSERTs inside one transaction (BEGIN ... COMMIT), the same;
* a batch of ``--batch`` edges from Arrow (graphdb: ``con.insert_edges(g, table)``; Kuzu:
  ``COPY E FROM`` the same data as a DataFrame) into the loaded graph.
  Targets: 1,000/s, 20,000/s and 1 M/s, each at least 3x Kuzu.
* BFS, SSSP and PageRank (``SET device``) with an uncompacted delta of 1% and 10% of the edges
  (half inserted edges, half deleted stored edges) over their time on the same graph compacted
  (CHECKPOINT); ``first`` is the first query of the version (it merges the delta), ``warm`` the
  best of the repeats (kernels are loaded once beforehand, on a small graph). Targets: 1.25x at
  1%, 1.5x at 10%.
* CHECKPOINT of the 10% delta in ns per edge of the new base (target 100 ns on two cores).
* readers in another process (``SELECT count(*) FROM neighbors(g, ?)`` in a loop, a fresh
  statement snapshot each) while this process inserts 5% of the edges and compacts, in rounds:
  failed queries and the longest query, beside the longest with no writes and in a first
  warm-up round (the reader's first delta merge loads compiled kernels); targets 0 and < 100 ms.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import shutil
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
from graphdb.generators import rmat  # noqa: E402

ALGORITHMS = {"bfs": "SELECT count(*) FROM bfs(g, ?)",
              "sssp": "SELECT count(*) FROM sssp(g, ?)",
              "pagerank": "SELECT count(*) FROM pagerank(g, max_iterations => 20, tolerance => 0)"}


def base_graph(scale: int, seed: int = 0) -> pa.Table:
    src, dst = rmat(scale, seed=seed)
    weight = (np.arange(src.size) % 97 + 1).astype(np.float64)
    return pa.table({"src": src, "dst": dst, "weight": weight})


def new_edges(n_vertices: int, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, n_vertices, count), rng.integers(0, n_vertices, count)


# -- inserts --------------------------------------------------------------------------------------
def graphdb_inserts(work: Path, edges: pa.Table, n_vertices: int, args) -> dict:
    db = work / "graphdb-inserts"
    out = {}
    with graphdb.connect(str(db)) as con:
        con.ingest("g", edges, vertices=pa.table({"id": np.arange(n_vertices)}))
        con.execute("SET compaction_threshold = 0")  # the inserts alone are timed
        src, dst = new_edges(n_vertices, args.single, 1)
        sql = "INSERT INTO g.edges VALUES (?, ?, ?)"
        start = time.perf_counter()
        for s, d in zip(src.tolist(), dst.tolist()):
            con.execute(sql, [s, d, 1.0])
        out["single"] = args.single / (time.perf_counter() - start)
        src, dst = new_edges(n_vertices, args.txn_rows, 2)
        start = time.perf_counter()
        con.execute("BEGIN")
        for s, d in zip(src.tolist(), dst.tolist()):
            con.execute(sql, [s, d, 1.0])
        con.execute("COMMIT")
        out["transaction"] = args.txn_rows / (time.perf_counter() - start)
        src, dst = new_edges(n_vertices, args.batch, 3)
        batch = pa.table({"src": src, "dst": dst, "weight": np.ones(args.batch)})
        start = time.perf_counter()
        con.insert_edges("g", batch)
        out["batch"] = args.batch / (time.perf_counter() - start)
        expected = edges.num_rows + args.single + args.txn_rows + args.batch
        assert con.execute("SELECT count(*) FROM g.edges").fetchone() == (expected,)
    shutil.rmtree(db)
    return out


def kuzu_inserts(work: Path, edges: pa.Table, n_vertices: int, args) -> dict:
    import kuzu
    import pandas as pd

    db = kuzu.Database(str(work / "kuzu"))
    con = kuzu.Connection(db)
    con.execute("CREATE NODE TABLE V(id INT64, PRIMARY KEY(id))")
    con.execute("CREATE REL TABLE E(FROM V TO V, weight DOUBLE)")
    vertex_frame = pd.DataFrame({"id": np.arange(n_vertices)})  # noqa: F841 (Kuzu reads it)
    con.execute("COPY V FROM vertex_frame")
    edge_frame = edges.to_pandas()  # noqa: F841
    con.execute("COPY E FROM edge_frame")
    insert = con.prepare("MATCH (a:V), (b:V) WHERE a.id = $s AND b.id = $d "
                         "CREATE (a)-[:E {weight: 1.0}]->(b)")
    out = {}
    single = min(args.single, args.kuzu_single)
    src, dst = new_edges(n_vertices, single, 1)
    start = time.perf_counter()
    for s, d in zip(src.tolist(), dst.tolist()):
        con.execute(insert, {"s": s, "d": d})
    out["single"] = single / (time.perf_counter() - start)
    rows = min(args.txn_rows, args.kuzu_single)
    src, dst = new_edges(n_vertices, rows, 2)
    start = time.perf_counter()
    con.execute("BEGIN TRANSACTION")
    for s, d in zip(src.tolist(), dst.tolist()):
        con.execute(insert, {"s": s, "d": d})
    con.execute("COMMIT")
    out["transaction"] = rows / (time.perf_counter() - start)
    src, dst = new_edges(n_vertices, args.batch, 3)
    batch_frame = pd.DataFrame({"from": src, "to": dst, "weight": np.ones(args.batch)})  # noqa
    start = time.perf_counter()
    con.execute("COPY E FROM batch_frame")
    out["batch"] = args.batch / (time.perf_counter() - start)
    expected = edges.num_rows + single + rows + args.batch
    got = con.execute("MATCH ()-[e:E]->() RETURN count(e)").get_next()[0]
    assert got == expected, (got, expected)
    out["counts"] = {"single": single, "transaction": rows}
    con.close()
    db.close()
    return out


# -- operators on a changed graph ---------------------------------------------------------------
def _time_queries(con, source: int, repeat: int) -> dict:
    out = {}
    for name, sql in ALGORITHMS.items():
        params = [source] if "?" in sql else None
        times = []
        for _ in range(repeat + 1):
            start = time.perf_counter()
            con.execute(sql, params).fetchall()
            times.append(time.perf_counter() - start)
        out[name] = {"first": times[0], "warm": min(times[1:])}
    return out


def warm_up(work: Path, device: str) -> None:
    """Load this process's compiled kernels (delta merge, compaction, the algorithms) on a
    small graph, so that the timings below are of the work, not of loading code."""
    db = work / "graphdb-warm"
    edges = base_graph(10)
    with graphdb.connect(str(db)) as con:
        con.execute(f"SET device = '{device}'")
        con.ingest("g", edges, vertices=pa.table({"id": np.arange(1 << 10)}))
        con.execute("SET compaction_threshold = 0")
        con.insert_edges("g", edges.slice(0, 100))
        con.execute("DELETE FROM g.edges WHERE (src * 7 + dst * 13) % 50 = 0")
        _time_queries(con, 0, 1)
        con.execute("CHECKPOINT g")
        _time_queries(con, 0, 1)
    shutil.rmtree(db)


def slowdown(work: Path, edges: pa.Table, n_vertices: int, share: float, args) -> dict:
    """Queries over a delta of ``share`` of the edges (half inserted, half deleted stored
    edges) against the same graph compacted; and the compaction's ns per edge."""
    db = work / f"graphdb-delta-{share}"
    m = edges.num_rows
    inserted = int(m * share / 2)
    keep = m - inserted  # the tail is inserted as the delta
    with graphdb.connect(str(db)) as con:
        con.execute(f"SET device = '{args.device}'")
        con.ingest("g", edges.slice(0, keep), vertices=pa.table({"id": np.arange(n_vertices)}))
        con.execute("SET compaction_threshold = 0")
        con.insert_edges("g", edges.slice(keep))
        modulus = max(2, int(round(2 / share)))  # deletes about inserted stored edges
        con.execute(f"DELETE FROM g.edges WHERE (src * 7 + dst * 13) % {modulus} = 0")
        changes = con.execute("SELECT inserted_edges, deleted_base_edges, delta_share "
                              "FROM graph_changes('g')").fetchone()
        source = int(edges.column("src")[0].as_py())
        delta = _time_queries(con, source, args.repeat)
        start = time.perf_counter()
        con.execute("CHECKPOINT g")
        seconds = time.perf_counter() - start
        edges_now = con.execute("SELECT edges FROM graphs() WHERE name = 'g'").fetchone()[0]
        compacted = _time_queries(con, source, args.repeat)
    shutil.rmtree(db)
    return {"share": share, "inserted": changes[0], "deleted": changes[1],
            "delta_share": changes[2], "delta": delta, "compacted": compacted,
            "compaction_s": seconds, "compaction_ns_per_edge": seconds * 1e9 / edges_now,
            "edges_after": edges_now}


# -- readers during compaction ------------------------------------------------------------------
def _reader(path: str, n_vertices: int, stop, results) -> None:
    samples, failures = [], []  # (start time, latency)
    rng = np.random.default_rng(5)
    with graphdb.connect(path, read_only=True) as con:
        con.execute("SELECT count(*) FROM neighbors(g, 0)").fetchall()  # warm up
        results.put(("ready", None))
        while not stop.is_set():
            start = time.perf_counter()
            try:
                con.execute("SELECT count(*) FROM neighbors(g, ?)",
                            [int(rng.integers(n_vertices))]).fetchall()
            except Exception as exc:  # a failed query is what is counted
                failures.append(f"{type(exc).__name__}: {exc}")
            samples.append((time.time(), time.perf_counter() - start))
    results.put(("done", (samples, failures)))


def _readers_while(path: str, n_vertices: int, work) -> tuple[list, list]:
    """Run ``work()`` while a reader process queries; its (start time, latency) samples and
    failures."""
    ctx = mp.get_context("spawn")
    stop, results = ctx.Event(), ctx.Queue()
    reader = ctx.Process(target=_reader, args=(path, n_vertices, stop, results))
    reader.start()
    assert results.get(timeout=120)[0] == "ready"
    try:
        work()
    finally:
        stop.set()
        _kind, (samples, failures) = results.get(timeout=120)
        reader.join()
    return samples, failures


def readers_during_compaction(work: Path, edges: pa.Table, n_vertices: int, args) -> dict:
    """A reader process queries while this one inserts 5% of the edges and compacts, rounds
    times. The first round warms the reader up (its first delta merge loads the compiled
    kernels): its samples are reported apart."""
    db = work / "graphdb-readers"
    with graphdb.connect(str(db)) as con:
        con.ingest("g", edges, vertices=pa.table({"id": np.arange(n_vertices)}))
    with graphdb.connect(str(db)) as con:
        con.execute("SET compaction_threshold = 0")
        idle, idle_failed = _readers_while(str(db), n_vertices, lambda: time.sleep(1.0))
        durations, measured_from = [], []

        def compactions():
            for i in range(args.compactions + 1):
                if i == 1:
                    measured_from.append(time.time())
                src, dst = new_edges(n_vertices, edges.num_rows // 20, 10 + i)
                con.insert_edges("g", pa.table({"src": src, "dst": dst,
                                                "weight": np.ones(src.size)}))
                time.sleep(0.2)  # the reader merges the delta
                start = time.perf_counter()
                con.execute("CHECKPOINT g")
                durations.append(time.perf_counter() - start)
                time.sleep(0.2)  # the reader moves to the new base

        samples, failed = _readers_while(str(db), n_vertices, compactions)
    shutil.rmtree(db)
    warm = [lat for t, lat in samples if t < measured_from[0]]
    lat = [lat for t, lat in samples if t >= measured_from[0]]
    return {"queries": len(lat), "failed": len(failed), "failures": failed[:3],
            "max_ms": max(lat) * 1e3, "p50_ms": float(np.median(lat)) * 1e3,
            "warmup_max_ms": max(warm) * 1e3 if warm else None,
            "idle_max_ms": max(t[1] for t in idle) * 1e3, "idle_failed": len(idle_failed),
            "compactions": args.compactions, "compaction_s": durations[1:]}


# -- the report -----------------------------------------------------------------------------------
def _rate(x: float) -> str:
    return f"{x / 1e6:.2f} M/s" if x >= 1e6 else f"{x:,.0f}/s"


def report(results: dict) -> str:
    lines = [f"graph: R-MAT scale {results['scale']} ({results['vertices']:,} vertices, "
             f"{results['edges']:,} edges), device {results['device']}", ""]
    g, k = results["graphdb_inserts"], results.get("kuzu_inserts")
    targets = {"single": 1e3, "transaction": 2e4, "batch": 1e6}
    names = {"single": "single-row autocommit INSERT (edges/s)",
             "transaction": "INSERTs in one transaction (rows/s)",
             "batch": "batched insert from Arrow (edges/s)"}
    lines.append(f"{'inserts':42} {'graphdb':>12} {'kuzu':>12} {'ratio':>7} {'target':>9}")
    for key, title in names.items():
        kz = f"{_rate(k[key]):>12}" if k else f"{'-':>12}"
        ratio = f"{g[key] / k[key]:6.1f}x" if k else f"{'-':>7}"
        lines.append(f"{title:42} {_rate(g[key]):>12} {kz} {ratio} {_rate(targets[key]):>9}")
    if k:
        lines.append(f"  (Kuzu ran {k['counts']['single']} single and "
                     f"{k['counts']['transaction']} transaction rows)")
    lines.append("")
    lines.append(f"{'delta over compacted':26} {'algorithm':10} {'delta s':>9} {'compact s':>10}"
                 f" {'warm':>6} {'first':>6} {'target':>7}")
    for run in results["slowdown"]:
        for name in ALGORITHMS:
            d, c = run["delta"][name], run["compacted"][name]
            target = 1.25 if run["share"] <= 0.01 else 1.5
            lines.append(f"{run['share']:>5.0%} (+{run['inserted']:,} -{run['deleted']:,})"
                         .ljust(26) + f" {name:10} {d['warm']:9.4f} {c['warm']:10.4f} "
                         f"{d['warm'] / c['warm']:5.2f}x {d['first'] / c['first']:5.2f}x "
                         f"{target:6.2f}x")
    for run in results["slowdown"]:
        lines.append(f"CHECKPOINT of a {run['share']:.0%} delta: {run['compaction_s']:.3f} s, "
                     f"{run['compaction_ns_per_edge']:.0f} ns per edge of "
                     f"{run['edges_after']:,} (target 100 ns)")
    r = results.get("readers")
    if r:
        lines.append(f"readers in another process during {r['compactions']} compactions "
                     f"({', '.join(f'{s:.2f}' for s in r['compaction_s'])} s): "
                     f"{r['queries']} queries, {r['failed']} failed, max {r['max_ms']:.1f} ms, "
                     f"median {r['p50_ms']:.2f} ms (no writes: max {r['idle_max_ms']:.1f} ms; "
                     f"the warm-up round before: max {r['warmup_max_ms']:.1f} ms); "
                     "targets 0 failed, < 100 ms")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="scale 16, 2,000 single rows, 10k in a transaction, 1 M batch")
    parser.add_argument("--scale", type=int, default=18)
    parser.add_argument("--single", type=int, default=5000, help="single-row autocommit rows")
    parser.add_argument("--txn-rows", type=int, default=10000)
    parser.add_argument("--batch", type=int, default=2_000_000)
    parser.add_argument("--kuzu-single", type=int, default=2000,
                        help="at most this many single-row inserts for Kuzu (it is slow)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compactions", type=int, default=3)
    parser.add_argument("--device", choices=["cpu", "gpu"], default="cpu",
                        help="where BFS, SSSP and PageRank run")
    parser.add_argument("--skip-kuzu", action="store_true")
    parser.add_argument("--skip-readers", action="store_true")
    parser.add_argument("--workdir", help="scratch directory (default: temporary)")
    parser.add_argument("--out", help="write the results as JSON to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.scale, args.single, args.batch, args.repeat = 16, 2000, 1_000_000, 2
        args.kuzu_single = min(args.kuzu_single, 500)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench_writes_"))
    work.mkdir(parents=True, exist_ok=True)
    edges = base_graph(args.scale)
    n = 1 << args.scale
    results = {"scale": args.scale, "vertices": n, "edges": edges.num_rows,
               "device": args.device, "args": vars(args)}
    try:
        results["graphdb_inserts"] = graphdb_inserts(work, edges, n, args)
        if not args.skip_kuzu:
            results["kuzu_inserts"] = kuzu_inserts(work, edges, n, args)
        warm_up(work, args.device)
        results["slowdown"] = [slowdown(work, edges, n, share, args) for share in (0.01, 0.10)]
        if not args.skip_readers:
            results["readers"] = readers_during_compaction(work, edges, n, args)
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    print(report(results))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
