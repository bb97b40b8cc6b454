"""Yen's spur searches: the bidirectional BFS (hop counts) against the Dijkstra with unit
weights and networkx, on random multigraphs (parallel edges, self loops) with random banned
vertices and edges."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from graphdb.executor.algorithms.paths.yen import spur_path
from graphdb.executor.graph import Graph


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("seed", range(40))
def test_bfs_spur_search_is_a_shortest_path_avoiding_the_bans(seed, directed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 30))
    m = int(rng.integers(1, 4 * n))
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    graph = Graph.from_edges(src, dst, n, directed=directed)
    csr = graph.out_csr
    sources, targets = csr.sources(), csr.targets
    for _ in range(5):
        s, t = (int(x) for x in rng.integers(0, n, 2))
        banned_v = [int(v) for v in rng.choice(n, int(rng.integers(0, n // 2 + 1)),
                                                replace=False) if v not in (s, t)]
        banned_e = [int(e) for e in rng.choice(len(targets), int(rng.integers(0, m // 2 + 1)))]
        found = spur_path(graph, None, s, t, banned_v, banned_e)
        dijkstra = spur_path(graph, np.ones(len(targets)), s, t, banned_v, banned_e)
        reference = nx.MultiDiGraph()
        reference.add_nodes_from(range(n))
        reference.add_edges_from((int(sources[e]), int(targets[e])) for e in range(len(targets))
                                 if e not in set(banned_e) and int(sources[e]) not in banned_v
                                 and int(targets[e]) not in banned_v)
        try:
            expected = nx.shortest_path_length(reference, s, t)
        except nx.NetworkXNoPath:
            expected = None
        if expected is None:
            assert found is None and dijkstra is None
            continue
        edges, cost = found
        assert cost == len(edges) == expected == dijkstra[1]
        walk = [s]
        for e in edges:
            assert e not in banned_e
            assert int(sources[e]) == walk[-1]
            walk.append(int(targets[e]))
        assert walk[-1] == t and not set(walk) & set(banned_v)
