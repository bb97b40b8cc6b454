"""PageRank's hot-source tiles: the layout on the host (numpy), the kernel against the CPU twin."""

from __future__ import annotations

import numpy as np
import pytest

from graphdb.executor.algorithms.pagerank.tiles import (
    TILE_PAD,
    TileShape,
    build_tiles,
    tile_sums_host,
)
from graphdb.executor.graph import CSR, Graph
from graphdb.generators import rmat
from tests.gpu._gpu_graphs import random_edges


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
    rng = np.random.default_rng(n + m)
    rows, cols = _dst_src_sorted(rng, n, m, 3.0)
    tiles, rest = build_tiles(np, rows, cols, n, TileShape(sources, src, dst, min_edges, chunk))
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


def test_tile_sides_must_fit_16_bits():
    rows = cols = np.zeros(4, dtype=np.int32)
    with pytest.raises(ValueError):
        build_tiles(np, rows, cols, 100_000, TileShape(10, 1 << 17, 8, 0, 8))


def _graph(src, dst, n):
    return Graph.from_edges(src, dst, n, directed=True)


def _reference(g, **kw):
    from graphdb.executor.algorithms.pagerank.cpu import pagerank_ranks

    return pagerank_ranks(g, **kw)


def _layout(block_vertices, tiles: TileShape):
    from graphdb.executor.algorithms.pagerank.gpu import Layout

    return Layout(block_vertices, True, tiles)


#: Small tiles, so that small graphs exercise several source and destination ranges, tiles left
#: out (min_edges), columns cut into several items, and padding.
def small(sources: int, min_edges: int = 0, **kw) -> TileShape:
    return TileShape(**{"sources": sources, "src": 16, "dst": 40, "min_edges": min_edges,
                        "chunk": 24, **kw})


@pytest.mark.gpu
@pytest.mark.parametrize("n,m", [(7, 12), (60, 200), (500, 4000), (3000, 30000)])
@pytest.mark.parametrize("block_size", [16, 64])
@pytest.mark.parametrize("min_edges", [0, 20])
def test_pagerank_tiles_match_cpu(n, m, block_size, min_edges):
    from graphdb.executor.algorithms.pagerank.gpu import pagerank_gpu

    rng = np.random.default_rng(n)
    src, dst = random_edges(rng, n, m)
    g = _graph(src, dst, n)
    ref, it = _reference(g, damping=0.85, max_iterations=15)
    got, git, stats = pagerank_gpu(g, 0.85, 15,
                                   layout=_layout(block_size, small(n // 3, min_edges)))
    assert git == it
    np.testing.assert_allclose(got.get(), ref, rtol=1e-4, atol=1e-9)
    assert "tiles" not in stats or stats["tiles"]["edges_tiled"] > 0 or min_edges


@pytest.mark.gpu
def test_pagerank_tiles_rmat_hub_and_sizes():
    """R-MAT with its hubs (heavy rows too): the default tile shape, and smaller ones with
    columns split over several items and wide source ranges (more than the pipelined kernel
    holds in registers: the rest is staged straight from global memory)."""
    from graphdb.executor.algorithms.pagerank.gpu import pagerank_gpu

    src, dst = rmat(14, 16, seed=3)
    n = 1 << 14
    g = _graph(src, dst, n)
    ref, _ = _reference(g, max_iterations=10)
    for shape in (TileShape(min_edges=0), TileShape(min_edges=0, chunk=1 << 14),
                  TileShape(), small(3000), small(2000, 8, src=256, dst=1024, chunk=4096),
                  TileShape(sources=n, src=1 << 15, dst=1 << 13, min_edges=0, chunk=1 << 14)):
        got, _, stats = pagerank_gpu(g, max_iterations=10, layout=_layout(1 << 12, shape))
        np.testing.assert_allclose(got.get(), ref, rtol=1e-4, err_msg=str(shape))
        assert stats["tiles"]["edges_tiled"] > 0


@pytest.mark.gpu
def test_pagerank_tiles_tolerance():
    from graphdb.executor.algorithms.pagerank.gpu import pagerank_gpu

    src, dst = rmat(10, 8, seed=2)
    g = _graph(src, dst, 1 << 10)
    for tol in (1e-2, 1e-4, 1e-7):
        ref, it = _reference(g, max_iterations=100, tolerance=tol)
        got, git, _ = pagerank_gpu(g, max_iterations=100, tolerance=tol,
                                   layout=_layout(256, small(300)))
        assert abs(git - it) <= 1  # float32 contributions may move the crossing by one
        np.testing.assert_allclose(got.get(), ref, rtol=1e-3, atol=tol)


@pytest.mark.gpu
def test_pagerank_tiles_int64_ids():
    from graphdb.executor.algorithms.pagerank.gpu import pagerank_gpu

    rng = np.random.default_rng(9)
    n = 2000
    g = _graph(*random_edges(rng, n, 20000), n)
    out = g.out_csr
    wide = Graph.from_csr("wide", CSR(out.offsets, out.targets.astype(np.int64)))
    ref, _ = _reference(g, max_iterations=10)
    got, _, _ = pagerank_gpu(wide, max_iterations=10, layout=_layout(256, small(700)))
    np.testing.assert_allclose(got.get(), ref, rtol=1e-4)


def test_default_layout_takes_tiles_from_the_size_rule():
    """Tiles from MIN_GRAPH_EDGES edges on and with more than one block, and not otherwise."""
    from graphdb.executor.algorithms.pagerank.gpu import default_layout
    from graphdb.executor.algorithms.pagerank.tiles import MIN_GRAPH_EDGES

    l2 = 50 << 20
    big = default_layout(1 << 24, MIN_GRAPH_EDGES, l2)
    assert big.reorder and big.tiles is not None and big.block_vertices < 1 << 24
    assert default_layout(1 << 24, MIN_GRAPH_EDGES - 1, l2).tiles is None
    one_block = default_layout(1 << 20, MIN_GRAPH_EDGES, l2)
    assert one_block.block_vertices == 1 << 20 and one_block.tiles is None


@pytest.mark.gpu
def test_pagerank_default_tiles_give_way_to_memory(monkeypatch):
    """A tile build that runs out of memory falls back to the gathers when the tiles were the
    default, and fails (DeviceOutOfMemory) when they were asked for."""
    from graphdb.executor.algorithms.pagerank import blocks
    from graphdb.executor.algorithms.pagerank import gpu as prm
    from graphdb.executor.errors import DeviceOutOfMemory
    from graphdb.executor.gpu import runtime as rt

    src, dst = rmat(12, 8, seed=6)
    n = 1 << 12
    g = _graph(src, dst, n)
    ref, _ = _reference(g, max_iterations=8)

    def no_memory(*args, **kwargs):
        raise rt.cp().cuda.memory.OutOfMemoryError(1 << 40, 0, 0)

    layout = _layout(1024, TileShape())
    monkeypatch.setattr(prm, "default_layout", lambda *a: layout)
    monkeypatch.setattr(blocks, "build_tiles", no_memory)
    got, _, stats = prm.pagerank_gpu(g, max_iterations=8)
    np.testing.assert_allclose(got.get(), ref, rtol=1e-4)
    assert stats["reordered"] and "tiles" not in stats
    with pytest.raises(DeviceOutOfMemory):
        prm.pagerank_gpu(g, max_iterations=8, layout=_layout(1024, TileShape(min_edges=0)))
