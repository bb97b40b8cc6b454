"""What the partitioned operators share: the team of ranks, owner routing, the row gathers.

A :class:`Team` is one partitioned run in this process: the communicator of the placement, the
graph's segments and this process's parts (on each rank's device), and the array module. Its
steps are written once for numpy and CuPy (``xp``): the CPU tests run the very code the GPUs do,
only the row gather (:func:`pull_sum`) has a compiled twin per device (numba, ``partitioned.cu``).

- :meth:`Team.map` runs a function on each local rank's part (on its device and stream);
- :meth:`Team.total` reduces a few numbers over all ranks and returns them on the host (the
  one host round trip of a step: frontier sizes, dangling sums, convergence);
- :meth:`Team.replicate` gathers every rank's owned slice into the full vector on every rank
  (replicated state), :meth:`Team.route` sends ids (and values) to the ranks owning them;
- :meth:`Team.gather` collects owned result slices into full host columns;
- :meth:`Team.metrics` is what EXPLAIN ANALYZE shows: bytes exchanged per rank, per step,
  collective time, the segments' edge imbalance.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from graphdb.storage.compiled import KernelSet

from ..algorithms.spec import OperatorConfig
from ..comm import communicator
from ..gpu import runtime as rt
from ..graph import Graph
from ..partition import Part, Rows, Segments, load_part, read_rows, segments
from .shards import Shard, load_shard

__all__ = ["KERNELS", "PARTITIONED", "Routed", "StreamedRows", "Team", "expand_rows",
           "min_by_key", "pull_sum"]

KERNELS = KernelSet(__name__)
prange = range  # numba.prange once compiled

#: Launch each GPU's work from a thread of its own (``GRAPHDB_TEAM_THREADS=1``; an experiment:
#: by default one thread launches every rank's work of a step in turn, without waiting).
THREADS_PER_GPU = os.environ.get("GRAPHDB_TEAM_THREADS") == "1"


@lru_cache(maxsize=None)
def _launchers(count: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(count, thread_name_prefix="graphdb-team")


#: ``partitioned.cu``: the row gather of the GPU ranks, and the team's exchange kernels (the
#: totals of PageRank's slots, BFS's claimed bitmaps applied, SSSP's lowered distances grouped by
#: owner and merged).
PARTITIONED = rt.CudaModule("operators/partitioned.cu", (
    "graphdb_partition_pull_sum<{id}>",
    "graphdb_team_bfs_apply<{id}>",
    "graphdb_team_sssp_compact<{id}>",
    "graphdb_team_sssp_apply<{id}>",
))
THREADS = 256


@KERNELS.kernel(parallel=True)
def _pull_sum(offsets, targets, values, sums):
    """``sums[r]`` = the sum of ``values`` over row r's neighbours (CPU twin of the CUDA
    kernel)."""
    for r in prange(sums.size):
        acc = 0.0
        for k in range(offsets[r], offsets[r + 1]):
            acc += values[targets[k]]
        sums[r] = acc


def pull_sum(xp, rows: Rows, values) -> Any:
    """For each row, the float64 sum of ``values`` (indexed by the row's neighbour ids)."""
    n_rows = rows.num_rows
    if xp is np:
        sums = np.zeros(n_rows, dtype=np.float64)
        if n_rows and rows.num_edges:
            kernels = KERNELS.for_work(n_rows + rows.num_edges, parallel=True)
            kernels._pull_sum(rows.offsets, rows.targets, np.ascontiguousarray(values,
                                                                               np.float64), sums)
        return sums
    sums = xp.zeros(n_rows, dtype=np.float64)
    if n_rows and rows.num_edges:
        kernel = PARTITIONED.kernel("graphdb_partition_pull_sum", rows.targets.dtype)
        values = xp.ascontiguousarray(values, dtype=np.float64)
        kernel((rt.grid_for(n_rows * 32, THREADS),), (THREADS,),
               (rows.offsets, rows.targets, np.int64(n_rows), values, sums))
    return sums


def expand_rows(xp, offsets, rows) -> tuple[Any, Any]:
    """Positions of every edge of ``rows`` (local row indices) in a CSR with ``offsets``, and the
    index into ``rows`` each edge came from; gathered without a loop (numpy and CuPy alike: no
    ``repeat`` with array counts, which CuPy lacks)."""
    rows = xp.asarray(rows, dtype=np.int64)
    if rows.size == 0:
        return xp.zeros(0, dtype=np.int64), xp.zeros(0, dtype=np.int64)
    starts = offsets[rows]
    counts = offsets[rows + 1] - starts
    ends = xp.cumsum(counts)
    total = int(ends[-1])
    if total == 0:
        return xp.zeros(0, dtype=np.int64), xp.zeros(0, dtype=np.int64)
    index = xp.arange(total, dtype=np.int64)
    which = xp.searchsorted(ends, index, side="right")
    return starts[which] + (index - (ends[which] - counts[which])), which


def min_by_key(xp, keys, values, bound: int | None = None) -> tuple[Any, Any]:
    """The distinct ``keys`` (ascending) and the smallest of the ``values`` given to each.

    numpy: with many keys below ``bound`` a dense minimum (``minimum.at``), else one sort by key
    and a segmented minimum (``minimum.reduceat``; a lexsort of both was ten times slower);
    CuPy has no ``reduceat`` and sorts both keys at once on the device."""
    if keys.size == 0:
        return keys, values
    if xp is np and bound is not None and keys.size * 8 > bound:
        best = np.full(bound, np.inf)
        np.minimum.at(best, keys, values)
        distinct = np.flatnonzero(best < np.inf)
        return distinct, best[distinct].astype(values.dtype, copy=False)
    if xp is np:
        order = np.argsort(keys)
        keys, values = keys[order], values[order]
        first = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
        return keys[first], np.minimum.reduceat(values, first)
    order = xp.lexsort(xp.stack((values.astype(np.float64), keys.astype(np.float64))))
    keys, values = keys[order], values[order]
    first = xp.concatenate((xp.ones(1, dtype=bool), keys[1:] != keys[:-1]))
    return keys[first], values[first]


class StreamedRows:
    """A rank's rows that are not held: read (through the buffer manager, for a stored graph)
    and on a GPU uploaded a chunk of at most ``chunk_edges`` edges at a time, every pass."""

    def __init__(self, graph: Graph, lo: int, hi: int, direction: str, chunk_edges: int):
        self.graph, self.lo, self.direction = graph, lo, direction
        offsets = _row_offsets(graph, lo, hi, direction)
        self.num_rows = hi - lo
        self.num_edges = int(offsets[-1])
        cuts = [0]
        while cuts[-1] < self.num_rows:
            start = int(offsets[cuts[-1]])
            nxt = int(np.searchsorted(offsets, start + max(1, chunk_edges), side="right")) - 1
            cuts.append(min(self.num_rows, max(nxt, cuts[-1] + 1)))
        self.cuts = cuts

    def chunks(self, xp):
        """``(first row, end row, rows)`` of each chunk, in xp's memory."""
        for a, b in zip(self.cuts[:-1], self.cuts[1:]):
            rows = read_rows(self.graph, self.lo + a, self.lo + b, self.direction, False)
            yield a, b, rows if xp is np else rows.to(xp)


def _chunk_edges(config: OperatorConfig) -> int:
    """Edges of one streamed chunk: half of what the budget leaves beside the vertex state
    (two chunks in flight), 16 M when there is no budget."""
    if config.budget_bytes is None:
        return 1 << 24
    return max(1 << 10, config.free_bytes() // (2 * 12))


def _row_offsets(graph: Graph, lo: int, hi: int, direction: str) -> np.ndarray:
    """Rebased offsets of rows lo..hi-1 (the offsets alone: no targets are read)."""
    from ..graph import StoredGraph

    direction = graph.stored_direction(direction)
    if isinstance(graph, StoredGraph):
        offsets = graph.buffers.read_range(graph.graph_id, f"{direction}_offsets", lo, hi + 1)
    else:
        offsets = graph.array(f"{direction}_offsets")[lo:hi + 1]
    offsets = np.asarray(offsets, dtype=np.int64)
    return offsets - offsets[0]


@dataclass
class Routed:
    """What :meth:`Team.route` delivered to each local rank: the ids, the payloads aligned with
    them, how many came from each rank (``counts``) and how many it sent each (``sent``)."""

    ids: list
    payloads: list
    counts: list
    sent: list


class Team:
    """One partitioned run in this process (see the module docstring). ``forms`` are the stored
    forms the operator reads (``out``, ``in``, ``weights``): the segments are balanced by those
    edges (or ``segs`` are given: an operator with its own vertex order) and each rank's shard
    or part holds those rows."""

    def __init__(self, graph: Graph, config: OperatorConfig, forms: tuple[str, ...],
                 comm: Any = None, stream: str | None = None, segs: Segments | None = None):
        if config.placement is None and comm is None:
            raise ValueError("a partitioned operator needs a placement")
        self.comm = comm if comm is not None else communicator(config.placement)
        self.graph = graph
        self.config = config
        self.forms = forms
        self.n = graph.num_vertices
        self.size = self.comm.size
        self.segments: Segments = segs if segs is not None else segments(graph, self.size, forms)
        self.xp = rt.cp() if self.comm.kind == "gpu" else np
        self._stream = stream
        self._parts: list[Part] | None = None
        self.streams: list[StreamedRows] = []
        self._shards: dict[tuple, list[Shard]] = {}
        self._bounds = None
        self._before = self.comm.counters.snapshot()
        self.steps = 0
        self._started = time.perf_counter()
        self._marks = self._mark() if self.xp is not np else None
        self._pool = _launchers(self.local) if THREADS_PER_GPU and self.local > 1 \
            and self.xp is not np else None

    # -- where each local rank runs ---------------------------------------------------------------
    @property
    def local(self) -> int:
        """Ranks this process drives."""
        return len(self.comm.ranks)

    def device_of(self, i: int) -> str:
        """The residency owner's device name of local rank i (``"cpu"`` for numpy ranks)."""
        if self.xp is np:
            return "cpu"
        devices = getattr(self.comm, "devices", None)
        return f"gpu:{devices[i]}" if devices else rt.device_name()

    def slot(self, i: int) -> str:
        """Tells apart ranks simulated on one device (their shards are distinct entries)."""
        return f"@{i}" if self.comm.backend == "local" else ""

    def gpus(self) -> tuple[int, ...]:
        """The GPUs of this process's ranks (a shard is cut from whichever holds the graph)."""
        if self.xp is np:
            return ()
        devices = getattr(self.comm, "devices", None)
        return tuple(devices) if devices else (rt.cp().cuda.Device().id,)

    def shards(self, forms: tuple[str, ...]) -> list[Shard]:
        """Each local rank's shard with the rows of ``forms``, on its device (built once per
        graph version and placement: :mod:`.shards`)."""
        key = tuple(sorted(forms))
        if key not in self._shards:
            out = []
            for i, rank in enumerate(self.comm.ranks):
                with self.comm.on(i):
                    out.append(load_shard(self.graph, self.segments, rank, key, self.xp,
                                          device=self.device_of(i), devices=self.gpus(),
                                          slot=self.slot(i)))
            self._shards[key] = out
        return self._shards[key]

    @property
    def parts(self) -> list[Part]:
        """Each local rank's part (rows rebased to the segment; the operators that gather over
        rows of their own: CDLP, LCC, split state), loaded on first use."""
        if self._parts is None:
            config = self.config
            streamed = self._stream is not None and config.placement is not None \
                and config.placement.streamed
            held = tuple(f for f in self.forms if not (streamed and f == self._stream))
            self._parts = []
            for i, rank in enumerate(self.comm.ranks):
                with self.comm.on(i):
                    device = self.device_of(i)
                    self._parts.append(load_part(self.graph, self.segments, rank, held, device,
                                                 self.xp, slot=self.slot(i)))
                    if streamed:
                        lo, hi = self.segments.range(rank)
                        self.streams.append(StreamedRows(self.graph, lo, hi, self._stream,
                                                         _chunk_edges(config)))
        return self._parts

    # -- running on each rank -------------------------------------------------------------------
    def each(self, fn: Callable[..., Any], *per_rank: list) -> list:
        """``fn(i, *args_i)`` for each local rank i, on its device and compute stream; the
        results. GPU work is only launched: nothing waits, so every rank's work of a step is
        queued before the host reads anything. (With ``GRAPHDB_TEAM_THREADS=1`` each GPU's
        launches come from a thread of its own: measured slower, see docs/performance.)"""
        def one(i):
            with self.comm.on(i):
                return fn(i, *(values[i] for values in per_rank))

        if self._pool is not None:
            return list(self._pool.map(one, range(self.local)))
        return [one(i) for i in range(self.local)]

    def _mark(self) -> list:
        """A timing event recorded now on each local rank's compute stream."""
        cp = rt.cp()
        marks = []
        for i in range(self.local):
            with self.comm.on(i):
                event = cp.cuda.Event()
                event.record()
                marks.append(event)
        return marks

    def map(self, fn: Callable[..., Any], *per_rank: list) -> list:
        """``fn(i, part, *args_i)`` for each local rank i (the part-based operators)."""
        parts = self.parts
        return self.each(lambda i, *args: fn(i, parts[i], *args), *per_rank)

    def owner(self, i: int, vertices) -> Any:
        """The rank owning each of ``vertices`` (on local rank i's device)."""
        if self.size == 1:
            return self.xp.zeros(vertices.shape[0], dtype=np.int64)
        if self._bounds is None:
            self._bounds = self.each(lambda j: self.xp.asarray(self.segments.bounds[1:-1]))
        return self.xp.searchsorted(self._bounds[i], vertices, side="right")

    def read(self, values: list) -> list[np.ndarray]:
        """Each local rank's array on the host (the host waits here, for each rank in turn:
        call it after every rank's work is launched)."""
        return [self.comm.fetch(i, v) for i, v in enumerate(values)]

    # -- exchanges ------------------------------------------------------------------------------
    def total(self, values: list, op: str = "sum", dtype=np.float64) -> np.ndarray:
        """Each local rank's few numbers (a sequence per rank: Python numbers or 0-d arrays of
        its device) reduced over all ranks, on the host."""
        xp = self.xp
        arrays = self.each(lambda i, v: xp.stack([xp.asarray(x, dtype=dtype).reshape(())
                                                   for x in v]), values)
        reduced = self.comm.allreduce(arrays, op)
        return self.comm.fetch(0, reduced[0])

    def replicate(self, owned: list) -> list:
        """The full vector on every rank from each rank's owned slice (allgatherv)."""
        return self.comm.allgatherv(owned)

    def reduce(self, arrays: list, op: str) -> list:
        """Full-length arrays combined element-wise over all ranks (allreduce)."""
        return self.comm.allreduce(arrays, op)

    def allgather(self, values: list, out: list | None = None, overlap: bool = False) -> list:
        """Slices of one size concatenated in rank order on every rank (one AllGather)."""
        return self.comm.allgather(values, out, overlap=overlap)

    def widest(self) -> int:
        """The largest segment (the padded slot of an allgather of owned slices)."""
        return int(self.segments.sizes().max()) if self.size else 0

    def collect(self, owned: list, dtype=None) -> Any:
        """A result's owned slices (``segments`` order) as one full vector on local rank 0's
        device (on every process of a cluster job): one AllGather of slices padded to the
        largest, then each slot copied to its range."""
        xp = self.xp
        widest = self.widest()
        dtype = np.dtype(dtype or owned[0].dtype)

        def pad(i, values):
            slot = xp.zeros(widest * self.size, dtype=dtype)
            rank = self.comm.ranks[i]
            slot[rank * widest:rank * widest + values.shape[0]] = values
            return slot

        slots = self.each(pad, owned)
        rank_slots = [s[r * widest:(r + 1) * widest] for r, s in zip(self.comm.ranks, slots)]
        gathered = self.allgather(rank_slots, slots) if self.size > 1 else slots
        with self.comm.on(0):
            full = xp.empty(self.n, dtype=dtype)
            for r in range(self.size):
                lo, hi = self.segments.range(r)
                full[lo:hi] = gathered[0][r * widest:r * widest + hi - lo]
        return full

    def route(self, ids: list, *payloads: list) -> "Routed":
        """Send each rank's ``ids`` (global vertex ids) and the values aligned with them to the
        ranks owning the ids. Each rank's sends keep their order within one destination, so
        ids sorted ascending arrive sorted."""
        xp = self.xp

        def sort(i, v):
            owner = self.owner(i, v)
            order = xp.argsort(owner, kind="stable") if xp is np else xp.argsort(owner)
            counts = (xp.bincount(owner, minlength=self.size) if owner.size
                      else xp.zeros(self.size, dtype=np.int64))
            return order, counts

        prepared = self.each(sort, ids)
        sent = [self.comm.fetch(i, c).astype(np.int64) for i, (_, c) in enumerate(prepared)]
        orders = [o for o, _ in prepared]
        received, counts = self.comm.alltoallv(
            self.each(lambda i, v: v[orders[i]], ids), sent)
        values = [self.comm.alltoallv(self.each(lambda i, v: v[orders[i]], payload), sent,
                                      counts)[0] for payload in payloads]
        return Routed(received, values, counts, sent)

    def gather(self, owned: list) -> np.ndarray:
        """Every rank's owned slice of a result, concatenated on the host (rank order)."""
        return self.comm.allgatherv_host([self.comm.fetch(i, v) for i, v in enumerate(owned)])

    # -- reporting ------------------------------------------------------------------------------
    def metrics(self, **extra: Any) -> dict[str, Any]:
        """What the run exchanged: bytes received per rank (mean over this process's ranks), per
        step, collective time, calls, and the segments' edge imbalance."""
        # the host's time first: reading the collectives' device timings below waits for them
        host = time.perf_counter() - self._started
        done = self.comm.counters.since(self._before)
        local = max(1, self.local)
        total = sum(c.bytes for c in done.values()) // local
        out: dict[str, Any] = {
            "ranks": self.size,
            "backend": self.comm.backend,
            "bytes_exchanged": int(total),
            "collectives": sum(c.calls for c in done.values()),
            "collective_seconds": round(sum(c.seconds for c in done.values()) / local, 6),
            "imbalance": round(self.segments.imbalance(), 3),
        }
        if self.steps:
            out["bytes_per_step"] = int(total // self.steps)
        out["host_seconds"] = round(host, 6)
        if self._marks is not None:  # each rank's stream from the start to now: its busy span
            ends = self._mark()
            spans = []
            for i, (a, b) in enumerate(zip(self._marks, ends)):
                with self.comm.on(i):
                    b.synchronize()
                    spans.append(round(rt.cp().cuda.get_elapsed_time(a, b) / 1e3, 6))
            out["rank_seconds"] = spans
        out["exchange"] = {k: {"calls": c.calls, "bytes": c.bytes // local,
                               "seconds": c.seconds / local} for k, c in done.items()}
        out.update(extra)
        return out
