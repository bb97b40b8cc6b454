"""The GPU PageRank's layout of the in-edges: source-range blocks (GraphCage TOCAB), hot-source
tiles, heavy-row pieces; built on the device once per graph version (or per shard of a
partitioned run) and held by the residency owner.

The build is two steps, so a partitioned run makes the second from a slice of the first:

- :func:`relabel`: the in-edges as (row, column) pairs sorted row-major, with every vertex id
  relabelled by decreasing out-degree when the graph is large enough (``order[new] = old``);
- :func:`cut_blocks`: edges of some rows (a rank's destinations, or all of them) cut into
  blocks of column ranges (``cuts``), hot-source tiles first when asked for.

:func:`unblocked_partition` is the layout without blocks (one block: the CSR itself), for graphs
one block holds and for shards that come from the host (no relabelling there: the edges of a
graph that does not fit one GPU are never gathered on one).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ...abi import PAGERANK_RANGE as RANGE
from ...gpu import runtime as rt
from .tiles import Tiles, TileShape, build_tiles

__all__ = ["CHUNK", "HEAVY", "PAGERANK", "Partition", "cut_blocks", "partition", "relabel",
           "rows_partition"]

THREADS = 256
HEAVY = 256  # rows longer than this are cut into pieces of CHUNK edges, a thread block each
CHUNK = 4096

#: ``pagerank.cu``: the gathers (rows by lanes per row, heavy rows by pieces), the merge and
#: update, the edge-row expansion of the partition build; the tiles and the streamed variants'
#: prepare/update are plain ``extern "C"`` kernels.
PAGERANK = rt.CudaModule("algorithms/pagerank/pagerank.cu", (
    *(f"graphdb_pagerank_rows<{{id}},{g}>" for g in (4, 8, 16, 32)),
    "graphdb_pagerank_heavy<{id}>",
    "graphdb_pagerank_merge_apply<{id}>",
    "graphdb_pagerank_edge_rows<{id}>",
))


@dataclass
class Partition:
    """A graph's edges cut by column range: per block, its non-empty rows and their edges.

    With ``order`` set, vertex ids inside the partition are relabelled by decreasing out-degree
    (``order[new] = old``): the sources read at random then crowd into few cache lines, so
    the hubs' contributions are shared by many loads of one sector. Ranks are computed in the new
    order and mapped back once at the end. ``cuts`` are the blocks' column bounds (host int64,
    blocks + 1): a partitioned rank gathers the blocks of its own columns before its peers'
    contributions arrive.
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
    cuts: np.ndarray | None = None
    #: a changed version's edges beside its base's: (src, dst, sign) in partition ids
    #: (:mod:`.delta_gpu`), or None
    corrections: object = None


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


def rows_partition(rowptr_host: np.ndarray, rowptr, cols, out_degree_host: np.ndarray,
                   out_degree=None) -> Partition:
    """The layout without blocks over CSR rows (``rowptr`` over all |V| rows, device; its host
    copy ``rowptr_host``): every vertex a row, no relabelling. Made from host arrays and copies
    alone, so that it needs no CuPy array operation: their first use in a process imports
    ``cupyx``, and ``scipy.sparse`` with it (about 160 ms of a fresh process's first PageRank
    query on the H100 host); a PageRank query on such a graph then runs on raw kernels, memsets
    and copies alone, as a BFS query does."""
    cp = rt.cp()
    n = len(rowptr_host) - 1
    rowptr_host = np.asarray(rowptr_host, dtype=np.int64)
    deg = np.diff(rowptr_host)
    heavy = np.flatnonzero(deg > HEAVY)
    rows_h, starts_h = _heavy_pieces(heavy, -(-deg[heavy] // CHUNK), rowptr_host[heavy])
    n_ranges = -(-n // RANGE)
    range_rows = np.minimum(np.arange(n_ranges + 1, dtype=np.int64) * RANGE, n)
    out_degree_host = np.asarray(out_degree_host).astype(np.int32)
    id_map = cp.asarray(np.arange(n, dtype=cols.dtype))
    return Partition(
        blocks=1, rowptr=[rowptr], id_map=[id_map], cols=[cols],
        group=[_group_width(int(rowptr_host[-1]) - int(deg[heavy].sum()), n - int(heavy.size))],
        heavy_row=[cp.asarray(rows_h)], heavy_start=[cp.asarray(starts_h)],
        range_ptr=cp.asarray(range_rows[None, :]), id_map_flat=id_map, rows_total=n,
        out_degree=cp.asarray(out_degree_host) if out_degree is None else out_degree,
        order=None, tiles=None, dangling=int(np.count_nonzero(out_degree_host == 0)),
        cuts=np.array([0, n], dtype=np.int64))


def relabel(csr: "rt.DeviceCSR", out_degree, reorder: bool):
    """(rows, cols, order, out_degree) of the in-CSR ``csr``'s edges (rows destinations, cols
    sources), row-major: with ``reorder`` every id relabelled by decreasing out-degree
    (``order[new] = old``), the edges sorted by (row, column), and the out-degrees in the new
    order; without, the CSR's own order and ``order`` None."""
    cp = rt.cp()
    n = csr.num_vertices
    ids = csr.targets.dtype
    rows = cp.empty(csr.num_edges, dtype=ids)
    PAGERANK.kernel("graphdb_pagerank_edge_rows", ids)(
        (rt.grid_for(n, THREADS),), (THREADS,), (csr.offsets, np.int64(n), rows))
    if not reorder:
        return rows, csr.targets, None, out_degree
    order = cp.argsort(-out_degree.astype(np.int64)).astype(ids)
    new_id = cp.empty(n, dtype=ids)
    new_id[order] = cp.arange(n, dtype=ids)
    # Sort by (row, column): a row's columns ascend, so the lanes of a warp and the rows in
    # flight on an SM sweep the contributions in the same direction and share cache lines (the
    # order of a row's edges does not change its sum).
    key = new_id[rows].astype(np.int64) * n + new_id[csr.targets].astype(np.int64)
    del new_id, rows
    key.sort()
    rows, cols = (key // n).astype(ids), (key % n).astype(ids)
    del key
    return rows, cols, order, out_degree[order]


def cut_blocks(rows, cols, n: int, cuts: np.ndarray, out_degree, order, *,
               tiles: TileShape | None = None, uniform: int = 0) -> Partition:
    """Edges (row-major ``rows``, ``cols``) cut into blocks of the column ranges ``cuts``
    (``uniform``: the cuts are the multiples of that block size), hot-source ``tiles`` first."""
    cp = rt.cp()
    ids = cols.dtype
    n_ranges = -(-n // RANGE)
    blocks = len(cuts) - 1
    shape, tl = tiles, None
    if shape is not None:
        cp.cuda.get_current_stream().synchronize()
        t0 = time.perf_counter()
        tl, rest = build_tiles(cp, rows, cols, n, shape)
        rows, cols = rows[rest], cols[rest]
        del rest
        cp.cuda.get_current_stream().synchronize()
        tl.build_ms = (time.perf_counter() - t0) * 1e3
    if uniform:
        which = (cols // uniform).astype(np.int32)
    else:
        which = (cp.searchsorted(cp.asarray(cuts[1:-1]), cols, side="right")).astype(np.int32)
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
    return _assemble(parts, n, n_ranges, ids, out_degree, order, tl, cuts)


def _assemble(parts, n: int, n_ranges: int, ids, out_degree, order, tiles, cuts) -> Partition:
    """A Partition from its blocks' (rowptr, id_map, cols): heavy pieces, widths, merge ranges."""
    cp = rt.cp()
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
        blocks=len(parts),
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
        cuts=np.asarray(cuts, dtype=np.int64),
    )


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
    cuts = np.minimum(np.arange(blocks + 1, dtype=np.int64) * block_size, n)
    if blocks == 1 and not reorder:
        # Blocking skipped: one block is the CSR itself, every vertex a row.
        parts = [(csr.offsets, cp.arange(n, dtype=ids), csr.targets)]
        return _assemble(parts, n, -(-n // RANGE), ids, out_degree, None, None, cuts)
    rows, cols, order, out_degree = relabel(csr, out_degree, reorder)
    return cut_blocks(rows, cols, n, cuts, out_degree, order,
                      tiles=tiles if reorder else None, uniform=block_size)
