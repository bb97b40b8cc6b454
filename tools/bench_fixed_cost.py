"""A statement's fixed cost, parse to first row, beside DuckDB's and Kuzu's in one run.

    python tools/bench_fixed_cost.py [--runs 2000] [--out FILE]

Statements that do almost no work, each run ``--runs`` times through the Python API
(``execute(...).fetchall()``), reported as the median and the 10th percentile in ms:

- graphdb with its plan kept (the same text and parameters again: the statement cache) and
  planned anew (a comment that changes each run, so neither the parse nor the plan is reused);
- the same question to DuckDB (its Python API) and Kuzu, where they can ask it.

Target (issue 31): at most 0.3 ms for a plan already seen. On a loaded machine medians drift;
compare the ratios of one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import graphdb  # noqa: E402

#: (name, graphdb SQL, parameters, DuckDB SQL, Kuzu Cypher) of each statement
STATEMENTS = [
    ("constant", "SELECT 1", None, "SELECT 1", "RETURN 1"),
    ("parameter", "SELECT ? + 1", [41], "SELECT ? + 1", None),
    ("bfs count", "SELECT count(*) FROM bfs(g, 1)", None, None, None),
    ("neighbours by pattern",
     "SELECT b FROM GRAPH_TABLE (g MATCH (a WHERE a.id = ?)-[]->(b) COLUMNS (b.id AS b))",
     [1], "SELECT dst FROM e WHERE src = ?",
     "MATCH (a:V)-[:E]->(b:V) WHERE a.id = 1 RETURN b.id"),
    ("vertex by key", "SELECT id FROM g.vertices WHERE id = ?", [3],
     "SELECT id FROM v WHERE id = ?", "MATCH (a:V) WHERE a.id = 3 RETURN a.id"),
    ("registered table by key", "SELECT x FROM t WHERE id = ?", [7],
     "SELECT x FROM t WHERE id = ?", "MATCH (a:V) WHERE a.id = 7 RETURN a.id"),
]


def _times(run, runs: int) -> dict:
    run()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return {"median_ms": statistics.median(samples), "p10_ms": samples[len(samples) // 10]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    import duckdb

    edges = pa.table({"src": [1, 2, 3, 3, 4], "dst": [2, 3, 1, 4, 1]})
    table = pa.table({"id": list(range(1000)), "x": [i * 3 for i in range(1000)]})
    rows = []
    with tempfile.TemporaryDirectory(prefix="graphdb-fixed-") as tmp:
        con = graphdb.connect(Path(tmp) / "db")
        con.ingest("g", edges)
        con.register("t", table)
        duck = duckdb.connect()
        duck.register("e", edges)
        duck.register("t", table)
        duck.register("v", pa.table({"id": [1, 2, 3, 4]}))
        kcon = None
        try:
            import kuzu

            kdb = kuzu.Database(str(Path(tmp) / "kuzu"))
            kcon = kuzu.Connection(kdb)
            kcon.execute("CREATE NODE TABLE V(id INT64, PRIMARY KEY(id))")
            kcon.execute("CREATE REL TABLE E(FROM V TO V)")
            for v in range(1, 5):
                kcon.execute(f"CREATE (:V {{id: {v}}})")
            for s, d in zip(edges["src"].to_pylist(), edges["dst"].to_pylist()):
                kcon.execute(f"MATCH (a:V), (b:V) WHERE a.id = {s} AND b.id = {d} "
                             "CREATE (a)-[:E]->(b)")
        except ImportError:
            pass
        fresh = iter(range(10**9))
        for name, sql, params, dsql, cypher in STATEMENTS:
            row = {"statement": name, "sql": sql}
            row["kept"] = _times(lambda: con.execute(sql, params).fetchall(), args.runs)
            row["planned"] = _times(
                lambda: con.execute(f"{sql} -- {next(fresh)}", params).fetchall(),
                max(args.runs // 4, 1))
            if dsql is not None:
                row["duckdb"] = _times(lambda: duck.execute(dsql, params).fetchall(), args.runs)
            if cypher is not None and kcon is not None:
                def kuzu_run():
                    result = kcon.execute(cypher)
                    while result.has_next():
                        result.get_next()

                row["kuzu"] = _times(kuzu_run, args.runs)
            rows.append(row)
        con.close()
    print("| statement | plan kept ms (median / p10) | planned anew ms | DuckDB ms | Kuzu ms |")
    print("|---|---:|---:|---:|---:|")
    for row in rows:
        def cell(key):
            found = row.get(key)
            return f"{found['median_ms']:.3f} / {found['p10_ms']:.3f}" if found else "-"

        print(f"| {row['statement']} | {cell('kept')} | {cell('planned')} | {cell('duckdb')} | "
              f"{cell('kuzu')} |")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
