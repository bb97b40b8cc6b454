"""The GPU ranks of the partitioned PageRank (:mod:`.partitioned` has the loop they run in).

Each rank's layout is the one-GPU operator's (:mod:`.blocks`) over its destinations: on a graph
a GPU holds (its device CSR resident there), the in-edges are relabelled and sorted once on that
GPU, exactly as the one-GPU operator does, and each rank's rows are copied device to device to its
GPU and cut into blocks there (block bounds at every segment bound too, so a block's sources are
one rank's). With one rank the layout *is* the one-GPU operator's (the same residency entry).
A graph no GPU holds (one over a GPU's budget) is not gathered anywhere: each rank uploads its
shard of in-rows from the host, in the graph's own order, one block over all its rows.
"""

from __future__ import annotations

import numpy as np

from ...gpu import runtime as rt
from ...graph import Graph
from ...operators.partitioned import PARTITIONED, Team
from ...operators.shards import peer_copy, resident_device
from ...partition import ALIGN, Segments
from ..spec import OperatorConfig
from .blocks import cut_blocks, relabel, rows_partition
from .gpu import PAGERANK, THREADS, Layout, Pull, default_layout, partition_for
from .partitioned import VERTEX_WEIGHT, balanced_segments

__all__ = ["GpuRank", "layout", "ranks", "segments"]


def layout(graph: Graph, config: OperatorConfig) -> Layout:
    """The plan's tuning, else the one-GPU operator's default for this device."""
    if config.tuning is not None:
        return config.tuning
    return default_layout(graph.num_vertices, graph.num_edges, rt.device_info().l2_bytes)


def _source(graph: Graph, comm) -> int | None:
    devices = tuple(getattr(comm, "devices", ()) or (rt.cp().cuda.Device().id,))
    return resident_device(graph, devices)


def _relabelled(graph: Graph, comm, shape: Layout) -> bool:
    return shape.reorder and _source(graph, comm) is not None


def _device_bounds(prefix, parts: int, align: int = ALIGN) -> np.ndarray:
    """:func:`graphdb.executor.partition.balanced_bounds` of a device prefix (only the few
    candidate cuts come to the host)."""
    cp = rt.cp()
    n = int(prefix.size) - 1
    total = float(prefix[-1:].get()[0])
    targets = np.array([total * k / parts for k in range(1, parts)])
    c = cp.searchsorted(prefix, cp.asarray(targets), side="left").get()
    down = np.minimum(c - c % align, n)
    up = np.minimum(down + align, n)
    values = prefix[cp.asarray(np.concatenate((down, up)))].get()
    bounds = np.zeros(parts + 1, dtype=np.int64)
    bounds[-1] = n
    for k in range(1, parts):
        low, high = values[k - 1], values[parts - 1 + k - 1]
        t = targets[k - 1]
        best = down[k - 1] if abs(float(low) - t) <= abs(float(high) - t) else up[k - 1]
        bounds[k] = min(max(int(best), int(bounds[k - 1])), n)
    return bounds


def segments(graph: Graph, comm, shape: Layout) -> Segments:
    """The ranks' destinations: segments of the relabelled order (on a graph a GPU holds and
    large enough to relabel) or of the graph's own, balanced by in-edges plus a weight a
    vertex."""
    parts = comm.size
    relabelled = _relabelled(graph, comm, shape)

    def build() -> Segments:
        if not relabelled:
            return balanced_segments(graph.offsets("in"), parts)
        cp = rt.cp()
        source = _source(graph, comm)
        with cp.cuda.Device(source):
            inn = rt.device_csr(graph, "in")
            out = rt.device_csr(graph, "out")
            order = cp.argsort(-out.degrees().astype(np.int64))
            weight = inn.degrees()[order] + VERTEX_WEIGHT
            prefix = cp.zeros(graph.num_vertices + 1, dtype=np.int64)
            cp.cumsum(weight, out=prefix[1:])
            bounds = _device_bounds(prefix, parts)
            edges = (prefix[cp.asarray(bounds)].get()
                     - VERTEX_WEIGHT * bounds.astype(np.int64))
        return Segments(bounds, np.diff(edges))

    return graph.derived(f"pagerank:segments:{parts}:{shape}:{relabelled}", build)


def ranks(team: Team, shape: Layout, damping: float, iterations: int, fixed: bool) -> list:
    """Each local rank's :class:`GpuRank` over its layout (built once and held by the
    residency owner on its GPU)."""
    graph, comm, segs = team.graph, team.comm, team.segments
    relabelled = _relabelled(graph, comm, shape)
    source = _source(graph, comm)
    cut = "-".join(str(int(b)) for b in segs.bounds)
    names = [f"pagerank:shard:{cut}:{r}:{shape}{team.slot(i)}"
             for i, r in enumerate(comm.ranks)]
    missing = [i for i, name in enumerate(names)
               if graph.residency.peek(graph.key, team.device_of(i), name) is None]
    edges = None
    if relabelled and missing and not (segs.parts == 1 and _here(team, 0, source)):
        edges = _relabelled_edges(graph, source, segs)
    cp = rt.cp()
    ids = graph.id_dtype()
    out = []
    for i, rank in enumerate(comm.ranks):
        lo, hi = segs.range(rank)
        with comm.on(i):
            if segs.parts == 1 and relabelled and _here(team, i, source):
                part = partition_for(graph, shape)  # the one-GPU operator's own layout
            else:
                def build(i=i, rank=rank, lo=lo, hi=hi, edges=edges):
                    if relabelled:
                        return _cut(edges, source, graph.num_vertices, segs, shape, rank)
                    shard = team.shards(("in",))[i]
                    offsets = np.asarray(graph.offsets('in'))
                    rowptr = np.clip(offsets, offsets[lo], offsets[hi]) - offsets[lo]
                    return rows_partition(rowptr, shard.inn.offsets, shard.inn.targets,
                                          graph.out_degrees(), shard.out_degree)

                part = graph.derived(names[i], build, device=team.device_of(i))
            out.append(GpuRank(part, graph.num_vertices, ids, damping, lo, hi, segs.parts,
                               iterations, fixed, rank))
    del edges
    if missing:
        cp.get_default_memory_pool().free_all_blocks()
    return out


def _here(team: Team, i: int, source: int | None) -> bool:
    return source is not None and team.device_of(i) == f"gpu:{source}"


def _relabelled_edges(graph: Graph, source: int, segs: Segments):
    """(rows, cols, order, out-degrees, first edge of each segment) on the source GPU."""
    cp = rt.cp()
    with cp.cuda.Device(source), rt.operator_stream():
        inn = rt.device_csr(graph, "in")
        out = rt.device_csr(graph, "out")
        rows, cols, order, degree = relabel(inn, out.degrees(), True)
        firsts = cp.searchsorted(rows, cp.asarray(segs.bounds.astype(rows.dtype))).get()
    return rows, cols, order, degree, firsts


def _cut(edges, source: int, n: int, segs: Segments, shape: Layout, rank: int):
    """Rank ``rank``'s layout on the current GPU from the relabelled edges of its rows."""
    cp = rt.cp()
    rows, cols, order, degree, firsts = edges
    a, b = int(firsts[rank]), int(firsts[rank + 1])
    rows_r = peer_copy(cp, rows[a:b], source)
    cols_r = peer_copy(cp, cols[a:b], source)
    block = max(1, min(shape.block_vertices, n))
    cuts = np.union1d(np.minimum(np.arange(-(-n // block) + 1, dtype=np.int64) * block, n),
                      segs.bounds.astype(np.int64))
    return cut_blocks(rows_r, cols_r, n, cuts, peer_copy(cp, degree, source),
                      peer_copy(cp, order, source), tiles=shape.tiles)


class GpuRank:
    """One GPU rank: its layout's :class:`~.gpu.Pull` limited to its rows, the replicated
    float32 contributions, and the exchange of its slice (see :mod:`.partitioned`)."""

    itemsize = 4
    dtype = np.dtype(np.float32)

    def __init__(self, part, n: int, ids, damping: float, lo: int, hi: int, parts: int,
                 iterations: int, fixed: bool, index: int = 0):
        cp = rt.cp()
        self.part, self.n, self.lo, self.hi, self.parts = part, n, lo, hi, parts
        self.pull = Pull(part, n, ids, damping, v_lo=lo, v_hi=hi)
        self.contrib = cp.empty(n, dtype=np.float32)
        PAGERANK.function("graphdb_pagerank_init")((rt.grid_for(n, THREADS),), (THREADS,),
                                                   (part.out_degree, np.int64(n), self.contrib))
        self.scal = cp.asarray(np.array([part.dangling / max(n, 1), 0.0, 0.0]))
        self.l1 = cp.zeros(iterations, dtype=np.float64)
        self.rank = (cp.empty(n, dtype=np.float64) if fixed
                     else cp.asarray(np.full(n, 1.0 / max(n, 1), dtype=np.float64)))
        cuts = part.cuts
        self.own = [b for b in range(part.blocks) if cuts[b] >= lo and cuts[b + 1] <= hi]
        self.peer = [b for b in range(part.blocks) if b not in set(self.own)]
        tl = self.pull.tl
        self.tiles_own = tl is not None and lo == 0 and tl.sources <= hi
        self.permuted = part.order is not None
        self.in_order = not self.permuted
        self.perm = part.order if self.permuted else part.id_map_flat
        self.pack_k = PARTITIONED.function("graphdb_team_pack")
        self.unpack_k = PARTITIONED.function("graphdb_team_unpack")
        self.bounds = None
        self.index = index

    def own_sources(self, it: int) -> None:
        """The gathers whose sources are this rank's (their contributions are ready)."""
        if self.tiles_own:
            self.pull.tiles(self.contrib)
        self.pull.blocks(self.contrib, self.own)

    def rest(self, it: int, last: bool, track: bool) -> None:
        """The peers' sources (after the exchange), then the merge of this rank's rows."""
        if not self.tiles_own:
            self.pull.tiles(self.contrib)
        self.pull.blocks(self.contrib, self.peer)
        whole = self.parts == 1
        mode = 1 if track else (0 if not last else (2 if whole and self.permuted else 1))
        self.in_order = mode == 2 or not self.permuted
        self.pull.merge(it, self.rank, self.contrib, self.scal, self.l1, track_change=track,
                        rank_mode=mode, perm=self.perm)

    def pack(self, it: int, own, widest: int) -> None:
        """This rank's contributions and totals into its slot of the exchange buffer."""
        s = (it + 1) % 3
        count = self.hi - self.lo
        self.pack_k((rt.grid_for(max(count, 1), THREADS),), (THREADS,), (
            self.contrib, np.int64(self.lo), np.int64(count), own, np.int64(widest),
            self.scal[s:s + 1], self.l1[it:it + 1]))

    def unpack(self, it: int, slots, slot: int, widest: int, segs: Segments) -> None:
        """(On the exchange stream.) The peers' slots into their ranges, the totals summed."""
        if self.bounds is None:
            self.bounds = rt.cp().asarray(segs.bounds.astype(np.int64))
        s = (it + 1) % 3
        self.unpack_k((rt.grid_for(max(self.n, 1), THREADS),), (THREADS,), (
            slots, np.int64(slot), self.bounds, np.int32(segs.parts), np.int32(self.index),
            np.int64(widest), self.contrib, self.scal[s:s + 1], self.l1[it:it + 1]))

    def owned_ranks(self):
        return self.rank[self.lo:self.hi]

    def result(self):
        """The ranks of a lone rank, in the caller's order."""
        return self.rank if self.in_order else self.unorder(self.rank)

    def unorder(self, full):
        """Ranks in the relabelled order to the caller's."""
        if not self.permuted:
            return full
        out = rt.cp().empty_like(full)
        out[self.part.order] = full
        return out

    def stats(self) -> dict:
        part = self.part
        return {"blocks": part.blocks, "reordered": self.permuted,
                "tiled": self.pull.tl is not None}

