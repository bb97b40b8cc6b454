"""``graphdb warmup``: pay the kernels' one-time costs ahead of the first query.

graphdb's CPU kernels are compiled by numba on first use and kept in the cache directory
(``~/.cache/graphdb``); its GPU kernels are compiled once per GPU architecture and kept there
too. A process's first query of a kind otherwise pays that compile (seconds, once per install)
on top of its own time. Warming runs every graph function, a pattern and a subgraph on a small
generated graph (weighted, directed and undirected) on each device that can run them, which
compiles every kernel those take, and loads the bulk-ingest kernels.
"""

from __future__ import annotations

import sys
import time

from .connection import connect

__all__ = ["run_warmup", "WARM_QUERIES"]

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


def run_warmup(device: str = "auto", out=None) -> int:
    """Compile (or load from the cache) every kernel; says what it took. Returns 0."""
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
    spent = sum(first_use_seconds()) - sum(before)
    out.write(f"Kernels ready ({spent:.1f} s of compiling and loading, "
              f"{time.perf_counter() - started:.1f} s in all); they are kept in the cache "
              "directory, so later processes load them instead.\n")
    return 0
