"""Start-up of a fresh process, side by side: ``import graphdb`` + ``connect()`` + a first
statement, beside DuckDB's own (``import duckdb`` + ``connect()`` + the same statement) and the
floor graphdb cannot go below (importing pyarrow, DuckDB and sqlglot's DuckDB dialect, and
DuckDB answering). Each snippet runs in a fresh interpreter, interleaved, best of ``--runs``;
CPU seconds (user + system) are printed beside wall seconds because a loaded machine inflates
wall time most. Bytecode is compiled first, as an install leaves it.

    python tools/bench_startup.py [--runs 7] [--db DB --query "SELECT count(*) FROM bfs(g, 0)"]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SNIPPETS = {
    "graphdb": "import graphdb; con = graphdb.connect({db}); con.execute({query!r}).fetchall()",
    "duckdb": "import duckdb; con = duckdb.connect(); con.execute({query!r}).fetchall()",
    "floor": "import pyarrow, duckdb, sqlglot.dialects.duckdb; "
             "duckdb.connect().execute({query!r}).fetchall()",
}


def _run(code: str, env: dict) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True,
                          text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime), wall


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--db", help="a database for graphdb's statement (default: in memory)")
    ap.add_argument("--query", default="SELECT 1")
    args = ap.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", "graphdb", "storage", "catalog",
                    "executor"], cwd=ROOT, env=env, capture_output=True)
    snippets = {"graphdb": SNIPPETS["graphdb"].format(db=repr(args.db) if args.db else "",
                                                      query=args.query)}
    if args.db is None:  # DuckDB answers SELECT-style statements without a graph
        snippets.update({k: SNIPPETS[k].format(query=args.query) for k in ("duckdb", "floor")})
    best = {k: [float("inf"), float("inf")] for k in snippets}
    for _ in range(args.runs):
        for name, code in snippets.items():
            cpu, wall = _run(code, env)
            best[name] = [min(best[name][0], cpu), min(best[name][1], wall)]
    print(f"fresh process, {args.query!r}, best of {args.runs} "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    base = best.get("duckdb")
    for name, (cpu, wall) in best.items():
        ratio = f"  {cpu / base[0]:.2f}x DuckDB's CPU" if base and name != "duckdb" else ""
        print(f"  {name:8} cpu {cpu * 1000:7.0f} ms   wall {wall * 1000:7.0f} ms{ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
