"""Subgraphs and weights chosen at query time, against networkx and slow references.

Every graph function runs on ``GRAPH g WHERE <edge and vertex conditions>`` for random graphs
and random conditions, and must give what the reference computes on the graph those conditions
describe (edges removed by an edge condition, vertices and their edges by a vertex condition,
as networkx's ``G.subgraph``). User ids are sparse (10 * i + 3), so the renumbering of a vertex
subgraph is checked too. Also: ``weight => NULL`` is hop counts on a weighted graph,
``weight => 'col'`` adds up any numeric edge column, ``sswp`` takes its widths from the column
named.
"""

from __future__ import annotations

import math
import random

import networkx as nx
import numpy as np
import pyarrow as pa
import pytest

import graphdb
from tests.executor.test_properties import (
    Case,
    cdlp_reference,
    lcc_reference,
    pagerank_reference,
)

# 4 random graphs in the default run, all 10 in the slow tier (-m slow)
SEEDS = [*range(4), *(pytest.param(s, marks=pytest.mark.slow) for s in range(4, 10))]


def user(i: int) -> int:
    return 10 * i + 3


class Random:
    """A random graph with edge properties ``year`` and ``cost`` (NULL now and then) and the
    vertex property ``age``, stored in ``con`` as ``g``."""

    def __init__(self, con, seed: int, directed: bool, weighted: bool = True):
        rng = random.Random(seed)
        self.rng, self.directed = rng, directed
        self.n = rng.randint(2, 24)
        m = rng.randint(0, 3 * self.n)
        self.edges = [(rng.randrange(self.n), rng.randrange(self.n)) for _ in range(m)]
        self.year = [rng.choice([2019, 2020, 2021]) for _ in range(m)]
        self.cost = [None if rng.random() < 0.1 else rng.choice([0, 1, 2, 5, 7]) for _ in
                     range(m)]
        self.weight = [rng.choice([0.5, 1.0, 2.0, 3.0]) for _ in range(m)]
        self.age = [rng.randint(10, 60) for _ in range(self.n)]
        columns = {"src": [user(u) for u, _ in self.edges], "dst": [user(v) for _, v in self.edges],
                   "year": pa.array(self.year, pa.int64()),
                   "cost": pa.array(self.cost, pa.int64())}
        if weighted:
            columns["weight"] = pa.array(self.weight, pa.float64())
        con.ingest("g", pa.table(columns),
                   vertices=pa.table({"id": [user(i) for i in range(self.n)], "age": self.age}),
                   undirected=not directed, replace=True)

    def condition(self) -> tuple[str, list[int], list[int]]:
        """A random WHERE of a subgraph: (text, kept edge indices, kept vertices)."""
        rng = self.rng
        parts, edges, vertices = [], list(range(len(self.edges))), list(range(self.n))
        if rng.random() < 0.7:
            year = rng.choice([2019, 2020, 2021])
            op = rng.choice(["=", ">=", "<>"])
            parts.append(f"e.year {op} {year}")
            test = {"=": lambda y: y == year, ">=": lambda y: y >= year,
                    "<>": lambda y: y != year}[op]
            edges = [i for i in edges if test(self.year[i])]
        if rng.random() < 0.3:
            parts.append("e.cost IS NOT NULL")
            edges = [i for i in edges if self.cost[i] is not None]
        if rng.random() < 0.6:
            age = rng.randint(15, 55)
            parts.append(f"v.age < {age}")
            vertices = [i for i in vertices if self.age[i] < age]
        kept = set(vertices)
        edges = [i for i in edges if self.edges[i][0] in kept and self.edges[i][1] in kept]
        return " AND ".join(parts) or "TRUE", edges, vertices

    def case(self, edges: list[int], vertices: list[int], weights=None) -> tuple[Case, dict]:
        """The subgraph as a test Case over dense ids 0..k-1, and dense id -> user id."""
        dense = {v: i for i, v in enumerate(vertices)}
        arcs = [(dense[self.edges[i][0]], dense[self.edges[i][1]],
                 1.0 if weights is None else float(weights[i])) for i in edges]
        return Case(len(vertices), arcs, self.directed, weights is not None), \
            {i: user(v) for v, i in dense.items()}


def rows(con, sql: str) -> dict:
    return {r[0]: r[1] for r in con.execute(sql).fetchall()}


#: Every operator variant runs on a view: the cost model's choice, the streamed variants, and
#: the partitioned ones over three simulated ranks.
VARIANTS = {"auto": [], "streamed": ["SET debug_variant = 'streamed'"],
            "partitioned": ["SET debug_variant = 'partitioned'", "SET debug_ranks = 3"]}


@pytest.fixture(scope="module", params=list(VARIANTS))
def con(request):
    with graphdb.connect() as c:
        for statement in VARIANTS[request.param]:
            c.execute(statement)
        yield c


def translated(result: dict, back: dict) -> dict:
    return {back[k]: v for k, v in result.items()}


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_every_algorithm_on_a_random_subgraph(con, seed, directed, rank_rel=1e-9):
    """``rank_rel``: PageRank's tolerance (the GPU operator reads float32 contributions)."""
    g = Random(con, seed, directed)
    where, edges, vertices = g.condition()
    case, back = g.case(edges, vertices, g.weight)
    sub = f"GRAPH g WHERE {where}"
    k = case.n
    # whole-vertex algorithms
    expected = {back[i]: r for i, r in enumerate(pagerank_reference(case, 0.85, 5))} if k else {}
    sql = f"SELECT vertex, rank FROM pagerank({sub}, max_iterations => 5, tolerance => 0)"
    if "gpu · resident" in " ".join(r[0] for r in con.execute("EXPLAIN " + sql).fetchall()):
        rank_rel = max(rank_rel, 1e-4)  # on a GPU machine: float32 contributions
    got = rows(con, sql)
    assert got.keys() == expected.keys()
    assert [got[v] for v in expected] == pytest.approx(list(expected.values()), rel=rank_rel)
    parts = (nx.weakly_connected_components(case.nx) if directed
             else nx.connected_components(case.nx))
    assert rows(con, f"SELECT vertex, component FROM wcc({sub})") == {
        back[v]: back[min(p)] for p in parts for v in p}
    assert rows(con, f"SELECT vertex, label FROM cdlp({sub}, max_iterations => 4)") == {
        back[i]: back[label] for i, label in enumerate(cdlp_reference(case, 4))}
    got = rows(con, f"SELECT vertex, coefficient FROM lcc({sub})")
    expected = {back[i]: c for i, c in enumerate(lcc_reference(case))}
    assert got.keys() == expected.keys()
    assert [got[v] for v in expected] == pytest.approx(list(expected.values()))
    if not k:
        return
    # traversals from a vertex of the subgraph
    source = g.rng.randrange(k)
    hops = nx.single_source_shortest_path_length(case.nx, source)
    assert rows(con, f"SELECT vertex, depth FROM bfs({sub}, {back[source]})") == \
        translated(hops, back)
    assert rows(con, f"SELECT vertex, hops FROM khop({sub}, {back[source]}, 2)") == \
        translated({v: d for v, d in hops.items() if d <= 2}, back)
    dist = nx.single_source_dijkstra_path_length(case.nx, source, weight="weight")
    got = rows(con, f"SELECT vertex, distance FROM sssp({sub}, {back[source]})")
    assert got.keys() == translated(dist, back).keys()
    assert [got[back[v]] for v in dist] == pytest.approx(list(dist.values()))
    width = widest(case, source)
    assert rows(con, f"SELECT vertex, width FROM sswp({sub}, {back[source]})") == \
        translated(width, back)
    target = g.rng.randrange(k)
    path = [r[1] for r in con.execute(
        f"SELECT step, vertex FROM shortest_path({sub}, {back[source]}, {back[target]}) "
        "ORDER BY step").fetchall()]
    if target in dist:
        assert path[0] == back[source] and path[-1] == back[target]
        assert len(path) - 1 >= 0
        inverse = {u: i for i, u in back.items()}
        cost = sum(min(w for a, b, w in case.arcs() if (a, b) == (inverse[x], inverse[y]))
                   for x, y in zip(path, path[1:]))
        assert cost == pytest.approx(dist[target])
    else:
        assert path == []
    out = sorted(r[0] for r in con.execute(
        f"SELECT neighbor FROM neighbors({sub}, {back[source]})").fetchall())
    assert out == sorted(back[v] for u, v, _ in case.arcs() if u == source)


def widest(case: Case, source: int) -> dict:
    width = {source: math.inf}
    changed = True
    while changed:
        changed = False
        for u, v, w in case.arcs():
            if u in width and min(width[u], w) > width.get(v, -math.inf):
                width[v] = min(width[u], w)
                changed = True
    return width


def test_a_vertex_the_subgraph_drops_is_no_source(con):
    Random(con, 3, True)
    with pytest.raises(graphdb.ProgrammingError, match="not a vertex of the subgraph"):
        con.execute("SELECT * FROM bfs(GRAPH g WHERE v.age < 0, 3)")
    with pytest.raises(graphdb.ProgrammingError, match="not a vertex of graph"):
        con.execute("SELECT * FROM bfs(GRAPH g WHERE v.age < 0, 4)")


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_weights_chosen_at_query_time(con, seed, directed):
    g = Random(con, seed, directed)
    everything = list(range(len(g.edges)))
    source = user(g.rng.randrange(g.n))
    inner = (source - 3) // 10
    for weight, values in (("NULL", None), ("'cost'", g.cost), ("'weight'", g.weight),
                           (None, g.weight)):
        edges = [i for i in everything if values is None or values[i] is not None]
        case, back = g.case(edges, list(range(g.n)), values)
        argument = "" if weight is None else f", weight => {weight}"
        expected = translated(nx.single_source_dijkstra_path_length(case.nx, inner), back)
        if values is g.cost and len(edges) < len(everything):
            with pytest.raises(graphdb.ProgrammingError, match="NaN/NULL"):
                con.execute(f"SELECT * FROM sssp(g, {source}{argument})")
            continue
        got = rows(con, f"SELECT vertex, distance FROM sssp(g, {source}{argument})")
        assert got.keys() == expected.keys()
        assert [got[v] for v in expected] == pytest.approx(list(expected.values()))
        if values is not None:
            assert rows(con, f"SELECT vertex, width FROM sswp(g, {source}{argument})") == \
                translated(widest(case, inner), back)


def test_hop_counts_on_a_weighted_graph():
    """The wrong answer of issue 22: weight => NULL used the stored weights."""
    with graphdb.connect() as con:
        con.ingest("g", pa.table({"src": [1, 2, 1], "dst": [2, 3, 3],
                                  "weight": [1.0, 1.0, 5.0]}))
        assert rows(con, "SELECT vertex, distance FROM sssp(g, 1, weight => NULL)") == \
            {1: 0, 2: 1, 3: 1}
        assert rows(con, "SELECT vertex, distance FROM sssp(g, 1)") == {1: 0, 2: 1, 3: 2}
        assert [r[1] for r in con.execute(
            "SELECT step, vertex FROM shortest_path(g, 1, 3, weight => NULL) ORDER BY step")
            .fetchall()] == [1, 3]
        with pytest.raises(graphdb.ProgrammingError, match="weight => NULL gives none"):
            con.execute("SELECT * FROM sswp(g, 1, weight => NULL)")


def test_sswp_on_capacities_not_costs():
    """sswp took the stored weights whatever the question; now the column it is asked for."""
    with graphdb.connect() as con:
        con.ingest("g", pa.table({"src": [1, 1, 2], "dst": [2, 3, 3], "weight": [1.0, 9.0, 1.0],
                                  "capacity": [10, 1, 10]}))
        assert rows(con, "SELECT vertex, width FROM sswp(g, 1, weight => 'capacity')") == \
            {1: math.inf, 2: 10, 3: 10}
        assert rows(con, "SELECT vertex, width FROM sswp(g, 1)") == {1: math.inf, 2: 1, 3: 9}


def test_subgraph_conditions_take_parameters_and_subqueries(con):
    Random(con, 5, True)
    con.register("chosen", pa.table({"id": [user(i) for i in range(0, 24, 2)]}))
    got = con.execute("SELECT count(*) FROM wcc(GRAPH g WHERE v.id IN (SELECT id FROM chosen) "
                      "AND e.year >= ?)", [2020]).fetchone()[0]
    assert got == len([i for i in range(0, 24, 2) if i < con.execute(
        "SELECT count(*) FROM g.vertices").fetchone()[0]])


def test_subgraph_errors_are_clear(con):
    Random(con, 1, True)
    for sql, message in (
            ("SELECT * FROM wcc(GRAPH g WHERE year = 2020)", "qualify 'year'"),
            ("SELECT * FROM wcc(GRAPH g WHERE e.yeer = 2020)", "did you mean 'year'"),
            ("SELECT * FROM wcc(GRAPH g WHERE x.year = 2020)", "names no edge or vertex"),
            ("SELECT * FROM wcc(GRAPH g WHERE e.year = v.age)", "names both"),
            ("SELECT * FROM wcc(GRAPH nope WHERE e.year = 1)", "nope"),
    ):
        with pytest.raises(graphdb.ProgrammingError, match=message):
            con.execute(sql)


def test_explain_shows_the_subgraph_and_weights(con):
    Random(con, 2, True)
    text = "\n".join(r[0] for r in con.execute(
        "EXPLAIN SELECT * FROM sssp(GRAPH g WHERE e.year = 2020 AND v.age > 20, 3, "
        "weight => 'cost')").fetchall())
    assert "sssp(GRAPH g WHERE e.year = 2020 AND v.age > 20" in text
    assert "weights: edge column 'cost'" in text
    assert "an edge mask" in text and "a vertex mask" in text
    assert "SCAN g.edge_positions" in text and "SCAN g.vertex_positions" in text
    text = "\n".join(r[0] for r in con.execute(
        "EXPLAIN SELECT * FROM sssp(g, 3, weight => NULL)").fetchall())
    assert "weights: none" in text


@pytest.mark.parametrize("seed", range(12))
def test_compaction_matches_a_rebuilt_graph(seed):
    """The view's CSR (numpy) is the CSR of the kept edges built from scratch: edge masks,
    vertex masks, both, neither, keeping nothing or everything, with empty rows."""
    from graphdb.executor.graph import CSR
    from graphdb.executor.subgraph import compact

    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 60)), int(rng.integers(0, 400))
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    csr = CSR.from_edges(src, dst, n)
    share_e, share_v = [(0.6, 0.7), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0)][seed % 4]
    keep_edge = None if seed % 3 == 1 else rng.random(m) < share_e
    keep_vertex = None if seed % 3 == 2 else rng.random(n) < share_v
    new_id = None if keep_vertex is None else np.cumsum(keep_vertex) - 1
    out = compact(np, csr.offsets, csr.targets, keep_edge, keep_vertex, new_id)
    s, d = csr.sources(), csr.targets
    keep = np.ones(m, dtype=bool) if keep_edge is None else keep_edge.copy()
    if keep_vertex is None:
        keep_vertex, new_id = np.ones(n, dtype=bool), np.arange(n)
    keep &= keep_vertex[s] & keep_vertex[d]
    want = CSR.from_edges(new_id[s[keep]], new_id[d[keep]], int(keep_vertex.sum()))
    assert out.offsets.tolist() == want.offsets.tolist()
    assert out.targets.tolist() == want.targets.tolist()
    assert out.kept.tolist() == np.flatnonzero(keep).tolist()


def test_create_graph_as_a_subgraph_keeps_it(con):
    g = Random(con, 4, False)
    where, edges, vertices = g.condition()
    con.execute(f"CREATE OR REPLACE GRAPH h AS GRAPH g WHERE {where}")
    kept = sorted((min(user(g.edges[i][0]), user(g.edges[i][1])),
                   max(user(g.edges[i][0]), user(g.edges[i][1])), g.year[i]) for i in edges)
    assert sorted(con.execute("SELECT src, dst, year FROM h.edges").fetchall()) == kept
    assert con.execute("SELECT id, age FROM h.vertices ORDER BY id").fetchall() == \
        [(user(v), g.age[v]) for v in vertices]
    assert not con.catalog.get("h").directed and con.catalog.get("h").weighted
    if vertices:  # the kept graph answers as the subgraph does
        source = user(vertices[0])
        assert rows(con, f"SELECT * FROM sssp(h, {source})") == \
            rows(con, f"SELECT * FROM sssp(GRAPH g WHERE {where}, {source})")
    con.execute("DROP GRAPH h")


def test_lateral_runs_on_the_subgraph(con):
    g = Random(con, 6, True)
    where, edges, vertices = g.condition()
    case, back = g.case(edges, vertices)
    starts = [user(v) for v in range(0, g.n, 3)]
    con.register("starts", pa.table({"id": starts}))
    got = sorted(con.execute(f"SELECT s.id, k.vertex, k.hops FROM starts s, "
                             f"LATERAL khop(GRAPH g WHERE {where}, s.id, 2) k").fetchall())
    inverse = {u: i for i, u in back.items()}
    expected = sorted((s, back[v], d) for s in starts if s in inverse
                      for v, d in nx.single_source_shortest_path_length(
                          case.nx, inverse[s], cutoff=2).items())
    assert got == expected


def test_python_subgraph_handle(con):
    g = Random(con, 8, True)
    where, edges, vertices = g.condition()
    handle = con.graph("g").subgraph(where)
    assert handle.wcc().num_rows == len(vertices)
    if vertices:
        source = user(vertices[0])
        assert handle.sssp(source, weight=None).to_pylist() == [
            {"vertex": v, "distance": d} for v, d in con.execute(
                f"SELECT * FROM sssp(GRAPH g WHERE {where}, {source}, weight => NULL)")
            .fetchall()]


def test_a_subgraph_that_keeps_everything_runs_on_the_stored_graph():
    """Conditions every edge and vertex pass build no view (EXPLAIN ANALYZE says so); the answer
    is networkx's, and a weight chosen by the query still counts (a view of weights only)."""
    with graphdb.connect() as con:
        g = Random(con, 3, True)
        everything = list(range(len(g.edges)))
        case, back = g.case(everything, list(range(g.n)), g.weight)
        source = user(0)
        expected = translated(nx.single_source_dijkstra_path_length(case.nx, 0), back)
        for where in ("e.year >= 2019", "v.age >= 10", "e.year > 0 AND v.age < 100", "TRUE"):
            sql = f"SELECT vertex, distance FROM sssp(GRAPH g WHERE {where}, {source})"
            got = rows(con, sql)
            assert got.keys() == expected.keys()
            assert [got[v] for v in expected] == pytest.approx(list(expected.values()))
            plan = "\n".join(r[0] for r in con.execute("EXPLAIN ANALYZE " + sql).fetchall())
            assert "view the stored graph (every edge and vertex kept)" in plan
        hops = translated(nx.single_source_shortest_path_length(case.nx, 0), back)
        sql = f"SELECT vertex, distance FROM sssp(GRAPH g WHERE e.year >= 2019, {source}, " \
              "weight => NULL)"
        assert rows(con, sql) == hops
        plan = "\n".join(r[0] for r in con.execute("EXPLAIN ANALYZE " + sql).fetchall())
        assert "every edge and vertex kept" not in plan
        # one edge dropped: a view again, not the stored graph
        year = g.year[0]
        sql = f"SELECT count(*) FROM wcc(GRAPH g WHERE e.year <> {year})"
        plan = "\n".join(r[0] for r in con.execute("EXPLAIN ANALYZE " + sql).fetchall())
        assert "every edge and vertex kept" not in plan and "view edges" in plan
