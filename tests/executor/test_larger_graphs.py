"""The algorithms on graphs large enough to exercise every code path: many BFS levels, both
BFS directions, SSSP buckets of every width, int32 and int64 targets."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

from graphdb.executor.algorithms.bfs import cpu as bfs
from graphdb.executor.algorithms.lcc import cpu as lcc
from graphdb.executor.algorithms.sssp import cpu as sssp
from graphdb.executor.graph import Graph
from graphdb.generators import grid, random_weights, rmat
from tests.executor.support import run_cpu


def reference_matrix(graph: Graph, weights=None) -> sp.csr_matrix:
    """A fresh scipy matrix straight from the edges, independent of the engine's caches."""
    csr = graph.out_csr
    data = np.ones(csr.num_edges) if weights is None else weights
    coo = sp.coo_matrix((data, (csr.sources(), csr.targets)), shape=(graph.num_vertices,) * 2)
    return coo.tocsr()  # sums duplicates: fine for reachability, not used for weights


def graphs():
    src, dst = grid(30, 40)
    yield "grid", Graph.from_edges(src, dst, 1200, directed=False), 0
    src, dst = rmat(11, 8, seed=3)
    yield "rmat-directed", Graph.from_edges(src, dst, 2048, directed=True), int(src[0])
    yield "rmat-undirected", Graph.from_edges(src, dst, 2048, directed=False), int(src[1])
    rng = np.random.default_rng(7)  # sparse random graph: many small components
    src, dst = rng.integers(0, 3000, 2500), rng.integers(0, 3000, 2500)
    yield "sparse", Graph.from_edges(src, dst, 3000, directed=True), int(src[0])
    yield "sparse-undirected", Graph.from_edges(src, dst, 3000, directed=False), int(src[0])
    src, dst = grid(3, 50)  # three strips, 2 isolated vertices at the end
    keep = (src // 50) == (dst // 50)
    yield "strips", Graph.from_edges(src[keep], dst[keep], 152, directed=False), 0


GRAPHS = list(graphs())
IDS = [g[0] for g in GRAPHS]


def hop_distances(graph: Graph, source: int) -> np.ndarray:
    return csgraph.shortest_path(
        reference_matrix(graph), method="D", unweighted=True, indices=source, directed=True
    )


#: (ALPHA, BETA) of the direction switch: never bottom-up, the tuned switch, always bottom-up
#: (every level whose frontier has edges), and a switch that flips often on these sizes.
DIRECTIONS = {
    "top-down": (0, 24),
    "direction-optimizing": (15, 24),
    "bottom-up": (1 << 30, 1 << 30),
    "flipping": (2, 8),
}


@pytest.mark.parametrize("name, graph, source", GRAPHS, ids=IDS)
@pytest.mark.parametrize("direction", list(DIRECTIONS))
@pytest.mark.parametrize("max_depth", [None, 0, 1, 3, 25])
def test_bfs_depths_match_scipy(name, graph, source, direction, max_depth, monkeypatch):
    alpha, beta = DIRECTIONS[direction]
    monkeypatch.setattr(bfs, "DIRECTION_ALPHA", alpha)
    monkeypatch.setattr(bfs, "DIRECTION_BETA", beta)
    out = run_cpu("bfs", graph, source=source, max_depth=max_depth)
    _, _, bottom_up = bfs.bfs_search(graph, source, max_depth)
    if alpha == 0 or max_depth == 0:
        assert bottom_up == 0
    elif direction == "bottom-up" and len(out["vertex"]) > 1:
        assert bottom_up > 0
    dist = hop_distances(graph, source)
    if max_depth is not None:
        dist[dist > max_depth] = np.inf
    reached = np.flatnonzero(np.isfinite(dist))
    order = np.argsort(out["vertex"])
    assert np.array_equal(out["vertex"][order], reached)
    assert np.array_equal(out["depth"][order], dist[reached].astype(np.int64))
    assert np.all(np.diff(out["depth"]) >= 0), "rows come in BFS order"


@pytest.mark.parametrize("max_depth", [None, 2])
def test_bottom_up_loads_the_in_edges_only_when_it_needs_them(max_depth, monkeypatch):
    """A directed graph whose in-CSR is not loaded yet: the search starts top-down, stops at
    the first level it would run bottom-up, and resumes there once the in-edges are loaded."""
    src, dst = rmat(10, 8, seed=11)

    def fresh() -> Graph:
        return Graph.from_edges(src, dst, 1024, directed=True)

    source = int(src[0])
    expected = hop_distances(fresh(), source)
    if max_depth is not None:
        expected[expected > max_depth] = np.inf
    for alpha, loads in [(0, False), (1 << 30, True)]:
        monkeypatch.setattr(bfs, "DIRECTION_ALPHA", alpha)
        monkeypatch.setattr(bfs, "DIRECTION_BETA", 1 << 30)
        graph = fresh()
        depth, _ = bfs.bfs_depths(graph, source, max_depth)
        assert graph.in_csr_loaded is loads
        assert np.array_equal(np.where(depth < 0, np.inf, depth), expected)
        assert (bfs.bfs_search(graph, source, max_depth)[2] > 0) is loads


def test_direction_optimizing_switches_both_ways_on_rmat(monkeypatch):
    """The tuned switch goes bottom-up on a low-diameter graph and back top-down for the tail."""
    src, dst = rmat(12, 16, seed=2)
    graph = Graph.from_edges(src, dst, 4096, directed=False)
    source = int(src[0])
    vertices, depth, bottom_up = bfs.bfs_search(graph, source)
    assert 0 < bottom_up < int(depth[-1])
    expected = hop_distances(graph, source)
    got = np.full(graph.num_vertices, np.inf)
    got[vertices] = depth
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("name, graph, source", GRAPHS, ids=IDS)
def test_sssp_and_shortest_path_match_scipy(name, graph, source):
    weights = random_weights(graph.out_csr.num_edges, seed=5)
    weighted = _weighted(graph, weights)
    out = run_cpu("sssp", weighted, source=source)
    dist = csgraph.dijkstra(
        sp.csr_matrix(
            (weights, graph.out_csr.targets, graph.out_csr.offsets), shape=(graph.num_vertices,) * 2
        ),
        indices=source,
    )
    reached = np.flatnonzero(np.isfinite(dist))
    order = np.argsort(out["vertex"])
    assert np.array_equal(out["vertex"][order], reached)
    assert np.allclose(out["distance"][order], dist[reached])
    for target in reached[:: max(1, len(reached) // 7)]:
        path = run_cpu("shortest_path", weighted, source=source, target=int(target))
        assert path["vertex"][0] == source and path["vertex"][-1] == target
        assert path["distance"][-1] == pytest.approx(dist[target])
        hops = run_cpu("shortest_path", graph, source=source, target=int(target))
        assert len(hops["vertex"]) - 1 == hop_distances(graph, source)[target]


def _with_weights(graph: Graph, weights: np.ndarray):
    csr = graph.out_csr
    return type(csr)(csr.offsets, csr.targets, weights)


def _weighted(graph: Graph, weights: np.ndarray) -> Graph:
    """``graph`` with ``weights`` on its out-edges (in stored order)."""
    return Graph.from_csr(graph.name, _with_weights(graph, weights), directed=graph.directed)


@pytest.mark.parametrize("name, graph, source", GRAPHS, ids=IDS)
def test_wcc_matches_scipy(name, graph, source):
    count, labels = csgraph.connected_components(reference_matrix(graph), connection="weak")
    out = run_cpu("wcc", graph)
    smallest = np.full(count, graph.num_vertices)
    np.minimum.at(smallest, labels, np.arange(graph.num_vertices))
    assert np.array_equal(out["component"], smallest[labels])


@pytest.mark.parametrize("name, graph, source", GRAPHS, ids=IDS)
@pytest.mark.parametrize("max_buckets", [4, 3, 1 << 16])
@pytest.mark.parametrize("zeros", [False, True])
def test_sssp_buckets_of_any_width_match_scipy(
    name, graph, source, max_buckets, zeros, monkeypatch
):
    """Few buckets widen them past the smallest weight (vertices are then processed again, as
    in delta-stepping); zero weights keep vertices in the bucket being emptied."""
    monkeypatch.setattr(sssp, "MAX_BUCKETS", max_buckets)
    weights = random_weights(graph.out_csr.num_edges, seed=3)
    if zeros:
        weights[::3] = 0.0
    weighted = _weighted(graph, weights)
    csr = graph.out_csr
    expected = csgraph.dijkstra(
        sp.csr_matrix((weights, csr.targets, csr.offsets), shape=(graph.num_vertices,) * 2),
        indices=source,
    )
    assert np.allclose(sssp.sssp_distances(weighted, source), expected)
    target = int(np.flatnonzero(np.isfinite(expected))[-1])
    path = run_cpu("shortest_path", weighted, source=source, target=target)
    assert path["distance"][-1] == pytest.approx(expected[target])
    steps = [
        weights[csr.offsets[u] : csr.offsets[u + 1]][
            csr.targets[csr.offsets[u] : csr.offsets[u + 1]] == v
        ].min()
        for u, v in zip(path["vertex"][:-1], path["vertex"][1:])
    ]
    assert sum(steps) == pytest.approx(expected[target])


@pytest.mark.parametrize("name, graph, source", GRAPHS, ids=IDS)
def test_lcc_in_small_chunks_matches_one_chunk(name, graph, source, monkeypatch):
    whole = lcc.lcc_coefficients(graph)
    monkeypatch.setattr(lcc, "CHUNK_VERTICES", 37)
    assert np.array_equal(lcc.lcc_coefficients(graph), whole)
    if not graph.directed:
        import networkx as nx

        csr = graph.out_csr
        simple = nx.Graph()
        simple.add_nodes_from(range(graph.num_vertices))
        simple.add_edges_from(zip(csr.sources().tolist(), csr.targets.tolist()))
        expected = nx.clustering(simple)
        assert np.allclose(whole, [expected[v] for v in range(graph.num_vertices)])


@pytest.mark.parametrize("name, graph, source", GRAPHS, ids=IDS)
def test_int64_targets_give_the_same_results(name, graph, source):
    """A stored CSR may hold int64 targets (huge graphs); every algorithm must accept it."""
    csr = graph.out_csr
    wide = type(csr)(csr.offsets, csr.targets.astype(np.int64), None)
    graph64 = Graph.from_csr(graph.name, wide, directed=graph.directed)
    for algorithm, options in [
        ("bfs", {"source": source}),
        ("khop", {"source": source, "k": 2}),
        ("wcc", {}),
        ("pagerank", {}),
        ("cdlp", {"max_iterations": 3}),
        ("lcc", {}),
        ("shortest_path", {"source": source, "target": graph.num_vertices - 1}),
    ]:
        expected = run_cpu(algorithm, graph, **options)
        got = run_cpu(algorithm, graph64, **options)
        for column in expected:
            assert np.allclose(got[column], expected[column]), (algorithm, column)


@pytest.mark.parametrize("name, graph, source", GRAPHS, ids=IDS)
def test_int64_targets_give_the_same_weighted_results(name, graph, source):
    """The compiled kernels take int64 targets (as uint64) as well as int32 ones (as uint32)."""
    csr = graph.out_csr
    weights = random_weights(csr.num_edges, seed=9)
    narrow = type(csr)(csr.offsets, csr.targets, weights)
    wide = type(csr)(csr.offsets, csr.targets.astype(np.int64), weights)
    graphs = [Graph.from_csr(graph.name, c, directed=graph.directed) for c in (narrow, wide)]
    target = graph.num_vertices - 1
    for algorithm, options in [
        ("sssp", {"source": source}),
        ("sswp", {"source": source}),
        ("shortest_path", {"source": source, "target": target}),
    ]:
        expected, got = (run_cpu(algorithm, g, **options) for g in graphs)
        for column in expected:
            assert np.array_equal(got[column], expected[column]), (algorithm, column)
    depth32, _ = bfs.bfs_depths(graphs[0], source)
    depth64, _ = bfs.bfs_depths(graphs[1], source)
    assert np.array_equal(depth32, depth64)
