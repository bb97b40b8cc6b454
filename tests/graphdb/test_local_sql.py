"""Local and multi-source graph functions against networkx and the whole-graph functions.

``lcc(g, vertices => ...)`` and ``degree(g, vertices => ...)`` compute only the vertices asked
for, from their neighbourhoods; ``bfs``/``khop``/``sssp`` with ``sources => ...`` run once for a
set of sources (a list, a parameter, a subquery) and say which source each row came from.
"""

from __future__ import annotations

import random

import networkx as nx
import pyarrow as pa
import pytest

import graphdb

SEEDS = range(6)


def load(con, seed: int, directed: bool, loops: bool = True) -> nx.MultiDiGraph:
    rng = random.Random(seed)
    n = rng.randint(3, 30)
    edges = [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(0, 4 * n))]
    if not loops:
        edges = [(u, v) for u, v in edges if u != v]
    con.ingest("g", pa.table({"src": pa.array([u for u, _ in edges], pa.int64()),
                              "dst": pa.array([v for _, v in edges], pa.int64()),
                              "weight": [float(1 + (u * 7 + v) % 5) for u, v in edges]}),
               vertices=pa.table({"id": list(range(n))}), undirected=not directed, replace=True)
    graph = nx.MultiDiGraph() if directed else nx.MultiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from((u, v, {"weight": float(1 + (u * 7 + v) % 5)}) for u, v in edges)
    return graph


@pytest.fixture(scope="module")
def con():
    with graphdb.connect() as c:
        yield c


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_lcc_of_some_vertices_is_the_whole_graphs(con, seed, directed):
    graph = load(con, seed, directed)
    whole = dict(con.execute("SELECT vertex, coefficient FROM lcc(g)").fetchall())
    rng = random.Random(seed)
    chosen = rng.sample(range(graph.number_of_nodes()), min(5, graph.number_of_nodes()))
    asked = chosen + [10_000, None]  # ids not in the graph, and NULLs, give no rows
    for argument, parameters in ((f"[{', '.join(str(v) for v in chosen)}, 10000]", None),
                                 ("?", [asked]),
                                 ("(SELECT id FROM picked)", None)):
        con.register("picked", pa.table({"id": pa.array(asked, pa.int64())}))
        got = dict(con.execute(f"SELECT vertex, coefficient FROM lcc(g, vertices => "
                               f"{argument})", parameters).fetchall())
        assert got.keys() == set(chosen)
        assert [got[v] for v in chosen] == pytest.approx([whole[v] for v in chosen])
    if not directed:
        simple = nx.Graph(graph)
        simple.remove_edges_from(nx.selfloop_edges(simple))
        expected = nx.clustering(simple, chosen)
        assert [got[v] for v in chosen] == pytest.approx([expected[v] for v in chosen])


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_degree_matches_networkx(con, seed, directed):
    graph = load(con, seed, directed, loops=directed)
    n = graph.number_of_nodes()
    for direction in ("out", "in", "both") if directed else ("out",):
        expected = {"out": graph.out_degree, "in": graph.in_degree,
                    "both": graph.degree}[direction] if directed else graph.degree
        got = dict(con.execute(f"SELECT vertex, degree FROM degree(g, direction => "
                               f"'{direction}')").fetchall())
        assert got == {v: expected[v] for v in range(n)}
        some = [0, n - 1]
        got = dict(con.execute(f"SELECT vertex, degree FROM degree(g, vertices => {some}, "
                               f"direction => '{direction}')").fetchall())
        assert got == {v: expected[v] for v in some}


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_set_of_sources_in_one_operator(con, seed, directed):
    graph = load(con, seed, directed)
    rng = random.Random(seed)
    sources = sorted(set(rng.choices(range(graph.number_of_nodes()), k=4)))
    con.register("starts", pa.table({"id": sources + [None, 99_999]}))
    expected_bfs = sorted((s, v, d) for s in sources
                          for v, d in nx.single_source_shortest_path_length(graph, s).items())
    for argument, parameters in ((str(sources), None), ("?", [sources]),
                                 ("(SELECT id FROM starts)", None)):
        got = sorted(con.execute(f"SELECT source, vertex, depth FROM bfs(g, sources => "
                                 f"{argument})", parameters).fetchall())
        assert got == expected_bfs
    got = sorted(con.execute(f"SELECT source, vertex, hops FROM khop(g, sources => {sources}, "
                             "k => 2)").fetchall())
    assert got == [r for r in expected_bfs if r[2] <= 2]
    got = con.execute(f"SELECT source, vertex, distance FROM sssp(g, sources => {sources})"
                      ).fetchall()
    expected = {(s, v): d for s in sources for v, d in
                nx.single_source_dijkstra_path_length(graph, s, weight="weight").items()}
    assert {(s, v) for s, v, _ in got} == set(expected)
    assert [d for _, _, d in sorted(got)] == pytest.approx(
        [expected[k] for k in sorted(expected)])
    # the LATERAL form plans onto the same operator
    lateral = sorted(con.execute("SELECT s.id, b.vertex, b.depth FROM starts s, "
                                 "LATERAL bfs(g, s.id) b").fetchall())
    assert lateral == expected_bfs


def test_sources_errors(con):
    load(con, 1, True)
    for sql, message in (
            ("SELECT * FROM lcc(g, sources => [1])", "takes no set of sources"),
            ("SELECT * FROM bfs(g, 1, sources => [1])", "given twice"),
            ("SELECT * FROM lcc(g, vertices => 5)", "list of vertex ids"),
    ):
        with pytest.raises(graphdb.ProgrammingError, match=message):
            con.execute(sql)


def test_explain_says_where_local_and_multi_source_operators_run(con):
    load(con, 2, True)
    text = "\n".join(r[0] for r in con.execute(
        "EXPLAIN SELECT * FROM lcc(g, vertices => [1, 2])").fetchall())
    assert "from their neighbourhoods only" in text
    text = "\n".join(r[0] for r in con.execute(
        "EXPLAIN SELECT * FROM bfs(g, sources => [1, 2])").fetchall())
    assert "one run for the distinct arguments of every row: bfs's multi-source form" in text

