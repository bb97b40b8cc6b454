"""Paths as values in GRAPH_TABLE, against networkx and brute-force enumeration.

Random small multigraphs (parallel edges, self loops), directed and undirected, edges followed
out, in or both ways, with and without a condition inside the quantified edge: one row per
walk by default (every walk, enumerated by brute force), ANY SHORTEST / ALL SHORTEST against
networkx's shortest paths (cycles back to the start by brute force), ANY k against the k
smallest walk lengths.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict

import networkx as nx
import pyarrow as pa
import pytest

import graphdb

# 4 random graphs in the default run, all 8 in the slow tier (-m slow)
SEEDS = [*range(4), *(pytest.param(s, marks=pytest.mark.slow) for s in range(4, 8))]


class Graph:
    """A random multigraph stored as ``g`` with an edge property ``w``; ``arcs`` are the steps a
    pattern may take in ``direction`` as (from, to, edge index)."""

    def __init__(self, con, seed: int, directed: bool):
        rng = random.Random(seed)
        self.rng, self.directed = rng, directed
        self.n = rng.randint(2, 9)
        m = rng.randint(1, 2 * self.n)
        self.edges = [(rng.randrange(self.n), rng.randrange(self.n)) for _ in range(m)]
        self.w = [rng.randint(0, 3) for _ in range(m)]
        con.ingest("g", pa.table({"src": [u for u, _ in self.edges],
                                  "dst": [v for _, v in self.edges], "w": self.w}),
                   vertices=pa.table({"id": list(range(self.n))}), undirected=not directed,
                   replace=True)

    def arcs(self, direction: str, keep=lambda i: True) -> list[tuple[int, int, int]]:
        out = []
        for i, (u, v) in enumerate(self.edges):
            if not keep(i):
                continue
            forward, backward = (u, v, i), (v, u, i)
            if not self.directed or direction == "both":  # a self-loop either way: one step
                out += [forward] + ([backward] if u != v else [])
            else:
                out += {"out": [forward], "in": [backward]}[direction]
        return out

    def walks(self, source: int, low: int, high: int, arcs) -> list[tuple[int, ...]]:
        """Every walk of low..high steps from ``source``, as its vertex sequence (one per
        sequence of edges taken: parallel edges make distinct walks)."""
        by_vertex = defaultdict(list)
        for u, v, i in arcs:
            by_vertex[u].append((v, i))
        found, frontier = [], [((source,), ())]
        for length in range(high + 1):
            if length >= low:
                found += [path for path, _ in frontier]
            frontier = [(path + (v,), used + (i,)) for path, used in frontier
                        for v, i in by_vertex[path[-1]]]
        return found


def paths(con, sql: str) -> list[tuple]:
    return sorted(tuple(r[0]) for r in con.execute(sql).fetchall())


@pytest.fixture(scope="module")
def con():
    with graphdb.connect() as c:
        yield c


CASES = [(d, direction, masked) for d in (True, False) for direction in ("out", "in", "both")
         for masked in (False, True) if d or direction == "out"]


def arrow(direction: str, condition: str = "") -> str:
    inner = f"[e{condition}]"
    return {"out": f"-{inner}->", "in": f"<-{inner}-", "both": f"-{inner}-"}[direction]


def masked_case(con, seed: int, directed: bool, direction: str, masked: bool):
    """The random graph, the edge condition of a masked case and the arcs it leaves."""
    g = Graph(con, seed, directed)
    keep = (lambda i: g.w[i] >= 1) if masked else (lambda i: True)
    return g, " WHERE e.w >= 1" if masked else "", g.arcs(direction, keep)


@pytest.mark.parametrize("directed,direction,masked", CASES)
@pytest.mark.parametrize("seed", SEEDS)
def test_every_walk_is_a_row(con, seed, directed, direction, masked):
    g, condition, arcs = masked_case(con, seed, directed, direction, masked)
    source = g.rng.randrange(g.n)
    low, high = g.rng.choice([(0, 2), (1, 3), (2, 3), (1, 1)])
    expected = sorted(g.walks(source, low, high, arcs))
    got = paths(con, f"SELECT vs FROM GRAPH_TABLE (g MATCH p = (a){arrow(direction, condition)}"
                     f"{{{low},{high}}}(b) WHERE a.id = {source} COLUMNS (vertices(p) AS vs))")
    assert got == expected
    count = con.execute(f"SELECT count(*) FROM GRAPH_TABLE (g MATCH (a)"
                        f"{arrow(direction, condition)}{{{low},{high}}}(b) WHERE a.id = "
                        f"{source})").fetchone()[0]
    assert count == len(expected)


def shortest_cycle(g: Graph, source: int, arcs) -> list[tuple[int, ...]]:
    """Every shortest walk of at least one edge from ``source`` back to it."""
    for length in range(1, g.n + 1):
        found = [w for w in g.walks(source, length, length, arcs) if w[-1] == source]
        if found:
            return found
    return []


@pytest.mark.parametrize("directed,direction,masked", CASES)
@pytest.mark.parametrize("seed", SEEDS)
def test_shortest_paths_match_networkx(con, seed, directed, direction, masked):
    g, condition, arcs = masked_case(con, seed, directed, direction, masked)
    simple = nx.MultiDiGraph()
    simple.add_nodes_from(range(g.n))
    simple.add_edges_from((u, v, i) for u, v, i in arcs)
    source = g.rng.randrange(g.n)
    rows = con.execute(f"SELECT b, vs FROM GRAPH_TABLE (g MATCH p = ALL SHORTEST (a)"
                       f"{arrow(direction, condition)}+(b) WHERE a.id = {source} "
                       "COLUMNS (b.id AS b, vertices(p) AS vs))").fetchall()
    got = defaultdict(list)
    for b, vs in rows:
        got[b].append(tuple(vs))
    reach = nx.single_source_shortest_path_length(simple, source)
    multiplicity = Counter((u, v) for u, v, _ in arcs)
    for b in range(g.n):
        if b == source:
            expected = shortest_cycle(g, source, arcs)
        elif b in reach:
            # networkx lists each vertex sequence once; parallel edges make more walks
            expected = [p for seq in nx.all_shortest_paths(simple, source, b)
                        for p in [tuple(seq)] * _product(multiplicity, seq)]
        else:
            expected = []
        assert sorted(got.get(b, [])) == sorted(expected), b
    # the rows are counted before they are built: exactly these many fit the limit; count(*)
    # alone builds none, and is not refused
    pattern = (f"GRAPH_TABLE (g MATCH ALL SHORTEST (a){arrow(direction, condition)}+(b) "
               f"WHERE a.id = {source} COLUMNS (b.id AS b))")
    query, count = f"SELECT count(b) FROM {pattern}", f"SELECT count(*) FROM {pattern}"
    try:
        con.execute(f"SET max_path_rows = {max(len(rows), 1)}")
        assert con.execute(query).fetchone()[0] == len(rows)
        if len(rows) > 1:
            con.execute(f"SET max_path_rows = {len(rows) - 1}")
            with pytest.raises(graphdb.ProgrammingError, match="one per shortest walk"):
                con.execute(query)
            assert con.execute(count).fetchone()[0] == len(rows)
    finally:
        con.execute("RESET max_path_rows")
    any_rows = con.execute(f"SELECT b, vs FROM GRAPH_TABLE (g MATCH p = ANY SHORTEST (a)"
                           f"{arrow(direction, condition)}+(b) WHERE a.id = {source} "
                           "COLUMNS (b.id AS b, vertices(p) AS vs))").fetchall()
    assert sorted(b for b, _ in any_rows) == sorted(got)
    for b, vs in any_rows:
        assert tuple(vs) in got[b]


@pytest.mark.parametrize("prefix", ["ANY SHORTEST", "ALL SHORTEST", "ANY 2", ""])
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_end_conditions_equal_filtering_the_rows(con, seed, directed, prefix):
    # the target's own conditions are the hop's ends (a shortest search stops once it has
    # reached them); the rows must be those of the whole search, filtered afterwards; and the
    # lengths those of networkx's shortest paths
    g = Graph(con, seed, directed)
    ends = sorted(g.rng.sample(range(g.n), g.rng.randint(0, 3)))
    quantifier = "+" if prefix else "{1,3}"
    single = g.rng.random() < 0.5  # one start row, or every vertex a start row
    start = g.rng.randrange(g.n)
    where = f"a.id = {start}" if single else "a.id >= 0"  # the search starts from a
    base = (f"SELECT a, b, vs FROM GRAPH_TABLE (g MATCH p = {prefix} (a)-[e]->{quantifier}(b"
            "INSIDE) WHERE " + where + " COLUMNS (a.id AS a, b.id AS b, vertices(p) AS vs))")
    whole = con.execute(base.replace("INSIDE", "")).fetchall()
    inside = f" WHERE b.id IN ({', '.join(map(str, ends))})" if ends else " WHERE b.id < 0"
    got = con.execute(base.replace("INSIDE", inside)).fetchall()
    expected = [r for r in whole if r[1] in ends]
    if prefix.startswith("ANY"):  # ties between walks of one length may break either way
        arcs = {(u, v) for u, v, _ in g.arcs("out")}
        assert all(all(step in arcs for step in zip(vs, vs[1:])) for _, _, vs in got)
        got = [(a, b, len(vs)) for a, b, vs in got]
        expected = [(a, b, len(vs)) for a, b, vs in expected]
    assert sorted(got, key=str) == sorted(expected, key=str)
    if prefix == "ANY SHORTEST":
        simple = nx.DiGraph() if directed else nx.Graph()
        simple.add_nodes_from(range(g.n))
        simple.add_edges_from((u, v) for u, v, _ in g.arcs("out"))
        for a, b, length in got:
            if a != b:
                assert length - 1 == nx.shortest_path_length(simple, a, b)


def _product(multiplicity: Counter, seq) -> int:
    out = 1
    for u, v in zip(seq, seq[1:]):
        out *= multiplicity[(u, v)]
    return out


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("k", [1, 2, 3])
def test_any_k_are_the_k_shortest_walks(con, seed, directed, k):
    g = Graph(con, seed, directed)
    arcs = g.arcs("out")
    source = g.rng.randrange(g.n)
    high = 5
    rows = con.execute(f"SELECT b, vs FROM GRAPH_TABLE (g MATCH p = ANY {k} (a)-[e]->{{0,"
                       f"{high}}}(b) WHERE a.id = {source} COLUMNS (b.id AS b, vertices(p) AS vs))"
                       ).fetchall()
    got = defaultdict(list)
    for b, vs in rows:
        got[b].append(tuple(vs))
    every = defaultdict(list)
    for walk in g.walks(source, 0, high, arcs):
        every[walk[-1]].append(len(walk) - 1)
    assert set(got) == set(every)
    for b, lengths in every.items():
        assert sorted(len(w) - 1 for w in got[b]) == sorted(lengths)[:k]
        assert all(w in set(g.walks(source, 0, high, arcs)) for w in got[b])


def test_undirected_edges_list_as_loaded(con):
    con.ingest("u", pa.table({"src": [2, 1], "dst": [1, 3]}), undirected=True, replace=True)
    rows = con.execute("SELECT es FROM GRAPH_TABLE (u MATCH p = ANY SHORTEST (a)-[]-+(b) "
                       "WHERE a.id = 3 AND b.id = 2 COLUMNS (edges(p) AS es))").fetchall()
    assert rows == [([{"src": 1, "dst": 3}, {"src": 1, "dst": 2}],)]


@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("seed", range(12))
def test_k_shortest_paths_match_networkx(con, seed, directed, weighted):
    rng = random.Random(seed)
    n = rng.randint(3, 12)
    graph = nx.gnp_random_graph(n, 0.35, seed=seed, directed=directed)
    for u, v in graph.edges:
        graph[u][v]["cost"] = rng.randint(1, 5)
    con.ingest("k", pa.table({"src": [u for u, _ in graph.edges],
                              "dst": [v for _, v in graph.edges],
                              "cost": [graph[u][v]["cost"] for u, v in graph.edges]}),
               vertices=pa.table({"id": list(range(n))}), undirected=not directed,
               replace=True)
    source, target, k = rng.randrange(n), rng.randrange(n), rng.randint(1, 6)
    weight = "'cost'" if weighted else "NULL"
    rows = con.execute(f"SELECT path, step, vertex, distance FROM k_shortest_paths(k, {source}, "
                       f"{target}, {k}, weight => {weight}) ORDER BY path, step").fetchall()
    found = defaultdict(list)
    for path, step, vertex, distance in rows:
        assert step == len(found[path])
        found[path].append((vertex, distance))
    costs = []
    for i in range(len(found)):
        vertices = [v for v, _ in found[i]]
        assert vertices[0] == source and vertices[-1] == target
        assert len(set(vertices)) == len(vertices), "loopless"
        walked = [0.0]
        for u, v in zip(vertices, vertices[1:]):
            walked.append(walked[-1] + (graph[u][v]["cost"] if weighted else 1))
        assert [d for _, d in found[i]] == pytest.approx(walked)
        costs.append(walked[-1])
    assert len({tuple(v for v, _ in found[i]) for i in found}) == len(found), "distinct"
    if source == target:
        assert [tuple(v for v, _ in found[i]) for i in found] == [(source,)]
        return
    try:
        reference = []
        for p in nx.shortest_simple_paths(graph, source, target,
                                          weight="cost" if weighted else None):
            reference.append(nx.path_weight(graph, p, "cost") if weighted else len(p) - 1)
            if len(reference) == k:
                break
    except nx.NetworkXNoPath:
        reference = []
    assert costs == pytest.approx(reference)


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("seed", range(12))
def test_k_shortest_hop_paths_of_multigraphs_match_brute_force(con, seed, directed):
    """Hop counts (the bidirectional BFS spur searches) on multigraphs with parallel edges and
    self loops: the k smallest lengths of every loopless edge sequence, enumerated."""
    g = Graph(con, seed + 100, directed)
    arcs = g.arcs("out")
    by_vertex = defaultdict(list)
    for u, v, i in arcs:
        by_vertex[u].append((v, i))
    source, target = g.rng.randrange(g.n), g.rng.randrange(g.n)
    k = g.rng.randint(1, 8)
    lengths, stack = [], [((source,), ())]
    while stack and source != target:
        path, used = stack.pop()
        if path[-1] == target:
            lengths.append(len(used))
            continue
        stack += [(path + (v,), used + (i,)) for v, i in by_vertex[path[-1]] if v not in path]
    rows = con.execute(f"SELECT path, count(*) - 1, list(vertex ORDER BY step) FROM "
                       f"k_shortest_paths(g, {source}, {target}, {k}, weight => NULL) "
                       "GROUP BY path ORDER BY path").fetchall()
    if source == target:
        assert [r[1:] for r in rows] == [(0, [source])]
        return
    assert [r[1] for r in rows] == sorted(lengths)[:k]
    for _, _, vertices in rows:
        assert vertices[0] == source and vertices[-1] == target
        assert len(set(vertices)) == len(vertices)
        assert all(v in {w for w, _ in by_vertex[u]} for u, v in zip(vertices, vertices[1:]))
