"""``graphdb warmup``: pay the kernels' one-time costs ahead of the first query.

graphdb's CPU kernels are compiled by numba on first use and kept in the cache directory
(``~/.cache/graphdb``); its GPU kernels are compiled once per GPU architecture and kept there
too. A process's first query of a kind otherwise pays that compile (seconds, once per install)
on top of its own time. Warming runs every graph function, a pattern and a subgraph on a small
generated graph (weighted, directed and undirected) on each device that can run them, then
BFS, PageRank, WCC, SSSP and neighbors again after a write (base and delta read unmerged),
which compiles every kernel those take, and loads the bulk-ingest kernels.

On a host with several GPUs it then calibrates the planner (:func:`graphdb.calibration.calibrate_gpus`:
about a minute, once per GPU model, count and driver), so that it weighs one GPU against
partitioned plans by this machine's own rates; a calibration already kept is reused unless
``recalibrate``. With one GPU or none there is nothing to calibrate.
"""

from __future__ import annotations

import sys
import time

from .connection import connect

__all__ = ["run_warmup", "calibrate", "WARM_QUERIES"]

#: The statements that exercise every graph function (``{s}``: a vertex, ``{t}``: another).
WARM_QUERIES = (
    "SELECT count(*) FROM bfs(g, {s})",
    "SELECT count(*) FROM bfs(u, {s})",
    "SELECT count(*) FROM khop(g, {s}, 2)",
    "SELECT count(*) FROM sssp(g, {s})",
    "SELECT count(*) FROM sssp(u, {s})",
    "SELECT count(*) FROM sswp(g, {s})",
    "SELECT count(*) FROM shortest_path(u, {s}, {t})",
    "SELECT count(*) FROM k_shortest_paths(u, {s}, {t}, 2)",
    "SELECT count(*) FROM pagerank(g)",
    "SELECT count(*) FROM pagerank(u)",
    "SELECT count(*) FROM wcc(g)",
    "SELECT count(*) FROM wcc(u)",
    "SELECT count(*) FROM cdlp(u)",
    "SELECT count(*) FROM cdlp(g)",
    "SELECT count(*) FROM lcc(u)",
    "SELECT count(*) FROM lcc(g)",
    "SELECT count(*) FROM degree(g)",
    "SELECT count(*) FROM neighbors(g, {s}, direction => 'both')",
    "SELECT count(*) FROM bfs(GRAPH g WHERE e.weight > 0.5, {s})",
    "SELECT count(*) FROM GRAPH_TABLE (g MATCH (a)-[e]->{{1,2}}(b) WHERE a.id = {s} "
    "COLUMNS (b.id))",
)

#: A write that leaves a delta (edges added, stored edges deleted), then the functions that
#: read a version unmerged: their kernels over base and delta.
WARM_WRITE = ("SET compaction_threshold = 0",
              "INSERT INTO g.edges VALUES ({s}, {t}, 1.0), ({t}, {s}, 2.0)",
              "DELETE FROM g.edges WHERE (src * 7 + dst * 13) % 50 = 0")
WARM_AFTER_WRITE = ("SELECT count(*) FROM bfs(g, {s})", "SELECT count(*) FROM pagerank(g)",
                    "SELECT count(*) FROM wcc(g)", "SELECT count(*) FROM sssp(g, {s})",
                    "SELECT count(*) FROM neighbors(g, {s}, direction => 'both')")


def run_warmup(device: str = "auto", out=None, *, recalibrate: bool = False) -> int:
    """Compile (or load from the cache) every kernel, then calibrate several GPUs (see the
    module docstring); says what it took. Returns the exit status: 0, or 1 when the
    calibration failed (the kernels are ready all the same)."""
    import pyarrow as pa

    from graphdb.catalog.counting import COUNT_KEYS, SCATTER
    from graphdb.executor.device import gpu_available
    from graphdb.storage.compiled import first_use_seconds
    from graphdb.storage.page_kernel import RECORDS

    from .generators import random_weights, rmat

    out = out or sys.stdout
    started, before = time.perf_counter(), first_use_seconds()
    for kernel in (COUNT_KEYS, SCATTER, RECORDS):
        kernel.load()
    src, dst = rmat(12, 8, seed=7)
    edges = pa.table({"src": src, "dst": dst,
                      "weight": random_weights(len(src), low=1, high=10, seed=7)})
    devices = ["cpu"] if device == "cpu" else ["cpu", "gpu"] if device == "auto" else ["gpu"]
    if "gpu" in devices and not gpu_available():
        devices.remove("gpu")
        if device == "gpu":
            out.write("No GPU can be used here (CuPy and a CUDA device): nothing to warm.\n")
            return 0
    with connect() as con:
        con.ingest("g", edges)
        con.ingest("u", edges, undirected=True)
        s, t = con.execute("SELECT min(src), max(dst) FROM g.edges").fetchone()
        for name in devices:
            con.execute(f"SET device = '{name}'")
            mark = time.perf_counter()
            for sql in WARM_QUERIES:
                con.execute(sql.format(s=s, t=t)).fetchall()
            out.write(f"  {name.upper()} kernels ready in {time.perf_counter() - mark:.1f} s\n")
        for sql in WARM_WRITE:
            con.execute(sql.format(s=s, t=t))
        for name in devices:  # the first query after a write: its own kernels
            con.execute(f"SET device = '{name}'")
            for sql in WARM_AFTER_WRITE:
                con.execute(sql.format(s=s, t=t)).fetchall()
    spent = sum(first_use_seconds()) - sum(before)
    out.write(f"Kernels ready ({spent:.1f} s of compiling and loading, "
              f"{time.perf_counter() - started:.1f} s in all); they are kept in the cache "
              "directory, so later processes load them instead.\n")
    if "gpu" in devices:
        return calibrate(out, recalibrate=recalibrate)
    return 0


def calibrate(out, *, recalibrate: bool = False) -> int:
    """Time this host's GPUs for the planner when it has several (nothing said with one GPU or
    none); a calibration already kept for them is reused unless ``recalibrate``. Returns the
    exit status: 1 when the run failed (the planner then keeps its conservative rates)."""
    from graphdb.executor.device import gpu_count

    gpus = gpu_count()
    if gpus < 2:
        return 0
    from graphdb.executor.physical.calibration import calibration_for, path_of

    from .calibration import calibrate_gpus

    kept = calibration_for("gpu", "nccl")
    if kept is not None and not recalibrate:
        out.write(f"GPU calibration for these {gpus} GPUs already kept ({path_of(kept)}); "
                  "graphdb warmup --recalibrate times them again.\n")
        return 0
    out.write(f"Calibrating the planner on {gpus} GPUs: BFS, SSSP, PageRank and WCC timed on "
              "two synthetic graphs on 1 to all GPUs (about a minute)...\n")
    _flush(out)

    def progress(text: str) -> None:
        for line in text.splitlines():
            out.write(f"  {line}\n")
        _flush(out)

    started = time.perf_counter()
    try:
        written = calibrate_gpus(progress=progress)
    except Exception as exc:  # the kernels are ready; the planner keeps its conservative rates
        out.write(f"GPU calibration failed ({type(exc).__name__}: {exc}); queries still run, "
                  "each on one GPU when it fits one.\n")
        return 1
    if written is None:
        out.write("GPU calibration: no GPU could be used; nothing calibrated.\n")
        return 0
    out.write(f"GPUs calibrated in {time.perf_counter() - started:.0f} s: the planner weighs "
              f"1 against up to {gpus} GPUs by this machine's rates (kept in "
              f"{written['path']}).\n")
    return 0


def _flush(out) -> None:
    flush = getattr(out, "flush", None)
    if flush is not None:
        flush()
