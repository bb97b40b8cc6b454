"""Cache-blocked PageRank on the GPU (GraphCage TOCAB), Graphalytics semantics.

See ``cuda/pagerank.cu`` for the kernels. Here: the block size from the device's L2, the
partition of a CSR into source-range (pull) or destination-range (push) blocks, built once on
the device and cached on the graph, the pull/push cost model, and the iteration loop.

Values read at random (contributions rank/outdeg) and the partial sums are float32: they halve
the bytes that must stay in L2 and move through memory, and the result stays far inside
Graphalytics' 1e-4 relative error; ranks, the dangling sum and the L1 change are float64.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..algorithms.registry import AlgorithmOutput
from ..cancel import checkpoint
from ..graph import Graph
from . import runtime as rt
from .compiled import set_dynamic_shared

__all__ = ["pagerank", "pagerank_gpu", "Partition", "Tiles", "block_vertices", "build_tiles",
           "choose_variant"]

THREADS = 256
RANGE = 1024  # vertices per merge range (cuda/pagerank.cu RANGE)
HEAVY = 256  # rows longer than this are cut into pieces of CHUNK edges, a thread block each
CHUNK = 4096
#: Share of L2 that the randomly read values of one block may take (GraphCage: about a third).
L2_SHARE = 1 / 3
#: Relabel vertices by out-degree inside the partition from this many edges on (below it the
#: random reads fit in L2 anyway and the sort is not worth its time).
REORDER_MIN_EDGES = 1 << 22
#: Hub cache: contributions of the hottest sources kept in shared memory by persistent blocks
#: of HUB_THREADS. 47.5 KiB: with the heavy kernel's 128 B of static shared memory a block
#: stays under the 48 KiB that needs no opt-in to larger dynamic shared memory.
HUB_VALUES = 12160
HUB_THREADS = 1024
#: Bytes-equivalent cost of one global float atomic (push) against a streamed byte.
ATOMIC_COST = 8.0
#: Hot-source tiles (``tiles=True``, pull with relabelling): the edges of the TILE_SOURCES
#: hottest sources are cut into tiles of TILE_SRC sources x TILE_DST destinations; a tile with
#: fewer than TILE_MIN_EDGES edges stays in the gather path (its fixed cost, 4 (S + D) bytes of
#: shared memory filled and flushed, would outweigh the gathers it saves). S + D floats of shared
#: memory per block (192 KiB): one 1024-thread block per SM.
TILE_SOURCES = 1 << 22
TILE_SRC = 1 << 14
TILE_DST = 1 << 15
TILE_MIN_EDGES = 8192
TILE_CHUNK = 1 << 18  # edges per thread block at most (a tile's chunks are even)
TILE_THREADS = 1024
TILE_PAD = 0xFFFFFFFF
#: Whether pagerank_gpu uses the tiles when not told: from TILES_MIN_GRAPH_EDGES edges on and
#: when the contributions take more than one L2 block (only with the relabelling, pull), with
#: the pipelined tile kernel (TILES_PIPELINE), the gathers adding into the dense sums
#: (ROWS_TO_DENSE), on the operator's stream before the gathers (TILES_CONCURRENT off).
#: Measured on an H100 (NOTES.md, 2026-11-22): R-MAT 24 (268 M edges, 4 blocks) 1.14-1.18 ms an
#: iteration (first tiles 1.40, without tiles 2.26); R-MAT 23 (134 M edges, 2 blocks) 0.78
#: against 1.12 ms and R-MAT 22 (67 M edges, one block) 0.66 against 0.55 ms with the first
#: tiles, since there the gathers hit L2 and 281 work items do not fill the GPU's
#: one-block-per-SM waves evenly.
TILES_DEFAULT = True
TILES_MIN_GRAPH_EDGES = 1 << 27
#: The tile kernel on a second stream beside the gathers: it paid with the first tile kernel
#: (1.40 against 1.46 ms), not since the pipelined one and rows_to_dense (1.18-1.23 against
#: 1.14-1.21 ms sequential, three runs).
TILES_CONCURRENT = False
TILES_ATOMIC = True
#: Whether the tiles use graphdb_pagerank_tiles_pipe (next edges and next tile's contributions
#: loaded while the current ones are summed, inner runs added without shared atomics) instead
#: of graphdb_pagerank_tiles: 0.54 against 0.71 ms for the tile kernel on R-MAT 24.
TILES_PIPELINE = True
#: Pull with tiles: the gather kernels add each row's sum into the dense sums with a global
#: atomic (where the tiles add theirs), so the merge reads no partials (``rows_to_dense``):
#: merge 0.16 against 0.26 ms on R-MAT 24.
ROWS_TO_DENSE = True
#: With every sum in the dense array (push, rows_to_dense): graphdb_pagerank_apply_dense_* (a
#: streaming kernel, 4 vertices a thread) instead of the range-by-range merge. Not faster on
#: R-MAT 24 (0.17 against 0.16 ms), so off.
LEAN_APPLY = False


def block_vertices(l2_bytes: int, value_bytes: int = 4) -> int:
    """Vertices per block: a third of L2 of values, rounded down to a power of two."""
    raw = max(int(l2_bytes * L2_SHARE) // value_bytes, 1024)
    return 1 << (raw.bit_length() - 1)


def choose_variant(n: int, m: int, blocks: int) -> str:
    """Pull or push, by the bytes each moves beyond the edge stream they share.

    A block holds a vertex's row when at least one of its edges falls in the block; with edges
    spread evenly that is V * (1 - exp(-E / (P V))) rows per block (Poisson occupancy). Pull pays
    per row for rowptr, id_map and the partial (written, then read by the merge); push pays per
    row for rowptr and id_map, plus one atomic per edge.
    """
    if n == 0 or m == 0:
        return "pull"
    rows = blocks * n * (1.0 - math.exp(-m / (blocks * n)))
    pull = rows * (8 + 4 + 4 + 4 + 4)
    push = rows * (8 + 4) + m * ATOMIC_COST
    return "push" if push < pull else "pull"


@dataclass
class Tiles:
    """Hot-source edges as 2-D tiles (see ``graphdb_pagerank_tiles`` in cuda/pagerank.cu).

    ``edges`` holds the tiles column by column (destination range major, then source range),
    each tile's edges packed as ``dst_local << 16 | src_local``, sorted, and padded with
    TILE_PAD to a multiple of 8. A work item is a run of edges inside one column, at most the
    item size; an item that holds its whole column stores its sums, the items of a split column
    store theirs into consecutive scratch slots that a second kernel sums into the column (or
    add them atomically). Items are listed longest first.
    """

    edges: object  # uint32
    tile_end: object  # int64, end of each kept tile in `edges`
    tile_src: object  # int32, first source id of each kept tile
    item_start: object  # int64, a multiple of 8
    item_end: object  # int64
    item_tile: object  # int32, the kept tile holding item_start
    item_dst: object  # int32, first destination id of the item's column
    item_slot: object  # int32, -1 where the item is its column's only one, else its slot
    split_dst: object  # int32, per split column: first destination id
    split_slot: object  # int32, per split column: its first slot (slots are consecutive)
    split_slots: object  # int32, per split column: how many
    src: int  # S, sources per tile
    dst: int  # D, destinations per tile
    sources: int  # H, the hottest sources considered
    hot_edges: int  # edges from the H sources
    edges_tiled: int  # of those, the edges in tiles kept (the rest stay in the gather path)
    tiles: int
    columns: int
    build_ms: float = 0.0
    column_dst: object = None  # numpy int64, first destination id of each tiled column
    split_column_dst: object = None  # numpy int64, the same for the split columns

    @property
    def items(self) -> int:
        return int(self.item_start.size)

    @property
    def slots(self) -> int:
        return int(self.split_slots.sum()) if self.split_slots.size else 0


def _host(xp, a):
    return xp.asnumpy(a) if hasattr(xp, "asnumpy") else np.asarray(a)


def build_tiles(xp, rows, cols, n: int, *, sources: int, src: int, dst: int, min_edges: int,
                chunk: int):
    """Take the edges (rows = destinations, cols = sources, relabelled ids) of the ``sources``
    hottest sources into tiles of ``src`` x ``dst``; tiles with fewer than ``min_edges`` edges
    are left out; a column's edges are cut into work items of at most ``chunk`` edges.
    Returns (Tiles, mask of the edges that stay in the gather path).

    ``xp`` is numpy or cupy (the host tests check the layout with numpy).
    """
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
    split = pieces[rep] > 1
    slot = np.where(split, np.cumsum(split) - 1, -1).astype(np.int32)  # column order
    split_cols = np.flatnonzero(pieces > 1)
    split_slots = np.bincount(rep[split], minlength=cols_k.size)[split_cols]
    order = np.argsort(-(end - start), kind="stable")  # longest first: the last wave is short
    tiles = Tiles(
        edges=edges,
        tile_end=xp.asarray(t_end.astype(np.int64)),
        tile_src=xp.asarray(((ks % n_sr) * src).astype(np.int32)),
        item_start=xp.asarray(start[order].astype(np.int64)),
        item_end=xp.asarray(end[order].astype(np.int64)),
        item_tile=xp.asarray(item_tile[order].astype(np.int32)),
        item_dst=xp.asarray((cols_k[rep][order] * dst).astype(np.int32)),
        item_slot=xp.asarray(slot[order]),
        split_dst=xp.asarray((cols_k[split_cols] * dst).astype(np.int32)),
        split_slot=xp.asarray((np.cumsum(split_slots) - split_slots).astype(np.int32)),
        split_slots=xp.asarray(split_slots.astype(np.int32)),
        src=int(src), dst=int(dst), sources=hot_n, hot_edges=hot_edges, edges_tiled=m_tiled,
        tiles=int(ks.size), columns=int(cols_k.size),
        column_dst=(cols_k * dst).astype(np.int64),
        split_column_dst=(cols_k[split_cols] * dst).astype(np.int64))
    return tiles, ~tiled


def tile_sums_host(tiles: Tiles, contrib, n: int):
    """What the tile kernels leave in ``sums`` (numpy; the layout's host check): an item that
    owns its column stores, the others fill their scratch slot, and the slots are summed."""
    sums = np.zeros(n, dtype=np.float64)
    scratch = np.full((max(tiles.slots, 1), tiles.dst), np.nan)
    edges = np.asarray(tiles.edges)
    tile_end, tile_src = np.asarray(tiles.tile_end), np.asarray(tiles.tile_src)
    for s, e, t, d0, slot in zip(tiles.item_start, tiles.item_end, tiles.item_tile,
                                 tiles.item_dst, tiles.item_slot, strict=True):
        s, t = int(s), int(t)
        acc = np.zeros(tiles.dst)
        while s < e:
            seg_end = min(int(tile_end[t]), int(e))
            w = edges[s:seg_end]
            w = w[w != TILE_PAD].astype(np.int64)
            np.add.at(acc, w >> 16, contrib[int(tile_src[t]) + (w & 0xFFFF)])
            s, t = seg_end, t + 1
        if slot < 0:
            hi = min(tiles.dst, n - int(d0))
            sums[int(d0):int(d0) + hi] = acc[:hi]
        else:
            scratch[int(slot)] = acc
    for d0, first, k in zip(tiles.split_dst, tiles.split_slot, tiles.split_slots, strict=True):
        hi = min(tiles.dst, n - int(d0))
        sums[int(d0):int(d0) + hi] = scratch[int(first):int(first) + int(k)].sum(axis=0)[:hi]
    return sums


@dataclass
class Partition:
    """A graph's edges cut by column range: per block, its non-empty rows and their edges.

    With ``order`` set, vertex ids inside the partition are relabelled by decreasing out-degree
    (``order[new] = old``): the sources read at random then crowd into few cache lines, so
    the hubs' contributions are shared by many loads of one sector. Ranks are computed in the new
    order and mapped back once at the end.
    """

    blocks: int
    rowptr: list  # per block, int64 local row offsets (n_b + 1)
    id_map: list  # per block, the rows' vertex ids (ascending)
    cols: list  # per block, the edges' column ids
    group: list  # per block, lanes per light row (CSR-vector width)
    heavy_row: list  # per block, local row of each heavy piece (int64)
    heavy_start: list  # per block, first edge of each heavy piece (int64, local)
    range_ptr: object  # int64 [blocks, n_ranges + 1]: first flat row of each merge range
    id_map_flat: object
    rows_total: int
    out_degree: object  # int32, in partition ids
    order: object | None  # new id -> old id, or None (identity)
    tiles: Tiles | None = None  # hot-source tiles (their edges are not in the blocks)
    dangling: int = 0  # vertices without out-edges
    range_modes: dict = field(default_factory=dict)  # the merge's per-range dense modes


def range_modes(n: int, dense_mode: int, tiles: Tiles | None, atomic_split: bool):
    """The merge's ``range_mode`` (numpy uint8, a byte per range of RANGE vertices): without
    tiles ``dense_mode`` everywhere (push: 2, none: 0); with them 1 where a tiled column covers
    the range, 2 where a split column flushed with atomics does (its sums are zeroed after the
    apply), 0 elsewhere (no dense read)."""
    n_ranges = -(-n // RANGE)
    if tiles is None or tiles.column_dst is None:
        return np.full(n_ranges, dense_mode, dtype=np.uint8)
    mode = np.zeros(n_ranges, dtype=np.uint8)
    marks = [(tiles.column_dst, 1)]
    if atomic_split:
        marks.append((tiles.split_column_dst, 2))
    for starts, value in marks:
        for d0 in np.asarray(starts, dtype=np.int64):
            lo, hi = int(d0) // RANGE, -(-min(n, int(d0) + tiles.dst) // RANGE)
            mode[lo:hi] = np.maximum(mode[lo:hi], value)
    return mode


def _group_width(edges: int, rows: int) -> int:
    """Lanes per light row: enough that a mean row gives each lane about 4 edges (the rows
    kernel keeps 4 loads in flight per lane), at least 4 so that short rows stay cheap."""
    mean = edges / max(rows, 1)
    for g in (4, 8, 16):
        if mean <= 4 * g:
            return g
    return 32


def _heavy_pieces(rows: np.ndarray, pieces: np.ndarray, starts: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(row, first edge) of every piece of CHUNK edges of the heavy ``rows`` (host arrays)."""
    row = np.repeat(rows, pieces)
    first_piece = np.cumsum(pieces) - pieces
    local = np.arange(row.size) - np.repeat(first_piece, pieces)
    return row.astype(np.int64), (np.repeat(starts, pieces) + local * CHUNK).astype(np.int64)


def unblocked_partition(graph: Graph, csr: "rt.DeviceCSR", variant: str) -> Partition:
    """The partition where blocking is skipped (one block, no relabelling: every graph below
    REORDER_MIN_EDGES edges that one block holds), computed from the host CSR and uploaded.

    It needs no CuPy array operation: their first use in a process imports ``cupyx``, and
    ``scipy.sparse`` with it (about 160 ms of a fresh process's first PageRank query on the
    H100 host); a PageRank query on such a graph then runs on raw kernels, memsets and copies
    alone, as a BFS query does."""
    cp = rt.cp()
    n = graph.num_vertices
    host = graph.in_csr if variant == "pull" and graph.directed else graph.out_csr
    rowptr = np.asarray(host.offsets, dtype=np.int64)
    deg = np.diff(rowptr)
    heavy = np.flatnonzero(deg > HEAVY)
    rows_h, starts_h = _heavy_pieces(heavy, -(-deg[heavy] // CHUNK), rowptr[heavy])
    n_ranges = -(-n // RANGE)
    range_rows = np.minimum(np.arange(n_ranges + 1, dtype=np.int64) * RANGE, n)
    out_degree = np.diff(np.asarray(graph.out_csr.offsets, dtype=np.int64)).astype(np.int32)
    id_map = cp.asarray(np.arange(n, dtype=csr.targets.dtype))
    return Partition(
        blocks=1, rowptr=[csr.offsets], id_map=[id_map], cols=[csr.targets],
        group=[_group_width(int(rowptr[-1]) - int(deg[heavy].sum()), n - int(heavy.size))],
        heavy_row=[cp.asarray(rows_h)], heavy_start=[cp.asarray(starts_h)],
        range_ptr=cp.asarray(range_rows[None, :]), id_map_flat=id_map, rows_total=n,
        out_degree=cp.asarray(out_degree), order=None, tiles=None,
        dangling=int(np.count_nonzero(out_degree == 0)))


def partition(csr: "rt.DeviceCSR", out_degree, block_size: int, *, reorder: bool,
              tile_cfg: dict | None = None) -> Partition:
    """Cut ``csr`` (rows -> cols) into blocks of ``block_size`` column ids, on the device.

    With ``tile_cfg`` (pull, relabelled only) the hot sources' edges go into :class:`Tiles`
    first (``build_tiles``' keyword arguments) and the blocks hold the rest.
    """
    cp = rt.cp()
    n = csr.num_vertices
    ids = csr.targets.dtype
    blocks = max(1, -(-n // block_size))
    n_ranges = -(-n // RANGE)
    order = None
    tiles = None
    if blocks == 1 and not reorder:
        # Blocking skipped: one block is the CSR itself, every vertex a row.
        parts = [(csr.offsets, cp.arange(n, dtype=ids), csr.targets)]
    else:
        rows = cp.empty(csr.num_edges, dtype=ids)
        rt.kernel("pagerank", "graphdb_pagerank_edge_rows", ids)(
            (rt.grid_for(n, THREADS),), (THREADS,), (csr.offsets, np.int64(n), rows))
        cols = csr.targets
        if reorder:
            order = cp.argsort(-out_degree.astype(np.int64)).astype(ids)
            new_id = cp.empty(n, dtype=ids)
            new_id[order] = cp.arange(n, dtype=ids)
            # Sort by (row, column): a row's columns ascend, so the lanes of a warp and the
            # rows in flight on an SM sweep the contributions in the same direction and share
            # cache lines (the order of a row's edges does not change its sum).
            key = new_id[rows].astype(np.int64) * n + new_id[cols].astype(np.int64)
            del new_id
            key.sort()
            rows, cols = (key // n).astype(ids), (key % n).astype(ids)
            del key
            out_degree = out_degree[order]
            if tile_cfg is not None:
                cp.cuda.get_current_stream().synchronize()
                t0 = time.perf_counter()
                tiles, rest = build_tiles(cp, rows, cols, n, **tile_cfg)
                rows, cols = rows[rest], cols[rest]
                del rest
                cp.cuda.get_current_stream().synchronize()
                tiles.build_ms = (time.perf_counter() - t0) * 1e3
        which = (cols // block_size).astype(np.int32)
        parts = []
        for b in range(blocks):
            sel = cp.flatnonzero(which == b)
            rows_b = rows[sel]  # ascending: edges are in row-major order
            cols_b = cols[sel]
            del sel
            if rows_b.size:
                first = cp.flatnonzero(cp.concatenate(
                    (cp.ones(1, dtype=bool), rows_b[1:] != rows_b[:-1])))
            else:
                first = cp.zeros(0, dtype=np.int64)
            rowptr = cp.concatenate((first, cp.asarray([rows_b.size]))).astype(np.int64)
            parts.append((rowptr, rows_b[first], cols_b))
        del rows, cols, which
    heavy_row, heavy_start, range_rows, group = [], [], [], []
    for rowptr, id_map, cols_b in parts:
        deg = rowptr[1:] - rowptr[:-1]
        heavy = cp.flatnonzero(deg > HEAVY)
        pieces = -(-deg[heavy] // CHUNK)
        # Few heavy rows: expand their pieces on the host.
        rows_h, starts_h = _heavy_pieces(cp.asnumpy(heavy), cp.asnumpy(pieces),
                                         cp.asnumpy(rowptr[heavy]))
        heavy_row.append(cp.asarray(rows_h))
        heavy_start.append(cp.asarray(starts_h))
        light_edges = int(cols_b.size) - int(deg[heavy].sum())
        group.append(_group_width(light_edges, int(id_map.size) - int(heavy.size)))
        bounds = cp.arange(n_ranges + 1, dtype=np.int64) * RANGE
        range_rows.append(cp.searchsorted(id_map, bounds.astype(ids)).astype(np.int64))
    # The merge kernel indexes all blocks' rows in one flat array.
    sizes = [int(p[1].size) for p in parts]
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    range_ptr = cp.stack([r + int(o) for r, o in zip(range_rows, offsets[:-1], strict=True)])
    id_map_flat = cp.concatenate([p[1] for p in parts]) if len(parts) > 1 else parts[0][1]
    return Partition(
        blocks=blocks,
        rowptr=[p[0] for p in parts],
        id_map=[p[1] for p in parts],
        cols=[p[2] for p in parts],
        group=group,
        heavy_row=heavy_row,
        heavy_start=heavy_start,
        range_ptr=range_ptr,
        id_map_flat=id_map_flat,
        rows_total=int(offsets[-1]),
        out_degree=out_degree.astype(np.int32),
        order=order,
        tiles=tiles,
        dangling=int(cp.count_nonzero(out_degree == 0)),
    )


def _partition_for(graph: Graph, variant: str, block_size: int, reorder: bool,
                   tile_cfg: dict | None = None) -> Partition:
    cache = rt._resident(graph)
    tile_key = tuple(sorted(tile_cfg.items())) if tile_cfg else None
    key = ("pagerank", variant, block_size, reorder, tile_key, rt.cp().cuda.Device().id)
    part = cache.get(key)
    if part is None:
        out = rt.device_csr(graph, "out")
        csr = rt.device_csr(graph, "in") if variant == "pull" else out
        if block_size >= graph.num_vertices and not reorder and tile_cfg is None:
            part = unblocked_partition(graph, csr, variant)
        else:
            part = partition(csr, out.degrees(), block_size, reorder=reorder,
                             tile_cfg=tile_cfg)
        cache[key] = part
    return part


def pagerank_gpu(graph: Graph, damping: float = 0.85, max_iterations: int = 20,
                 tolerance: float = 0.0, *, variant: str | None = None,
                 block_size: int | None = None, reorder: bool | None = None,
                 hints: bool = True, hub_cache: bool = False, hub_values: int = 0,
                 tiles: bool | None = None, tile_sources: int = TILE_SOURCES,
                 tile_src: int = TILE_SRC, tile_dst: int = TILE_DST,
                 tile_min_edges: int = TILE_MIN_EDGES, tile_chunk: int = TILE_CHUNK,
                 tiles_last: bool = False, tiles_concurrent: bool | None = None,
                 tiles_atomic: bool | None = None, tiles_pipeline: bool | None = None,
                 rows_to_dense: bool | None = None, lean_apply: bool | None = None,
                 profile: dict | None = None):
    """(ranks as a device float64 array, iterations, stats).

    ``tiles``: hot-source tiles (pull with relabelling only; None = TILES_DEFAULT from
    TILES_MIN_GRAPH_EDGES edges on, and without them if their build runs out of memory);
    ``tiles_last`` launches their kernel after the gather kernels instead of before them;
    ``tiles_concurrent`` (None = TILES_CONCURRENT) runs it on a second stream beside them (its
    blocks fill the SMs' shared memory, the gather kernels' blocks need none, so both can share
    an SM); ``tiles_atomic`` (None = TILES_ATOMIC) has the items of a split column add their
    sums with global atomics instead of scratch slots; ``tiles_pipeline`` (None =
    TILES_PIPELINE) picks the tile kernel that loads ahead (``graphdb_pagerank_tiles_pipe``);
    ``rows_to_dense`` (pull; None = ROWS_TO_DENSE where there are tiles) has the gather kernels
    add their row sums into the dense sums atomically instead of writing partials for the
    merge; ``lean_apply`` (None = LEAN_APPLY) then applies the update with the streaming
    ``graphdb_pagerank_apply_dense_*`` kernel instead of the merge (push too).
    ``profile``, if a dict, receives the milliseconds spent in each kernel (CUDA events; for
    benchmarks, it serialises nothing but adds event records).
    """
    cp = rt.cp()
    n = graph.num_vertices
    out = rt.device_csr(graph, "out")
    m = out.num_edges
    if block_size is None:
        block_size = block_vertices(rt.device_info().l2_bytes)
    block_size = max(1, min(block_size, n))
    blocks = max(1, -(-n // block_size))
    if variant is None:
        variant = choose_variant(n, m, blocks)
    push = variant == "push"
    if reorder is None:
        reorder = m >= REORDER_MIN_EDGES
    tiles_chosen = tiles is None
    if tiles is None:
        tiles = TILES_DEFAULT and m >= TILES_MIN_GRAPH_EDGES and blocks > 1
    if tiles_concurrent is None:
        tiles_concurrent = TILES_CONCURRENT
    if tiles_atomic is None:
        tiles_atomic = TILES_ATOMIC
    if tiles_pipeline is None:
        tiles_pipeline = TILES_PIPELINE
    rows_to_dense_chosen = rows_to_dense is None
    tile_cfg = None
    if tiles and reorder and not push and m:
        tile_cfg = {"sources": int(tile_sources), "src": int(min(tile_src, n)),
                    "dst": int(min(tile_dst, n, (1 << 16) - 1)),
                    "min_edges": int(tile_min_edges), "chunk": int(tile_chunk)}
    stream = rt.operator_stream()
    with rt.translate_oom("pagerank on the GPU"), stream:
        part = None
        try:
            part = _partition_for(graph, variant, block_size, reorder, tile_cfg)
        except cp.cuda.memory.OutOfMemoryError:
            # The tile build needs about twice the relabelling's scratch memory: where the
            # tiles were only the default, do without them rather than fail.
            if not tiles_chosen or tile_cfg is None:
                raise
        if part is None:  # outside the handler: its traceback no longer holds the build's arrays
            cp.get_default_memory_pool().free_all_blocks()
            tile_cfg = None
            part = _partition_for(graph, variant, block_size, reorder, None)
        ids = out.targets.dtype
        flag = "true" if push else "false"
        rows_k = {g: rt.kernel("pagerank", "graphdb_pagerank_rows", ids, flag, str(g))
                  for g in set(part.group)}
        heavy_k = rt.kernel("pagerank", "graphdb_pagerank_heavy", ids,
                            "true" if push else "false")
        merge_k = rt.kernel("pagerank", "graphdb_pagerank_merge_apply", ids)
        apply_k = rt.module("pagerank").get_function(
            "graphdb_pagerank_apply_dense_i64" if np.dtype(ids).itemsize == 8
            else "graphdb_pagerank_apply_dense_i32")
        # With a fixed iteration count (no tolerance) the ranks are only written by the last
        # iteration's merge, in the caller's vertex order; with a tolerance every merge reads
        # and writes them (the L1 change), and they are mapped back after the loop.
        fixed = tolerance <= 0 and max_iterations > 0
        # (copies, not CuPy's fill kernels: see unblocked_partition)
        rank = (cp.empty(n, dtype=np.float64) if fixed
                else cp.asarray(np.full(n, 1.0 / n, dtype=np.float64)))
        deg = part.out_degree
        contrib = cp.empty(n, dtype=np.float32)
        init_k = rt.module("pagerank").get_function("graphdb_pagerank_init")
        init_k((rt.grid_for(n, THREADS),), (THREADS,), (deg, np.int64(n), contrib))
        # no host sync: the dangling count is the partition's
        scal = cp.asarray(np.array([part.dangling / n, 0.0, 0.0]))
        l1 = cp.zeros(max(max_iterations, 1), dtype=np.float64)
        # rows_to_dense (pull): rows add their sums into `dense` with global atomics, every tile
        # item too (owner items included); the merge reads `dense` alone and zeroes it.
        if rows_to_dense_chosen:
            rows_to_dense = ROWS_TO_DENSE and part.tiles is not None and part.tiles.items > 0
        to_dense = bool(rows_to_dense) and not push
        partial = (None if push or to_dense
                   else cp.empty(max(part.rows_total, 1), dtype=np.float32))
        tl = part.tiles if part.tiles is not None and part.tiles.items else None
        # Push atomics and the tiles' flushes both land in `dense`, which the merge adds
        # (dense_mode 1) and, where atomics add into it, zeroes after (dense_mode 2).
        dense = cp.zeros(n, dtype=np.float32) if push or to_dense or tl is not None else None
        if tl is not None:
            tiles_k = rt.module("pagerank").get_function(
                "graphdb_pagerank_tiles_pipe" if tiles_pipeline else "graphdb_pagerank_tiles")
            reduce_k = rt.module("pagerank").get_function("graphdb_pagerank_tiles_reduce")
            tile_smem = 4 * (tl.src + tl.dst)
            if tile_smem > 48 * 1024:
                set_dynamic_shared(tiles_k, tile_smem)
        row_start = np.concatenate(([0], np.cumsum([int(x.size) for x in part.id_map])))
        n_ranges = -(-n // RANGE)
        merge_blocks = max(1, min(n_ranges, rt.device_info().multiprocessors * 2))
        iterations = 0
        marks = [] if profile is not None else None

        def mark(label):
            if marks is not None:
                ev = cp.cuda.Event()
                ev.record(stream)
                marks.append((label, ev))

        mark("start")
        sms = rt.device_info().multiprocessors
        # The hub cache serves block 0 (the hottest sources after relabelling) with persistent
        # 1024-thread blocks, two per SM, so the cache is filled once per block, not per piece.
        hub = 0
        if hub_cache and part.order is not None and not push:
            hub = min(hub_values or HUB_VALUES, n)
        if 4 * hub + 256 > 48 * 1024:  # past the default limit: opt in to more (up to 227 KiB)
            for kern in (*rows_k.values(), heavy_k):
                set_dynamic_shared(kern, 4 * hub)
        side = cp.cuda.Stream(non_blocking=True) if tl is not None and tiles_concurrent else None
        use_scratch = tl is not None and not tiles_atomic and tl.slots > 0 and not to_dense
        # The tiles store every tiled column's sums each iteration (owner items directly, split
        # columns through the scratch slots), so `dense` needs zeroing only where atomics add.
        tile_atomics = tl is not None and tl.slots > 0 and not use_scratch
        dense_mode = 0 if dense is None else (2 if push or to_dense or tile_atomics else 1)
        # the tile kernels' flush: 0 owner items store, split columns add atomically; 1 split
        # columns through scratch slots; 2 every item adds atomically (rows add into dense too)
        flush_mode = 2 if to_dense else (1 if use_scratch else 0)
        mode_key = (dense_mode, tl is not None and not to_dense, tile_atomics)
        range_mode = part.range_modes.get(mode_key)
        if range_mode is None:
            range_mode = cp.asarray(range_modes(n, dense_mode, None if to_dense else tl,
                                                tile_atomics))
            part.range_modes[mode_key] = range_mode
        permuted = part.order is not None
        # every sum in `dense` (push, rows_to_dense): the lean apply kernel instead of the merge
        lean = (push or to_dense) and (LEAN_APPLY if lean_apply is None else lean_apply)
        apply_blocks = max(1, min(-(-(n // 4) // THREADS), sms * 16))
        scratch = None
        if tl is not None:
            scratch = cp.empty(tl.slots * tl.dst if use_scratch else 1, dtype=np.float32)

        def launch_tiles():
            tiles_k((tl.items,), (TILE_THREADS,), (
                tl.edges, tl.tile_end, tl.tile_src, tl.item_start, tl.item_end, tl.item_tile,
                tl.item_dst, tl.item_slot, np.int64(tl.items), np.int32(tl.src),
                np.int32(tl.dst), np.int64(n), contrib, dense, scratch, np.int32(flush_mode)),
                shared_mem=tile_smem)
            if use_scratch:
                n_split = int(tl.split_slots.size)
                reduce_k((rt.grid_for(n_split * tl.dst, THREADS),), (THREADS,), (
                    scratch, tl.split_dst, tl.split_slot, tl.split_slots, np.int32(n_split),
                    np.int32(tl.dst), np.int64(n), dense))

        def run_tiles():
            if side is None:
                launch_tiles()
                mark("tiles")
                return None
            ready = cp.cuda.Event(disable_timing=True)
            ready.record(stream)  # the previous merge wrote contrib and zeroed dense
            side.wait_event(ready)
            with side:
                launch_tiles()
            done = cp.cuda.Event(disable_timing=True)
            done.record(side)
            return done

        for it in range(max_iterations):
            checkpoint()  # no host sync: the launches stay queued
            tiles_done = None
            if tl is not None and not tiles_last:
                tiles_done = run_tiles()
            for b in range(part.blocks):
                n_rows = int(part.id_map[b].size)
                target = (dense if push or to_dense
                          else partial[int(row_start[b]):int(row_start[b + 1])])
                b_hub = hub if b == 0 else 0
                threads = HUB_THREADS if b_hub else THREADS
                if n_rows:
                    g = part.group[b]
                    grid = 2 * sms if b_hub else rt.grid_for(n_rows * g, THREADS)
                    rows_k[g]((grid,), (threads,), (
                        part.rowptr[b], part.id_map[b], part.cols[b], np.int64(n_rows),
                        np.int32(HEAVY), contrib, target, np.int32(hints), np.int32(b_hub),
                        np.int32(to_dense)),
                        shared_mem=4 * b_hub)
                    mark(f"rows[{b}]")
                n_pieces = int(part.heavy_row[b].size)
                if n_pieces:
                    grid = min(n_pieces, 2 * sms) if b_hub else min(n_pieces, 65535)
                    heavy_k((grid,), (threads,), (
                        part.rowptr[b], part.id_map[b], part.cols[b], part.heavy_row[b],
                        part.heavy_start[b], np.int64(n_pieces), np.int32(CHUNK), contrib,
                        target, np.int32(hints), np.int32(b_hub), np.int32(to_dense)),
                        shared_mem=4 * b_hub)
                    mark(f"heavy[{b}]")
            if tl is not None and tiles_last:
                tiles_done = run_tiles()
            if tiles_done is not None:
                stream.wait_event(tiles_done)
            last = fixed and it == max_iterations - 1
            rank_mode = 1 if not fixed else (0 if not last else 2 if permuted else 1)
            perm = part.order if permuted else part.id_map_flat
            if lean:
                apply_k((apply_blocks,), (THREADS,), (
                    dense, np.int64(n), part.out_degree, np.float64(damping), rank, contrib,
                    scal, l1, np.int32(it), np.int32(tolerance > 0), np.int32(rank_mode), perm))
            else:
                merge_k((merge_blocks,), (RANGE,), (
                    np.int32(0 if push or to_dense else part.blocks), part.range_ptr,
                    part.id_map_flat,
                    partial if partial is not None else contrib, np.int32(dense_mode),
                    dense if dense is not None else contrib, np.int64(n), part.out_degree,
                    np.float64(damping), rank, contrib, scal, l1, np.int32(it),
                    np.int32(tolerance > 0), range_mode, np.int32(rank_mode), perm))
            mark("merge")
            iterations += 1
            if tolerance > 0 and float(l1[it].get()) < tolerance:
                break
        if marks is not None:
            marks[-1][1].synchronize()
            for (_, a), (label, b) in zip(marks[:-1], marks[1:], strict=True):
                profile[label] = profile.get(label, 0.0) + cp.cuda.get_elapsed_time(a, b)
        if permuted and not fixed:
            original = cp.empty_like(rank)
            original[part.order] = rank
            rank = original
    stats = {"variant": variant, "blocks": part.blocks, "block_vertices": block_size,
             "rows_total": part.rows_total, "reordered": part.order is not None,
             "lanes_per_row": part.group, "hub_cache_values": hub, "rows_to_dense": to_dense}
    if part.tiles is not None:
        t = part.tiles
        stats["tiles"] = {"sources": t.sources, "src": t.src, "dst": t.dst, "tiles": t.tiles,
                          "columns": t.columns, "items": t.items,
                          "owner_items": int((t.item_slot < 0).sum()), "slots": t.slots,
                          "hot_edges": t.hot_edges,
                          "edges_tiled": t.edges_tiled, "tiled_share": t.edges_tiled / max(m, 1),
                          "hot_share": t.hot_edges / max(m, 1),
                          "build_ms": round(t.build_ms, 1)}
    return rank, iterations, stats


def pagerank(graph: Graph, damping: float = 0.85, max_iterations: int = 20,
             tolerance: float = 0.0) -> AlgorithmOutput:
    """GPU twin of :func:`graphdb.executor.algorithms.pagerank._pagerank_cpu`."""
    n = graph.num_vertices
    if n == 0:
        return AlgorithmOutput({"vertex": np.zeros(0, dtype=np.int64), "rank": np.zeros(0)},
                               {"iterations": 0})
    rank, iterations, stats = pagerank_gpu(graph, damping, max_iterations, tolerance)
    return AlgorithmOutput(
        {"vertex": np.arange(n, dtype=np.int64), "rank": rt.cp().asnumpy(rank)},
        {"iterations": iterations, **stats},
    )
