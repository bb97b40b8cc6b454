"""The relational part of graphdb's queries against DuckDB running the same SQL on the same Arrow.

    python tools/bench_sql.py [--scale 16] [--edge-factor 16] [--rounds 7] [--out FILE]

A generated social network: ``2**scale`` persons (id, name, city, birthday, joined) and
``edge_factor * 2**scale`` friendships (R-MAT, undirected, each with the date it began and a
strength), loaded with ``graphdb ingest``. DuckDB (the ``duckdb`` module, its own connection)
then registers the very Arrow tables graphdb exposes, ``g.vertices``, ``g.edges`` (each
friendship once) and ``g.adjacency`` (both directions), and both engines answer the same SQL,
only the table names differing: point lookups, one- and two-hop joins, group-by aggregates,
windows, date filters. graphdb's time is end to end through its Python API (parse, bind, plan,
run, Arrow result); DuckDB's is ``con.sql(query).to_arrow_table()``. Rounds interleave the two
engines (a busy machine slows both alike); each figure is the median over rounds and sources.
Answers are compared before any time is reported.

Also reported: parse + bind + plan of a table-function query (``con.plan``), and a self-join of
``g.edges`` filtered on one source in a fresh process: its time and how much the process's
resident memory grew.

Target (issue 16): every query within 1.3x of DuckDB (ratio = graphdb / DuckDB).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import graphdb  # noqa: E402
from graphdb.generators import rmat  # noqa: E402

CITIES = 200

#: name -> SQL over {v} (persons), {e} (friendships, once each), {a} (both directions); ``?`` is
#: a person id
QUERIES = {
    "point lookup": "SELECT * FROM {v} WHERE id = ?",
    "edges of a vertex": "SELECT dst, since FROM {e} WHERE src = ?",
    "1-hop: friends' names": "SELECT p.name, p.city FROM {a} a JOIN {v} p ON p.id = a.dst "
                             "WHERE a.src = ?",
    "2-hop: distinct friends of friends": "SELECT count(DISTINCT b.dst) FROM {a} a JOIN {a} b "
                                          "ON a.dst = b.src WHERE a.src = ?",
    "2-hop, dated, with names": "SELECT DISTINCT p.name FROM {a} a JOIN {a} b ON a.dst = b.src "
                                "JOIN {v} p ON p.id = b.dst WHERE a.src = ? "
                                "AND b.since >= DATE '2015-01-01'",
    "group by city": "SELECT city, count(*), avg(year(birthday)) FROM {v} GROUP BY city "
                     "ORDER BY 2 DESC, 1 LIMIT 10",
    "group by year of friendship": "SELECT year(since) AS y, count(*), avg(strength) FROM {e} "
                                   "GROUP BY y ORDER BY y",
    "top degrees": "SELECT src, count(*) AS degree FROM {a} GROUP BY src "
                   "ORDER BY degree DESC, src LIMIT 10",
    "join + group: recent friendships by city": "SELECT p.city, count(*) FROM {e} e JOIN {v} p "
                                                "ON p.id = e.src WHERE e.since >= "
                                                "DATE '2020-01-01' GROUP BY p.city "
                                                "ORDER BY 2 DESC, 1 LIMIT 5",
    "window: eldest per city": "SELECT id, city, birthday FROM (SELECT id, city, birthday, "
                               "row_number() OVER (PARTITION BY city ORDER BY birthday, id) AS r "
                               "FROM {v}) WHERE r = 1 ORDER BY city",
    "window: newest friendship per person": "SELECT src, dst, since FROM {e} QUALIFY "
                                            "row_number() OVER (PARTITION BY src ORDER BY since "
                                            "DESC, dst) = 1 ORDER BY src LIMIT 100",
    "window: running count by day": "SELECT since, count(*) AS n, sum(count(*)) OVER (ORDER BY "
                                    "since) AS total FROM {e} WHERE since >= DATE '2023-01-01' "
                                    "GROUP BY since ORDER BY since",
    "date range count": "SELECT count(*) FROM {e} WHERE since BETWEEN DATE '2018-01-01' "
                        "AND DATE '2018-12-31'",
}

PLANNING = "SELECT vertex, depth FROM bfs(g, ?) WHERE depth <= 2"

SELF_JOIN = ("SELECT count(*) FROM g.edges e1 JOIN g.edges e2 ON e1.dst = e2.src "
             "WHERE e1.src = {v}")

MEMORY_CHILD = """
import sys, time
sys.path.insert(0, sys.argv[3])
import graphdb


def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key))


con = graphdb.connect(sys.argv[1], read_only=True)
con.execute("SELECT 1").fetchall()  # DuckDB started
before = status("VmRSS:")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # the peak restarts from now
start = time.perf_counter()
answer = con.execute(sys.argv[2]).fetchone()[0]
seconds = time.perf_counter() - start
print(answer, seconds, status("VmHWM:") - before)
"""


def generate(tmp: Path, scale: int, edge_factor: int, seed: int = 7) -> tuple[Path, Path]:
    """Persons and friendships as Parquet files."""
    rng = np.random.default_rng(seed)
    n = 1 << scale
    src, dst = rmat(scale, edge_factor, seed=seed)
    keep = src != dst
    src, dst = src[keep].astype(np.int64), dst[keep].astype(np.int64)
    days = rng.integers(0, 25 * 365, len(src))  # friendships since 2000
    since = pa.array(np.datetime64("2000-01-01") + days.astype("timedelta64[D]"))
    pq.write_table(pa.table({"src": src, "dst": dst, "since": since,
                             "strength": rng.integers(1, 10, len(src))}), tmp / "friends.parquet")
    born = np.datetime64("1950-01-01") + rng.integers(0, 55 * 365, n).astype("timedelta64[D]")
    joined = np.datetime64("2005-01-01T00:00:00") + rng.integers(
        0, 19 * 365 * 86400, n).astype("timedelta64[s]")
    pq.write_table(pa.table({
        "id": np.arange(n, dtype=np.int64),
        "name": pa.array([f"person{i}" for i in range(n)]),
        "city": pa.array([f"city{c}" for c in rng.integers(0, CITIES, n)]),
        "birthday": pa.array(born), "joined": pa.array(joined),
    }), tmp / "persons.parquet")
    return tmp / "friends.parquet", tmp / "persons.parquet"


def _rows(table: pa.Table) -> list:
    rows = table.to_pylist()
    return sorted((tuple(round(v, 6) if isinstance(v, float) else v for v in r.values())
                   for r in rows), key=repr)


def _timed(run) -> tuple[float, object]:
    start = time.perf_counter()
    out = run()
    return (time.perf_counter() - start) * 1000, out


def bench_queries(con, duck, sources: list[int], rounds: int) -> list[dict]:
    results = []
    for name, sql in QUERIES.items():
        ours_sql = sql.format(v="g.vertices", e="g.edges", a="g.adjacency")
        theirs_sql = sql.format(v="vertices", e="edges", a="adjacency")
        # as many timings of a query without a source as of one with (a busy machine's
        # spikes then weigh alike)
        points = sources if "?" in sql else [None] * len(sources)

        def ours(v):
            return con.execute(ours_sql, [v] if v is not None else None).arrow()

        def theirs(v):
            text = theirs_sql.replace("?", str(v)) if v is not None else theirs_sql
            return duck.sql(text).to_arrow_table()

        for v in dict.fromkeys(points):  # warm both, and check the answers agree
            a, b = ours(v), theirs(v)
            if _rows(a) != _rows(b):
                raise SystemExit(f"answers differ for {name!r} (source {v})")
        times: dict[str, list[float]] = {"graphdb": [], "duckdb": []}
        for _ in range(rounds):
            for v in points:
                for engine, run in (("graphdb", ours), ("duckdb", theirs)):
                    times[engine].append(_timed(lambda: run(v))[0])
        g, d = statistics.median(times["graphdb"]), statistics.median(times["duckdb"])
        results.append({"query": name, "graphdb_ms": g, "duckdb_ms": d, "ratio": g / d,
                        "met": g / d <= 1.3})
    return results


def bench_planning(con, source: int) -> float:
    con.plan(PLANNING, [source])
    times = []
    for _ in range(500):
        times.append(_timed(lambda: con.plan(PLANNING, [source]))[0])
    return statistics.median(times)


def self_join(db: Path, source: int) -> dict:
    sql = SELF_JOIN.format(v=source)
    out = subprocess.run([sys.executable, "-c", MEMORY_CHILD, str(db), sql, str(ROOT)],
                         capture_output=True, text=True, check=True).stdout.split()
    return {"answer": int(out[0]), "ms": float(out[1]) * 1000, "rss_growth_bytes": int(out[2])}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=16)
    parser.add_argument("--edge-factor", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", help="write the results as JSON to this file")
    args = parser.parse_args(argv)

    import duckdb

    with tempfile.TemporaryDirectory(prefix="graphdb-bench-sql-") as tmp_name:
        tmp = Path(tmp_name)
        friends, persons = generate(tmp, args.scale, args.edge_factor)
        db = tmp / "db"
        with graphdb.connect(db) as con:
            start = time.perf_counter()
            con.ingest("g", friends, vertices=str(persons), undirected=True)
            load_s = time.perf_counter() - start
            entry = con.catalog.get("g")
            print(f"social network: {entry.num_vertices:,} persons, {entry.input_edges:,} "
                  f"friendships ({entry.num_edges:,} stored both ways); graphdb load "
                  f"{load_s:.1f} s\n")
            duck = duckdb.connect()
            for table in ("vertices", "edges", "adjacency"):  # the same Arrow tables
                duck.register(table, con.execute(f"SELECT * FROM g.{table}").arrow())
            degrees = con.execute("SELECT src, count(*) AS d FROM g.adjacency GROUP BY src "
                                  "ORDER BY d DESC LIMIT 1").fetchone()
            rng = np.random.default_rng(11)
            sources = [int(degrees[0])] + [int(v) for v in rng.choice(
                con.execute("SELECT DISTINCT src FROM g.edges").arrow().column(0).to_numpy(),
                4, replace=False)]
            results = bench_queries(con, duck, sources, args.rounds)
            planning = bench_planning(con, sources[1])
        memory = self_join(db, sources[1])

    print("| query | graphdb ms | DuckDB ms | graphdb / DuckDB | within 1.3x |")
    print("|---|---:|---:|---:|---|")
    for row in results:
        print(f"| {row['query']} | {row['graphdb_ms']:.2f} | {row['duckdb_ms']:.2f} | "
              f"{row['ratio']:.2f} | {'yes' if row['met'] else 'NO'} |")
    print(f"\nparse + bind + plan of `{PLANNING}`: {planning:.3f} ms (target <= 1 ms)")
    print(f"self-join of g.edges filtered on one source (fresh process, g.edges not yet built): "
          f"{memory['ms']:.1f} ms, peak resident memory {memory['rss_growth_bytes'] / 2**20:.1f} "
          f"MiB above the idle process (answer {memory['answer']:,})")
    report = {"scale": args.scale, "edge_factor": args.edge_factor, "rounds": args.rounds,
              "sources": sources, "load_s": load_s, "queries": results,
              "planning_ms": planning, "self_join": memory}
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
