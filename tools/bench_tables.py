"""Stored tables side by side with DuckDB's own tables and Kuzu's node tables, in one run.

    python tools/bench_tables.py --quick        # about a minute on two cores
    python tools/bench_tables.py [--rows 1000000] [--out bench.json]

Every engine writes to an on-disk database (durable when each statement returns):

* ``copy``: COPY of a CSV file of ``--rows`` rows (id BIGINT, name VARCHAR, age INTEGER,
  score DOUBLE) into an empty table with a primary key (Kuzu: a node table); rows per second;
* ``batched``: INSERT ... VALUES of ``--batch`` rows per statement, ``--batches`` statements
  each committing on its own, into a table that already holds ``--rows`` rows; rows per second;
* ``executemany``: one ``executemany`` of ``--batch`` parameter rows (graphdb, DuckDB);
* ``single``: ``--single`` single-row autocommit ``INSERT INTO t VALUES (?, ?, ?)`` (each durable
  when it returns) into ``CREATE TABLE t (id BIGINT PRIMARY KEY, name VARCHAR, v DOUBLE)`` (Kuzu:
  ``CREATE (:T {id: $id, name: $name, v: $v})`` into a node table); statements per second;
* ``lookup``: ``SELECT name FROM person WHERE id = ?`` by primary key in the ``--rows``-row
  table, ``--lookups`` random keys, median milliseconds (Kuzu: ``MATCH (p:Person {id: 42})
  RETURN p.name``, the key written into the query: with a parameter it scans).

Printed as ratios: graphdb's time over each peer's (the targets: COPY and batched INSERTs
within 1.5x DuckDB, single-row INSERTs at least 1,000 per second and 1.5x Kuzu, a point lookup
at most 1 ms).
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
import pyarrow.csv as pacsv

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import graphdb  # noqa: E402

DDL = "CREATE TABLE person (id BIGINT PRIMARY KEY, name VARCHAR, age INTEGER, score DOUBLE)"
LOOKUP = "SELECT name FROM person WHERE id = ?"
SINGLE_DDL = "CREATE TABLE t (id BIGINT PRIMARY KEY, name VARCHAR, v DOUBLE)"
SINGLE = "INSERT INTO t VALUES (?, ?, ?)"


def single_rows(execute, n: int) -> float:
    """Statements per second of ``n`` single-row INSERTs through ``execute(i)`` (the first
    ten, a warm-up, not timed)."""
    for i in range(10):
        execute(i)
    start = time.perf_counter()
    for i in range(10, 10 + n):
        execute(i)
    return n / (time.perf_counter() - start)


def rows(n: int, start: int = 0) -> pa.Table:
    ids = np.arange(start, start + n, dtype=np.int64) * 3
    return pa.table({"id": ids, "name": pa.array([f"name{i}" for i in range(start, start + n)]),
                     "age": (ids % 90).astype(np.int32), "score": (ids % 1000) / 7.0})


def values_statement(table: pa.Table) -> str:
    parts = [f"({i}, '{n}', {a}, {s!r})" for i, n, a, s in zip(
        table.column("id").to_pylist(), table.column("name").to_pylist(),
        table.column("age").to_pylist(), table.column("score").to_pylist())]
    return "INSERT INTO person VALUES " + ", ".join(parts)


def lookup_keys(args) -> list[int]:
    rng = np.random.default_rng(1)
    return (rng.integers(0, args.rows, args.lookups) * 3).tolist()


def time_lookups(run, keys: list[int]) -> float:
    for key in keys[:20]:
        run(key)
    times = []
    for key in keys:
        start = time.perf_counter()
        run(key)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def _same_statements(con, csv: Path, batches: list[str], many: list[tuple], args) -> dict:
    """The statements graphdb and DuckDB both run (their SQL and DB-API are the same), timed:
    COPY, batched INSERTs, executemany, key lookups, single-row INSERTs."""
    out = {}
    con.execute(DDL)
    start = time.perf_counter()
    con.execute(f"COPY person FROM '{csv}' (HEADER)")
    out["copy"] = args.rows / (time.perf_counter() - start)
    start = time.perf_counter()
    for statement in batches:
        con.execute(statement)
    out["batched"] = args.batch * len(batches) / (time.perf_counter() - start)
    start = time.perf_counter()
    con.executemany("INSERT INTO person VALUES (?, ?, ?, ?)", many)
    out["executemany"] = len(many) / (time.perf_counter() - start)
    expected = args.rows + args.batch * len(batches) + len(many)
    assert con.execute("SELECT count(*) FROM person").fetchone() == (expected,)
    out["lookup_ms"] = time_lookups(lambda k: con.execute(LOOKUP, [k]).fetchall(),
                                    lookup_keys(args))
    assert con.execute(LOOKUP, [3]).fetchall() == [("name1",)]
    con.execute(SINGLE_DDL)
    out["single"] = single_rows(lambda i: con.execute(SINGLE, [i, f"n{i}", i / 2]),
                                args.single)
    assert con.execute("SELECT count(*) FROM t").fetchone() == (args.single + 10,)
    return out


def bench_graphdb(work: Path, csv: Path, batches: list[str], many: list[tuple], args) -> dict:
    with graphdb.connect(str(work / "graphdb")) as con:
        return _same_statements(con, csv, batches, many, args)


def bench_duckdb(work: Path, csv: Path, batches: list[str], many: list[tuple], args) -> dict:
    import duckdb

    con = duckdb.connect(str(work / "duck.db"))
    try:
        return _same_statements(con, csv, batches, many, args)
    finally:
        con.close()


def bench_kuzu(work: Path, csv: Path, args) -> dict:
    import kuzu

    db = kuzu.Database(str(work / "kuzu"))
    con = kuzu.Connection(db)
    con.execute("CREATE NODE TABLE Person(id INT64, name STRING, age INT32, score DOUBLE, "
                "PRIMARY KEY (id))")
    out = {}
    start = time.perf_counter()
    con.execute(f"COPY Person FROM '{csv}' (HEADER=true)")
    out["copy"] = args.rows / (time.perf_counter() - start)
    # the key as a literal: with a parameter ($id) Kuzu 0.11 scans the table (~40 ms at
    # 200 k rows) instead of using its primary-key index
    out["lookup_ms"] = time_lookups(
        lambda k: con.execute(f"MATCH (p:Person {{id: {int(k)}}}) RETURN p.name").get_all(),
        lookup_keys(args))
    con.execute("CREATE NODE TABLE T(id INT64, name STRING, v DOUBLE, PRIMARY KEY (id))")
    out["single"] = single_rows(lambda i: con.execute(
        "CREATE (:T {id: $id, name: $name, v: $v})", {"id": i, "name": f"n{i}", "v": i / 2}),
        args.single)
    con.close()
    db.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--batches", type=int, default=50)
    parser.add_argument("--lookups", type=int, default=500)
    parser.add_argument("--single", type=int, default=2000,
                        help="single-row autocommit INSERTs")
    parser.add_argument("--quick", action="store_true", help="fewer rows and statements")
    parser.add_argument("--skip-kuzu", action="store_true")
    parser.add_argument("--out", help="write the figures as JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.batches, args.lookups, args.single = 20, 300, 500
    work = Path(tempfile.mkdtemp(prefix="bench-tables-"))
    try:
        csv = work / "person.csv"
        pacsv.write_csv(rows(args.rows), csv)
        batches = [values_statement(rows(args.batch, args.rows + i * args.batch))
                   for i in range(args.batches)]
        extra = rows(args.batch, args.rows + args.batches * args.batch)
        many = list(zip(*(extra.column(c).to_pylist() for c in extra.column_names)))
        results = {"graphdb": bench_graphdb(work, csv, batches, many, args),
                   "duckdb": bench_duckdb(work, csv, batches, many, args)}
        if not args.skip_kuzu:
            results["kuzu"] = bench_kuzu(work, csv, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{args.rows:,} rows; {args.batches} INSERTs of {args.batch} rows; "
          f"{args.single} single-row INSERTs; {args.lookups} lookups")
    print(f"{'':14}{'graphdb':>12}" + "".join(f"{p:>12}" for p in results if p != "graphdb")
          + "   graphdb time / peer's")
    mine = results["graphdb"]
    for key, unit in (("copy", "rows/s"), ("batched", "rows/s"), ("executemany", "rows/s"),
                      ("single", "statements/s"), ("lookup_ms", "ms")):
        line = f"{key:<14}{mine[key]:>12,.1f}"
        ratios = []
        for peer, figures in results.items():
            if peer == "graphdb":
                continue
            value = figures.get(key)
            line += f"{value:>12,.1f}" if value is not None else f"{'-':>12}"
            if value:
                ratio = mine[key] / value if unit == "ms" else value / mine[key]
                ratios.append(f"{ratio:.2f}x {peer}")
        print(f"{line}   {', '.join(ratios)}  ({unit})")
    if args.out:
        Path(args.out).write_text(json.dumps({"args": vars(args), "results": results},
                                             indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
