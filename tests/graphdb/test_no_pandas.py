"""Queries that need no pandas do not import it.

pyarrow imports pandas, when it is installed, the first time ``pa.array``, ``pa.scalar`` or
``to_numpy`` runs: 0.4 s of every fresh process's first query on the GPU host's image. The
query path converts through executor.arrays instead. A stand-in ``pandas`` package on the path
records every attempt to import it (and then fails, as if pandas were absent).

Filters, joins and GROUP BY run on DuckDB, reading the Arrow results in place: they are listed
too (the relational engine on Acero used to import pandas through pyarrow's module import).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import graphdb

ROOT = Path(__file__).resolve().parents[2]

QUERIES = [
    "SELECT vertex, depth FROM bfs(g, 0) ORDER BY vertex",
    "SELECT count(*) FROM bfs(g, 0)",
    "SELECT vertex, rank FROM pagerank(g) ORDER BY rank DESC LIMIT 2",
    "SELECT vertex, distance FROM sssp(g, 1) ORDER BY distance DESC LIMIT 2",
    "SHOW GRAPHS",
    "DESCRIBE g",
    "EXPLAIN SELECT * FROM bfs(g, 0)",
    "SELECT * FROM settings()",
    "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) t",
    "SELECT vertex FROM bfs(g, 0) WHERE depth > 0",
    "SELECT e.src, count(*) FROM g.edges e JOIN bfs(g, 0) b ON b.vertex = e.dst GROUP BY 1",
]

STAND_IN = """
import os
with open(os.environ["PANDAS_IMPORT_LOG"], "a") as log:
    log.write(os.environ.get("PANDAS_QUERY", "imported") + "\\n")
raise ImportError("pandas stand-in")
"""

# One process runs every query, each in a connection of its own, and names the query running
# when the stand-in is reached: pyarrow gives up on pandas after its first failed try, so the
# first query that reaches for pandas is the one named, and any such query fails the test.
CHILD = """
import json, os, sys
import graphdb
counts = []
for query in sys.argv[2:]:
    os.environ["PANDAS_QUERY"] = query
    with graphdb.connect(sys.argv[1]) as con:
        counts.append(len(con.execute(query).fetchall()))
print(json.dumps(counts))
"""


def test_algorithm_queries_and_statements_do_not_import_pandas(tmp_path):
    db = tmp_path / "db"
    with graphdb.connect(db) as con:
        edges = sp.coo_array((np.arange(1.0, 6.0), ([0, 1, 2, 2, 3], [1, 2, 0, 3, 1])),
                             shape=(4, 4))
        con.from_scipy("g", edges)
    (tmp_path / "stand_in" / "pandas").mkdir(parents=True)
    (tmp_path / "stand_in" / "pandas" / "__init__.py").write_text(STAND_IN)
    log = tmp_path / "pandas.log"
    env = dict(os.environ, PANDAS_IMPORT_LOG=str(log), GRAPHDB_DISABLE_GPU="1",
               PYTHONPATH=os.pathsep.join([str(tmp_path / "stand_in"), str(ROOT),
                                           os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", CHILD, str(db), *QUERIES], env=env,
                         capture_output=True, text=True, check=True).stdout
    assert not log.exists(), f"{log.read_text().strip()!r} imported pandas"
    counts = json.loads(out)
    assert len(counts) == len(QUERIES) and all(counts), dict(zip(QUERIES, counts))
    # The stand-in works: pyarrow's Schema.empty_table does reach for it.
    probe = "import pyarrow as pa; pa.schema([('a', pa.int64())]).empty_table()"
    subprocess.run([sys.executable, "-c", probe], env=env, check=True, capture_output=True)
    assert log.exists()
