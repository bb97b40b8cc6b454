"""Vertex-range segments with balanced edge counts, and each rank's rows of them.

The unit of work of the partitioned operators: ``P`` contiguous vertex ranges whose edge counts
(of the stored forms an operator reads: out-rows, in-rows) differ as little as the degrees
allow, cut from the CSR offsets alone. Rank ``r`` owns segment ``r``: it keeps the out-rows of
its sources and the in-rows of its destinations (offsets rebased to 0, neighbour ids global),
read block-wise through the buffer manager for a stored graph, so a cluster rank reads only
its own segment of its copy of the database.

Bounds are multiples of :data:`ALIGN` vertices (a bitmap byte each), so that each rank's slice
of a vertex bitmap is whole bytes. Segments and parts are held by the residency owner under the
graph version's key, per device (``"cpu"`` for host rows, ``"gpu:<id>"`` for device copies),
so a second query on the same graph and placement reads nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .comm.base import array_module
from .graph import Graph, StoredGraph

__all__ = ["ALIGN", "Part", "Rows", "Segments", "balanced_bounds", "load_part", "segments"]

#: Segment bounds are multiples of this many vertices.
ALIGN = 8


@dataclass(frozen=True)
class Segments:
    """``bounds[r]..bounds[r+1]-1`` is rank r's vertex range; ``edges[r]`` its edge count."""

    bounds: np.ndarray  # int64, P + 1
    edges: np.ndarray  # int64, P

    @property
    def parts(self) -> int:
        return len(self.bounds) - 1

    def range(self, rank: int) -> tuple[int, int]:
        return int(self.bounds[rank]), int(self.bounds[rank + 1])

    def sizes(self) -> np.ndarray:
        return np.diff(self.bounds)

    def imbalance(self) -> float:
        """Largest segment's edges over the mean (1.0 when there are no edges)."""
        mean = self.edges.mean() if self.edges.size else 0.0
        return float(self.edges.max() / mean) if mean > 0 else 1.0

    def owner(self, vertices, xp=None):
        """The rank owning each vertex id (an array of the vertices' array module)."""
        xp = xp or array_module(vertices)
        return xp.searchsorted(xp.asarray(self.bounds[1:-1]), vertices, side="right")

    @property
    def nbytes(self) -> int:
        return int(self.bounds.nbytes + self.edges.nbytes)


def balanced_bounds(prefix: np.ndarray, parts: int, align: int = ALIGN) -> np.ndarray:
    """Cut ``n`` vertices into ``parts`` ranges of about equal weight, where ``prefix[v]`` is the
    total weight of vertices ``0..v-1`` (length n + 1, non-decreasing). Each inner cut is the
    aligned vertex whose prefix is nearest to ``k * total / parts``; ranges may be empty."""
    n = len(prefix) - 1
    total = float(prefix[-1])
    bounds = np.zeros(parts + 1, dtype=np.int64)
    bounds[-1] = n
    for k in range(1, parts):
        target = total * k / parts
        c = int(np.searchsorted(prefix, target, side="left"))
        down = min(c - c % align, n)
        up = min(down + align, n)
        best = min((down, up), key=lambda b: (abs(float(prefix[b]) - target), b))
        bounds[k] = min(max(best, bounds[k - 1]), n)
    return bounds


def _offsets(graph: Graph, direction: str) -> np.ndarray:
    """The offsets alone (the targets are not read)."""
    return graph.array(f"{graph.stored_direction(direction)}_offsets")


def _directions(graph: Graph, forms: tuple[str, ...]) -> tuple[str, ...]:
    """The distinct stored directions ``forms`` reads (an undirected graph's in = out)."""
    seen: list[str] = []
    for d in ("out", "in"):
        if d in forms:
            d = graph.stored_direction(d)
            if d not in seen:
                seen.append(d)
    return tuple(seen) or ("out",)


def segments(graph: Graph, parts: int, forms: tuple[str, ...] = ("out",)) -> Segments:
    """The ``parts`` segments of ``graph`` balanced by the edges of ``forms`` (held per graph
    version by the residency owner)."""
    directions = _directions(graph, forms)

    def build() -> Segments:
        prefix = np.zeros(graph.num_vertices + 1, dtype=np.int64)
        for d in directions:
            prefix += _offsets(graph, d)
        bounds = balanced_bounds(prefix, parts)
        return Segments(bounds, np.diff(prefix[bounds]))

    return graph.derived(f"segments:{parts}:{','.join(directions)}", build)


@dataclass
class Rows:
    """Some CSR rows: ``targets[offsets[i]:offsets[i+1]]`` are row i's neighbours (global ids),
    with weights aligned when asked for; numpy or CuPy arrays."""

    offsets: Any  # int64, rows + 1, from 0
    targets: Any
    weights: Any | None = None

    @property
    def num_rows(self) -> int:
        return int(self.offsets.shape[0]) - 1

    @property
    def num_edges(self) -> int:
        return int(self.targets.shape[0])

    def degrees(self):
        return self.offsets[1:] - self.offsets[:-1]

    def to(self, xp) -> "Rows":
        return Rows(xp.asarray(self.offsets), xp.asarray(self.targets),
                    None if self.weights is None else xp.asarray(self.weights))

    @property
    def nbytes(self) -> int:
        return int(self.offsets.nbytes + self.targets.nbytes
                   + (0 if self.weights is None else self.weights.nbytes))


@dataclass
class Part:
    """Rank ``rank``'s segment ``lo..hi-1``: its out-rows and in-rows (those the operator
    reads; None otherwise) and the out-degree of each of its vertices."""

    rank: int
    lo: int
    hi: int
    out: Rows | None
    inn: Rows | None
    out_degree: Any  # int64 per owned vertex

    @property
    def size(self) -> int:
        return self.hi - self.lo

    @property
    def num_edges(self) -> int:
        return sum(r.num_edges for r in (self.out, self.inn) if r is not None)

    def to(self, xp) -> "Part":
        return Part(self.rank, self.lo, self.hi,
                    None if self.out is None else self.out.to(xp),
                    None if self.inn is None else self.inn.to(xp), xp.asarray(self.out_degree))

    @property
    def nbytes(self) -> int:
        return int(sum(r.nbytes for r in (self.out, self.inn) if r is not None)
                   + self.out_degree.nbytes)


def read_rows(graph: Graph, lo: int, hi: int, direction: str, weights: bool) -> Rows:
    """Rows ``lo..hi-1`` of the out- or in-CSR: block-wise through the buffer manager for a
    stored graph (only those blocks are read), a slice of the loaded arrays otherwise."""
    direction = graph.stored_direction(direction)
    loaded = graph.residency.peek(graph.key, "cpu", f"array:{direction}_targets") is not None
    if isinstance(graph, StoredGraph) and not loaded:
        csr = graph.edge_range(lo, hi, direction, weights=weights)
        return Rows(np.asarray(csr.offsets, dtype=np.int64), csr.targets, csr.weights)
    csr = graph.csr(direction, weights=weights)
    e0, e1 = int(csr.offsets[lo]), int(csr.offsets[hi])
    return Rows(np.asarray(csr.offsets[lo:hi + 1], dtype=np.int64) - e0, csr.targets[e0:e1],
                None if csr.weights is None else csr.weights[e0:e1])


def _out_degree(graph: Graph, lo: int, hi: int) -> np.ndarray:
    if isinstance(graph, StoredGraph) and graph.residency.peek(graph.key, "cpu",
                                                               "array:out_offsets") is None:
        offsets = graph.buffers.read_range(graph.graph_id, "out_offsets", lo, hi + 1)
    else:
        offsets = _offsets(graph, "out")[lo:hi + 1]
    return np.diff(np.asarray(offsets, dtype=np.int64))


def load_part(graph: Graph, segs: Segments, rank: int, forms: tuple[str, ...],
              device: str = "cpu", xp=None, slot: str = "") -> Part:
    """Rank ``rank``'s part of ``segs`` with the rows ``forms`` reads (``weights``: the out-rows'
    weights), held by the residency owner on ``device``; a device copy (``xp`` = cupy) is made
    from the host part. ``slot`` tells apart copies of one rank on one device (simulated ranks
    share a device)."""
    name = f"part:{segs.parts}:{rank}:{','.join(sorted(forms))}"
    weighted = "weights" in forms and graph.weighted

    def build_host() -> Part:
        lo, hi = segs.range(rank)
        out = inn = None
        if "out" in forms or (not graph.directed and "in" in forms):
            out = read_rows(graph, lo, hi, "out", weighted)
        if "in" in forms and graph.directed:
            inn = read_rows(graph, lo, hi, "in", False)
        elif "in" in forms:
            inn = out  # an undirected graph's in-rows are its out-rows
        return Part(rank, lo, hi, out, inn, _out_degree(graph, lo, hi))

    host = graph.derived(name, build_host)
    if xp is None or xp is np:
        return host
    return graph.derived(f"{name}{slot}", lambda: host.to(xp), device=device)
