"""The GPU twins of sswp, neighbors and shortest_path against their CPU twins and scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import csgraph

from graphdb.executor.algorithms.spec import OperatorConfig
from graphdb.executor.graph import Graph
from graphdb.generators import grid, rmat
from tests.gpu._gpu_graphs import random_edges

pytestmark = pytest.mark.gpu

GPU = OperatorConfig(device="gpu")
CPU = OperatorConfig()


def _rows(out) -> dict:
    return {k: v.get() if hasattr(v, "get") else np.asarray(v) for k, v in out.columns.items()}


def _graphs(weights: str):
    """Random graphs (duplicates, self loops, isolated ids), an R-MAT and a grid, directed and
    undirected; weights 1..9, or with zeros (``zeros``), or negative ones (``signed``)."""
    rng = np.random.default_rng(21)
    shapes = [random_edges(rng, 500, 2500), rmat(10, 8, seed=4), grid(30, 20)]
    for (src, dst), directed in zip(shapes, (True, False, False), strict=True):
        for d in (directed, not directed):
            n = int(max(src.max(), dst.max())) + 1
            w = rng.integers(1, 10, src.size).astype(np.float64)
            if weights == "zeros":
                w[rng.random(src.size) < 0.3] = 0.0
            elif weights == "signed":
                w -= 5.0
            yield Graph.from_edges(src, dst, n, directed=d, weights=w)


@pytest.mark.parametrize("weights", ["positive", "signed"])
def test_sswp_matches_the_cpu(weights):
    from graphdb.executor.algorithms.sssp.cpu import sswp as cpu_sswp
    from graphdb.executor.algorithms.sssp.gpu import sswp, sswp_widths_gpu

    for g in _graphs(weights):
        for s in (0, 3, g.num_vertices - 1):
            want = _rows(cpu_sswp(g, CPU, s))
            got = _rows(sswp(g, GPU, s))
            np.testing.assert_array_equal(got["vertex"], want["vertex"])
            np.testing.assert_array_equal(got["width"], want["width"])
            for small in (0, 10**9):  # every round many-block, every round in one block
                width, _ = sswp_widths_gpu(g, s, small_frontier=small)
                np.testing.assert_array_equal(width.get()[want["vertex"]], want["width"])


def test_neighbors_match_the_cpu():
    from graphdb.executor.algorithms.neighbors.cpu import neighbors as cpu_neighbors
    from graphdb.executor.algorithms.neighbors.gpu import neighbors

    for g in _graphs("positive"):
        hub = int(np.argmax(g.out_csr.degrees()))
        for v in (0, hub, g.num_vertices - 1):
            for direction in ("out", "in", "both"):
                want = _rows(cpu_neighbors(g, CPU, v, direction))["neighbor"]
                got = _rows(neighbors(g, GPU, v, direction))["neighbor"]
                np.testing.assert_array_equal(got, want)


def _check_path(g: Graph, s: int, t: int, got: dict, best: float, weighted: bool):
    """A real path from s to t of the shortest length, with its running distances."""
    path = got["vertex"]
    if not np.isfinite(best):
        assert path.size == 0 and got["distance"].size == 0
        return
    assert path[0] == s and path[-1] == t
    np.testing.assert_array_equal(got["step"], np.arange(path.size))
    out = g.csr("out", weights=True)
    running = [0.0]
    for a, b in zip(path[:-1], path[1:], strict=True):
        row = slice(out.offsets[a], out.offsets[a + 1])
        hit = out.targets[row] == b
        assert hit.any(), f"no edge {a} -> {b}"
        running.append(running[-1] + (out.weights[row][hit].min() if weighted else 1.0))
    np.testing.assert_allclose(got["distance"], running, rtol=1e-12)
    assert got["distance"][-1] == pytest.approx(best, rel=1e-12)


@pytest.mark.parametrize("weights", ["none", "positive", "zeros"])
def test_shortest_path_is_a_shortest_path(weights):
    from graphdb.executor.algorithms.paths.gpu import shortest_path

    rng = np.random.default_rng(5)
    for g in _graphs("zeros" if weights == "zeros" else "positive"):
        if weights == "none":
            out = g.out_csr
            g = Graph.from_csr("hops", type(out)(out.offsets, out.targets), directed=g.directed)
        mat = g.csr("out", weights=True).to_scipy(weighted=weights != "none")
        for s in (0, int(rng.integers(g.num_vertices))):
            best = csgraph.dijkstra(mat, directed=True, indices=s)
            for t in (s, g.num_vertices - 1, int(rng.integers(g.num_vertices))):
                got = _rows(shortest_path(g, GPU, s, t))
                _check_path(g, s, t, got, best[t], weights != "none")
