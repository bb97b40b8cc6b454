"""PageRank's hot-source tiles: the layout on the host (numpy), the kernel against the CPU twin."""

from __future__ import annotations

import numpy as np
import pytest

from graphdb.executor.graph import Graph
from graphdb.generators import rmat
from tests.gpu._gpu_graphs import random_edges

# Small tiles so that small graphs exercise several source and destination ranges, tiles left
# out (min_edges), tiles cut into several chunks, and padding.
SMALL = {"tiles": True, "reorder": True, "variant": "pull", "tile_src": 16, "tile_dst": 40,
         "tile_chunk": 24}


def _dst_src_sorted(rng, n, m, skew):
    rows = rng.integers(0, n, m)
    cols = (rng.random(m) ** skew * n).astype(np.int64)  # low ids hot, as after the relabelling
    o = np.lexsort((cols, rows))
    return rows[o].astype(np.int32), cols[o].astype(np.int32)


@pytest.mark.parametrize("n,m,src,dst,sources,min_edges,chunk", [
    (1000, 20000, 64, 128, 300, 0, 64),
    (1000, 20000, 64, 100, 1000, 50, 40),
    (5000, 3000, 256, 512, 5000, 1, 16),
    (777, 9000, 1 << 16, (1 << 16) - 1, 500, 0, 1 << 12),
    (10, 0, 4, 4, 10, 0, 8),
])
def test_tile_layout_on_host(n, m, src, dst, sources, min_edges, chunk):
    from graphdb.executor.gpu.pagerank import TILE_PAD, build_tiles, tile_sums_host

    rng = np.random.default_rng(n + m)
    rows, cols = _dst_src_sorted(rng, n, m, 3.0)
    tiles, rest = build_tiles(np, rows, cols, n, sources=sources, src=src, dst=dst,
                              min_edges=min_edges, chunk=chunk)
    contrib = rng.random(n)
    ref = np.zeros(n)
    np.add.at(ref, rows[~rest], contrib[cols[~rest]])
    np.testing.assert_allclose(tile_sums_host(tiles, contrib, n), ref)
    assert not np.any(cols[~rest] >= sources)  # only hot sources are tiled
    assert tiles.edges_tiled == int((~rest).sum()) == int((tiles.edges != TILE_PAD).sum())
    starts, ends = np.asarray(tiles.item_start), np.asarray(tiles.item_end)
    assert np.all(starts % 8 == 0) and np.all(ends % 8 == 0) and np.all(ends > starts)
    assert np.all(ends - starts <= max(8, chunk // 8 * 8))
    assert np.all(np.diff(ends - starts) <= 0)  # longest first
    cover = np.zeros(tiles.edges.size + 1, dtype=np.int64)
    np.add.at(cover, starts, 1)
    np.add.at(cover, ends, -1)
    assert np.all(np.cumsum(cover)[:-1] == 1)  # the items cover the edges once
    tile_end = np.asarray(tiles.tile_end)
    assert np.all(tile_end % 8 == 0)
    bounds = np.concatenate(([0], tile_end))
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        w = tiles.edges[lo:hi]
        assert w.size and w[0] != TILE_PAD
        w = (w[w != TILE_PAD] >> 16).astype(np.int64)
        assert np.all(np.diff(w) >= 0)  # destinations ascend inside a tile (run merging)
    dst, slot = np.asarray(tiles.item_dst), np.asarray(tiles.item_slot)
    split_dst = np.asarray(tiles.split_dst)
    for d in np.unique(dst):  # a column has one owner item, or consecutive slots
        mine = np.sort(slot[dst == d])
        if mine.size == 1:
            assert mine[0] == -1 and d not in split_dst
        else:
            (c,) = np.flatnonzero(split_dst == d)
            first, k = tiles.split_slot[c], tiles.split_slots[c]
            np.testing.assert_array_equal(mine, np.arange(first, first + k))


def test_tile_sides_must_fit_16_bits():
    from graphdb.executor.gpu.pagerank import build_tiles

    rows = cols = np.zeros(4, dtype=np.int32)
    with pytest.raises(ValueError):
        build_tiles(np, rows, cols, 100_000, sources=10, src=1 << 17, dst=8, min_edges=0,
                    chunk=8)


def _graph(src, dst, n):
    return Graph.from_edges(src, dst, n, directed=True)


def _reference(g, **kw):
    from graphdb.executor.algorithms.pagerank import pagerank_ranks

    return pagerank_ranks(g, **kw)


@pytest.mark.gpu
@pytest.mark.parametrize("n,m", [(7, 12), (60, 200), (500, 4000), (3000, 30000)])
@pytest.mark.parametrize("block_size", [None, 64])
@pytest.mark.parametrize("min_edges", [0, 20])
@pytest.mark.parametrize("atomic", [False, True])
@pytest.mark.parametrize("pipeline,to_dense", [(False, False), (True, False), (True, True)])
def test_pagerank_tiles_match_cpu(n, m, block_size, min_edges, atomic, pipeline, to_dense):
    from graphdb.executor.gpu.pagerank import pagerank_gpu

    rng = np.random.default_rng(n)
    src, dst = random_edges(rng, n, m)
    g = _graph(src, dst, n)
    ref, it = _reference(g, damping=0.85, max_iterations=15)
    got, git, stats = pagerank_gpu(g, 0.85, 15, block_size=block_size, tile_sources=n // 3,
                                   tile_min_edges=min_edges, tiles_atomic=atomic,
                                   tiles_pipeline=pipeline, rows_to_dense=to_dense, **SMALL)
    assert git == it
    np.testing.assert_allclose(got.get(), ref, rtol=1e-4, atol=1e-9)
    assert stats["tiles"]["edges_tiled"] > 0 or min_edges


@pytest.mark.gpu
def test_pagerank_tiles_rmat_hub_and_default_sizes():
    """R-MAT with its hubs (heavy rows too), the tiles' default sizes and a small variant."""
    from graphdb.executor.gpu.pagerank import pagerank_gpu

    src, dst = rmat(14, 16, seed=3)
    n = 1 << 14
    g = _graph(src, dst, n)
    ref, _ = _reference(g, max_iterations=10)
    seq = {"tiles": True, "reorder": True, "tiles_concurrent": False, "tiles_atomic": False}
    for kw in ({"tiles": True, "reorder": True, "tile_min_edges": 0},
               {"tiles": True, "reorder": True, "tile_min_edges": 0, "tiles_pipeline": True},
               {"tiles": True, "reorder": True, "tiles_pipeline": False},
               {**seq, "tiles_pipeline": True, "tile_chunk": 1 << 14},
               {"tiles": True, "reorder": True, "tiles_pipeline": True, "rows_to_dense": True},
               {**seq, "tiles_pipeline": True, "rows_to_dense": True, "tile_min_edges": 0},
               {"tiles": True, "reorder": True, "rows_to_dense": True, "tile_min_edges": 0,
                "tile_chunk": 1 << 14},
               {**seq, "tile_min_edges": 0},
               {**seq, "tiles_last": True},
               {**seq, "tiles_concurrent": True, "tile_min_edges": 0, "tile_chunk": 1 << 14},
               {"tiles": True, "reorder": True, "tile_chunk": 1 << 14},
               {**SMALL, "tile_sources": 3000, "tile_min_edges": 0, "tiles_atomic": True},
               {**SMALL, "tile_sources": 2000, "tile_src": 256, "tile_dst": 1024,
                "tile_min_edges": 8, "tile_chunk": 4096}):
        got, _, stats = pagerank_gpu(g, max_iterations=10, **kw)
        np.testing.assert_allclose(got.get(), ref, rtol=1e-4, err_msg=str(kw))
        assert stats["tiles"]["edges_tiled"] > 0


@pytest.mark.gpu
def test_pagerank_tiles_pipeline_wide_source_tiles():
    """More tile sources than the pipelined kernel holds in registers (TILE_PRE per thread):
    the rest of a tile's contributions is staged straight from global memory."""
    from graphdb.executor.gpu.pagerank import pagerank_gpu

    src, dst = rmat(15, 8, seed=4)
    g = _graph(src, dst, 1 << 15)
    ref, _ = _reference(g, max_iterations=10)
    for atomic in (False, True):
        got, _, stats = pagerank_gpu(g, max_iterations=10, tiles=True, reorder=True,
                                     tile_src=1 << 15, tile_dst=1 << 13, tile_min_edges=0,
                                     tile_chunk=1 << 14, tiles_atomic=atomic,
                                     tiles_pipeline=True)
        np.testing.assert_allclose(got.get(), ref, rtol=1e-4)
        assert stats["tiles"]["src"] == 1 << 15 and stats["tiles"]["edges_tiled"] > 0


@pytest.mark.gpu
@pytest.mark.parametrize("block_size", [None, 512])
@pytest.mark.parametrize("reorder", [False, True])
@pytest.mark.parametrize("hub_cache", [False, True])
@pytest.mark.parametrize("lean", [False, True])
def test_pagerank_rows_to_dense_without_tiles(block_size, reorder, hub_cache, lean):
    """The gathers' sums added into the dense sums (no partials), without tiles: heavy rows,
    several blocks, the hub cache, the lean apply kernel or the merge (n not a multiple of 4:
    the apply's tail); the push variant ignores rows_to_dense."""
    from graphdb.executor.gpu.pagerank import CHUNK, pagerank_gpu

    src, dst = rmat(13, 16, seed=7)
    n = (1 << 13) - 3
    keep = (src < n) & (dst < n)
    src, dst = src[keep], dst[keep]
    hub = np.arange(2 * CHUNK + 77) % n  # one row longer than two heavy pieces
    src, dst = np.concatenate((src, hub)), np.concatenate((dst, np.full(hub.size, 5)))
    g = _graph(src, dst, n)
    ref, _ = _reference(g, max_iterations=12)
    for variant in ("pull", "push"):
        got, _, stats = pagerank_gpu(g, max_iterations=12, variant=variant, tiles=False,
                                     block_size=block_size, reorder=reorder,
                                     hub_cache=hub_cache, rows_to_dense=True,
                                     lean_apply=lean)
        np.testing.assert_allclose(got.get(), ref, rtol=1e-4, err_msg=variant)
        assert stats["rows_to_dense"] == (variant == "pull")


@pytest.mark.gpu
def test_pagerank_tiles_tolerance_variant():
    from graphdb.executor.gpu.pagerank import pagerank_gpu

    src, dst = rmat(10, 8, seed=2)
    g = _graph(src, dst, 1 << 10)
    for tol, pipeline, to_dense, lean in ((1e-2, False, False, True), (1e-4, True, False, True),
                                          (1e-7, False, False, True), (1e-7, True, False, True),
                                          (1e-4, True, True, False), (1e-7, True, True, False),
                                          (1e-4, True, True, True), (1e-7, True, True, True)):
        ref, it = _reference(g, max_iterations=100, tolerance=tol)
        got, git, _ = pagerank_gpu(g, max_iterations=100, tolerance=tol, block_size=256,
                                   tile_sources=300, tiles_pipeline=pipeline,
                                   rows_to_dense=to_dense, lean_apply=lean, **SMALL)
        assert abs(git - it) <= 1  # float32 contributions may move the crossing by one
        np.testing.assert_allclose(got.get(), ref, rtol=1e-3, atol=tol)


@pytest.mark.gpu
def test_pagerank_tiles_int64_ids():
    from graphdb.executor.gpu.pagerank import pagerank_gpu
    from graphdb.executor.graph import CSR

    rng = np.random.default_rng(9)
    n = 2000
    g = _graph(*random_edges(rng, n, 20000), n)
    out = g.out_csr
    wide_csr = CSR(out.offsets, out.targets.astype(np.int64), out.weights)
    wide = Graph(name="wide", num_vertices=n, num_edges=g.num_edges, directed=True,
                 weighted=False, _load_out=lambda: wide_csr)
    ref, _ = _reference(g, max_iterations=10)
    got, _, _ = pagerank_gpu(wide, max_iterations=10, tile_sources=700, **SMALL)
    np.testing.assert_allclose(got.get(), ref, rtol=1e-4)


@pytest.mark.gpu
def test_pagerank_tiles_by_default_from_the_size_rule(monkeypatch):
    """Not told, pagerank_gpu takes the tiles (pipelined kernel, gathers into the dense sums)
    from TILES_MIN_GRAPH_EDGES edges on and with more than one block, and not otherwise."""
    from graphdb.executor.gpu import pagerank as prm

    src, dst = rmat(14, 16, seed=5)
    n = 1 << 14
    g = _graph(src, dst, n)
    ref, _ = _reference(g, max_iterations=12)
    monkeypatch.setattr(prm, "REORDER_MIN_EDGES", 1 << 10)
    monkeypatch.setattr(prm, "TILES_MIN_GRAPH_EDGES", g.num_edges)
    got, _, stats = prm.pagerank_gpu(g, max_iterations=12, block_size=1 << 12)
    np.testing.assert_allclose(got.get(), ref, rtol=1e-4)
    assert stats["reordered"] and stats["tiles"]["edges_tiled"] > 0
    assert stats["rows_to_dense"] == prm.ROWS_TO_DENSE
    got, _, stats = prm.pagerank_gpu(g, max_iterations=12, block_size=n)  # one block
    np.testing.assert_allclose(got.get(), ref, rtol=1e-4)
    assert "tiles" not in stats
    monkeypatch.setattr(prm, "TILES_MIN_GRAPH_EDGES", g.num_edges + 1)
    got, _, stats = prm.pagerank_gpu(g, max_iterations=12, block_size=1 << 12)
    np.testing.assert_allclose(got.get(), ref, rtol=1e-4)
    assert "tiles" not in stats


@pytest.mark.gpu
def test_pagerank_default_tiles_give_way_to_memory(monkeypatch):
    """A tile build that runs out of memory falls back to the gathers when the tiles were the
    default, and fails (DeviceOutOfMemory) when they were asked for."""
    from graphdb.executor.errors import DeviceOutOfMemory
    from graphdb.executor.gpu import pagerank as prm
    from graphdb.executor.gpu import runtime as rt

    src, dst = rmat(12, 8, seed=6)
    n = 1 << 12
    g = _graph(src, dst, n)
    ref, _ = _reference(g, max_iterations=8)

    def no_memory(*args, **kwargs):
        raise rt.cp().cuda.memory.OutOfMemoryError(1 << 40, 0, 0)

    monkeypatch.setattr(prm, "REORDER_MIN_EDGES", 1)
    monkeypatch.setattr(prm, "TILES_MIN_GRAPH_EDGES", 1)
    monkeypatch.setattr(prm, "build_tiles", no_memory)
    got, _, stats = prm.pagerank_gpu(g, max_iterations=8, block_size=1024)
    np.testing.assert_allclose(got.get(), ref, rtol=1e-4)
    assert stats["reordered"] and "tiles" not in stats
    with pytest.raises(DeviceOutOfMemory):
        prm.pagerank_gpu(g, max_iterations=8, block_size=1024, tiles=True)


def test_range_modes_on_host():
    """The merge's per-range dense modes: 1 under tiled columns, 2 under split columns flushed
    with atomics, 0 elsewhere; without tiles the given mode everywhere."""
    from graphdb.executor.gpu.pagerank import RANGE, build_tiles, range_modes

    rng = np.random.default_rng(3)
    n = 20 * RANGE + 5
    rows, cols = _dst_src_sorted(rng, n, 200_000, 3.0)
    gap = (rows >= 5 * RANGE) & (rows < 9 * RANGE)  # a column without edges: its ranges get 0
    rows, cols = rows[~gap], cols[~gap]
    tiles, _ = build_tiles(np, rows, cols, n, sources=n // 4, src=512, dst=3 * RANGE // 2,
                           min_edges=50, chunk=4096)
    assert tiles.split_column_dst.size and tiles.column_dst.size > tiles.split_column_dst.size
    for atomic in (False, True):
        mode = range_modes(n, 2 if atomic else 1, tiles, atomic)
        want = np.zeros(mode.size, dtype=np.uint8)
        for starts, value in ((tiles.column_dst, 1), (tiles.split_column_dst, 2 if atomic else 1)):
            for d0 in starts:
                for v in range(int(d0), min(n, int(d0) + tiles.dst)):
                    want[v // RANGE] = max(want[v // RANGE], value)
        np.testing.assert_array_equal(mode, want)
        assert (mode == 0).any() and (mode == (2 if atomic else 1)).any()
    np.testing.assert_array_equal(range_modes(n, 2, None, False), np.full(mode.size, 2))
