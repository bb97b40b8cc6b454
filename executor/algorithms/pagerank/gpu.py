"""Cache-blocked PageRank on the GPU (GraphCage TOCAB), Graphalytics semantics.

See ``pagerank.cu`` for the kernels. Here: the partition of the in-CSR into source-range blocks
whose contributions fit the device's L2 (:class:`Layout`: the one tunable of this operator, which
the physical planner fills from the device's L2 size), built once on the device and held by the
residency owner, and the iteration loop (pull: each destination gathers its in-neighbours'
contributions).

Values read at random (contributions rank/outdeg) and the partial sums are float32: they halve
the bytes that must stay in L2 and move through memory, and the result stays far inside
Graphalytics' 1e-4 relative error; ranks, the dangling sum and the L1 change are float64.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ...abi import PAGERANK_RANGE as RANGE
from ...cancel import checkpoint
from ...gpu import runtime as rt
from ...gpu.compiled import set_dynamic_shared
from ...graph import Graph
from ..spec import AlgorithmOutput, OperatorConfig
from .tiles import MIN_GRAPH_EDGES, Tiles, TileShape, build_tiles

__all__ = ["PAGERANK", "Layout", "Partition", "block_vertices", "default_layout", "pagerank",
           "pagerank_gpu", "partition", "unblocked_partition"]

THREADS = 256
HEAVY = 256  # rows longer than this are cut into pieces of CHUNK edges, a thread block each
CHUNK = 4096
#: Share of L2 that the randomly read values of one block may take (GraphCage: about a third).
L2_SHARE = 1 / 3
#: Relabel vertices by out-degree inside the partition from this many edges on (below it the
#: random reads fit in L2 anyway and the sort is not worth its time).
REORDER_MIN_EDGES = 1 << 22
TILE_THREADS = 1024

#: ``pagerank.cu``: the gathers (rows by lanes per row, heavy rows by pieces), the merge and
#: update, the edge-row expansion of the partition build; the tiles and the streamed variants'
#: prepare/update are plain ``extern "C"`` kernels.
PAGERANK = rt.CudaModule("algorithms/pagerank/pagerank.cu", (
    *(f"graphdb_pagerank_rows<{{id}},{g}>" for g in (4, 8, 16, 32)),
    "graphdb_pagerank_heavy<{id}>",
    "graphdb_pagerank_merge_apply<{id}>",
    "graphdb_pagerank_edge_rows<{id}>",
))


def block_vertices(l2_bytes: int, value_bytes: int = 4) -> int:
    """Vertices per block: a third of L2 of values, rounded down to a power of two."""
    raw = max(int(l2_bytes * L2_SHARE) // value_bytes, 1024)
    return 1 << (raw.bit_length() - 1)


@dataclass(frozen=True)
class Layout:
    """How the in-CSR is laid out on the device: source-range blocks of ``block_vertices``,
    vertices relabelled by out-degree (``reorder``), hot-source ``tiles`` (or None)."""

    block_vertices: int
    reorder: bool
    tiles: TileShape | None = None


def default_layout(num_vertices: int, num_edges: int, l2_bytes: int) -> Layout:
    """The layout for a graph on a device with ``l2_bytes`` of L2: blocks of a third of L2,
    relabelled from REORDER_MIN_EDGES edges, tiles from tiles.MIN_GRAPH_EDGES when there are
    several blocks."""
    block = max(1, min(block_vertices(l2_bytes), num_vertices))
    blocks = -(-num_vertices // block)
    reorder = num_edges >= REORDER_MIN_EDGES
    tiles = TileShape() if reorder and num_edges >= MIN_GRAPH_EDGES and blocks > 1 else None
    return Layout(block, reorder, tiles)


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


def unblocked_partition(graph: Graph, csr: "rt.DeviceCSR") -> Partition:
    """The partition where blocking is skipped (one block, no relabelling: every graph below
    REORDER_MIN_EDGES edges that one block holds), computed from the host CSR and uploaded.

    It needs no CuPy array operation: their first use in a process imports ``cupyx``, and
    ``scipy.sparse`` with it (about 160 ms of a fresh process's first PageRank query on the
    H100 host); a PageRank query on such a graph then runs on raw kernels, memsets and copies
    alone, as a BFS query does."""
    cp = rt.cp()
    n = graph.num_vertices
    host = graph.in_csr
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
              tiles: TileShape | None = None) -> Partition:
    """Cut ``csr`` (the in-CSR: rows are destinations, cols sources) into blocks of
    ``block_size`` column ids, on the device.

    With ``tiles`` (relabelled only) the hot sources' edges go into :class:`Tiles` first and the
    blocks hold the rest.
    """
    cp = rt.cp()
    n = csr.num_vertices
    ids = csr.targets.dtype
    blocks = max(1, -(-n // block_size))
    n_ranges = -(-n // RANGE)
    order = None
    shape, tiles = tiles, None
    if blocks == 1 and not reorder:
        # Blocking skipped: one block is the CSR itself, every vertex a row.
        parts = [(csr.offsets, cp.arange(n, dtype=ids), csr.targets)]
    else:
        rows = cp.empty(csr.num_edges, dtype=ids)
        PAGERANK.kernel("graphdb_pagerank_edge_rows", ids)(
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
            if shape is not None:
                cp.cuda.get_current_stream().synchronize()
                t0 = time.perf_counter()
                tiles, rest = build_tiles(cp, rows, cols, n, shape)
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


def _partition_for(graph: Graph, layout: Layout) -> Partition:
    """The partition of ``graph``'s in-CSR for ``layout``, built once per graph version and
    device and held by the residency owner."""

    def build() -> Partition:
        out = rt.device_csr(graph, "out")
        inn = rt.device_csr(graph, "in")
        if layout.block_vertices >= graph.num_vertices and not layout.reorder:
            return unblocked_partition(graph, inn)
        return partition(inn, out.degrees(), layout.block_vertices, reorder=layout.reorder,
                         tiles=layout.tiles)

    return graph.derived(f"pagerank:partition:{layout}", build, device=rt.device_name())


def pagerank_gpu(graph: Graph, damping: float = 0.85, max_iterations: int = 20,
                 tolerance: float = 0.0, *, layout: Layout | None = None):
    """(ranks as a device float64 array, iterations, stats).

    ``layout`` defaults to :func:`default_layout` for this device; where the default's tiles do
    not fit the budget (their build needs about twice the relabelling's scratch), the partition
    is built without them."""
    cp = rt.cp()
    n = graph.num_vertices
    m = graph.num_edges
    chosen = layout is None
    if layout is None:
        layout = default_layout(n, m, rt.device_info().l2_bytes)
    block_size = max(1, min(layout.block_vertices, n))
    stream = rt.operator_stream()
    with rt.translate_oom("pagerank on the GPU"), stream:
        part = None
        try:
            part = _partition_for(graph, layout)
        except cp.cuda.memory.OutOfMemoryError:
            if not chosen or layout.tiles is None:
                raise
        if part is None:  # outside the handler: its traceback no longer holds the build's arrays
            cp.get_default_memory_pool().free_all_blocks()
            layout = Layout(layout.block_vertices, layout.reorder, None)
            part = _partition_for(graph, layout)
        ids = rt.device_csr(graph, "out").targets.dtype
        rows_k = {g: PAGERANK.kernel("graphdb_pagerank_rows", ids, str(g))
                  for g in set(part.group)}
        heavy_k = PAGERANK.kernel("graphdb_pagerank_heavy", ids)
        merge_k = PAGERANK.kernel("graphdb_pagerank_merge_apply", ids)
        # With a fixed iteration count (no tolerance) the ranks are only written by the last
        # iteration's merge, in the caller's vertex order; with a tolerance every merge reads
        # and writes them (the L1 change), and they are mapped back after the loop.
        fixed = tolerance <= 0 and max_iterations > 0
        # (copies, not CuPy's fill kernels: see unblocked_partition)
        rank = (cp.empty(n, dtype=np.float64) if fixed
                else cp.asarray(np.full(n, 1.0 / n, dtype=np.float64)))
        contrib = cp.empty(n, dtype=np.float32)
        PAGERANK.function("graphdb_pagerank_init")((rt.grid_for(n, THREADS),), (THREADS,),
                                                   (part.out_degree, np.int64(n), contrib))
        # no host sync: the dangling count is the partition's
        scal = cp.asarray(np.array([part.dangling / n, 0.0, 0.0]))
        l1 = cp.zeros(max(max_iterations, 1), dtype=np.float64)
        # With tiles every sum goes into `dense` (the gathers add their rows' sums with global
        # atomics, as the tiles add theirs), which the merge reads alone and zeroes; without
        # them each block writes a partial per row and the merge adds the partials.
        tl = part.tiles if part.tiles is not None and part.tiles.items else None
        to_dense = tl is not None
        partial = None if to_dense else cp.empty(max(part.rows_total, 1), dtype=np.float32)
        dense = cp.zeros(n, dtype=np.float32) if to_dense else None
        if tl is not None:
            tiles_k = PAGERANK.function("graphdb_pagerank_tiles")
            tile_smem = 4 * (tl.src + tl.dst)
            if tile_smem > 48 * 1024:
                set_dynamic_shared(tiles_k, tile_smem)
        row_start = np.concatenate(([0], np.cumsum([int(x.size) for x in part.id_map])))
        merge_blocks = max(1, min(-(-n // RANGE), rt.device_info().multiprocessors * 2))
        permuted = part.order is not None
        perm = part.order if permuted else part.id_map_flat
        iterations = 0
        for it in range(max_iterations):
            checkpoint()  # no host sync: the launches stay queued
            if tl is not None:
                tiles_k((tl.items,), (TILE_THREADS,), (
                    tl.edges, tl.tile_end, tl.tile_src, tl.item_start, tl.item_end,
                    tl.item_tile, tl.item_dst, np.int64(tl.items), np.int32(tl.src),
                    np.int32(tl.dst), np.int64(n), contrib, dense), shared_mem=tile_smem)
            for b in range(part.blocks):
                n_rows = int(part.id_map[b].size)
                target = dense if to_dense else partial[int(row_start[b]):int(row_start[b + 1])]
                if n_rows:
                    g = part.group[b]
                    rows_k[g]((rt.grid_for(n_rows * g, THREADS),), (THREADS,), (
                        part.rowptr[b], part.id_map[b], part.cols[b], np.int64(n_rows),
                        np.int32(HEAVY), contrib, target, np.int32(1), np.int32(to_dense)))
                n_pieces = int(part.heavy_row[b].size)
                if n_pieces:
                    heavy_k((min(n_pieces, 65535),), (THREADS,), (
                        part.rowptr[b], part.id_map[b], part.cols[b], part.heavy_row[b],
                        part.heavy_start[b], np.int64(n_pieces), np.int32(CHUNK), contrib,
                        target, np.int32(1), np.int32(to_dense)))
            last = fixed and it == max_iterations - 1
            rank_mode = 1 if not fixed else (0 if not last else 2 if permuted else 1)
            merge_k((merge_blocks,), (RANGE,), (
                np.int32(0 if to_dense else part.blocks), part.range_ptr, part.id_map_flat,
                partial if partial is not None else contrib, np.int32(to_dense),
                dense if dense is not None else contrib, np.int64(n), part.out_degree,
                np.float64(damping), rank, contrib, scal, l1, np.int32(it),
                np.int32(tolerance > 0), np.int32(rank_mode), perm))
            iterations += 1
            if tolerance > 0 and float(l1[it].get()) < tolerance:
                break
        if permuted and not fixed:
            original = cp.empty_like(rank)
            original[part.order] = rank
            rank = original
    stats = {"blocks": part.blocks, "block_vertices": block_size,
             "rows_total": part.rows_total, "reordered": part.order is not None,
             "lanes_per_row": part.group}
    if part.tiles is not None:
        t = part.tiles
        stats["tiles"] = {"sources": t.sources, "src": t.src, "dst": t.dst, "tiles": t.tiles,
                          "columns": t.columns, "items": t.items, "hot_edges": t.hot_edges,
                          "edges_tiled": t.edges_tiled, "tiled_share": t.edges_tiled / max(m, 1),
                          "build_ms": round(t.build_ms, 1)}
    return rank, iterations, stats


def pagerank(graph: Graph, config: OperatorConfig, damping: float = 0.85,
             max_iterations: int = 20, tolerance: float = 0.0) -> AlgorithmOutput:
    """GPU twin of :func:`graphdb.executor.algorithms.pagerank.cpu.pagerank`."""
    if graph.num_vertices == 0:
        return AlgorithmOutput.vertices({"rank": np.zeros(0)}, {"iterations": 0})
    rank, iterations, stats = pagerank_gpu(graph, damping, max_iterations, tolerance,
                                           layout=config.tuning)
    return AlgorithmOutput.vertices({"rank": rank}, {"iterations": iterations, **stats})
