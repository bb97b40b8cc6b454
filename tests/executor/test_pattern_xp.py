"""GRAPH_TABLE's expansion through the code path a GPU takes, run here with numpy: an array
module that is not numpy itself makes match_pattern take its device branches (sparse frontiers
always, gathers without numpy's repeat, the in-edge index built by the device's recipe), whose
bindings must equal the host path's."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import graphdb
from graphdb.executor.pattern import (
    PatternArrays,
    _in_index,
    host_arrays,
    in_index,
    match_pattern,
)
from graphdb.executor.physical import PatternOperator


class _NotNumpy:
    """numpy under another name (and with CuPy's asnumpy): the device branches run on it."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def asnumpy(a):
        return np.asarray(a)


PATTERNS = [
    "(a)-[e]->(b)",
    "(a)<-[e]-(b)",
    "(a)-[e]-(b)",
    "(a)-[]->(b)-[]->(c)",
    "(a)-[]->{1,3}(b)",
    "(a)<-[]-{0,2}(b)",
    "(a)-[]-{2,2}(b)",
    "(a)-[]->(b)-[]->(a)",
    "p = (a)-[]->{1,2}(b)",
    "p = (a)-[]->(b)<-[]-{0,2}(c)",
    "p = ANY SHORTEST (a)-[]->{1,4}(b)",
    "p = ALL SHORTEST (a)-[]-+(b)",
    "p = ANY 3 (a)<-[]-{0,3}(b)",
    "ANY (a)-[]->{2,3}(b)",
]


@pytest.fixture(scope="module", params=[True, False], ids=["directed", "undirected"])
def con(request, tmp_path_factory):
    g = nx.gnm_random_graph(80, 300, seed=9, directed=request.param)
    g.add_edges_from([(1, 1), (2, 3)])  # a self loop, and a duplicate on a directed graph
    c = graphdb.connect(str(tmp_path_factory.mktemp("db") / "db"), device="cpu")
    c.from_networkx("g", nx.MultiDiGraph(g) if request.param else g)
    yield c
    c.close()


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("where", ["", "WHERE a.id < 20"])
def test_device_branches_bind_what_the_host_binds(con, pattern, where):
    sql = f"SELECT * FROM GRAPH_TABLE (g MATCH {pattern} {where} COLUMNS (a.id AS x))"
    node = next(n for n in con.plan(sql).walk() if isinstance(n, PatternOperator))
    graph = con.session.runner.graph(node.entry)
    n = graph.num_vertices
    start = np.arange(n) if not where else np.arange(20)
    host = host_arrays(graph, lambda: in_index(graph))
    xp = _NotNumpy()
    out = graph.out_csr
    device = PatternArrays(xp, n, graph.directed, out,
                           lambda: _in_index(xp, out.offsets, out.targets, n))
    want, want_edges, want_path = match_pattern(node.logical, host, start, {}, lambda: None)
    got, got_edges, got_path = match_pattern(node.logical, device, start, {}, lambda: None)
    assert set(got) == set(want) and set(got_edges) == set(want_edges)
    names = sorted(want) + sorted(want_edges)

    def rows(b, e, path):
        columns = [(b | e)[k].tolist() for k in names]
        if path is not None:  # each row's path as (first, (vertices), (edges))
            ends = np.cumsum(path.length)
            columns += [path.first.tolist(),
                        [tuple(path.vertices[end - n:end]) for n, end in zip(path.length, ends)],
                        [tuple(path.edges[end - n:end]) for n, end in zip(path.length, ends)]]
        return sorted(zip(*columns, strict=True))

    assert (got_path is None) == (want_path is None)
    assert rows(got, got_edges, got_path) == rows(want, want_edges, want_path)


def test_the_device_recipe_of_the_in_edge_index_is_the_host_one(con):
    graph = con.session.runner.graph(con.session.runner.snapshot().get("g"))
    out = graph.out_csr
    host = in_index(graph)
    device = _in_index(_NotNumpy(), out.offsets, out.targets, graph.num_vertices)
    for field in ("offsets", "sources", "positions"):
        np.testing.assert_array_equal(getattr(device, field), getattr(host, field))
