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
from dataclasses import dataclass

import numpy as np

from ..algorithms.registry import AlgorithmOutput
from ..graph import Graph
from . import runtime as rt

__all__ = ["pagerank", "pagerank_gpu", "Partition", "block_vertices", "choose_variant"]

THREADS = 256
RANGE = 1024  # vertices per merge range (cuda/pagerank.cu RANGE)
HEAVY = 256  # rows longer than this are cut into pieces of CHUNK edges, a thread block each
CHUNK = 4096
#: Share of L2 that the randomly read values of one block may take (GraphCage: about a third).
L2_SHARE = 1 / 3
#: Bytes-equivalent cost of one global float atomic (push) against a streamed byte.
ATOMIC_COST = 8.0


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
class Partition:
    """A CSR cut by column range: per block, its non-empty rows and their edges."""

    blocks: int
    rowptr: list  # per block, int64 local row offsets (n_b + 1)
    id_map: list  # per block, the rows' vertex ids (ascending)
    cols: list  # per block, the edges' column ids
    heavy_row: list  # per block, local row of each heavy piece (int64)
    heavy_start: list  # per block, first edge of each heavy piece (int64, local)
    range_ptr: object  # int64 [blocks, n_ranges + 1]: first local row of each merge range
    id_map_flat: object
    rows_total: int


def partition(csr: "rt.DeviceCSR", block_size: int) -> Partition:
    """Cut ``csr`` (rows -> cols) into blocks of ``block_size`` column ids, on the device."""
    cp = rt.cp()
    n = csr.num_vertices
    ids = csr.targets.dtype
    blocks = max(1, -(-n // block_size))
    n_ranges = -(-n // RANGE)
    if blocks == 1:
        # Blocking skipped: one block is the CSR itself, every vertex a row.
        id_map = cp.arange(n, dtype=ids)
        parts = [(csr.offsets, id_map, csr.targets)]
    else:
        rows = cp.empty(csr.num_edges, dtype=ids)
        rt.kernel("pagerank", "graphdb_pagerank_edge_rows", ids)(
            (rt.grid_for(n, THREADS),), (THREADS,), (csr.offsets, np.int64(n), rows))
        which = (csr.targets // block_size).astype(np.int32)
        parts = []
        for b in range(blocks):
            sel = cp.flatnonzero(which == b)
            rows_b = rows[sel]  # ascending: edges are in CSR (row-major) order
            cols_b = csr.targets[sel]
            del sel
            if rows_b.size:
                first = cp.flatnonzero(cp.concatenate(
                    (cp.ones(1, dtype=bool), rows_b[1:] != rows_b[:-1])))
            else:
                first = cp.zeros(0, dtype=np.int64)
            rowptr = cp.concatenate((first, cp.asarray([rows_b.size]))).astype(np.int64)
            parts.append((rowptr, rows_b[first], cols_b))
        del rows, which
    heavy_row, heavy_start, range_rows = [], [], []
    for rowptr, id_map, _cols in parts:
        deg = rowptr[1:] - rowptr[:-1]
        heavy = cp.flatnonzero(deg > HEAVY)
        pieces = -(-deg[heavy] // CHUNK)
        # Few heavy rows: expand their pieces on the host.
        h_rows, h_pieces = cp.asnumpy(heavy), cp.asnumpy(pieces)
        h_starts = cp.asnumpy(rowptr[heavy])
        rep_row = np.repeat(h_rows, h_pieces)
        first_piece = np.cumsum(h_pieces) - h_pieces
        local = np.arange(rep_row.size) - np.repeat(first_piece, h_pieces)
        heavy_row.append(cp.asarray(rep_row.astype(np.int64)))
        heavy_start.append(cp.asarray((np.repeat(h_starts, h_pieces) + local * CHUNK)
                                      .astype(np.int64)))
        bounds = cp.arange(n_ranges + 1, dtype=np.int64) * RANGE
        range_rows.append(cp.searchsorted(id_map, bounds.astype(ids)).astype(np.int64))
    # The merge kernel indexes all blocks' rows in one flat array.
    sizes = [int(p[1].size) for p in parts]
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    range_ptr = cp.stack([r + int(o) for r, o in zip(range_rows, offsets[:-1])])
    id_map_flat = cp.concatenate([p[1] for p in parts]) if len(parts) > 1 else parts[0][1]
    return Partition(
        blocks=blocks,
        rowptr=[p[0] for p in parts],
        id_map=[p[1] for p in parts],
        cols=[p[2] for p in parts],
        heavy_row=heavy_row,
        heavy_start=heavy_start,
        range_ptr=range_ptr,
        id_map_flat=id_map_flat,
        rows_total=int(offsets[-1]),
    )


def _partition_for(graph: Graph, variant: str, block_size: int) -> Partition:
    cache = rt._resident(graph)
    key = ("pagerank", variant, block_size, rt.cp().cuda.Device().id)
    part = cache.get(key)
    if part is None:
        csr = rt.device_csr(graph, "in" if variant == "pull" else "out")
        part = partition(csr, block_size)
        cache[key] = part
    return part


def pagerank_gpu(graph: Graph, damping: float = 0.85, max_iterations: int = 20,
                 tolerance: float = 0.0, *, variant: str | None = None,
                 block_size: int | None = None):
    """(ranks as a device float64 array, iterations, stats)."""
    cp = rt.cp()
    n = graph.num_vertices
    out = rt.device_csr(graph, "out")
    m = out.num_edges
    if block_size is None:
        block_size = block_vertices(rt.device_info().l2_bytes)
    blocks = max(1, -(-n // block_size))
    if variant is None:
        variant = choose_variant(n, m, blocks)
    push = variant == "push"
    stream = rt.operator_stream()
    with rt.translate_oom("pagerank on the GPU"), stream:
        part = _partition_for(graph, variant, block_size)
        ids = out.targets.dtype
        rows_k = rt.kernel("pagerank", "graphdb_pagerank_rows", ids, "true" if push else "false")
        heavy_k = rt.kernel("pagerank", "graphdb_pagerank_heavy", ids,
                            "true" if push else "false")
        merge_k = rt.kernel("pagerank", "graphdb_pagerank_merge_apply", ids)
        rank = cp.full(n, 1.0 / n, dtype=np.float64)
        deg = out.degrees()
        contrib = cp.where(deg > 0, rank / cp.maximum(deg, 1), 0.0).astype(np.float32)
        scal = cp.zeros(3, dtype=np.float64)
        scal[0] = float(cp.count_nonzero(deg == 0)) / n
        l1 = cp.zeros(max(max_iterations, 1), dtype=np.float64)
        partial = None if push else cp.empty(max(part.rows_total, 1), dtype=np.float32)
        dense = cp.zeros(n, dtype=np.float32) if push else None
        row_start = np.concatenate(([0], np.cumsum([int(x.size) for x in part.id_map])))
        n_ranges = -(-n // RANGE)
        merge_blocks = max(1, min(n_ranges, rt.device_info().multiprocessors * 8))
        iterations = 0
        for it in range(max_iterations):
            for b in range(part.blocks):
                n_rows = int(part.id_map[b].size)
                target = dense if push else partial[int(row_start[b]):int(row_start[b + 1])]
                if n_rows:
                    rows_k((rt.grid_for(n_rows, THREADS),), (THREADS,), (
                        part.rowptr[b], part.id_map[b], part.cols[b], np.int64(n_rows),
                        np.int32(HEAVY), contrib, target))
                n_pieces = int(part.heavy_row[b].size)
                if n_pieces:
                    heavy_k((min(n_pieces, 65535),), (THREADS,), (
                        part.rowptr[b], part.id_map[b], part.cols[b], part.heavy_row[b],
                        part.heavy_start[b], np.int64(n_pieces), np.int32(CHUNK), contrib,
                        target))
            merge_k((merge_blocks,), (THREADS,), (
                np.int32(0 if push else part.blocks), part.range_ptr, part.id_map_flat,
                partial if partial is not None else contrib, np.int32(push),
                dense if push else contrib, np.int64(n), out.offsets,
                np.float64(damping), rank, contrib, scal, l1, np.int32(it)))
            iterations += 1
            if tolerance > 0 and float(l1[it].get()) < tolerance:
                break
    stats = {"variant": variant, "blocks": part.blocks, "block_vertices": block_size,
             "rows_total": part.rows_total}
    return rank, iterations, stats


def pagerank(graph: Graph, damping: float = 0.85, max_iterations: int = 20,
             tolerance: float = 0.0) -> AlgorithmOutput:
    """GPU twin of :func:`executor.algorithms.pagerank._pagerank_cpu`."""
    n = graph.num_vertices
    if n == 0:
        return AlgorithmOutput({"vertex": np.zeros(0, dtype=np.int64), "rank": np.zeros(0)},
                               {"iterations": 0})
    rank, iterations, stats = pagerank_gpu(graph, damping, max_iterations, tolerance)
    return AlgorithmOutput(
        {"vertex": np.arange(n, dtype=np.int64), "rank": rt.cp().asnumpy(rank)},
        {"iterations": iterations, **stats},
    )
