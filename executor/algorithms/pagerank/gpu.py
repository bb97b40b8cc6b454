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

from dataclasses import dataclass

import numpy as np

from ...abi import PAGERANK_RANGE as RANGE
from ...cancel import checkpoint
from ...gpu import runtime as rt
from ...gpu.compiled import set_dynamic_shared
from ...graph import Graph
from ..spec import AlgorithmOutput, OperatorConfig
from .blocks import CHUNK, HEAVY, PAGERANK, Partition, partition, rows_partition
from .tiles import MIN_GRAPH_EDGES, TileShape

__all__ = ["PAGERANK", "Layout", "Partition", "Pull", "block_vertices", "default_layout",
           "pagerank", "pagerank_gpu", "partition", "partition_for", "unblocked_partition"]

THREADS = 256
#: Share of L2 that the randomly read values of one block may take (GraphCage: about a third).
L2_SHARE = 1 / 3
#: Relabel vertices by out-degree inside the partition from this many edges on (below it the
#: random reads fit in L2 anyway and the sort is not worth its time).
REORDER_MIN_EDGES = 1 << 22
TILE_THREADS = 1024


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


def unblocked_partition(graph: Graph, csr: "rt.DeviceCSR") -> Partition:
    """The partition where blocking is skipped (one block, no relabelling: every graph below
    REORDER_MIN_EDGES edges that one block holds), computed from the host CSR and uploaded."""
    return rows_partition(graph.in_csr.offsets, csr.offsets, csr.targets,
                          np.diff(np.asarray(graph.out_csr.offsets, dtype=np.int64)))


class Pull:
    """The launches of one iteration over one partition: the numeric step of every resident GPU
    PageRank, one GPU's whole graph or one rank's shard of it (rows ``v_lo..v_hi-1``).

    :meth:`tiles` and :meth:`blocks` gather the contributions into the sums (each block's rows a
    partial per row, or every sum into one dense array where there are tiles), :meth:`merge`
    adds the partials and applies ``pagerank_vertex`` to the rows ``v_lo..v_hi-1``: their ranks,
    their next contributions, the next dangling total (scal) and the L1 change."""

    def __init__(self, part: Partition, n: int, ids, damping: float, *, v_lo: int = 0,
                 v_hi: int | None = None):
        cp = rt.cp()
        self.part, self.n, self.damping = part, n, float(damping)
        self.v_lo, self.v_hi = int(v_lo), int(n if v_hi is None else v_hi)
        self.rows_k = {g: PAGERANK.kernel("graphdb_pagerank_rows", ids, str(g))
                       for g in set(part.group)}
        self.heavy_k = PAGERANK.kernel("graphdb_pagerank_heavy", ids)
        self.merge_k = PAGERANK.kernel("graphdb_pagerank_merge_apply", ids)
        # With tiles every sum goes into `dense` (the gathers add their rows' sums with global
        # atomics, as the tiles add theirs), which the merge reads alone and zeroes; without
        # them each block writes a partial per row and the merge adds the partials.
        self.tl = part.tiles if part.tiles is not None and part.tiles.items else None
        self.to_dense = self.tl is not None
        # a changed version's delta, added into `dense` beside the blocks' sums (.delta_gpu)
        self.fix = part.corrections
        self.with_dense = self.to_dense or self.fix is not None
        self.partial = None if self.to_dense else cp.empty(max(part.rows_total, 1),
                                                           dtype=np.float32)
        self.dense = cp.zeros(n, dtype=np.float32) if self.with_dense else None
        if self.fix is not None:
            from ...overlay_gpu import OVERLAY

            self.scatter_k = OVERLAY.function("graphdb_overlay_scatter_add")
        if self.tl is not None:
            self.tiles_k = PAGERANK.function("graphdb_pagerank_tiles")
            self.tile_smem = 4 * (self.tl.src + self.tl.dst)
            if self.tile_smem > 48 * 1024:
                set_dynamic_shared(self.tiles_k, self.tile_smem)
        self.row_start = np.concatenate(([0], np.cumsum([int(x.size) for x in part.id_map])))
        ranges = -(-max(self.v_hi - self.v_lo, 1) // RANGE) + 1
        self.merge_blocks = max(1, min(ranges, rt.device_info().multiprocessors * 2))

    def tiles(self, contrib) -> None:
        tl = self.tl
        if tl is None:
            return
        self.tiles_k((tl.items,), (TILE_THREADS,), (
            tl.edges, tl.tile_end, tl.tile_src, tl.item_start, tl.item_end, tl.item_tile,
            tl.item_dst, np.int64(tl.items), np.int32(tl.src), np.int32(tl.dst),
            np.int64(self.n), contrib, self.dense), shared_mem=self.tile_smem)

    def blocks(self, contrib, which=None) -> None:
        """The gathers of blocks ``which`` (all by default)."""
        part = self.part
        for b in range(part.blocks) if which is None else which:
            n_rows = int(part.id_map[b].size)
            target = self.dense if self.to_dense else \
                self.partial[int(self.row_start[b]):int(self.row_start[b + 1])]
            if n_rows:
                g = part.group[b]
                self.rows_k[g]((rt.grid_for(n_rows * g, THREADS),), (THREADS,), (
                    part.rowptr[b], part.id_map[b], part.cols[b], np.int64(n_rows),
                    np.int32(HEAVY), contrib, target, np.int32(1), np.int32(self.to_dense)))
            n_pieces = int(part.heavy_row[b].size)
            if n_pieces:
                self.heavy_k((min(n_pieces, 65535),), (THREADS,), (
                    part.rowptr[b], part.id_map[b], part.cols[b], part.heavy_row[b],
                    part.heavy_start[b], np.int64(n_pieces), np.int32(CHUNK), contrib,
                    target, np.int32(1), np.int32(self.to_dense)))

    def corrections(self, contrib) -> None:
        """A changed version's edges beside its base's: added, or deleted taken back."""
        fix = self.fix
        if fix is not None and fix[0].size:
            self.scatter_k((rt.grid_for(fix[0].size, THREADS),), (THREADS,), (
                self.dense, fix[0], fix[1], fix[2], np.int64(fix[0].size), contrib))

    def merge(self, it: int, rank, contrib, scal, l1, *, track_change: bool, rank_mode: int,
              perm) -> None:
        part = self.part
        self.merge_k((self.merge_blocks,), (RANGE,), (
            np.int32(0 if self.to_dense else part.blocks), part.range_ptr, part.id_map_flat,
            self.partial if self.partial is not None else contrib, np.int32(self.with_dense),
            self.dense if self.dense is not None else contrib, np.int64(self.n),
            np.int64(self.v_lo), np.int64(self.v_hi), part.out_degree,
            np.float64(self.damping), rank, contrib, scal, l1, np.int32(it),
            np.int32(track_change), np.int32(rank_mode), perm))


def partition_for(graph: Graph, layout: Layout) -> Partition:
    """The partition of ``graph``'s in-CSR for ``layout``, built once per graph version and
    device and held by the residency owner; a changed version read unmerged takes its base's,
    with its delta as corrections (:mod:`.delta_gpu`)."""
    version = getattr(graph, "version_delta", None)
    if version is not None and version(rt.device_name()) is not None:
        from .delta_gpu import version_partition

        return graph.derived(f"pagerank:partition:{layout}", lambda: version_partition(
            graph, partition_for(graph.base, layout)), device=rt.device_name())

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
            part = partition_for(graph, layout)
        except cp.cuda.memory.OutOfMemoryError:
            if not chosen or layout.tiles is None:
                raise
        if part is None:  # outside the handler: its traceback no longer holds the build's arrays
            cp.get_default_memory_pool().free_all_blocks()
            layout = Layout(layout.block_vertices, layout.reorder, None)
            part = partition_for(graph, layout)
        ids = rt.device_csr(graph, "out").targets.dtype
        pull = Pull(part, n, ids, damping)
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
        permuted = part.order is not None
        perm = part.order if permuted else part.id_map_flat
        iterations = 0
        for it in range(max_iterations):
            checkpoint()  # no host sync: the launches stay queued
            pull.tiles(contrib)
            pull.blocks(contrib)
            pull.corrections(contrib)
            last = fixed and it == max_iterations - 1
            rank_mode = 1 if not fixed else (0 if not last else 2 if permuted else 1)
            pull.merge(it, rank, contrib, scal, l1, track_change=tolerance > 0,
                       rank_mode=rank_mode, perm=perm)
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
