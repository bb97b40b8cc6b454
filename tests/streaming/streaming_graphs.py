"""Graphs for the streaming tests: random graphs with hubs, held in memory or stored in LMDB."""

from __future__ import annotations

import numpy as np

from graphdb.catalog.ingest import build_graph_arrays
from graphdb.executor.graph import Graph, StoredGraph
from graphdb.storage import BufferManager, Environment, write_topology


def random_edges(n: int, m: int, seed: int, hubs: int = 2, hub_degree: int = 400):
    """Uniform edges plus a few hubs whose rows must be cut by small budgets."""
    rng = np.random.default_rng(seed)
    src = np.concatenate([rng.integers(0, n, m), np.repeat(np.arange(hubs) * 7, hub_degree)])
    dst = np.concatenate([rng.integers(0, n, m), rng.integers(0, n, hubs * hub_degree)])
    w = rng.random(src.size) * 10
    return src, dst, w


def memory_graph(n=2000, m=12000, seed=0, directed=True, weighted=True) -> Graph:
    src, dst, w = random_edges(n, m, seed)
    return Graph.from_edges(src, dst, n, directed=directed, weights=w if weighted else None)


def stored_graph(tmp_path, n=2000, m=12000, seed=0, directed=True, page_size=4096,
                 pool_bytes=64 * 4096, pinned=None):
    """A StoredGraph in a fresh LMDB environment with a small buffer pool (several pages/level)."""
    src, dst, w = random_edges(n, m, seed)
    env = Environment(tmp_path / "db", page_size=page_size)
    arrays = build_graph_arrays(src, dst, n, None, directed)
    env.write(lambda txn: write_topology(env, txn, "g", arrays, pages=True))
    bm = BufferManager(env, pool_bytes, pinned=pinned)
    mem = Graph.from_edges(src, dst, n, directed=directed)
    g = StoredGraph("g", n, mem.num_edges, directed, False,
                    read=lambda array: bm.read_array("g", array), key=("test", str(tmp_path)),
                    buffers=bm, graph_id="g")
    return g, mem, env, bm


# -- independent references (scipy, or brute force) ----------------------------------------------


def ref_sssp(graph: Graph, source: int) -> np.ndarray:
    import scipy.sparse.csgraph as cg

    return cg.dijkstra(graph.csr("out", weights=True).to_scipy(weighted=graph.weighted),
                       indices=source)


def ref_bfs(graph: Graph, source: int) -> np.ndarray:
    import scipy.sparse.csgraph as cg

    return cg.shortest_path(graph.out_csr.to_scipy(), indices=source, unweighted=True)


def ref_wcc(graph: Graph) -> np.ndarray:
    """Smallest vertex id of every vertex's weak component."""
    import scipy.sparse.csgraph as cg

    n = graph.num_vertices
    _, lab = cg.connected_components(graph.out_csr.to_scipy(), directed=True, connection="weak")
    mins = np.full(lab.max() + 1, n)
    np.minimum.at(mins, lab, np.arange(n))
    return mins[lab]


def ref_cdlp(graph: Graph, iterations: int) -> np.ndarray:
    """Graphalytics CDLP, one vertex at a time with collections.Counter."""
    from collections import Counter

    n = graph.num_vertices
    out, inn = graph.out_csr, graph.in_csr
    nbrs = [list(out.targets[out.offsets[v]:out.offsets[v + 1]]) +
            (list(inn.targets[inn.offsets[v]:inn.offsets[v + 1]]) if graph.directed else [])
            for v in range(n)]
    labels = np.arange(n)
    for _ in range(iterations):
        new = labels.copy()
        for v in range(n):
            if nbrs[v]:
                c = Counter(labels[nbrs[v]].tolist())
                top = max(c.values())
                new[v] = min(k for k, x in c.items() if x == top)
        labels = new
    return labels


def dense(output, column: str, n: int, fill=np.inf) -> np.ndarray:
    values = np.full(n, fill, dtype=np.float64)
    values[output.columns["vertex"]] = output.columns[column]
    return values
