"""Every LDBC Graphalytics validation case, loaded with the public ingest and run through SQL.

Inputs given as .v/.e files are ingested as they are; adjacency inputs (``v n1 n2 ...``) are
written out as the edge and vertex files a user would have, then ingested the same way.
"""

from __future__ import annotations

import numpy as np
import pytest

import graphdb
from tests.graphalytics import CASES, DATA_DIR, compare, load_input


def _sql_literal(value) -> str:
    return repr(value) if not isinstance(value, str) else "'" + value.replace("'", "''") + "'"


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    with graphdb.connect(tmp_path_factory.mktemp("graphalytics") / "db") as connection:
        yield connection


def _load(con, case, tmp_path) -> str:
    name = "g_" + "".join(c if c.isalnum() else "_" for c in case.name)
    if len(case.inputs) == 2:
        vertices, edges = (DATA_DIR / p for p in case.inputs)
    else:
        graph = load_input(case)
        vertices, edges = tmp_path / f"{name}.v", tmp_path / f"{name}.e"
        np.savetxt(vertices, graph.vertices, fmt="%d")
        np.savetxt(edges, np.column_stack([graph.src, graph.dst]), fmt="%d")
    con.ingest(name, edges, vertices=str(vertices), undirected=not case.directed, replace=True)
    return name


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_through_sql(con, tmp_path, case):
    graph = _load(con, case, tmp_path)
    args = "".join(f", {k} => {_sql_literal(v)}" for k, v in case.params.items())
    rows = con.execute(f"SELECT vertex, {case.value_column} FROM {case.algorithm}({graph}{args})"
                       ).fetchall()
    actual = dict(rows)
    assert len(actual) == len(rows), "a vertex reported twice"
    problems = compare(case, actual)
    assert not problems, problems
