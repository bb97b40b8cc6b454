"""Randomised queries over random edge lists, answered by graphdb and by DuckDB (hypothesis)."""

from __future__ import annotations

import math

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphdb

duckdb = pytest.importorskip("duckdb")

edge_lists = st.lists(
    st.tuples(st.integers(0, 12), st.integers(0, 12), st.integers(1, 9)), min_size=1, max_size=40)
comparisons = st.sampled_from(["<", "<=", "=", "<>", ">", ">="])
columns = st.sampled_from(["src", "dst", "weight"])
aggregates = st.sampled_from(["count(*)", "count(DISTINCT dst)", "sum(weight)", "min(dst)",
                              "max(weight)", "avg(weight)"])


def _rows(rows):
    def cell(v):
        return round(v, 9) if isinstance(v, float) and not math.isnan(v) else v
    return sorted((tuple(cell(v) for v in r) for r in rows), key=repr)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edges=edge_lists, column=columns, op=comparisons, value=st.integers(0, 12),
       agg=aggregates, group=columns)
def test_filter_group_join_agree_with_duckdb(tmp_path_factory, edges, column, op, value, agg,
                                             group):
    path = tmp_path_factory.mktemp("r") / "edges.csv"
    src, dst, weight = zip(*edges)
    pacsv.write_csv(pa.table({"src": list(src), "dst": list(dst),
                              "weight": [float(w) for w in weight]}), path)
    duck = duckdb.connect()
    duck.execute(f"CREATE TABLE edges AS SELECT * FROM read_csv_auto('{path}')")
    queries = [
        f"SELECT {group}, {agg} FROM {{e}} WHERE {column} {op} {value} GROUP BY {group}",
        f"SELECT a.src, b.dst, a.weight + b.weight FROM {{e}} a JOIN {{e}} b ON a.dst = b.src "
        f"WHERE a.{column} {op} {value}",
        f"SELECT DISTINCT {column} FROM {{e}} WHERE {column} NOT IN "
        f"(SELECT {group} FROM {{e}} WHERE weight {op} {value % 10})",
    ]
    with graphdb.connect(tmp_path_factory.mktemp("db") / "db") as con:
        con.ingest("g", path)
        for query in queries:
            ours = con.execute(query.format(e="g.edges")).fetchall()
            theirs = duck.execute(query.format(e="edges")).fetchall()
            assert _rows(ours) == _rows(theirs), query
