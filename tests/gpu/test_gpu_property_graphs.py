"""Property graphs, paths and masked subgraphs with ``SET device = 'gpu'``: the same answers as
the independent references of the CPU tests (DuckDB joins of the input tables, networkx), and as
the CPU on a larger labelled graph whose operators must plan onto the device."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import graphdb
from tests.gpu._gpu_graphs import gpu_connection
from tests.graphdb import test_paths_sql as paths
from tests.graphdb import test_property_graph_sql as cases

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def con():
    yield from gpu_connection()


@pytest.mark.parametrize("seed", cases.SEEDS)
@pytest.mark.parametrize("pattern,join", cases.PATTERNS)
def test_labelled_patterns_on_the_gpu(con, seed, pattern, join):
    cases.test_patterns_with_labels_equal_joins_of_the_tables(con, seed, pattern, join)


@pytest.mark.parametrize("seed", cases.SEEDS)
def test_functions_over_chosen_labels_on_the_gpu(con, seed):
    cases.test_graph_functions_over_chosen_labels_match_networkx(con, seed)


@pytest.mark.parametrize("directed,direction,masked", paths.CASES)
@pytest.mark.parametrize("seed", paths.SEEDS[:4])
def test_path_modes_on_the_gpu(con, seed, directed, direction, masked):
    paths.test_every_walk_is_a_row(con, seed, directed, direction, masked)
    paths.test_shortest_paths_match_networkx(con, seed, directed, direction, masked)


def _social(n: int, m: int, seed: int) -> dict[str, pa.Table]:
    rng = np.random.default_rng(seed)
    companies = [f"c{i}" for i in range(50)]
    return {
        "persons": pa.table({"id": np.arange(1, n + 1) * 3, "age": rng.integers(18, 80, n)}),
        "companies": pa.table({"name": companies}),
        "knows": pa.table({"p1": rng.integers(1, n + 1, m) * 3, "p2": rng.integers(1, n + 1, m) * 3,
                           "year": rng.integers(2010, 2024, m)}),
        "work_at": pa.table({"person": np.arange(1, n + 1, 2) * 3,
                             "company": rng.choice(companies, (n + 1) // 2)}),
    }


CREATE = """CREATE OR REPLACE PROPERTY GRAPH s
  VERTEX TABLES (persons KEY (id) LABEL Person, companies KEY (name) LABEL Company)
  EDGE TABLES (
    knows SOURCE KEY (p1) REFERENCES persons (id) DESTINATION KEY (p2) REFERENCES persons (id),
    work_at SOURCE KEY (person) REFERENCES persons DESTINATION KEY (company)
            REFERENCES companies LABEL works_at)"""

QUERIES = [
    "SELECT count(*), sum(b.id) FROM GRAPH_TABLE (s MATCH (a:Person WHERE a.age > 60)-[k:knows "
    "WHERE k.year >= 2020]->(b:Person)-[:works_at]->(c:Company) COLUMNS (a.id AS a, b.id AS id, "
    "c.name AS c)) b",
    "SELECT b, min(n) FROM GRAPH_TABLE (s MATCH p = ANY SHORTEST (a:Person WHERE a.id = 3)"
    "-[e:knows WHERE e.year < 2016]->{1,4}(b:Person) COLUMNS (b.id AS b, path_length(p) AS n)) "
    "GROUP BY b",
    "SELECT vertex, depth FROM bfs(GRAPH s LABELS (knows) WHERE e.year = 2020, 3)",
    "SELECT vertex, component FROM wcc(GRAPH s LABELS (Person, Company, knows, works_at) WHERE "
    "v.age > 30 OR v.label = 'Company')",
    "SELECT vertex, coefficient FROM lcc(GRAPH s LABELS (knows), vertices => [3, 6, 9])",
]


@pytest.mark.parametrize("query", QUERIES)
def test_a_larger_labelled_graph_equals_the_cpu(con, query):
    data = _social(20000, 200000, 5)
    with graphdb.connect() as cpu:
        for c in (con, cpu):
            for name, table in data.items():
                c.register(name, table)
            c.execute(CREATE)
        plan = con.plan(query)
        devices = {node.device for node in plan.walk()
                   if node.kind in ("AlgorithmScan", "PatternMatch")}
        explain = " ".join(" ".join(r[0] for r in con.execute("EXPLAIN " + query)
                                    .fetchall()).split())  # lines unwrapped
        if "vertices =>" in query:  # the local form reads a few CSR rows on the CPU, and says so
            assert "their neighbourhoods only" in explain and "on the CPU" in explain, explain
        else:
            assert "cpu" not in devices, explain
        got, want = con.execute(query).fetchall(), cpu.execute(query).fetchall()
        assert len(got) == len(want)
        for mine, theirs in zip(sorted(got), sorted(want)):
            assert mine == pytest.approx(theirs)
