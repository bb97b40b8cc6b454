"""Hot-source tiles of the GPU PageRank: the edges of the hottest sources (after the relabelling
by out-degree) as 2-D tiles of S sources x D destinations, summed by ``graphdb_pagerank_tiles``
(``pagerank.cu``), while the other edges stay in the per-row gathers.

Measured on an H100 (docs/performance/gpu-operators.md): R-MAT 24 (268 M edges, 4 L2 blocks)
1.14-1.18 ms an iteration with tiles against 2.26 without; on one-block graphs the gathers hit L2
and the tiles do not pay, hence :data:`MIN_GRAPH_EDGES` and the several-blocks condition.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MIN_GRAPH_EDGES", "TILE_PAD", "TileShape", "Tiles", "build_tiles", "tile_sums_host"]

#: Graphs with fewer edges than this (or whose contributions fit one L2 block) get no tiles.
MIN_GRAPH_EDGES = 1 << 27
TILE_PAD = 0xFFFFFFFF


@dataclass(frozen=True)
class TileShape:
    """Which edges go into tiles and how: the ``sources`` hottest sources, tiles of ``src`` x
    ``dst`` (S + D floats of shared memory a block: 192 KiB, one 1024-thread block per SM), a
    tile kept only from ``min_edges`` edges (its fixed cost, S + D floats filled and flushed,
    would outweigh the gathers it saves), work items of at most ``chunk`` edges."""

    sources: int = 1 << 22
    src: int = 1 << 14
    dst: int = 1 << 15
    min_edges: int = 8192
    chunk: int = 1 << 18


@dataclass
class Tiles:
    """Hot-source edges as 2-D tiles (see ``graphdb_pagerank_tiles`` in pagerank.cu).

    ``edges`` holds the tiles column by column (destination range major, then source range),
    each tile's edges packed as ``dst_local << 16 | src_local``, sorted, and padded with
    TILE_PAD to a multiple of 8. A work item is a run of edges inside one column, at most the
    item size; every item adds its column sums into the dense sums with atomics. Items are
    listed longest first.
    """

    edges: object  # uint32
    tile_end: object  # int64, end of each kept tile in `edges`
    tile_src: object  # int32, first source id of each kept tile
    item_start: object  # int64, a multiple of 8
    item_end: object  # int64
    item_tile: object  # int32, the kept tile holding item_start
    item_dst: object  # int32, first destination id of the item's column
    src: int  # S, sources per tile
    dst: int  # D, destinations per tile
    sources: int  # H, the hottest sources considered
    hot_edges: int  # edges from the H sources
    edges_tiled: int  # of those, the edges in tiles kept (the rest stay in the gather path)
    tiles: int
    columns: int
    build_ms: float = 0.0

    @property
    def items(self) -> int:
        return int(self.item_start.size)


def _host(xp, a):
    return xp.asnumpy(a) if hasattr(xp, "asnumpy") else np.asarray(a)


def build_tiles(xp, rows, cols, n: int, shape: "TileShape"):
    """Take the edges (rows = destinations, cols = sources, relabelled ids) of the
    ``shape.sources`` hottest sources into tiles of ``src`` x ``dst``; tiles with fewer than
    ``min_edges`` edges are left out; a column's edges are cut into work items of at most
    ``chunk`` edges. Returns (Tiles, mask of the edges that stay in the gather path).

    ``xp`` is numpy or cupy (the host tests check the layout with numpy).
    """
    sources, src, dst = shape.sources, min(shape.src, n), min(shape.dst, n, (1 << 16) - 1)
    min_edges, chunk = shape.min_edges, shape.chunk
    if not (1 <= src <= 1 << 16 and 1 <= dst < 1 << 16):
        raise ValueError("tile sides must fit 16-bit local ids (dst < 65536 keeps TILE_PAD free)")
    chunk = max(8, chunk // 8 * 8)
    hot_n = min(int(sources), n)
    n_sr = -(-hot_n // src)
    n_dr = -(-n // dst)
    n_tiles = n_sr * n_dr
    hot = cols < hot_n
    # Column-major tile id: destination range, then source range.
    tile = xp.where(hot, (rows // dst).astype(np.int64) * n_sr + cols // src, 0)
    counts = xp.bincount(tile[hot], minlength=max(n_tiles, 1))
    keep_tile = counts >= max(int(min_edges), 1)
    tiled = hot & keep_tile[tile]
    hot_edges = int(hot.sum())
    del hot
    idx = xp.flatnonzero(tiled)
    key = tile[idx] << 32
    del tile
    key |= (rows[idx].astype(np.int64) % dst) << 16
    key |= cols[idx].astype(np.int64) % src
    del idx
    key.sort()
    counts_h = _host(xp, counts).astype(np.int64) * _host(xp, keep_tile)
    padded = -(-counts_h // 8) * 8
    pstart = np.concatenate(([0], np.cumsum(padded)))
    ustart = np.concatenate(([0], np.cumsum(counts_h)))
    edges = xp.full(int(pstart[-1]), TILE_PAD, dtype=np.uint32)
    if key.size:
        t = key >> 32
        pos = xp.arange(key.size, dtype=np.int64)
        pos += xp.asarray(pstart[:-1] - ustart[:-1])[t]
        del t
        edges[pos] = (key & 0xFFFFFFFF).astype(np.uint32)
        del pos
    m_tiled = int(key.size)
    del key
    # Kept tiles in storage order, then each column's run of edges cut evenly into items.
    ks = np.flatnonzero(padded)
    t_start, t_end = pstart[ks], pstart[ks] + padded[ks]
    t_col = ks // n_sr
    cols_k, first = np.unique(t_col, return_index=True)
    last = np.concatenate((first[1:], [ks.size]))[:first.size] - 1
    c_start, c_end = t_start[first], t_end[last]
    work = c_end - c_start
    pieces = -(-work // chunk)
    even = -(-work // np.maximum(pieces, 1))
    size = -(-even // 8) * 8
    rep = np.repeat(np.arange(cols_k.size), pieces)
    j = np.arange(rep.size) - np.repeat(np.cumsum(pieces) - pieces, pieces)
    start = c_start[rep] + j * size[rep]
    end = np.minimum(start + size[rep], c_end[rep])
    keep = end > start
    rep, start, end = rep[keep], start[keep], end[keep]
    item_tile = np.searchsorted(t_end, start, side="right")
    order = np.argsort(-(end - start), kind="stable")  # longest first: the last wave is short
    tiles = Tiles(
        edges=edges,
        tile_end=xp.asarray(t_end.astype(np.int64)),
        tile_src=xp.asarray(((ks % n_sr) * src).astype(np.int32)),
        item_start=xp.asarray(start[order].astype(np.int64)),
        item_end=xp.asarray(end[order].astype(np.int64)),
        item_tile=xp.asarray(item_tile[order].astype(np.int32)),
        item_dst=xp.asarray((cols_k[rep][order] * dst).astype(np.int32)),
        src=int(src), dst=int(dst), sources=hot_n, hot_edges=hot_edges, edges_tiled=m_tiled,
        tiles=int(ks.size), columns=int(cols_k.size))
    return tiles, ~tiled


def tile_sums_host(tiles: Tiles, contrib, n: int):
    """What the tile kernel adds into the dense sums (numpy; the layout's host check)."""
    sums = np.zeros(n, dtype=np.float64)
    edges = np.asarray(tiles.edges)
    tile_end, tile_src = np.asarray(tiles.tile_end), np.asarray(tiles.tile_src)
    for s, e, t, d0 in zip(tiles.item_start, tiles.item_end, tiles.item_tile, tiles.item_dst,
                           strict=True):
        s, t = int(s), int(t)
        acc = np.zeros(tiles.dst)
        while s < e:
            seg_end = min(int(tile_end[t]), int(e))
            w = edges[s:seg_end]
            w = w[w != TILE_PAD].astype(np.int64)
            np.add.at(acc, w >> 16, contrib[int(tile_src[t]) + (w & 0xFFFF)])
            s, t = seg_end, t + 1
        hi = min(tiles.dst, n - int(d0))
        sums[int(d0):int(d0) + hi] += acc[:hi]
    return sums
