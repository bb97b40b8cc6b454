"""Page streaming reached from SQL, as a user would: ``SET host_memory_limit`` below the
topology makes BFS and PageRank stream slotted pages from the store, with the same answers."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import graphdb


@pytest.fixture
def con(tmp_path):
    rng = np.random.default_rng(21)
    n, m = 3000, 40000
    c = graphdb.connect(str(tmp_path / "db"), device="cpu")
    c.from_scipy("g", sp.coo_matrix((np.ones(m), (rng.integers(0, n, m), rng.integers(0, n, m))),
                                    shape=(n, n)), weighted=False)
    yield c
    c.close()


QUERIES = ["SELECT vertex, depth FROM bfs(g, 7) ORDER BY vertex",
           "SELECT vertex, rank FROM pagerank(g) ORDER BY vertex"]


@pytest.mark.parametrize("sql", QUERIES)
def test_host_memory_limit_below_the_topology_streams_pages_with_the_same_answer(con, sql):
    resident = con.execute(sql).fetchall()
    con.execute("SET memory_limit = '200KB'")
    con.execute("SET host_memory_limit = '100KB'")
    plan = con.plan(sql)
    op = next(n for n in plan.walk() if n.kind == "AlgorithmScan")
    assert op.variant == "pages"
    streamed = con.execute(sql).fetchall()
    assert [v for v, _ in streamed] == [v for v, _ in resident]
    np.testing.assert_allclose([x for _, x in streamed], [x for _, x in resident], rtol=1e-9)
    con.execute("RESET host_memory_limit")
    op = next(n for n in con.plan(sql).walk() if n.kind == "AlgorithmScan")
    assert op.variant in ("subway", "edge_centric")
