"""A property graph over stored tables, written through its tables, answers on the GPU as
networkx does over the tables' rows (BFS, PageRank, WCC and a pattern), after each batch of
writes (an uncompacted delta) and after CHECKPOINT. The same case runs on the CPU in
tests/graphdb/test_graph_over_tables.py."""

from __future__ import annotations

import random

import networkx as nx
import pytest

import graphdb

pytestmark = pytest.mark.gpu


def _reference(con):
    people = [r[0] for r in con.execute("SELECT id FROM person").fetchall()]
    graph = nx.DiGraph()
    graph.add_nodes_from(people)
    graph.add_edges_from(con.execute("SELECT a, b FROM knows").fetchall())
    return graph


def _check(con):
    reference = _reference(con)
    source = min(reference.nodes)
    depths = dict(con.execute(f"SELECT vertex, depth FROM bfs(GRAPH g LABELS (Knows), "
                              f"{source})").fetchall())
    assert depths == nx.single_source_shortest_path_length(reference, source)
    ranks = dict(con.execute("SELECT vertex, rank FROM pagerank(GRAPH g LABELS (Knows), "
                             "tolerance => 1e-10)").fetchall())
    expected = nx.pagerank(reference, alpha=0.85, tol=1e-10)
    assert max(abs(ranks[v] - expected[v]) for v in expected) < 1e-4
    components = dict(con.execute("SELECT vertex, component FROM wcc(GRAPH g LABELS (Knows))"
                                  ).fetchall())
    for part in nx.weakly_connected_components(reference):
        assert len({components[v] for v in part}) == 1
    pairs = sorted(con.execute("SELECT a, b FROM GRAPH_TABLE (g MATCH (x:Person)-[:Knows]->"
                               "(y:Person) COLUMNS (x.id AS a, y.id AS b))").fetchall())
    assert pairs == sorted(reference.edges)


def _pairs(rng, n: int, count: int, taken: set) -> str:
    """``count`` new distinct (a, b) rows (one edge per pair: networkx's graph has no
    parallel edges)."""
    found = []
    while len(found) < count:
        pair = (rng.randrange(n), rng.randrange(n))
        if pair not in taken:
            taken.add(pair)
            found.append(pair)
    return ", ".join(f"({a}, {b})" for a, b in found)


def test_graph_over_tables_on_the_gpu(tmp_path):
    rng = random.Random(3)
    taken: set = set()
    with graphdb.connect(tmp_path / "db") as con:
        con.execute("SET device = 'gpu'")
        con.execute("CREATE TABLE person (id BIGINT PRIMARY KEY, name VARCHAR);"
                    "CREATE TABLE knows (a BIGINT, b BIGINT);")
        con.execute("INSERT INTO person SELECT i, 'p' || i FROM range(300) t(i)")
        con.execute("INSERT INTO knows VALUES " + _pairs(rng, 300, 1500, taken))
        con.execute("CREATE PROPERTY GRAPH g VERTEX TABLES (person LABEL Person) EDGE TABLES "
                    "(knows SOURCE KEY (a) REFERENCES person DESTINATION KEY (b) REFERENCES "
                    "person LABEL Knows)")
        _check(con)
        for round_ in range(3):
            con.execute(f"INSERT INTO person SELECT i, 'q' || i FROM range({300 + round_ * 10}, "
                        f"{310 + round_ * 10}) t(i)")
            con.execute("INSERT INTO knows VALUES " + _pairs(rng, 310 + round_ * 10, 100, taken))
            con.execute(f"DELETE FROM knows WHERE (a * 7 + b) % 13 = {round_}")
            taken = {(a, b) for a, b in taken if (a * 7 + b) % 13 != round_}
            _check(con)
        con.execute("CHECKPOINT g")
        _check(con)
