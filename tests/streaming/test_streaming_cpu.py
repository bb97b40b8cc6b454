"""Streamed operators on the CPU against independent references, under budgets that force
several pieces (and cut hub rows), several chunks and several pages per iteration."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streaming_graphs import dense, memory_graph, ref_bfs, ref_cdlp, ref_sssp, ref_wcc, stored_graph

from graphdb.executor.algorithms.bfs import bfs_depths
from graphdb.executor.algorithms.pagerank import pagerank_ranks
from graphdb.executor.errors import DeviceOutOfMemory
from graphdb.executor.streaming.edge_centric import cdlp_edge_centric, pagerank_edge_centric
from graphdb.executor.streaming.pages import bfs_pages, pagerank_pages
from graphdb.executor.streaming.subway import (
    plan_pieces,
    state_bytes,
    subway_bfs,
    subway_sssp,
    subway_wcc,
)

N = 2000
#: Budgets: the vertex state plus room for a few hundred edges (pieces cut hub rows of 400+
#: edges), a few thousand, and everything.
BUDGETS = [state_bytes(N) + 6_000, state_bytes(N) + 60_000, 1 << 30]


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("asynchronous", [True, False])
def test_subway_sssp_matches_dijkstra(budget, asynchronous):
    g = memory_graph(N)
    out = subway_sssp(g, 3, budget_bytes=budget, asynchronous=asynchronous)
    np.testing.assert_allclose(dense(out, "distance", N), ref_sssp(g, 3))
    m = out.metrics
    assert m["outer_iterations"] >= 1 and m["bytes_to_device"] > 0
    if budget < 1 << 20:
        assert m["partitions"] > m["outer_iterations"]  # several pieces per iteration
    if asynchronous:
        assert m["per_iteration"][0]["mode"] == "partitions"  # the whole graph first


@pytest.mark.parametrize("budget", BUDGETS[:2])
@pytest.mark.parametrize("directed", [True, False])
def test_subway_bfs_and_wcc_match_scipy(budget, directed):
    g = memory_graph(N, directed=directed, weighted=False)
    for asynchronous in (False, True):
        out = subway_bfs(g, 0, budget_bytes=budget, asynchronous=asynchronous)
        np.testing.assert_array_equal(dense(out, "depth", N), ref_bfs(g, 0))
    out = subway_wcc(g, budget_bytes=budget, asynchronous=True)
    np.testing.assert_array_equal(out.columns["component"], ref_wcc(g))
    out = subway_wcc(g, budget_bytes=budget)
    np.testing.assert_array_equal(out.columns["component"], ref_wcc(g))


def test_subway_streams_subcsrs_when_few_edges_are_active():
    g = memory_graph(N, m=6000)
    out = subway_sssp(g, 0, budget_bytes=BUDGETS[1], asynchronous=False, threshold=0.8)
    modes = [r["mode"] for r in out.metrics["per_iteration"]]
    assert "subcsr" in modes
    full_bytes = out.metrics["graph_edge_bytes"] * out.metrics["outer_iterations"]
    assert out.metrics["bytes_to_device"] < full_bytes


def test_vertex_state_that_does_not_fit_names_the_sizes():
    g = memory_graph(N)
    with pytest.raises(DeviceOutOfMemory, match=r"2000 vertices.*budget"):
        subway_sssp(g, 0, budget_bytes=1000)


@settings(max_examples=40, deadline=None)
@given(degrees=st.lists(st.integers(0, 50), min_size=1, max_size=60),
       capacity=st.integers(40, 400), row_bytes=st.sampled_from([8, 12]),
       edge_bytes=st.sampled_from([4, 12]))
def test_pieces_cover_every_edge_once_within_capacity(degrees, capacity, row_bytes, edge_bytes):
    off = np.concatenate([[0], np.cumsum(degrees)]).astype(np.int64)
    pieces = plan_pieces(off, row_bytes, edge_bytes, capacity)
    e = 0
    for p in pieces:
        assert p.e0 == e and p.e1 >= p.e0
        e = p.e1
        assert off[p.r0] <= p.e0 and p.e1 <= off[p.r1]
        whole = p.r1 - p.r0 > 1 or (off[p.r0] == p.e0 and off[p.r1] == p.e1)
        if whole:
            assert p.edges * edge_bytes + (p.r1 - p.r0) * row_bytes <= capacity
        else:  # a cut row: its edges alone fill the piece
            assert p.edges * edge_bytes + row_bytes <= capacity
    assert e == off[-1]
    assert pieces[-1].r1 == len(degrees) or all(d == 0 for d in degrees[pieces[-1].r1:])


@pytest.mark.parametrize("budget", [40 * N + 3_000, 40 * N + 50_000])
def test_edge_centric_pagerank_matches_resident(budget):
    g = memory_graph(N, weighted=False)
    out = pagerank_edge_centric(g, 0.85, 15, budget_bytes=budget)
    ref, _ = pagerank_ranks(g, 0.85, 15)
    np.testing.assert_allclose(out.columns["rank"], ref, rtol=1e-12, atol=1e-15)
    assert out.metrics["partitions"] > out.metrics["outer_iterations"]


@pytest.mark.parametrize("directed", [True, False])
def test_edge_centric_cdlp_matches_reference(directed):
    g = memory_graph(300, m=1500, directed=directed, weighted=False)
    out = cdlp_edge_centric(g, 5, budget_bytes=24 * 300 + 4_000)
    np.testing.assert_array_equal(out.columns["label"], ref_cdlp(g, 5))
    assert out.metrics["partitions"] > out.metrics["outer_iterations"]


@pytest.mark.parametrize("directed", [True, False])
def test_page_streaming_bfs_and_pagerank(tmp_path, directed):
    g, mem, env, bm = stored_graph(tmp_path, n=N, directed=directed, pool_bytes=16 * 4096)
    try:
        out = bfs_pages(g, 0, budget_bytes=10 * N)
        depth, _ = bfs_depths(mem, 0)
        assert np.array_equal(dense(out, "depth", N, -1), depth)
        per_level = out.metrics["pages_per_level"]
        assert max(per_level) > 1 and per_level[0] < out.metrics["pages_total"]
        assert out.metrics["pages_total"] > 16  # more pages than the pool holds
        out = pagerank_pages(g, 0.85, 8, budget_bytes=50 * N)
        ref, _ = pagerank_ranks(mem, 0.85, 8)
        np.testing.assert_allclose(out.columns["rank"], ref, rtol=1e-12, atol=1e-15)
        assert out.metrics["predicted_s"] > 0
    finally:
        bm.close()
        env.close()


def test_threaded_subcsr_gather_matches(monkeypatch):
    import graphdb.executor.streaming.subway as sw

    monkeypatch.setattr(sw, "PARALLEL_GATHER_EDGES", 64)
    monkeypatch.setattr(sw, "GATHER_THREADS", 3)
    monkeypatch.setattr(sw, "_POOL", None)
    g = memory_graph(N)
    out = subway_sssp(g, 3, budget_bytes=BUDGETS[1], asynchronous=True, first_full=False)
    np.testing.assert_allclose(dense(out, "distance", N), ref_sssp(g, 3))
    assert out.metrics["per_iteration"][0]["mode"] == "subcsr"


@pytest.mark.parametrize("max_depth", [0, 1, 2, 3])
def test_subway_bfs_max_depth_matches_resident(max_depth):
    g = memory_graph(N, weighted=False)
    out = subway_bfs(g, 0, max_depth, budget_bytes=BUDGETS[0])
    depth, _ = bfs_depths(g, 0, max_depth)
    np.testing.assert_array_equal(dense(out, "depth", N, -1), depth)


def test_every_streamed_operator_reports_the_instrumentation(tmp_path):
    keys = {"outer_iterations", "inner_iterations", "active_vertices", "active_edges",
            "bytes_to_device", "transfer_s", "kernel_s", "partitions", "cache_hit_rate",
            "per_iteration", "budget_bytes", "strategy", "wall_s"}
    g = memory_graph(N)
    outs = [subway_sssp(g, 0, budget_bytes=BUDGETS[1]),
            pagerank_edge_centric(g, 0.85, 3, budget_bytes=40 * N + 20_000)]
    sg, mem, env, bm = stored_graph(tmp_path, n=N)
    try:
        outs.append(bfs_pages(sg, 0, budget_bytes=10 * N))
    finally:
        bm.close()
        env.close()
    for out in outs:
        assert keys <= set(out.metrics), keys - set(out.metrics)
        assert len(out.metrics["per_iteration"]) == out.metrics["outer_iterations"]
