"""Property tests: every CPU algorithm against networkx or a slow, obviously correct reference.

Random small graphs, directed and undirected, with isolated vertices, self loops, duplicate
edges, disconnected parts, a single vertex and no edges at all (hypothesis finds those).
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import pairwise

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphdb.executor.graph import Graph
from tests.executor.support import run_cpu

SETTINGS = settings(max_examples=60, deadline=None)


class Case:
    """A random graph in three forms: our Graph, a networkx multigraph, and the edge list."""

    def __init__(self, n: int, edges: list[tuple[int, int, float]], directed: bool, weighted: bool):
        self.n, self.edges, self.directed, self.weighted = n, edges, directed, weighted
        src = np.array([e[0] for e in edges], dtype=np.int64)
        dst = np.array([e[1] for e in edges], dtype=np.int64)
        w = np.array([e[2] for e in edges], dtype=np.float64) if weighted else None
        self.graph = Graph.from_edges(src, dst, n, directed=directed, weights=w)
        self.nx = nx.MultiDiGraph() if directed else nx.MultiGraph()
        self.nx.add_nodes_from(range(n))
        for u, v, wt in edges:
            self.nx.add_edge(u, v, weight=wt if weighted else 1.0)

    def arcs(self) -> list[tuple[int, int, float]]:
        """Every edge as the engine follows it: both directions for undirected edges."""
        back = [] if self.directed else [(v, u, w) for u, v, w in self.edges if u != v]
        return self.edges + back

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"Case(n={self.n}, {kind}, weighted={self.weighted}, edges={self.edges})"


@st.composite
def graphs(draw, directed=None, weighted=None, max_n=12):
    n = draw(st.integers(1, max_n))
    directed = draw(st.booleans()) if directed is None else directed
    weighted = draw(st.booleans()) if weighted is None else weighted
    vertex = st.integers(0, n - 1)
    weight = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.25, 7.0])
    edges = draw(st.lists(st.tuples(vertex, vertex, weight), max_size=3 * n))
    return Case(n, edges, directed, weighted)


def as_dict(columns: dict[str, np.ndarray], key: str, value: str) -> dict[int, float]:
    keys = columns[key].tolist()
    assert len(set(keys)) == len(keys), "a vertex reported twice"
    return dict(zip(keys, columns[value].tolist()))


# --- traversals -----------------------------------------------------------------------------


@SETTINGS
@given(graphs(), st.data())
def test_bfs_matches_networkx(case: Case, data):
    source = data.draw(st.integers(0, case.n - 1))
    max_depth = data.draw(st.none() | st.integers(0, 4))
    got = as_dict(run_cpu("bfs", case.graph, source=source, max_depth=max_depth), "vertex", "depth")
    assert got == nx.single_source_shortest_path_length(case.nx, source, cutoff=max_depth)


@SETTINGS
@given(graphs(), st.data())
def test_khop_matches_networkx(case: Case, data):
    source = data.draw(st.integers(0, case.n - 1))
    k = data.draw(st.integers(0, 5))
    got = as_dict(run_cpu("khop", case.graph, source=source, k=k), "vertex", "hops")
    assert got == nx.single_source_shortest_path_length(case.nx, source, cutoff=k)


@SETTINGS
@given(graphs(), st.data())
def test_sssp_matches_networkx(case: Case, data):
    source = data.draw(st.integers(0, case.n - 1))
    got = as_dict(run_cpu("sssp", case.graph, source=source), "vertex", "distance")
    expected = nx.single_source_dijkstra_path_length(case.nx, source, weight="weight")
    assert got.keys() == expected.keys()
    for v, d in expected.items():
        assert got[v] == pytest.approx(d, rel=1e-12, abs=1e-12)


@SETTINGS
@given(graphs(weighted=True), st.data())
def test_sswp_matches_slow_reference(case: Case, data):
    source = data.draw(st.integers(0, case.n - 1))
    got = as_dict(run_cpu("sswp", case.graph, source=source), "vertex", "width")
    width = {source: math.inf}
    changed = True
    while changed:  # Bellman-Ford style fixed point on max-min
        changed = False
        for u, v, w in case.arcs():
            if u in width and min(width[u], w) > width.get(v, -math.inf):
                width[v] = min(width[u], w)
                changed = True
    assert got == width


@SETTINGS
@given(graphs(), st.data())
def test_shortest_path_is_a_shortest_path(case: Case, data):
    source = data.draw(st.integers(0, case.n - 1))
    target = data.draw(st.integers(0, case.n - 1))
    out = run_cpu("shortest_path", case.graph, source=source, target=target)
    dist = nx.single_source_dijkstra_path_length(case.nx, source, weight="weight")
    if target not in dist:
        assert len(out["vertex"]) == 0
        return
    path = out["vertex"].tolist()
    assert out["step"].tolist() == list(range(len(path)))
    assert path[0] == source and path[-1] == target
    lightest = {}
    for u, v, w in case.arcs():
        lightest[(u, v)] = min(w if case.weighted else 1.0, lightest.get((u, v), math.inf))
    walked = [0.0]
    for u, v in pairwise(path):
        assert (u, v) in lightest, f"{u}->{v} is not an edge"
        walked.append(walked[-1] + lightest[(u, v)])
    assert out["distance"] == pytest.approx(walked)
    assert out["distance"] == pytest.approx([dist[v] for v in path])


@SETTINGS
@given(graphs(), st.data())
def test_neighbors_lists_every_incident_edge(case: Case, data):
    vertex = data.draw(st.integers(0, case.n - 1))
    direction = data.draw(st.sampled_from(["out", "in", "both"]))
    got = Counter(
        run_cpu("neighbors", case.graph, vertex=vertex, direction=direction)["neighbor"].tolist()
    )
    arcs = case.arcs()
    outs = Counter(v for u, v, _ in arcs if u == vertex)
    ins = Counter(u for u, v, _ in arcs if v == vertex)
    if not case.directed:
        expected = outs
    else:
        expected = {"out": outs, "in": ins, "both": outs + ins}[direction]
    assert got == expected


# --- all-vertex algorithms ------------------------------------------------------------------


@SETTINGS
@given(graphs())
def test_wcc_matches_networkx(case: Case):
    got = as_dict(run_cpu("wcc", case.graph), "vertex", "component")
    parts = (
        nx.weakly_connected_components(case.nx)
        if case.directed
        else nx.connected_components(case.nx)
    )
    expected = {v: min(part) for part in parts for v in part}
    assert got == expected


def pagerank_reference(case: Case, damping: float, iterations: int) -> list[float]:
    """Graphalytics PageRank written out edge by edge."""
    n = case.n
    arcs = case.arcs()
    out_degree = Counter(u for u, _, _ in arcs)
    rank = [1.0 / n] * n
    for _ in range(iterations):
        dangling = sum(rank[v] for v in range(n) if out_degree[v] == 0)
        new = [(1 - damping) / n + damping * dangling / n] * n
        for u, v, _ in arcs:
            new[v] += damping * rank[u] / out_degree[u]
        rank = new
    return rank


@SETTINGS
@given(graphs(), st.sampled_from([0.0, 0.5, 0.85, 1.0]), st.integers(0, 6))
def test_pagerank_matches_slow_reference(case: Case, damping: float, iterations: int):
    got = as_dict(
        run_cpu("pagerank", case.graph, damping=damping, max_iterations=iterations),
        "vertex",
        "rank",
    )
    expected = pagerank_reference(case, damping, iterations)
    assert [got[v] for v in range(case.n)] == pytest.approx(expected, rel=1e-9, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(graphs(weighted=False))
def test_pagerank_converges_to_networkx(case: Case):
    got = as_dict(
        run_cpu("pagerank", case.graph, max_iterations=1000, tolerance=1e-13), "vertex", "rank"
    )
    expected = nx.pagerank(case.nx, alpha=0.85, tol=1e-14, max_iter=10000)
    assert [got[v] for v in range(case.n)] == pytest.approx(
        [expected[v] for v in range(case.n)], rel=1e-6, abs=1e-9
    )


def cdlp_reference(case: Case, iterations: int) -> list[int]:
    """Graphalytics CDLP, one vertex at a time."""
    neighbours: list[list[int]] = [[] for _ in range(case.n)]
    for u, v, _ in case.edges:
        if case.directed:  # in- and out-neighbours, with multiplicity
            neighbours[u].append(v)
            neighbours[v].append(u)
        elif u == v:
            neighbours[u].append(u)
        else:
            neighbours[u].append(v)
            neighbours[v].append(u)
    labels = list(range(case.n))
    for _ in range(iterations):
        new = labels[:]
        for v in range(case.n):
            if neighbours[v]:
                counts = Counter(labels[u] for u in neighbours[v])
                top = max(counts.values())
                new[v] = min(label for label, c in counts.items() if c == top)
        labels = new
    return labels


@SETTINGS
@given(graphs(max_n=10), st.integers(0, 6))
def test_cdlp_matches_slow_reference(case: Case, iterations: int):
    got = as_dict(run_cpu("cdlp", case.graph, max_iterations=iterations), "vertex", "label")
    assert [got[v] for v in range(case.n)] == cdlp_reference(case, iterations)


@SETTINGS
@given(graphs(max_n=10), st.integers(0, 6))
def test_cdlp_step_of_the_gpu_and_streamed_operators_matches_slow_reference(case: Case,
                                                                             iterations: int):
    """The numpy/CuPy step (:mod:`.cdlp.step`: the GPU, streamed and partitioned operators)
    gives the labels the host's compiled pass does."""
    from graphdb.executor.algorithms.cdlp.step import propagate

    arcs = case.arcs()
    receivers = np.array([u for u, _, _ in arcs] + ([v for _, v, _ in arcs] if case.directed
                                                      else []), dtype=np.int64)
    senders = np.array([v for _, v, _ in arcs] + ([u for u, _, _ in arcs] if case.directed
                                                    else []), dtype=np.int64)
    labels, _ = propagate(np, receivers, senders, case.n, iterations)
    assert labels.tolist() == cdlp_reference(case, iterations)


@pytest.mark.parametrize("directed", [True, False])
def test_compiled_cdlp_matches_slow_reference_on_a_larger_graph(directed: bool):
    """The compiled pass (not its Python source, which tiny graphs run) on a few thousand
    edges with hubs, parallel edges and self loops."""
    from graphdb.executor.algorithms.cdlp import cpu

    rng = np.random.default_rng(7)
    n = 600
    src = np.minimum((rng.pareto(1.5, 5000) * 20).astype(np.int64), n - 1)
    dst = rng.integers(0, n, src.size)
    case = Case(n, [(int(a), int(b), 1.0) for a, b in zip(src, dst)], directed, False)
    cpu.KERNELS.load()
    labels, _ = cpu.cdlp_labels(case.graph, 4)
    assert labels.tolist() == cdlp_reference(case, 4)


def lcc_reference(case: Case) -> list[float]:
    """Graphalytics LCC from its definition (directed and undirected)."""
    arcs = {(u, v) for u, v, _ in case.arcs() if u != v}
    result = []
    for v in range(case.n):
        nbrs = {b for a, b in arcs if a == v} | {a for a, b in arcs if b == v}
        d = len(nbrs)
        closed = sum(1 for a in nbrs for b in nbrs if (a, b) in arcs)
        result.append(closed / (d * (d - 1)) if d >= 2 else 0.0)
    return result


@SETTINGS
@given(graphs())
def test_lcc_matches_slow_reference(case: Case):
    got = as_dict(run_cpu("lcc", case.graph), "vertex", "coefficient")
    assert [got[v] for v in range(case.n)] == pytest.approx(lcc_reference(case))


@SETTINGS
@given(graphs(directed=False))
def test_undirected_lcc_matches_networkx_clustering(case: Case):
    got = as_dict(run_cpu("lcc", case.graph), "vertex", "coefficient")
    expected = nx.clustering(nx.Graph(case.nx))  # simple graph; self loops ignored
    assert [got[v] for v in range(case.n)] == pytest.approx([expected[v] for v in range(case.n)])
