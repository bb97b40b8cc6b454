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

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from graphdb.storage.compiled import KernelSet

from ..algorithms.spec import OperatorConfig
from ..comm import communicator
from ..gpu import runtime as rt
from ..graph import Graph
from ..partition import Part, Rows, Segments, load_part, read_rows, segments

__all__ = ["KERNELS", "PARTITIONED", "Routed", "StreamedRows", "Team", "expand_rows",
           "min_by_key", "pull_sum"]

KERNELS = KernelSet(__name__)
prange = range  # numba.prange once compiled

#: ``partitioned.cu``: the row gather of the GPU ranks.
PARTITIONED = rt.CudaModule("operators/partitioned.cu", ("graphdb_partition_pull_sum<{id}>",))
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

    direction = graph._direction(direction)
    if isinstance(graph, StoredGraph):
        offsets = graph.buffers.read_range(graph.graph_id, f"{direction}_offsets", lo, hi + 1)
    else:
        offsets = graph._array(f"{direction}_offsets")[lo:hi + 1]
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
    edges and each part holds those rows."""

    def __init__(self, graph: Graph, config: OperatorConfig, forms: tuple[str, ...],
                 comm: Any = None, stream: str | None = None):
        if config.placement is None and comm is None:
            raise ValueError("a partitioned operator needs a placement")
        self.comm = comm if comm is not None else communicator(config.placement)
        self.graph = graph
        self.n = graph.num_vertices
        self.size = self.comm.size
        self.segments: Segments = segments(graph, self.size, forms)
        self.xp = rt.cp() if self.comm.kind == "gpu" else np
        # Placed "streamed": the rows of direction `stream` are read a chunk at a time every
        # pass (StreamedRows) instead of being held.
        streamed = stream is not None and config.placement is not None \
            and config.placement.streamed
        held = tuple(f for f in forms if not (streamed and f == stream))
        self.parts: list[Part] = []
        self.streams: list[StreamedRows] = []
        for i, rank in enumerate(self.comm.ranks):
            with self.comm.on(i):
                device = rt.device_name() if self.xp is not np else "cpu"
                self.parts.append(load_part(graph, self.segments, rank, held, device,
                                            self.xp, slot=f"@{i}"))
                if streamed:
                    lo, hi = self.segments.range(rank)
                    self.streams.append(StreamedRows(graph, lo, hi, stream,
                                                     _chunk_edges(config)))
        self._bounds = self.map(lambda i, part: self.xp.asarray(self.segments.bounds[1:-1]))
        self._before = self.comm.counters.snapshot()
        self.steps = 0

    # -- running on each rank -------------------------------------------------------------------
    def map(self, fn: Callable[..., Any], *per_rank: list) -> list:
        """``fn(i, part, *args_i)`` for each local rank i, on its device; the results."""
        out = []
        for i, part in enumerate(self.parts):
            with self.comm.on(i):
                out.append(fn(i, part, *(values[i] for values in per_rank)))
        return out

    def owner(self, i: int, vertices) -> Any:
        """The rank owning each of ``vertices`` (on local rank i's device)."""
        if self.size == 1:
            return self.xp.zeros(vertices.shape[0], dtype=np.int64)
        return self.xp.searchsorted(self._bounds[i], vertices, side="right")

    # -- exchanges ------------------------------------------------------------------------------
    def total(self, values: list, op: str = "sum", dtype=np.float64) -> np.ndarray:
        """Each local rank's few numbers (a sequence per rank: Python numbers or 0-d arrays of
        its device) reduced over all ranks, on the host."""
        xp = self.xp
        arrays = self.map(lambda i, part, v: xp.stack([xp.asarray(x, dtype=dtype).reshape(())
                                                        for x in v]), values)
        reduced = self.comm.allreduce(arrays, op)
        return self.comm.fetch(0, reduced[0])

    def replicate(self, owned: list) -> list:
        """The full vector on every rank from each rank's owned slice (allgatherv)."""
        return self.comm.allgatherv(owned)

    def reduce(self, arrays: list, op: str) -> list:
        """Full-length arrays combined element-wise over all ranks (allreduce)."""
        return self.comm.allreduce(arrays, op)

    def route(self, ids: list, *payloads: list) -> "Routed":
        """Send each rank's ``ids`` (global vertex ids) and the values aligned with them to the
        ranks owning the ids. Each rank's sends keep their order within one destination, so
        ids sorted ascending arrive sorted."""
        xp = self.xp

        def sort(i, part, v):
            owner = self.owner(i, v)
            order = xp.argsort(owner, kind="stable") if xp is np else xp.argsort(owner)
            counts = (xp.bincount(owner, minlength=self.size) if owner.size
                      else xp.zeros(self.size, dtype=np.int64))
            return order, counts

        prepared = self.map(sort, ids)
        sent = [self.comm.fetch(i, c).astype(np.int64) for i, (_, c) in enumerate(prepared)]
        orders = [o for o, _ in prepared]
        received, counts = self.comm.alltoallv(
            self.map(lambda i, part, v: v[orders[i]], ids), sent)
        values = [self.comm.alltoallv(self.map(lambda i, part, v: v[orders[i]], payload), sent,
                                      counts)[0] for payload in payloads]
        return Routed(received, values, counts, sent)

    def gather(self, owned: list) -> np.ndarray:
        """Every rank's owned slice of a result, concatenated on the host (rank order)."""
        return self.comm.allgatherv_host([self.comm.fetch(i, v) for i, v in enumerate(owned)])

    # -- reporting ------------------------------------------------------------------------------
    def metrics(self, **extra: Any) -> dict[str, Any]:
        """What the run exchanged: bytes received per rank (mean over this process's ranks), per
        step, collective time, calls, and the segments' edge imbalance."""
        done = self.comm.counters.since(self._before)
        local = max(1, len(self.comm.ranks))
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
        out["exchange"] = {k: {"calls": c.calls, "bytes": c.bytes // local,
                               "seconds": c.seconds / local} for k, c in done.items()}
        out.update(extra)
        return out
