"""The LDBC Graphalytics example graphs (tests/gpu/data, see NOTICE) through the GPU operators."""

from __future__ import annotations

import numpy as np
import pytest

from graphdb.executor.graph import Graph
from tests.gpu._gpu_graphs import DATA

pytestmark = pytest.mark.gpu

SOURCE = {"directed": 1, "undirected": 2}


def _load(kind: str):
    ids = np.loadtxt(DATA / f"example-{kind}.v", dtype=np.int64, ndmin=1)
    e = np.loadtxt(DATA / f"example-{kind}.e", ndmin=2)
    index = {int(v): i for i, v in enumerate(ids)}
    src = np.array([index[int(x)] for x in e[:, 0]])
    dst = np.array([index[int(x)] for x in e[:, 1]])
    g = Graph.from_edges(src, dst, len(ids), directed=kind == "directed", weights=e[:, 2])
    return g, ids, index


def _expected(kind: str, algo: str) -> dict[int, str]:
    rows = (line.split() for line in (DATA / f"example-{kind}-{algo}").read_text().splitlines())
    return {int(v): x for v, x in rows}


@pytest.mark.parametrize("kind", ["directed", "undirected"])
def test_example_bfs(kind):
    from graphdb.executor.gpu.frontier import bfs

    g, ids, index = _load(kind)
    out = bfs(g, index[SOURCE[kind]])
    got = dict(zip(ids[out.columns["vertex"]].tolist(), out.columns["depth"].tolist()))
    for v, x in _expected(kind, "BFS").items():
        assert got.get(v, 9223372036854775807) == int(x)


@pytest.mark.parametrize("kind", ["directed", "undirected"])
def test_example_pagerank(kind):
    from graphdb.executor.gpu.pagerank import pagerank

    g, ids, _ = _load(kind)
    out = pagerank(g, damping=0.85, max_iterations=2)
    want = np.array([float(_expected(kind, "PR")[int(v)]) for v in ids])
    np.testing.assert_allclose(out.columns["rank"], want, rtol=1e-4)


@pytest.mark.parametrize("kind", ["directed", "undirected"])
def test_example_sssp(kind):
    from graphdb.executor.gpu.frontier import sssp

    g, ids, index = _load(kind)
    out = sssp(g, index[SOURCE[kind]])
    got = dict(zip(ids[out.columns["vertex"]].tolist(), out.columns["distance"].tolist()))
    for v, x in _expected(kind, "SSSP").items():
        want = float("inf") if x == "Infinity" else float(x)
        assert got.get(v, float("inf")) == pytest.approx(want, rel=1e-4)


@pytest.mark.parametrize("kind", ["directed", "undirected"])
def test_example_wcc(kind):
    from graphdb.executor.gpu.wcc import wcc

    g, ids, _ = _load(kind)
    got = wcc(g).columns["component"]
    want = _expected(kind, "WCC")
    # same partition: the map between the two labelings is a bijection
    pairs = {(int(a), want[int(v)]) for a, v in zip(got, ids)}
    assert len(pairs) == len({p[0] for p in pairs}) == len({p[1] for p in pairs})


@pytest.mark.parametrize("kind", ["directed", "undirected"])
def test_example_cdlp(kind):
    from graphdb.executor.gpu.cdlp import cdlp

    g, ids, _ = _load(kind)
    labels = cdlp(g, 2).columns["label"]
    got = ids[labels]  # labels are internal ids of vertices: report the user's ids
    want = [int(_expected(kind, "CDLP")[int(v)]) for v in ids]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kind", ["directed", "undirected"])
def test_example_lcc(kind):
    from graphdb.executor.gpu.lcc import lcc

    g, ids, _ = _load(kind)
    got = lcc(g).columns["coefficient"]
    want = np.array([float(_expected(kind, "LCC")[int(v)]) for v in ids])
    np.testing.assert_allclose(got, want, rtol=1e-4)
