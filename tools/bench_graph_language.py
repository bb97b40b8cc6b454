"""The graph language on a multi-label social graph: LDBC SNB-style questions in graphdb, Kuzu's
Cypher and DuckDB SQL, answers checked equal, times side by side in one run.

    python tools/bench_graph_language.py [--persons 50000] [--knows 1000000] [--repeats 5]
                                         [--quick] [--device auto|cpu|gpu] [--out FILE]

The graph (generated, seeded): persons (integer ids, not dense, with an age), companies (string
ids), posts; knows (person -> person, with a year and an interaction count), works_at (person ->
company), likes (person -> post). It is made a graphdb property graph with CREATE PROPERTY GRAPH
over the tables, loaded into Kuzu with COPY from the same Parquet files, and registered in
DuckDB. Each question is asked of every engine that can (warm: one untimed run, then the median
of ``--repeats``) and the answers must be equal; where Kuzu has no way to ask (k shortest paths)
networkx (or a brute force over the edge arrays) gives the answer and the peer time. Then a
masked subgraph's operator against the whole graph's on the same device (see :func:`masked`):
``bfs``/``wcc``/``pagerank`` of ``GRAPH k WHERE e.year >= 0`` (every edge kept, so the same
work plus the mask) against ``k``, and of ``GRAPH k WHERE e.year >= 2017`` (7/8 of the edges)
against ``k17``, a stored graph of the same edges; each warm (the statement repeated: its mask
and view kept by the residency owner) and cold (a condition of new text each run, equal in
effect: the mask evaluated and the view built again), the runs interleaved with the reference's.
``--masked-only`` runs that part alone.

Prints a Markdown table with graphdb/Kuzu ratios (below 1: graphdb is faster); ``--out`` writes
JSON. ``--quick``: 5,000 persons and 100,000 friendships, under two minutes on two cores.
"""

from __future__ import annotations

import argparse
import json
import statistics
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

FIRST_YEAR, LAST_YEAR = 2016, 2023


def generate(persons: int, knows: int, seed: int = 1) -> dict[str, pa.Table]:
    """The social graph's tables (knows without self loops or repeated pairs)."""
    rng = np.random.default_rng(seed)
    ids = 10 + 7 * np.arange(persons, dtype=np.int64)
    companies = np.array([f"company{i}" for i in range(max(persons // 100, 2))])
    posts = 3 + 5 * np.arange(persons * 2, dtype=np.int64)
    # a skewed out-degree (some persons know many), uniform destinations
    src = np.minimum((rng.pareto(2.0, int(knows * 1.1)) * persons / 8).astype(np.int64),
                     persons - 1)
    src = rng.permutation(persons)[src]
    dst = rng.integers(0, persons, len(src))
    pairs = np.unique(np.stack([src, dst], 1)[src != dst], axis=0)
    pairs = pairs[rng.permutation(len(pairs))[:knows]]
    pairs = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
    n = len(pairs)
    work = rng.random(persons) < 0.8
    liker = rng.integers(0, persons, persons * 2)
    return {
        "persons": pa.table({"id": ids, "age": rng.integers(18, 90, persons)}),
        "companies": pa.table({"name": companies, "size": rng.integers(1, 1000, len(companies))}),
        "posts": pa.table({"id": posts, "length": rng.integers(1, 500, len(posts))}),
        "knows": pa.table({"p1": ids[pairs[:, 0]], "p2": ids[pairs[:, 1]],
                           "year": rng.integers(FIRST_YEAR, LAST_YEAR + 1, n),
                           "interactions": rng.integers(1, 50, n)}),
        "work_at": pa.table({"person": ids[work],
                             "company": companies[rng.integers(0, len(companies), work.sum())]}),
        "likes": pa.table({"person": ids[liker], "post": rng.choice(posts, len(liker))}),
    }


CREATE = """CREATE OR REPLACE PROPERTY GRAPH s
  VERTEX TABLES (persons KEY (id) LABEL Person, companies KEY (name) LABEL Company,
                 posts KEY (id) LABEL Post)
  EDGE TABLES (
    knows SOURCE KEY (p1) REFERENCES persons (id) DESTINATION KEY (p2) REFERENCES persons (id),
    work_at SOURCE KEY (person) REFERENCES persons DESTINATION KEY (company)
            REFERENCES companies LABEL works_at,
    likes SOURCE KEY (person) REFERENCES persons DESTINATION KEY (post) REFERENCES posts)"""

KUZU_SCHEMA = [
    "CREATE NODE TABLE Person(id INT64, age INT64, PRIMARY KEY(id))",
    "CREATE NODE TABLE Company(name STRING, size INT64, PRIMARY KEY(name))",
    "CREATE NODE TABLE Post(id INT64, length INT64, PRIMARY KEY(id))",
    "CREATE REL TABLE knows(FROM Person TO Person, year INT64, interactions INT64)",
    "CREATE REL TABLE works_at(FROM Person TO Company)",
    "CREATE REL TABLE likes(FROM Person TO Post)",
]
KUZU_FILES = {"Person": "persons", "Company": "companies", "Post": "posts", "knows": "knows",
              "works_at": "work_at", "likes": "likes"}


def _kuzu_rows(con, query: str, params: dict) -> list[tuple]:
    result = con.execute(query, params)
    rows = []
    while result.has_next():
        rows.append(tuple(result.get_next()))
    return rows


def _median_ms(run, repeats: int) -> tuple[float, object]:
    answer = run()  # warm: caches, residency, compiled code
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), answer


def lcc_brute(data: dict, vertex: int) -> float:
    """Graphalytics LCC of one vertex from the knows arrays (directed)."""
    p1, p2 = data["knows"]["p1"].to_numpy(), data["knows"]["p2"].to_numpy()
    nbrs = set(p2[p1 == vertex].tolist()) | set(p1[p2 == vertex].tolist())
    nbrs.discard(vertex)
    d = len(nbrs)
    if d < 2:
        return 0.0
    inside = np.isin(p1, list(nbrs)) & np.isin(p2, list(nbrs)) & (p1 != p2)
    return float(inside.sum()) / (d * (d - 1))


def questions(data: dict, s: int, t: int) -> list[dict]:
    """The questions: per engine a function of the connections giving a comparable answer."""
    year = LAST_YEAR - 3
    return [
        {"name": "friends of friends over 60",
         "graphdb": ("SELECT count(DISTINCT b) FROM GRAPH_TABLE (s MATCH (a:Person WHERE a.id = ?)"
                     "-[:knows]->(x:Person)-[:knows]->(c:Person WHERE c.age > 60) COLUMNS "
                     "(c.id AS b)) WHERE b <> ?", [s, s]),
         "kuzu": ("MATCH (a:Person)-[:knows]->(:Person)-[:knows]->(c:Person) WHERE a.id = $s AND "
                  "c.age > 60 AND c.id <> $s RETURN count(DISTINCT c.id)", {"s": s}),
         "duckdb": ("SELECT count(DISTINCT k2.p2) FROM knows k1 JOIN knows k2 ON k1.p2 = k2.p1 "
                    "JOIN persons p ON p.id = k2.p2 WHERE k1.p1 = ? AND p.age > 60 AND "
                    "k2.p2 <> ?", [s, s])},
        {"name": "shortest path s -> t (hops)",
         "graphdb": ("SELECT min(n) FROM GRAPH_TABLE (s MATCH p = ANY SHORTEST (a:Person WHERE "
                     "a.id = ?)-[:knows]->+(b:Person WHERE b.id = ?) COLUMNS "
                     "(path_length(p) AS n))", [s, t]),
         "kuzu": ("MATCH (a:Person)-[e:knows* SHORTEST 1..30]->(b:Person) WHERE a.id = $s AND "
                  "b.id = $t RETURN min(length(e))", {"s": s, "t": t})},
        {"name": "ANY SHORTEST, edges of 2019+ with 10+ interactions",
         "graphdb": ("SELECT min(n) FROM GRAPH_TABLE (s MATCH p = ANY SHORTEST (a:Person WHERE "
                     "a.id = ?)-[e:knows WHERE e.year >= 2019 AND e.interactions >= 10]->+"
                     "(b:Person WHERE b.id = ?) COLUMNS (path_length(p) AS n))", [s, t]),
         "kuzu": ("MATCH (a:Person)-[e:knows* SHORTEST 1..30 (r, _ | WHERE r.year >= 2019 AND "
                  "r.interactions >= 10)]->(b:Person) WHERE a.id = $s AND b.id = $t "
                  "RETURN min(length(e))", {"s": s, "t": t})},
        {"name": "persons within 3 hops",
         "graphdb": ("SELECT count(*) FROM khop(GRAPH s LABELS (knows), ?, 3) WHERE vertex <> ?",
                     [s, s]),
         "kuzu": ("MATCH (a:Person)-[:knows* SHORTEST 1..3]->(b:Person) WHERE a.id = $s AND "
                  "b.id <> $s RETURN count(DISTINCT b.id)", {"s": s}),
         "duckdb": ("WITH RECURSIVE r(v, d) AS (SELECT ?::BIGINT, 0 UNION SELECT k.p2, r.d + 1 "
                    "FROM r JOIN knows k ON k.p1 = r.v WHERE r.d < 3) "
                    "SELECT count(DISTINCT v) FROM r WHERE v <> ?", [s, s])},
        {"name": "lcc of one person",
         "graphdb": ("SELECT round(coefficient, 12) FROM lcc(GRAPH s LABELS (knows), "
                     "vertices => [?])", [s]),
         "kuzu": ("MATCH (a:Person)-[:knows]-(n:Person) WHERE a.id = $s AND n.id <> $s "
                  "WITH collect(DISTINCT n.id) AS ns "
                  "MATCH (x:Person)-[:knows]->(y:Person) WHERE list_contains(ns, x.id) AND "
                  "list_contains(ns, y.id) AND x.id <> y.id WITH size(ns) AS d, count(*) AS c "
                  "RETURN round(CAST(c AS DOUBLE) / (d * (d - 1)), 12)",
                  {"s": s}),
         "oracle": lambda: round(lcc_brute(data, s), 12)},
        {"name": f"BFS over friendships made in {year}",
         "graphdb": (f"SELECT count(*) - 1, max(depth) FROM bfs(GRAPH s LABELS (knows) WHERE "
                     f"e.year = {year}, ?)", [s]),
         "kuzu": (f"MATCH (a:Person)-[e:knows* SHORTEST 1..30 (r, _ | WHERE r.year = {year})]->"
                  f"(b:Person) WHERE a.id = $s AND b.id <> $s "
                  f"RETURN count(DISTINCT b.id), max(length(e))", {"s": s})},
        {"name": "labelled pattern: old persons' new friends' companies",
         "graphdb": ("SELECT c, count(*) AS n FROM GRAPH_TABLE (s MATCH (a:Person WHERE a.age > "
                     "80)-[k:knows WHERE k.year = 2023]->(b:Person)-[:works_at]->(c:Company) "
                     "COLUMNS (c.name AS c)) GROUP BY c ORDER BY n DESC, c LIMIT 5", []),
         "kuzu": ("MATCH (a:Person)-[k:knows]->(b:Person)-[:works_at]->(c:Company) WHERE a.age > "
                  "80 AND k.year = 2023 RETURN c.name AS c, count(*) AS n ORDER BY n DESC, c "
                  "LIMIT 5", {}),
         "duckdb": ("SELECT w.company AS c, count(*) AS n FROM knows k JOIN persons a ON a.id = "
                    "k.p1 JOIN work_at w ON w.person = k.p2 WHERE a.age > 80 AND k.year = 2023 "
                    "GROUP BY c ORDER BY n DESC, c LIMIT 5", [])},
        {"name": "point lookup: a person's age (vertex by key)",
         "graphdb": ("SELECT age FROM GRAPH_TABLE (s MATCH (a:Person WHERE a.id = ?) "
                     "COLUMNS (a.age AS age))", [s]),
         "kuzu": ("MATCH (a:Person) WHERE a.id = $s RETURN a.age", {"s": s}),
         "duckdb": ("SELECT age FROM persons WHERE id = ?", [s])},
        {"name": "point lookup: a person's age (table by key)",
         "graphdb": ("SELECT age FROM persons WHERE id = ?", [s]),
         "kuzu": ("MATCH (a:Person) WHERE a.id = $s RETURN a.age", {"s": s}),
         "duckdb": ("SELECT age FROM persons WHERE id = ?", [s])},
        {"name": "1-hop: a person's friends and their ages",
         "graphdb": ("SELECT b, age FROM GRAPH_TABLE (s MATCH (a:Person WHERE a.id = ?)-[:knows]->"
                     "(b:Person) COLUMNS (b.id AS b, b.age AS age)) ORDER BY b", [s]),
         "kuzu": ("MATCH (a:Person)-[:knows]->(b:Person) WHERE a.id = $s RETURN b.id, b.age "
                  "ORDER BY b.id", {"s": s}),
         "duckdb": ("SELECT k.p2, p.age FROM knows k JOIN persons p ON p.id = k.p2 WHERE "
                    "k.p1 = ? ORDER BY k.p2", [s])},
        {"name": "newest friends: 10 latest friendships of a person",
         "graphdb": ("SELECT b, y FROM GRAPH_TABLE (s MATCH (a:Person WHERE a.id = ?)-[k:knows]->"
                     "(b:Person) COLUMNS (b.id AS b, k.year AS y)) ORDER BY y DESC, b LIMIT 10",
                     [s]),
         "kuzu": ("MATCH (a:Person)-[k:knows]->(b:Person) WHERE a.id = $s RETURN b.id, k.year "
                  "ORDER BY k.year DESC, b.id LIMIT 10", {"s": s}),
         "duckdb": ("SELECT p2, year FROM knows WHERE p1 = ? ORDER BY year DESC, p2 LIMIT 10",
                    [s])},
        {"name": "edge filter: friendships of 2023 with 45+ interactions (pattern)",
         "graphdb": ("SELECT count(*), sum(i) FROM GRAPH_TABLE (s MATCH (a:Person)-[k:knows WHERE "
                     "k.year = 2023 AND k.interactions >= 45]->(b:Person) COLUMNS "
                     "(k.interactions AS i))", []),
         "kuzu": ("MATCH (a:Person)-[k:knows]->(b:Person) WHERE k.year = 2023 AND "
                  "k.interactions >= 45 RETURN count(*), sum(k.interactions)", {}),
         "duckdb": ("SELECT count(*), sum(interactions) FROM knows WHERE year = 2023 AND "
                    "interactions >= 45", [])},
        {"name": "edge filter: friendships of 2023 with 45+ interactions (edge table)",
         "graphdb": ("SELECT count(*), sum(interactions) FROM k.edges WHERE year = 2023 AND "
                     "interactions >= 45", []),
         "kuzu": ("MATCH (a:Person)-[k:knows]->(b:Person) WHERE k.year = 2023 AND "
                  "k.interactions >= 45 RETURN count(*), sum(k.interactions)", {}),
         "duckdb": ("SELECT count(*), sum(interactions) FROM knows WHERE year = 2023 AND "
                    "interactions >= 45", [])},
        {"name": "ALL SHORTEST s -> t: paths and their length",
         "graphdb": ("SELECT count(*), min(n) FROM GRAPH_TABLE (s MATCH p = ALL SHORTEST "
                     "(a:Person WHERE a.id = ?)-[:knows]->+(b:Person WHERE b.id = ?) COLUMNS "
                     "(path_length(p) AS n))", [s, t]),
         "kuzu": ("MATCH p = (a:Person)-[e:knows* ALL SHORTEST 1..30]->(b:Person) WHERE "
                  "a.id = $s AND b.id = $t RETURN count(*), min(length(e))", {"s": s, "t": t})},
        {"name": "ALL SHORTEST s -> t with each path's summed interactions",
         "graphdb": ("SELECT list(w ORDER BY w DESC)[1:5], count(*) FROM (SELECT path, "
                     "CAST(sum(k.interactions) AS BIGINT) AS w FROM (SELECT row_number() OVER () "
                     "AS path, unnest(es) AS e FROM GRAPH_TABLE (k MATCH p = ALL SHORTEST (a WHERE "
                     "a.id = ?)-[]->+(b WHERE b.id = ?) COLUMNS (edges(p) AS es))) JOIN knows k "
                     "ON k.p1 = e.src AND k.p2 = e.dst GROUP BY path)", [s, t]),
         "kuzu": ("MATCH p = (a:Person)-[e:knows* ALL SHORTEST 1..30]->(b:Person) WHERE "
                  "a.id = $s AND b.id = $t WITH list_sum(properties(rels(e), 'interactions')) "
                  "AS w RETURN list_slice(list_sort(collect(w), 'DESC'), 1, 5), count(*)",
                  {"s": s, "t": t})},
        {"name": "triangles through one person (a-b-c-a, either direction)",
         "graphdb": ("SELECT count(*) FROM GRAPH_TABLE (s MATCH (a:Person WHERE a.id = ?)-[:knows]-"
                     "(b:Person)-[:knows]-(c:Person)-[:knows]-(a) COLUMNS (b.id AS b))", [s]),
         "kuzu": ("MATCH (a:Person)-[:knows]-(b:Person)-[:knows]-(c:Person)-[:knows]-(a) WHERE "
                  "a.id = $s RETURN count(*)", {"s": s}),
         "duckdb": ("WITH u AS (SELECT p1 AS x, p2 AS y FROM knows UNION ALL SELECT p2, p1 FROM "
                    "knows) SELECT count(*) FROM u ab JOIN u bc ON bc.x = ab.y JOIN u ca ON "
                    "ca.x = bc.y AND ca.y = ab.x WHERE ab.x = ?", [s])},
        {"name": "k_shortest_paths k=3 (hops of each)",
         "graphdb": ("SELECT list(n ORDER BY path) FROM (SELECT path, count(*) - 1 AS n FROM "
                     "k_shortest_paths(GRAPH s LABELS (knows), ?, ?, 3, weight => NULL) GROUP BY "
                     "path)", [s, t]),
         "networkx": "k_shortest"},
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--persons", type=int, default=50_000)
    parser.add_argument("--knows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true",
                        help="5,000 persons, 100,000 friendships, 3 repeats")
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "gpu"),
                        help="graphdb's SET device for the whole run")
    parser.add_argument("--out", help="write the results as JSON to this file")
    parser.add_argument("--only", action="append", default=[],
                        help="run the questions whose name contains this text (repeatable); "
                             "the masked subgraphs are skipped")
    parser.add_argument("--masked-only", action="store_true",
                        help="only the masked subgraph against the whole graph (no peers)")
    args = parser.parse_args(argv)
    if args.quick:
        args.persons, args.knows, args.repeats = 5_000, 100_000, 3

    import duckdb
    import kuzu
    import networkx as nx

    start = time.perf_counter()
    data = generate(args.persons, args.knows)
    report: dict = {"persons": args.persons, "knows": data["knows"].num_rows,
                    "generate_s": time.perf_counter() - start, "questions": []}
    degree = np.bincount(np.searchsorted(data["persons"]["id"].to_numpy(),
                                         data["knows"]["p1"].to_numpy()),
                         minlength=args.persons)
    ids = data["persons"]["id"].to_numpy()
    order = np.argsort(degree, kind="stable")
    s = int(ids[order[int(len(order) * 0.9)]])  # a well-connected person, not the top hub
    t = int(ids[order[len(order) // 2]])
    report.update(source=s, target=t)
    print(f"{args.persons:,} persons, {data['knows'].num_rows:,} knows, "
          f"{data['work_at'].num_rows:,} works_at, {data['likes'].num_rows:,} likes; "
          f"s = {s}, t = {t}\n")

    with tempfile.TemporaryDirectory(prefix="graphdb-bench-") as tmp_name:
        tmp = Path(tmp_name)
        for name, table in data.items():
            pq.write_table(table, tmp / f"{name}.parquet")

        con = graphdb.connect(tmp / "graphdb")
        con.execute(f"SET device = '{args.device}'")
        report["device"] = args.device
        start = time.perf_counter()
        for name, table in data.items():
            con.register(name, table)
        con.execute(CREATE)
        con.ingest("k", data["knows"].rename_columns(["src", "dst", "year", "interactions"]),
                   weight=None)
        report["graphdb_load_s"] = time.perf_counter() - start

        rows: list[dict] = []
        if not args.masked_only:
            kdb = kuzu.Database(str(tmp / "kuzu"))
            kcon = kuzu.Connection(kdb)
            start = time.perf_counter()
            for statement in KUZU_SCHEMA:
                kcon.execute(statement)
            for table, name in KUZU_FILES.items():
                kcon.execute(f"COPY {table} FROM '{tmp / name}.parquet'")
            report["kuzu_load_s"] = time.perf_counter() - start

            duck = duckdb.connect()
            for name, table in data.items():
                duck.register(name, table)

            nx_graph = None
            for q in questions(data, s, t):
                if args.only and not any(o.lower() in q["name"].lower() for o in args.only):
                    continue
                row: dict = {"question": q["name"]}
                sql, params = q["graphdb"]
                row["graphdb_ms"], ours = _median_ms(
                    lambda: con.execute(sql, params).fetchall(), args.repeats)
                answers = {"graphdb": ours}
                if "kuzu" in q:
                    cypher, kparams = q["kuzu"]
                    row["kuzu_ms"], answers["kuzu"] = _median_ms(
                        lambda: _kuzu_rows(kcon, cypher, kparams), args.repeats)
                if "duckdb" in q:
                    dsql, dparams = q["duckdb"]
                    row["duckdb_ms"], answers["duckdb"] = _median_ms(
                        lambda: duck.execute(dsql, dparams).fetchall(), args.repeats)
                if "oracle" in q:
                    answers["brute force"] = [(q["oracle"](),)]
                if q.get("networkx") == "k_shortest":
                    if nx_graph is None:
                        nx_graph = nx.DiGraph()
                        nx_graph.add_edges_from(zip(data["knows"]["p1"].to_pylist(),
                                                    data["knows"]["p2"].to_pylist()))

                    def k_shortest():
                        paths = nx.shortest_simple_paths(nx_graph, s, t)
                        return [([len(next(paths)) - 1 for _ in range(3)],)]

                    row["networkx_ms"], answers["networkx"] = _median_ms(k_shortest, 1)
                normal = {name: [tuple(x) for x in a] for name, a in answers.items()}
                peers = [row[k] for k in ("kuzu_ms", "duckdb_ms") if k in row]
                if peers:
                    row["fastest_peer_ratio"] = row["graphdb_ms"] / min(peers)
                row["answer"] = normal["graphdb"]
                row["agree"] = all(a == normal["graphdb"] for a in normal.values())
                if not row["agree"]:
                    row["answers"] = normal
                row["engines"] = sorted(answers)
                rows.append(row)
                print(f"  {q['name']}: {row['answer'] if len(str(row['answer'])) < 60 else '...'} "
                      f"{'agree' if row['agree'] else 'DISAGREE ' + str(normal)}", flush=True)
            report["questions"] = rows

        # a masked subgraph against the whole graph, same operator and device
        masked = masked_runs(con, s, args.repeats) if not args.only else []
        report["masked"] = masked
        con.close()

    if rows:
        print_questions(rows)
    if masked:
        print_masked(masked)
    print(f"\nloads: graphdb {report['graphdb_load_s']:.1f} s (property graph + k), "
          f"kuzu {report.get('kuzu_load_s', float('nan')):.1f} s")
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1, default=str))
    return 0 if all(r["agree"] for r in rows) and all(m["agree"] for m in masked) else 1


def print_questions(rows: list[dict]) -> None:
    print("\n| question | engines checked | answers | graphdb ms | Kuzu ms | DuckDB ms | "
          "networkx ms | graphdb / Kuzu | graphdb / fastest of Kuzu, DuckDB (target <= 1.5) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        ratio = f"{row['graphdb_ms'] / row['kuzu_ms']:.2f}" if "kuzu_ms" in row else "-"
        fastest = f"{row['fastest_peer_ratio']:.2f}" if "fastest_peer_ratio" in row else "-"
        print(f"| {row['question']} | {', '.join(row['engines'])} | "
              f"{'equal' if row['agree'] else 'DIFFER'} | {row['graphdb_ms']:.2f} | "
              + " | ".join(f"{row[k]:.2f}" if k in row else "-"
                           for k in ("kuzu_ms", "duckdb_ms", "networkx_ms"))
              + f" | {ratio} | {fastest} |")


#: (operator, arguments after the graph, what to compare the answers by)
MASKED = (("bfs", ", {s}", "depth"), ("wcc", "", "component"),
          ("pagerank", ", max_iterations => 20, tolerance => 0", "round(rank, 12)"))
#: (label, condition, the stored graph of the same edges, the condition with a new text: run i)
CONDITIONS = (("every edge kept", "e.year >= 0", "k", "e.year >= -{i}"),
              ("7/8 of the edges kept", f"e.year >= {FIRST_YEAR + 1}", "k17",
               f"e.year >= {FIRST_YEAR + 1} AND e.year > -{{i}}"))


def masked_runs(con, s: int, repeats: int) -> list[dict]:
    """Each operator of :data:`MASKED` on each subgraph of :data:`CONDITIONS` against the
    stored graph of the same edges (``k`` itself for every edge kept), same device: median ms
    of ``repeats`` runs, warm (the same statement again) and cold (a new condition text each
    run), each run right after one of the reference (so that a machine's drift hits both)."""
    con.execute(f"CREATE OR REPLACE GRAPH k17 AS GRAPH k WHERE {CONDITIONS[1][1]}")
    fresh = iter(range(1, 1_000_000))
    out = []
    for function, tail, column in MASKED:
        tail = tail.format(s=s)
        for label, condition, stored, cold in CONDITIONS:
            def query(graph: str) -> str:
                return f"SELECT count(*), max({column}) FROM {function}({graph}{tail})"

            reference = query(stored)
            view = query(f"GRAPH k WHERE {condition}")
            want = con.execute(reference).fetchall()
            agree = con.execute(view).fetchall() == want  # warms the view too
            times: dict[str, list[float]] = {"reference": [], "warm": [], "cold": []}
            for _ in range(repeats):
                for kind, sql in (("reference", reference), ("warm", view),
                                  ("reference", reference),
                                  ("cold", query(f"GRAPH k WHERE {cold.format(i=next(fresh))}"))):
                    start = time.perf_counter()
                    got = con.execute(sql).fetchall()
                    times[kind].append((time.perf_counter() - start) * 1000)
                    agree = agree and got == want
            ms = {k: statistics.median(v) for k, v in times.items()}
            out.append({"operator": function, "subgraph": label, "condition": condition,
                        "reference": stored, "reference_ms": ms["reference"],
                        "warm_ms": ms["warm"], "cold_ms": ms["cold"],
                        "warm_ratio": ms["warm"] / ms["reference"],
                        "cold_ratio": ms["cold"] / ms["reference"], "agree": agree})
    return out


def print_masked(masked: list[dict]) -> None:
    print("\n| operator | GRAPH k WHERE | against | its ms | masked warm ms | warm ratio "
          "(target <= 1.2) | masked cold ms | cold ratio | same answer |")
    print("|---|---|---|---:|---:|---:|---:|---:|---|")
    for m in masked:
        print(f"| {m['operator']} | {m['condition']} | {m['reference']} | "
              f"{m['reference_ms']:.1f} | {m['warm_ms']:.1f} | {m['warm_ratio']:.2f} | "
              f"{m['cold_ms']:.1f} | {m['cold_ratio']:.2f} | {'yes' if m['agree'] else 'NO'} |")


if __name__ == "__main__":
    sys.exit(main())
