"""``graphdb demo``: build a sample database, load it the way a user would, and query it."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from graphdb.storage.compiled import first_use_seconds

from .connection import connect
from .errors import InvalidInputError
from .formatting import render
from .generators import grid, random_weights, rmat
from .progress import time_line

__all__ = ["run_demo"]

#: R-MAT scale of the demo's social network (2**15 vertices, 16 edges per vertex).
SOCIAL_SCALE = 15
#: side of the demo's road grid
GRID_SIDE = 300


def _write_social(path: Path) -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    src, dst = rmat(SOCIAL_SCALE, 16, seed=42)
    pacsv.write_csv(pa.table({"follower": src, "followee": dst}), path)


def _write_roads(path: Path) -> None:
    src, dst = grid(GRID_SIDE, GRID_SIDE)
    weights = random_weights(len(src), low=1, high=100, seed=7)
    np.savetxt(path, np.column_stack([src, dst, weights]), fmt="%d %d %d")


#: The demo's own graphs, and the files it loads them from (in a folder named TEMP_PREFIX...).
DEMO_GRAPHS = {"social": "social.csv", "roads": "roads.e"}
TEMP_PREFIX = "graphdb-demo-"


def _made_by_demo(entry) -> bool:
    source = Path(entry.source.split(" + ")[0])
    return (DEMO_GRAPHS.get(entry.name) == source.name
            and source.parent.name.startswith(TEMP_PREFIX))


def _check_foreign_graphs(con, db: str) -> None:
    """Refuse a database holding graphs the demo did not make (a user's own)."""
    foreign = sorted(e.name for e in (con.catalog.get(n) for n in con.graphs())
                     if not _made_by_demo(e))
    if foreign:
        raise InvalidInputError(
            f"'{db}' holds graphs the demo did not make ({', '.join(foreign)}); the demo "
            "leaves such a database alone: give it another directory (graphdb demo DIR), or "
            "--force to add its graphs there anyway (a graph named 'social' or 'roads' is "
            "replaced)")


def run_demo(db: str, out=None, *, force: bool = False) -> int:
    out = out or sys.stdout

    def say(text: str = "") -> None:
        out.write(text + "\n")
        out.flush()

    if Path(db).exists() and not force:
        with connect(db, create=False) as con:
            _check_foreign_graphs(con, db)
    say(f"graphdb demo: building sample graphs in '{db}'\n")
    with tempfile.TemporaryDirectory(prefix=TEMP_PREFIX) as tmp, connect(db) as con:
        social_file, roads_file = (Path(tmp) / DEMO_GRAPHS[g] for g in ("social", "roads"))
        _write_social(social_file)
        _write_roads(roads_file)
        for name, path, undirected, what in (
            ("social", social_file, False, f"an R-MAT 'who follows whom' network (scale {SOCIAL_SCALE})"),
            ("roads", roads_file, True, f"a {GRID_SIDE} x {GRID_SIDE} road grid with travel times"),
        ):
            s = con.ingest(name, path, undirected=undirected, replace=True)
            say(f"  loaded {name:<7} {s['vertices']:>8,} vertices {s['edges']:>9,} edges "
                f"in {s['seconds']:.2f} s  ({what})")
        top = con.execute("SELECT vertex FROM pagerank(social) ORDER BY rank DESC LIMIT 1").fetchone()[0]
        queries = [
            ("The graphs in the database", "SHOW GRAPHS"),
            ("Most influential accounts (PageRank, 20 iterations)",
             "SELECT vertex, rank FROM pagerank(social, damping => 0.85, max_iterations => 20) "
             "ORDER BY rank DESC LIMIT 5"),
            (f"How many accounts the top account {top} reaches at each distance",
             f"SELECT depth, count(*) AS accounts FROM bfs(social, {top}) "
             "GROUP BY depth ORDER BY depth"),
            (f"Accounts within two follows of account {top}, as an SQL/PGQ pattern (ANY: one "
             "row per account reached, not one per walk)",
             "SELECT count(*) AS reached FROM GRAPH_TABLE (social "
             f"MATCH ANY (a)-[e]->{{1,2}}(b) WHERE a.id = {top} COLUMNS (b.id AS friend))"),
            ("Influence joined with reach: top accounts and their out-degree",
             "SELECT p.vertex, round(p.rank, 5) AS rank, count(*) AS follows "
             "FROM pagerank(social) p JOIN social.edges e ON e.src = p.vertex "
             "GROUP BY p.vertex, p.rank ORDER BY p.rank DESC LIMIT 3"),
            ("The corners of the road grid farthest (in hops) from corner 0",
             "SELECT vertex, depth FROM bfs(roads, 0) ORDER BY depth DESC, vertex LIMIT 3"),
            ("How graphdb will run a query", "EXPLAIN SELECT * FROM pagerank(social) LIMIT 3"),
        ]
        for title, sql in queries:
            say(f"\n-- {title}\n{sql};")
            start, one_time = time.perf_counter(), first_use_seconds()
            result = con.execute(sql)
            elapsed = time.perf_counter() - start
            table = result.arrow()
            if result.kind == "explain":
                out.write("\n".join(table.column(0).to_pylist()) + "\n")
            else:
                out.write(render(table, "table", max_rows=20))
            say(time_line(elapsed, one_time, first_use_seconds()))
    say(f"\nOpen the shell on this database with:  graphdb {db}")
    say(f"Or query it directly:  graphdb query {db} \"SELECT * FROM bfs(roads, 0) LIMIT 5\"")
    return 0
