"""The relational core checked against DuckDB: the same queries over the same edge list.

graphdb reads ``g.edges``/``g.vertices``; DuckDB reads the CSV into tables ``edges`` and
``vertices``. Rows are compared as multisets (floats to 1e-9 relative), so the two engines are
independent oracles for each other on joins, grouping, subqueries and set operations.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

import graphdb

duckdb = pytest.importorskip("duckdb")

QUERIES = [
    "SELECT src, dst, weight FROM {e}",
    "SELECT src, count(*), sum(weight), min(weight), max(weight), avg(weight) FROM {e} "
    "GROUP BY src",
    "SELECT dst, count(DISTINCT src) FROM {e} GROUP BY dst HAVING count(*) > 2",
    "SELECT DISTINCT dst FROM {e} WHERE weight > 50",
    "SELECT src * 2 + dst AS k, weight / 4 AS q FROM {e} WHERE src < dst AND NOT weight < 10",
    "SELECT a.src, b.dst FROM {e} a JOIN {e} b ON a.dst = b.src WHERE a.src = 3",
    "SELECT count(*) FROM {e} a, {e} b WHERE a.dst = b.src",
    "SELECT v.id, count(e.dst) FROM {v} v LEFT JOIN {e} e ON v.id = e.src GROUP BY v.id",
    "SELECT v.id, e.dst FROM {v} v LEFT JOIN {e} e ON v.id = e.src AND e.weight > 90",
    "SELECT x.src, y.src FROM (SELECT DISTINCT src FROM {e} WHERE src < 5) x "
    "FULL JOIN (SELECT DISTINCT dst AS src FROM {e} WHERE dst > 35) y ON x.src = y.src",
    "WITH d AS (SELECT src, count(*) AS n FROM {e} GROUP BY src) "
    "SELECT n, count(*) FROM d GROUP BY n",
    "SELECT src FROM {e} WHERE weight > (SELECT avg(weight) FROM {e})",
    "SELECT id FROM {v} WHERE id NOT IN (SELECT dst FROM {e})",
    "SELECT id FROM {v} WHERE id IN (SELECT src FROM {e} WHERE weight < 5)",
    "SELECT src AS x FROM {e} UNION SELECT dst FROM {e}",
    "SELECT src AS x FROM {e} WHERE weight < 20 UNION ALL SELECT dst FROM {e} WHERE weight > 80",
    "SELECT src FROM {e} WHERE weight > 50 INTERSECT SELECT dst FROM {e} WHERE weight < 30",
    "SELECT src FROM {e} EXCEPT SELECT dst FROM {e} WHERE weight > 20",
    "SELECT src, CASE WHEN weight > 50 THEN 'heavy' ELSE 'light' END AS kind FROM {e}",
    "SELECT src % 3 AS r, count(*) FROM {e} GROUP BY src % 3",
    "SELECT src, dst FROM {e} ORDER BY weight DESC, src, dst LIMIT 5 OFFSET 2",
    "SELECT count(*), sum(weight) FROM {e} WHERE weight < 0",
    "SELECT a.src, count(*) FROM {e} a JOIN {e} b ON a.dst = b.src AND a.weight < b.weight "
    "GROUP BY a.src",
]


@pytest.fixture(scope="module")
def engines(tmp_path_factory):
    rng = np.random.default_rng(7)
    src = rng.integers(0, 40, 300)
    dst = rng.integers(0, 40, 300)
    weight = rng.integers(1, 101, 300).astype(np.float64)
    path = tmp_path_factory.mktemp("dd") / "edges.csv"
    pacsv.write_csv(pa.table({"src": src, "dst": dst, "weight": weight}), path)
    con = graphdb.connect(tmp_path_factory.mktemp("db") / "db")
    con.ingest("g", path)
    duck = duckdb.connect()
    duck.execute(f"CREATE TABLE edges AS SELECT * FROM read_csv_auto('{path}')")
    duck.execute("CREATE TABLE vertices AS SELECT DISTINCT id FROM "
                 "(SELECT src AS id FROM edges UNION SELECT dst FROM edges)")
    yield con, duck
    con.close()


def _normal(rows):
    def cell(v):
        if isinstance(v, float) and not math.isnan(v):
            return round(v, 9)
        return v

    return sorted((tuple(cell(v) for v in row) for row in rows),
                  key=lambda r: tuple((v is None, str(type(v)), v if v is not None else 0)
                                      for v in r))


@pytest.mark.parametrize("query", QUERIES)
def test_same_answer_as_duckdb(engines, query):
    con, duck = engines
    ours = con.execute(query.format(e="g.edges", v="g.vertices")).fetchall()
    theirs = duck.execute(query.format(e="edges", v="vertices")).fetchall()
    if "ORDER BY" in query:
        assert [tuple(r) for r in ours] == [tuple(r) for r in theirs]
    else:
        assert _normal(ours) == _normal(theirs)
