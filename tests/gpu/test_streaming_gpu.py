"""Streamed operators on the GPU against the same references as the CPU tests (tests/streaming),
with budgets that force several pieces, chunks and pages per iteration."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "streaming"))

from streaming_graphs import dense, memory_graph, ref_bfs, ref_cdlp, ref_sssp, ref_wcc, stored_graph  # noqa: E402

from graphdb.executor.algorithms.bfs import bfs_depths  # noqa: E402
from graphdb.executor.algorithms.pagerank import pagerank_ranks  # noqa: E402
from graphdb.executor.streaming.edge_centric import (  # noqa: E402
    PAGERANK_STATE_BYTES,
    cdlp_edge_centric,
    pagerank_edge_centric,
)
from graphdb.executor.streaming.pages import bfs_pages, pagerank_pages  # noqa: E402
from graphdb.executor.streaming.subway import state_bytes, subway_bfs, subway_sssp, subway_wcc  # noqa: E402

pytestmark = pytest.mark.gpu
N, M = 20_000, 200_000
BUDGET = state_bytes(N) + 600_000  # about 25 KB... 300 KB pieces: ten or more per full pass


@pytest.mark.parametrize("gather", ["host", "device"])
@pytest.mark.parametrize("asynchronous", [True, False])
def test_gpu_subway_sssp(gather, asynchronous):
    g = memory_graph(N, M, seed=3)
    out = subway_sssp(g, 11, device="gpu", budget_bytes=BUDGET, gather=gather,
                      asynchronous=asynchronous)
    np.testing.assert_allclose(dense(out, "distance", N), ref_sssp(g, 11), rtol=1e-12)
    m = out.metrics
    assert m["device"] == "gpu" and m["transfer_s"] > 0
    if asynchronous or gather == "host":  # the device gather's sync SubCSR is one unstaged pass
        assert m["partitions"] > m["outer_iterations"] and m["kernel_s"] > 0
    if gather == "device":  # no ids come back: three counters an iteration and the result
        assert m["bytes_from_device"] < 24 * m["outer_iterations"] + 12 * N + 64


@pytest.mark.parametrize("threshold", [0.0, 1.0])
@pytest.mark.parametrize("asynchronous", [True, False])
def test_gpu_subway_device_gather_modes(threshold, asynchronous):
    """threshold 0: every iteration streams whole partitions (DMA, resident offsets); 1: every
    one builds a SubCSR on the device, WCC's all-active first iteration too."""
    g = memory_graph(N, M, seed=7)
    kw = dict(device="gpu", budget_bytes=BUDGET, gather="device", threshold=threshold,
              asynchronous=asynchronous, first_full=False)
    out = subway_sssp(g, 5, **kw)
    np.testing.assert_allclose(dense(out, "distance", N), ref_sssp(g, 5), rtol=1e-12)
    its = out.metrics["per_iteration"]
    if threshold == 0.0:  # an iteration whose active vertices have no edges is an empty SubCSR
        assert all(r["mode"] == "partitions" or r["active_edges"] == 0 for r in its)
    else:
        assert all(r["mode"] == "subcsr" for r in its)
    out = subway_bfs(g, 5, **kw)
    np.testing.assert_array_equal(dense(out, "depth", N), ref_bfs(g, 5))
    out = subway_wcc(g, **kw)
    np.testing.assert_array_equal(out.columns["component"], ref_wcc(g))
    out = subway_bfs(g, 5, max_depth=2, **{**kw, "asynchronous": False})
    ref = ref_bfs(g, 5)
    np.testing.assert_array_equal(dense(out, "depth", N), np.where(ref <= 2, ref, np.inf))


@pytest.mark.parametrize("gather", ["host", "device"])
@pytest.mark.parametrize("directed", [True, False])
def test_gpu_subway_bfs_and_wcc(gather, directed):
    g = memory_graph(N, M, seed=4, directed=directed, weighted=False)
    out = subway_bfs(g, 0, device="gpu", budget_bytes=BUDGET, gather=gather)
    np.testing.assert_array_equal(dense(out, "depth", N), ref_bfs(g, 0))
    out = subway_wcc(g, device="gpu", budget_bytes=BUDGET, gather=gather)
    np.testing.assert_array_equal(out.columns["component"], ref_wcc(g))


def test_gpu_edge_centric_pagerank_and_cdlp():
    g = memory_graph(N, M, seed=5, weighted=False)
    out = pagerank_edge_centric(g, 0.85, 12, device="gpu",
                                budget_bytes=PAGERANK_STATE_BYTES * N + 400_000)
    ref, _ = pagerank_ranks(g, 0.85, 12)
    np.testing.assert_allclose(out.columns["rank"], ref, rtol=1e-10)
    assert out.metrics["partitions"] > 3 * out.metrics["outer_iterations"]
    small = memory_graph(400, 3000, seed=6, weighted=False)
    out = cdlp_edge_centric(small, 5, device="gpu", budget_bytes=24 * 400 + 8_000)
    np.testing.assert_array_equal(out.columns["label"], ref_cdlp(small, 5))


@pytest.mark.parametrize("slots", [2, 3, 4])
def test_gpu_edge_centric_pagerank_cut_hub_and_tolerance(slots):
    """An in-hub whose row spans several chunks, rows without in-edges, dangling vertices; the
    copy/kernel pipeline with 2-4 buffers; the tolerance path (one host wait an iteration)."""
    from graphdb.executor.graph import Graph

    rng = np.random.default_rng(11)
    n, m, hub = 20_000, 150_000, 60_000
    src = np.concatenate([rng.integers(0, n // 2, m), rng.integers(0, n // 2, hub)])
    dst = np.concatenate([rng.integers(0, n, m), np.full(hub, 5)])
    g = Graph.from_edges(src, dst, n)  # vertices >= n/2 have no out-edges: dangling
    budget = PAGERANK_STATE_BYTES * n + 400_000
    out = pagerank_edge_centric(g, 0.85, 15, device="gpu", budget_bytes=budget, slots=slots,
                                timeline=True)
    ref, _ = pagerank_ranks(g, 0.85, 15)
    np.testing.assert_allclose(out.columns["rank"], ref, rtol=1e-10)
    assert out.metrics["chunk_bytes"] < hub * 4  # the hub's row is cut
    tl = out.metrics["timeline"]
    assert tl["chunks"] == out.metrics["partitions"] == len(out.metrics["chunk_timeline_ms"])
    assert 0 < tl["copy_busy_fraction"] <= 1.0
    got = pagerank_edge_centric(g, 0.85, 200, 1e-9, device="gpu", budget_bytes=budget,
                                slots=slots)
    ref, iters = pagerank_ranks(g, 0.85, 200, 1e-9)
    assert got.metrics["outer_iterations"] == iters < 200
    np.testing.assert_allclose(got.columns["rank"], ref, rtol=1e-9)


@pytest.mark.parametrize("directed", [True, False])
def test_gpu_page_streaming(tmp_path, directed):
    g, mem, env, bm = stored_graph(tmp_path, n=N, m=M, directed=directed, pool_bytes=32 * 4096)
    try:
        # room for the state, the stream buffers and a few cached pages: most pages stream
        out = bfs_pages(g, 0, device="gpu", budget_bytes=5 * N + 20 * N + 12 * 4096)
        depth, _ = bfs_depths(mem, 0)
        assert np.array_equal(dense(out, "depth", N, -1), depth)
        assert out.metrics["bytes_to_device"] > 0 and max(out.metrics["pages_per_level"]) > 8
        out = pagerank_pages(g, 0.85, 6, device="gpu", budget_bytes=48 * N + 200_000)
        ref, _ = pagerank_ranks(mem, 0.85, 6)
        np.testing.assert_allclose(out.columns["rank"], ref, rtol=1e-10)
        assert out.metrics["cache_hit_rate"] is not None
    finally:
        bm.close()
        env.close()
