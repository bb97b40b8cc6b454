"""Subgraph streaming for traversals (Subway, EuroSys '20): BFS, SSSP and WCC past the budget.

Vertex state (one float64 value and two flag bytes per vertex) stays in the budget; the edges
stay outside it (host memory for the GPU, the CSR arrays for the CPU). Each outer iteration:

1. the active vertices (label set) are read out and the label array is cleared: every one of
   them will have all its edges relaxed in this iteration, with a value at least as new as now,
   and any later improvement sets its label again (so the clear can never lose work);
2. if the active vertices' edges are at most ``threshold`` (Subway's 80%) of all edges, their
   adjacency is gathered into a *SubCSR* (active ids, offsets, edges[, weights]); otherwise, and
   in the first outer iteration of the asynchronous mode, the whole CSR is streamed in vertex-
   range partitions and only the snapshot's vertices relax (the partitioning fallback);
3. either is cut into *pieces* that fit the budget (:func:`plan_pieces`): whole rows where they
   fit, a hub's row split over several pieces where it does not. Pieces are built one at a time
   into a bounded staging buffer, never as one |E|-sized SubCSR (the paper's repo keeps a
   second full pinned copy of the edges; we do not);
4. each piece is moved in and relaxed once (pass 1); in the asynchronous mode the relaxation then
   repeats on the loaded piece for its vertices whose label was set again, until none is left
   (inner iterations, Subway's Algorithm 4). A row split across pieces never relaxes in an inner
   iteration: only part of its edges is loaded, so clearing its label would lose the rest.

Values are float64 for all three algorithms (depth, distance, smallest id of the component), all
non-negative, so the GPU kernel's atomicMin on their bit patterns orders them correctly.
Relaxation is a monotone min: the result does not depend on evaluation order, which is the
paper's condition for the asynchronous mode to be exact.

The driver here is the same for both devices; a *backend* moves pieces and relaxes them:
:class:`CPUBackend` (numpy, in this module) and :class:`.subway_gpu.GPUBackend` (CuPy and
``subway.cu``). WCC streams the symmetrised adjacency of a directed graph. The GPU backend builds
the SubCSR itself, where the labels are (``device_subcsr``): the driver gets three counts an
iteration (active vertices, rows with edges, their edges) instead of the ids, and the backend
cuts SubCSR pieces by edge ranges (in the synchronous mode it stages none: the edges are relaxed
as they cross the bus).

The budget comes from the :class:`~graphdb.executor.algorithms.spec.OperatorConfig` the physical
planner filled: the vertex state it reserved (the family spec's figure) and the rest for pieces.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np

from ..algorithms.common import negative_weights
from ..algorithms.spec import AlgorithmOutput, OperatorConfig
from ..cancel import checkpoint
from ..errors import DeviceOutOfMemory, InvalidArgument
from ..graph import CSR, Graph
from .metrics import StreamMetrics, check_budget

__all__ = ["ALGORITHMS", "DEFAULT_THRESHOLD", "Piece", "Reached", "plan_pieces", "piece_arrays",
           "run_subway", "subway", "traversal_csr", "CPUBackend"]

#: Subway's P_active: above this share of active edges, stream whole partitions instead.
DEFAULT_THRESHOLD = 0.8
ALGORITHMS = ("bfs", "sssp", "wcc")
MAX_INNER = 10_000
#: Threads of the host-side SubCSR gather, and the edges below which one thread does it.
GATHER_THREADS = max(1, min(16, os.cpu_count() or 1))
PARALLEL_GATHER_EDGES = 1 << 20


@dataclass(frozen=True)
class Piece:
    """Rows ``r0..r1-1`` of a (Sub)CSR with its edges ``e0..e1-1`` (a hub's row may be cut)."""

    r0: int
    r1: int
    e0: int
    e1: int

    @property
    def edges(self) -> int:
        return self.e1 - self.e0


def plan_pieces(offsets: np.ndarray, row_bytes: int, edge_bytes: int, capacity: int
                ) -> list[Piece]:
    """Cut rows (``offsets``: cumulative edges from 0) into pieces of at most ``capacity`` bytes.

    A piece takes as many whole rows as fit (binary search on the byte prefix sums, Subway's
    partitioner); a row that does not fit alone is cut into edge ranges (Subway errors out there).
    """
    k = len(offsets) - 1
    if capacity < row_bytes + edge_bytes:
        raise DeviceOutOfMemory(f"a piece of {capacity} B cannot hold one row and one edge")
    cost = offsets * edge_bytes + np.arange(k + 1, dtype=np.int64) * row_bytes
    pieces: list[Piece] = []
    r, e = 0, int(offsets[0])
    while r < k:
        base = e * edge_bytes + r * row_bytes
        j = int(np.searchsorted(cost, base + capacity, side="right")) - 1
        if j > r:
            pieces.append(Piece(r, j, e, int(offsets[j])))
            r, e = j, int(offsets[j])
            continue
        end = int(offsets[r + 1])
        e1 = min(end, e + max(1, (capacity - row_bytes) // edge_bytes))
        pieces.append(Piece(r, r + 1, e, e1))
        e = e1
        if e1 == end:
            r += 1
    return pieces


def piece_arrays(csr: CSR, rows: np.ndarray | None, sub_offsets: np.ndarray, piece: Piece,
                 weighted: bool, out_targets=None, out_weights=None):
    """(local offsets, targets, weights, head_split, tail_split) of one piece.

    ``rows`` are the SubCSR's vertex ids (None: the full CSR, whose rows are vertices and whose
    piece edges are one contiguous slice). Edges land in ``out_*`` (page-locked staging on the
    GPU) when given. The gather index is built per piece, so its temporary is bounded too; a large
    piece is gathered by several threads (Subway's step 6 is a parallel host copy: numpy's
    arange, repeat and take release the GIL).
    """
    r0, r1, e0, e1 = piece.r0, piece.r1, piece.e0, piece.e1
    off = sub_offsets[r0:r1 + 1]
    local = np.clip(off, e0, e1) - e0
    head, tail = bool(off[0] < e0), bool(off[-1] > e1)
    n = e1 - e0
    if out_targets is None:
        out_targets = np.empty(n, dtype=csr.targets.dtype)
        out_weights = np.empty(n) if weighted else None
    targets = out_targets[:n]
    weights = out_weights[:n] if weighted else None
    if rows is None:
        targets[...] = csr.targets[e0:e1]
        if weighted:
            weights[...] = csr.weights[e0:e1]
        return local, targets, weights, head, tail
    shift = csr.offsets[rows[r0:r1]] - off[:-1]

    def gather(a: int, b: int) -> None:  # rows a..b-1 of the piece
        la, lb = int(local[a]), int(local[b])
        idx = np.arange(la + e0, lb + e0, dtype=np.int64)
        idx += np.repeat(shift[a:b], np.diff(local[a:b + 1]))
        np.take(csr.targets, idx, out=targets[la:lb])
        if weighted:
            np.take(csr.weights, idx, out=weights[la:lb])

    k = r1 - r0
    parts = min(GATHER_THREADS, max(1, n // PARALLEL_GATHER_EDGES), k)
    if parts <= 1:
        gather(0, k)
    else:  # rows cut where the edges are split evenly
        cuts = np.searchsorted(local, np.linspace(0, n, parts + 1)[1:-1])
        bounds = [0, *sorted(set(int(c) for c in cuts if 0 < c < k)), k]
        list(_pool().map(lambda ab: gather(*ab), zip(bounds[:-1], bounds[1:])))
    return local, targets, weights, head, tail


_POOL = None


def _pool():
    global _POOL
    if _POOL is None:
        from concurrent.futures import ThreadPoolExecutor

        _POOL = ThreadPoolExecutor(GATHER_THREADS, thread_name_prefix="graphdb-subcsr")
    return _POOL


def min_weight(graph: Graph, weights: np.ndarray) -> float:
    """The smallest edge weight, scanned once per graph version (the scan of |E| host floats
    costs ~0.1 s at R-MAT 24, a third of a streamed SSSP)."""
    return graph.derived("weights:out:min", lambda: float(weights.min()), nbytes=lambda _: 0)


def traversal_csr(graph: Graph, algorithm: str, weighted: bool = False) -> CSR:
    """The adjacency a traversal relaxes: out-edges, or both directions for WCC on a directed
    graph (built once per graph version)."""
    if algorithm != "wcc" or not graph.directed:
        return graph.csr("out", weights=weighted)

    def symmetric() -> CSR:
        out, inn = graph.out_csr, graph.in_csr
        src = np.concatenate([out.sources(), inn.sources()])
        dst = np.concatenate([out.targets, inn.targets])
        return CSR.from_edges(src, dst, graph.num_vertices)

    return graph.derived("csr:symmetric", symmetric)


class CPUBackend:
    """Pieces are copied into a working set of ``capacity`` bytes and relaxed with numpy."""

    name = "cpu"
    #: gather index (8), candidates (8), targets of the relaxed edges (8): per-edge temporaries
    TEMP_BYTES_PER_EDGE = 24

    def __init__(self, algorithm: str, n: int, source: int | None, metrics: StreamMetrics):
        self.algorithm, self.metrics = algorithm, metrics
        if algorithm == "wcc":
            self.value = np.arange(n, dtype=np.float64)
            self.label = np.ones(n, dtype=bool)
        else:
            self.value = np.full(n, np.inf)
            self.label = np.zeros(n, dtype=bool)
            self.value[source] = 0.0
            self.label[source] = True
        self.snap = np.zeros(n, dtype=bool)

    def piece_capacity(self, free: int, edge_bytes: int) -> int:
        return free * edge_bytes // (edge_bytes + self.TEMP_BYTES_PER_EDGE)

    def active_ids(self) -> np.ndarray:
        return np.flatnonzero(self.label)

    def begin_iteration(self, full: bool) -> None:
        """Snapshot (partitions: who relaxes) or clear (SubCSR: the rows are the snapshot)."""
        if full:
            self.snap, self.label = self.label, np.zeros_like(self.label)
        else:
            self.label[:] = False

    def run_pieces(self, csr, rows, sub_off, pieces, weighted, full, asynchronous) -> None:
        for piece in pieces:
            self.process(csr, rows, sub_off, piece, weighted, full, asynchronous)

    def process(self, csr, rows, sub_offsets, piece, weighted, full, asynchronous) -> None:
        t0 = time.perf_counter()
        local, targets, weights, head, tail = piece_arrays(csr, rows, sub_offsets, piece, weighted)
        vs = rows[piece.r0:piece.r1] if rows is not None else np.arange(piece.r0, piece.r1)
        self.metrics.gather_s += time.perf_counter() - t0
        self.metrics.bytes_to_device += int(targets.nbytes + (weights.nbytes if weighted else 0)
                                            + local.nbytes + (0 if rows is None else vs.nbytes))
        t0 = time.perf_counter()
        sel = self.snap[vs] if full else np.ones(len(vs), dtype=bool)
        self._relax(vs, local, targets, weights, sel)
        if asynchronous:
            contained = np.ones(len(vs), dtype=bool)
            contained[0] &= not head
            contained[-1] &= not tail
            for _ in range(MAX_INNER):
                sel = self.label[vs] & contained
                if not sel.any():
                    break
                self.label[vs[sel]] = False
                self._relax(vs, local, targets, weights, sel)
                self.metrics.inner_iterations += 1
        self.metrics.kernel_s += time.perf_counter() - t0

    def _relax(self, vs, local, targets, weights, sel) -> None:
        counts = np.diff(local)[sel]
        total = int(counts.sum())
        if total == 0:
            return
        starts = local[:-1][sel]
        pos = np.arange(total, dtype=np.int64) + np.repeat(starts - (np.cumsum(counts) - counts),
                                                           counts)
        dst = targets[pos]
        cand = np.repeat(self.value[vs[sel]], counts)
        if self.algorithm == "bfs":
            cand += 1.0
        elif self.algorithm == "sssp":
            cand += weights[pos] if weights is not None else 1.0
        better = cand < self.value[dst]
        dst, cand = dst[better], cand[better]
        if dst.size:
            np.minimum.at(self.value, dst, cand)
            self.label[dst] = True

    def result(self) -> np.ndarray:
        return self.value


def subway(graph: Graph, config: OperatorConfig, algorithm: str, source: int | None, *,
           backend_factory, threshold: float = DEFAULT_THRESHOLD, asynchronous: bool = False,
           first_full: bool = True, max_iterations: int | None = None
           ) -> tuple[np.ndarray, StreamMetrics]:
    """Run one traversal by subgraph streaming; returns (value per vertex, metrics).

    The value is a :class:`Reached` (columns of the reached vertices) where the backend builds
    them itself (the GPU, for BFS and SSSP).

    ``first_full``: in the asynchronous mode, stream the whole graph in the first outer
    iteration (Subway-async's rule, to maximise propagation inside each loaded partition).
    """
    if algorithm not in ALGORITHMS:
        raise InvalidArgument(f"subway streaming has no {algorithm!r}; it runs {ALGORITHMS}")
    weighted = algorithm == "sssp" and graph.weighted
    csr = traversal_csr(graph, algorithm, weighted)
    n, m = graph.num_vertices, csr.num_edges
    if weighted and m and not min_weight(graph, csr.weights) >= 0:
        raise negative_weights(graph, "sssp")
    budget_bytes = int(config.budget_bytes)
    check_budget(algorithm, n, config)
    metrics = StreamMetrics("subway", "", budget_bytes)
    backend = backend_factory(algorithm, n, source, metrics)
    metrics.device = backend.name
    edge_bytes = 4 + (8 if weighted else 0)
    # A backend that builds the SubCSR itself (the GPU's gather="device": Subway's steps 1-5 on
    # the device, with the CSR offsets resident) reports only the active counts to the host.
    on_device = getattr(backend, "device_subcsr", False)
    if on_device:
        backend.bind(graph, csr, weighted)
    capacity = backend.piece_capacity(config.free_bytes(), edge_bytes)
    degree = None if on_device else csr.degrees()
    first = True
    while max_iterations is None or metrics.outer_iterations < max_iterations:
        checkpoint()
        if on_device:
            n_active, n_rows, active_edges = backend.count_active()
        else:
            ids = backend.active_ids()
            n_active, active_edges = int(ids.size), int(degree[ids].sum()) if ids.size else 0
        if n_active == 0:
            break
        full = (asynchronous and first_full and first) or active_edges > threshold * m
        first = False
        before = metrics.bytes_to_device
        if on_device and not full:
            n_pieces = backend.run_subcsr(n_rows, active_edges, capacity, edge_bytes, weighted,
                                          asynchronous)
        else:
            backend.begin_iteration(full)
            if full:
                # the device backend keeps the CSR offsets resident: a partition moves edges only
                rows, sub_off, row_bytes = None, csr.offsets, 0 if on_device else 8
            else:
                rows = ids
                sub_off = np.zeros(ids.size + 1, dtype=np.int64)
                np.cumsum(degree[ids], out=sub_off[1:])
                row_bytes = 12
            pieces = plan_pieces(sub_off, row_bytes, edge_bytes, capacity)
            backend.run_pieces(csr, rows, sub_off, pieces, weighted, full, asynchronous)
            n_pieces = len(pieces)
        metrics.partitions += n_pieces
        metrics.iteration(active_vertices=n_active, active_edges=active_edges,
                          mode="partitions" if full else "subcsr", pieces=n_pieces,
                          nbytes=metrics.bytes_to_device - before)
    metrics.extra.update({"threshold": threshold, "asynchronous": asynchronous,
                          "first_full": first_full,
                          "piece_capacity_bytes": int(capacity), "graph_edge_bytes":
                          int(m * edge_bytes + 8 * (n + 1))})
    return backend.result(), metrics


@dataclass(frozen=True)
class Reached:
    """The result columns built by the backend (the GPU's, on the device, as the resident
    operator does): reached vertices in id order and their values (int64 depths for BFS)."""

    vertex: np.ndarray
    value: np.ndarray


def run_subway(graph: Graph, config: OperatorConfig, algorithm: str, source: int | None,
               **options) -> AlgorithmOutput:
    """:func:`subway` on the device ``config`` names; the result as the resident operator's
    columns (``options``: :func:`subway`'s keywords)."""
    t0 = time.perf_counter()
    if config.device == "gpu":
        from .subway_gpu import GPUBackend as factory
    else:
        factory = CPUBackend
    value, metrics = subway(graph, config, algorithm, source, backend_factory=factory,
                            **options)
    return _output(algorithm, graph, value, metrics, time.perf_counter() - t0)


def _output(algorithm: str, graph: Graph, value, metrics: StreamMetrics,
            wall: float) -> AlgorithmOutput:
    m = metrics.as_dict(wall)
    if isinstance(value, Reached):
        m["reached"] = int(value.vertex.size)
        name = "depth" if algorithm == "bfs" else "distance"
        return AlgorithmOutput({"vertex": value.vertex, name: value.value}, m)
    if algorithm == "wcc":
        return AlgorithmOutput({"vertex": np.arange(graph.num_vertices, dtype=np.int64),
                                "component": value.astype(np.int64)}, m)
    reached = np.flatnonzero(np.isfinite(value))
    if algorithm == "bfs":
        m["reached"] = int(reached.size)
        return AlgorithmOutput({"vertex": reached, "depth": value[reached].astype(np.int64)}, m)
    m["reached"] = int(reached.size)
    return AlgorithmOutput({"vertex": reached, "distance": value[reached]}, m)
