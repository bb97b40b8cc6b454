"""Writes after load (issues 19, 29), side by side with Kuzu in one run.

    python tools/bench_writes.py --quick            # a few minutes on two cores
    python tools/bench_writes.py [--scale 18] [--writers 4] [--out bench.json]

Both engines write to an on-disk database that holds an R-MAT graph (graphdb.generators.rmat,
``2**scale`` vertices, 16 edges each); every write is durable when its commit returns (graphdb:
``synchronous = 'full'``, the default: storage.durability; Kuzu: its WAL, synced per commit),
except graphdb's 'normal' row. The inserted edges join vertices that exist (Kuzu's CREATE
needs them; graphdb would add missing ones).

* single-row autocommit INSERTs of an edge, one statement each, with parameters (graphdb:
  ``INSERT INTO g.edges VALUES (?, ?, ?)``; Kuzu: a prepared ``MATCH (a), (b) ... CREATE``):
  one writer ('full', and graphdb 'normal'), then ``--writers`` writer threads of one process,
  each on its own connection, and (graphdb) ``--writers`` writer processes: concurrent writers
  share syncs (group commit). Kuzu allows one write transaction at a time: its threads retry
  when refused. Targets: 1,000/s and 1.5x Kuzu.
* ``--txn-rows`` single-row INSERTs inside one transaction (BEGIN ... COMMIT), the same;
* a batch of ``--batch`` edges from Arrow (graphdb: ``con.insert_edges(g, table)``; Kuzu:
  ``COPY E FROM`` the same data as a DataFrame) into the loaded graph.
  Targets: 20,000/s and 1 M/s, each at least 3x Kuzu.
* readers in another process (``SELECT count(*) FROM neighbors(g, ?)`` in a loop, a fresh
  statement snapshot each) while this process inserts 5% of the edges and compacts, in rounds:
  failed queries and the longest query, beside the longest with no writes and in a first
  warm-up round; targets 0 and < 100 ms.

Reads after a write (BFS, PageRank and WCC over a delta, against the graph compacted) are
tools/bench_reads_after_writes.py.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import graphdb  # noqa: E402
from graphdb.generators import rmat  # noqa: E402


def base_graph(scale: int, seed: int = 0) -> pa.Table:
    src, dst = rmat(scale, seed=seed)
    weight = (np.arange(src.size) % 97 + 1).astype(np.float64)
    return pa.table({"src": src, "dst": dst, "weight": weight})


def new_edges(n_vertices: int, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, n_vertices, count), rng.integers(0, n_vertices, count)


# -- inserts --------------------------------------------------------------------------------------
SQL = "INSERT INTO g.edges VALUES (?, ?, ?)"


def _single_rows(path: str, rows: list, synchronous: str, start=None) -> float:
    """Seconds for ``rows`` single-row autocommit INSERTs on a connection of its own (after
    ``start``, a barrier, when given)."""
    with graphdb.connect(path) as con:
        con.execute("SET compaction_threshold = 0")  # the inserts alone are timed
        con.execute(f"SET synchronous = '{synchronous}'")
        con.execute(SQL, [0, 1, 1.0])  # the statement's first run is not a steady one
        if start is not None:
            start.wait()
        begin = time.perf_counter()
        for s, d in rows:
            con.execute(SQL, [s, d, 1.0])
        return time.perf_counter() - begin


def _writer_process(path: str, rows: list, start, results) -> None:
    results.put(_single_rows(path, rows, "full", start))


def _concurrent(path: str, rows: list, writers: int, processes: bool) -> float:
    """Rows per second of ``writers`` writers (threads of this process or processes) each
    inserting its share, started together; their slowest one's time."""
    shares = [rows[k::writers] for k in range(writers)]
    if processes:
        ctx = mp.get_context("spawn")
        start, results = ctx.Barrier(writers), ctx.Queue()
        workers = [ctx.Process(target=_writer_process, args=(path, share, start, results))
                   for share in shares]
        for w in workers:
            w.start()
        times = [results.get(timeout=3600) for _ in workers]
        for w in workers:
            w.join()
    else:
        start, times = threading.Barrier(writers), []
        threads = [threading.Thread(target=lambda share=share: times.append(
            _single_rows(path, share, "full", start))) for share in shares]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return len(rows) / max(times)


def graphdb_inserts(work: Path, edges: pa.Table, n_vertices: int, args) -> dict:
    db = work / "graphdb-inserts"
    out = {}
    with graphdb.connect(str(db)) as con:
        con.ingest("g", edges, vertices=pa.table({"id": np.arange(n_vertices)}))
    path = str(db)
    for i, (key, level) in enumerate((("single", "full"), ("single_normal", "normal"))):
        src, dst = new_edges(n_vertices, args.single, 1 + i)
        out[key] = args.single / _single_rows(path, list(zip(src.tolist(), dst.tolist())), level)
    for i, key in enumerate(("threads", "processes")):
        src, dst = new_edges(n_vertices, args.single, 3 + i)
        out[key] = _concurrent(path, list(zip(src.tolist(), dst.tolist())), args.writers,
                               key == "processes")
    with graphdb.connect(path) as con:
        con.execute("SET compaction_threshold = 0")
        src, dst = new_edges(n_vertices, args.txn_rows, 5)
        start = time.perf_counter()
        con.execute("BEGIN")
        for s, d in zip(src.tolist(), dst.tolist()):
            con.execute(SQL, [s, d, 1.0])
        con.execute("COMMIT")
        out["transaction"] = args.txn_rows / (time.perf_counter() - start)
        src, dst = new_edges(n_vertices, args.batch, 6)
        batch = pa.table({"src": src, "dst": dst, "weight": np.ones(args.batch)})
        start = time.perf_counter()
        con.insert_edges("g", batch)
        out["batch"] = args.batch / (time.perf_counter() - start)
        expected = edges.num_rows + 4 * args.single + 2 + 2 * args.writers + args.txn_rows \
            + args.batch
        assert con.execute("SELECT count(*) FROM g.edges").fetchone() == (expected,)
    shutil.rmtree(db)
    return out


KUZU_INSERT = ("MATCH (a:V), (b:V) WHERE a.id = $s AND b.id = $d "
               "CREATE (a)-[:E {weight: 1.0}]->(b)")


def _kuzu_rows(db, rows: list, start=None) -> float:
    """Kuzu's single-row inserts on a connection of its own; a write refused because another
    connection's is running is tried again."""
    import kuzu

    con = kuzu.Connection(db)
    insert = con.prepare(KUZU_INSERT)
    if start is not None:
        start.wait()
    begin = time.perf_counter()
    for s, d in rows:
        while True:
            try:
                con.execute(insert, {"s": s, "d": d})
                break
            except RuntimeError as exc:
                if "one write transaction" not in str(exc):
                    raise
                time.sleep(0.0001)
    seconds = time.perf_counter() - begin
    con.close()
    return seconds


def kuzu_inserts(work: Path, edges: pa.Table, n_vertices: int, args) -> dict:
    import kuzu
    import pandas as pd

    db = kuzu.Database(str(work / "kuzu"), buffer_pool_size=1 << 30)
    con = kuzu.Connection(db)
    con.execute("CREATE NODE TABLE V(id INT64, PRIMARY KEY(id))")
    con.execute("CREATE REL TABLE E(FROM V TO V, weight DOUBLE)")
    vertex_frame = pd.DataFrame({"id": np.arange(n_vertices)})  # noqa: F841 (Kuzu reads it)
    con.execute("COPY V FROM vertex_frame")
    edge_frame = edges.to_pandas()  # noqa: F841
    con.execute("COPY E FROM edge_frame")
    insert = con.prepare(KUZU_INSERT)
    out = {}
    single = min(args.single, args.kuzu_single)
    src, dst = new_edges(n_vertices, single, 1)
    out["single"] = single / _kuzu_rows(db, list(zip(src.tolist(), dst.tolist())))
    src, dst = new_edges(n_vertices, single, 3)
    rows = list(zip(src.tolist(), dst.tolist()))
    start, times = threading.Barrier(args.writers), []
    threads = [threading.Thread(target=lambda share=rows[k::args.writers]: times.append(
        _kuzu_rows(db, share, start))) for k in range(args.writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out["threads"] = single / max(times)
    rows = min(args.txn_rows, args.kuzu_single)
    src, dst = new_edges(n_vertices, rows, 5)
    start = time.perf_counter()
    con.execute("BEGIN TRANSACTION")
    for s, d in zip(src.tolist(), dst.tolist()):
        con.execute(insert, {"s": s, "d": d})
    con.execute("COMMIT")
    out["transaction"] = rows / (time.perf_counter() - start)
    src, dst = new_edges(n_vertices, args.batch, 6)
    batch_frame = pd.DataFrame({"from": src, "to": dst, "weight": np.ones(args.batch)})  # noqa
    start = time.perf_counter()
    con.execute("COPY E FROM batch_frame")
    out["batch"] = args.batch / (time.perf_counter() - start)
    expected = edges.num_rows + 2 * single + rows + args.batch
    got = con.execute("MATCH ()-[e:E]->() RETURN count(e)").get_next()[0]
    assert got == expected, (got, expected)
    out["counts"] = {"single": single, "transaction": rows}
    con.close()
    db.close()
    return out


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
             f"{results['edges']:,} edges); {results['writers']} concurrent writers", ""]
    g, k = results["graphdb_inserts"], results.get("kuzu_inserts") or {}
    rows = [("single", "single", "single-row autocommit INSERT, 1 writer", 1e3),
            ("single_normal", "single", "  the same, synchronous = 'normal'", 1e3),
            ("threads", "threads", "  writers: threads of one process", 1e3),
            ("processes", "threads", "  writers: processes (Kuzu: threads)", 1e3),
            ("transaction", "transaction", "INSERTs in one transaction (rows/s)", 2e4),
            ("batch", "batch", "batched insert from Arrow (edges/s)", 1e6)]
    lines.append(f"{'inserts':42} {'graphdb':>12} {'kuzu':>12} {'ratio':>7} {'target':>9}")
    for key, kuzu_key, title, target in rows:
        theirs = k.get(kuzu_key)
        kz = f"{_rate(theirs):>12}" if theirs else f"{'-':>12}"
        ratio = f"{g[key] / theirs:6.1f}x" if theirs else f"{'-':>7}"
        lines.append(f"{title:42} {_rate(g[key]):>12} {kz} {ratio} {_rate(target):>9}")
    if k:
        lines.append(f"  (Kuzu ran {k['counts']['single']} single and "
                     f"{k['counts']['transaction']} transaction rows; its concurrent writers "
                     "take turns: one write transaction at a time)")
    r = results.get("readers")
    if r:
        lines.append("")
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
                        help="scale 16, 1,000 single rows, 10k in a transaction, 1 M batch")
    parser.add_argument("--scale", type=int, default=18)
    parser.add_argument("--single", type=int, default=4000,
                        help="single-row autocommit rows (each of the four ways)")
    parser.add_argument("--writers", type=int, default=4,
                        help="concurrent writers (threads, processes)")
    parser.add_argument("--txn-rows", type=int, default=10000)
    parser.add_argument("--batch", type=int, default=2_000_000)
    parser.add_argument("--kuzu-single", type=int, default=2000,
                        help="at most this many single-row inserts for Kuzu (it is slow)")
    parser.add_argument("--compactions", type=int, default=3)
    parser.add_argument("--skip-kuzu", action="store_true")
    parser.add_argument("--skip-readers", action="store_true")
    parser.add_argument("--workdir", help="scratch directory (default: temporary)")
    parser.add_argument("--out", help="write the results as JSON to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.scale, args.single, args.batch = 16, 1000, 1_000_000
        args.kuzu_single = min(args.kuzu_single, 500)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench_writes_"))
    work.mkdir(parents=True, exist_ok=True)
    edges = base_graph(args.scale)
    n = 1 << args.scale
    results = {"scale": args.scale, "vertices": n, "edges": edges.num_rows,
               "writers": args.writers, "args": vars(args)}
    try:
        results["graphdb_inserts"] = graphdb_inserts(work, edges, n, args)
        if not args.skip_kuzu:
            results["kuzu_inserts"] = kuzu_inserts(work, edges, n, args)
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
