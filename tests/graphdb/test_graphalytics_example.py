"""The LDBC Graphalytics example graphs, ingested with the public API and queried through SQL."""

from __future__ import annotations

import math

import pytest

import graphdb
from tests.support import DATA

EXAMPLE = DATA / "graphalytics" / "example"
UNREACHABLE = 9223372036854775807


def _expected(name: str) -> dict[int, float]:
    out = {}
    for line in (EXAMPLE / name).read_text().split("\n"):
        if line.strip():
            v, value = line.split()
            if value == "Infinity":
                out[int(v)] = math.inf
            else:
                out[int(v)] = int(value) if value.lstrip("-").isdigit() else float(value)
    return out


@pytest.fixture(scope="module")
def examples(tmp_path_factory):
    path = tmp_path_factory.mktemp("graphalytics") / "db"
    with graphdb.connect(path) as con:
        con.ingest("directed", EXAMPLE / "example-directed.e",
                   vertices=str(EXAMPLE / "example-directed.v"))
        con.ingest("undirected", EXAMPLE / "example-undirected.e",
                   vertices=str(EXAMPLE / "example-undirected.v"), undirected=True)
        yield con


@pytest.mark.parametrize("graph, source", [("directed", 1), ("undirected", 2)])
def test_bfs_matches_reference(examples, graph, source):
    expected = _expected(f"example-{graph}-BFS")
    rows = examples.execute(f"SELECT vertex, depth FROM bfs({graph}, {source})").fetchall()
    got = dict(rows)
    assert len(got) == len(rows)  # each reached vertex once
    assert got == {v: int(d) for v, d in expected.items() if d != UNREACHABLE}


@pytest.mark.parametrize("graph", ["directed", "undirected"])
def test_pagerank_matches_reference(examples, graph):
    expected = _expected(f"example-{graph}-PR")
    rows = examples.execute(
        f"SELECT vertex, rank FROM pagerank({graph}, damping => 0.85, max_iterations => 2, "
        "tolerance => 0)").fetchall()
    got = dict(rows)
    assert set(got) == set(expected)
    for v, rank in expected.items():
        assert got[v] == pytest.approx(rank, rel=1e-4), v


def test_vertices_without_edges_are_kept(examples):
    # Vertices listed only in the .v file must be in the graph (PageRank reports every vertex).
    n_vertices = len((EXAMPLE / "example-directed.v").read_text().split())
    assert len(examples.execute("SELECT * FROM pagerank(directed)").fetchall()) == n_vertices
