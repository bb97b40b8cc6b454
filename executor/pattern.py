"""Path-pattern matching by frontier expansion (the operator behind SQL/PGQ ``GRAPH_TABLE``).

A binding table holds, per match, the internal vertex id of each vertex variable and the stored
edge position (out-CSR order, the row of ``g.edges``) of each single-edge variable. A hop of one
edge gathers the neighbours of every row's current vertex from the CSR in one vectorised step
(the same gather as BFS's frontier expansion). A quantified hop ``{m,n}`` runs level-synchronous
frontiers, in one of two forms picked once the starts are known (:func:`frontier_kind`):
dense bitmaps, one traversal per distinct start vertex, or sparse sorted (row, vertex) keys for
all rows at once. Either way a frontier holds each vertex once per level, so the work is bounded
by vertices and edges, never by the number of walks. With ``m <= 1`` visited vertices are
pruned, which makes it exactly a BFS bounded at depth ``n`` per source (as khop).

Semantics of ``{m,n}``: one row per (binding, target) such that some walk of ``m..n`` edges
leads there (reachability, like Kuzu's ``*m..n`` with DISTINCT), not one row per walk.

The expansion is written for numpy and CuPy alike (:class:`PatternArrays` holds the graph's
arrays in either): on a GPU plan the CSR and the in-edge index stay on the device, every hop's
gathers, sorts and de-duplications run there, and only the bindings come back. A GPU always
takes the sparse form (its sorts are fast; a bitmap traversal per start vertex would be a host
round trip per level and source).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pyarrow as pa

from .arrays import to_arrow
from .device import format_bytes
from .errors import DeviceOutOfMemory
from .graph import CSR, Graph
from .operators.frontier import expand_frontier
from .plan import PatternMatch

__all__ = ["DENSE_FRONTIER_BUDGET", "InIndex", "PatternArrays", "device_arrays", "edge_columns",
           "frontier_kind", "host_arrays", "in_index", "in_index_on", "match_pattern"]


@dataclass(frozen=True)
class InIndex:
    """In-edges grouped by target, each carrying its out-CSR position (its ``g.edges`` row)."""

    offsets: Any
    sources: Any
    positions: Any


def in_index(graph: Graph) -> InIndex:
    """The in-edges with their stored positions, built once per graph version."""
    out = graph.out_csr
    return graph.derived("pattern:in_index", lambda: _in_index(np, out.offsets, out.targets,
                                                                 graph.num_vertices))


def _in_index(xp, offsets, targets, n: int) -> InIndex:
    positions = xp.argsort(targets, kind="stable")
    in_offsets = xp.zeros(n + 1, dtype=np.int64)
    in_offsets[1:] = xp.cumsum(xp.bincount(targets, minlength=n))
    sources = _owners(xp, offsets[1:] - offsets[:-1], int(targets.size))
    return InIndex(in_offsets, sources[positions].astype(targets.dtype), positions)


@dataclass
class PatternArrays:
    """A graph as the expansion reads it: numpy arrays on the host, CuPy ones on a device."""

    xp: Any
    num_vertices: int
    directed: bool
    out: Any  # .offsets, .targets
    inverse: Callable[[], InIndex]


def host_arrays(graph: Graph, inverse: Callable[[], InIndex]) -> PatternArrays:
    return PatternArrays(np, graph.num_vertices, graph.directed, graph.out_csr, inverse)


def device_arrays(graph: Graph) -> PatternArrays:
    """The graph's out-CSR on the current device and its in-edge index built there, both held
    by the residency owner."""
    from .gpu import runtime as rt

    cp = rt.cp()
    out = rt.device_csr(graph, "out")
    return PatternArrays(cp, graph.num_vertices, graph.directed, out,
                         lambda: in_index_on(graph, cp))


def in_index_on(graph: Graph, xp) -> InIndex:
    """:func:`in_index` in ``xp`` (numpy, or CuPy: built on the current device from the
    resident out-CSR)."""
    if xp is np:
        return in_index(graph)
    from .gpu import runtime as rt

    out = rt.device_csr(graph, "out")
    return graph.derived("pattern:in_index", lambda: _in_index(
        xp, out.offsets, out.targets, graph.num_vertices), device=rt.device_name())


#: Byte operations (bitmap clears, ORs, scans) that dense frontiers may spend on one pattern hop
#: before sorted sparse frontiers are preferred: a second or two of memory bandwidth.
DENSE_FRONTIER_BUDGET = 2e10


def frontier_kind(sources: int, num_vertices: int, levels: int) -> tuple[str, str]:
    """('dense' | 'sparse', reason) for a variable-length hop from ``sources`` start vertices.

    Dense bitmaps cost about ``sources * V * levels`` byte operations whatever the frontiers
    hold; sparse frontiers sort (source, vertex) pairs, which measured 20-60x slower per pair on
    R-MAT graphs, so they win only when V is huge next to the neighbourhoods reached.
    """
    work = float(sources) * num_vertices * max(levels, 1)
    if work <= DENSE_FRONTIER_BUDGET:
        return "dense", f"{sources} start vertices x {num_vertices} vertices x {levels} levels"
    return "sparse", (f"{sources} x {num_vertices} x {levels} bitmap operations exceed "
                      f"{DENSE_FRONTIER_BUDGET:.0e}")


def _owners(xp, counts, total: int):
    """For each of ``total`` slots, the index of the segment holding it, segments of ``counts``
    slots in order (numpy's repeat; CuPy's takes no array of counts: a search of the ends)."""
    if xp is np:
        return np.repeat(np.arange(counts.size), counts)
    return xp.searchsorted(xp.cumsum(counts), xp.arange(total, dtype=np.int64), side="right")


def _gather(xp, offsets, frontier):
    """(index into ``frontier`` of each gathered edge, edge slot) for all edges of the frontier:
    BFS's gather, also keeping which frontier row and which stored edge each result came from."""
    starts = offsets[frontier]
    counts = offsets[frontier + 1] - starts
    total = int(counts.sum())
    if total == 0:
        return xp.zeros(0, dtype=np.int64), xp.zeros(0, dtype=np.int64)
    rows = _owners(xp, counts, total)
    seg_first = xp.cumsum(counts) - counts
    slots = xp.arange(total, dtype=np.int64) - (seg_first - starts)[rows]
    return rows, slots


class _Expander:
    """One step of expansion in a direction; returns (row, neighbour, edge position)."""

    def __init__(self, graph: PatternArrays, direction: str, budget: int | None = None):
        self.graph, self.inverse, self.budget = graph, graph.inverse, budget
        self.xp = graph.xp
        # An undirected graph stores each edge both ways: every direction is the out-CSR.
        self.direction = "out" if not graph.directed else direction

    def gathered(self, frontier) -> int:
        """Edges one step from ``frontier`` gathers (known before gathering them)."""
        csr = self.graph.out
        total = int((csr.offsets[frontier + 1] - csr.offsets[frontier]).sum())
        return 2 * total if self.direction == "both" else total

    def _check_budget(self, frontier, bytes_per_edge: int = 32,
                      held: int = 0) -> None:
        """Refuse before gathering more edges than the memory budget can hold: about 32 bytes
        per gathered edge (row, target, position and the sort keys), or ``bytes_per_edge``
        when the caller keeps more per edge, plus ``held`` bytes kept from earlier steps."""
        check_budget(self.budget, held + self.gathered(frontier) * bytes_per_edge,
                     f"gather {self.gathered(frontier):,} edges")

    def __call__(self, frontier, metrics: dict, bytes_per_edge: int = 32, held: int = 0):
        self._check_budget(frontier, bytes_per_edge, held)
        xp = self.xp
        parts = []
        if self.direction in ("out", "both"):
            csr = self.graph.out
            rows, slots = _gather(xp, csr.offsets, frontier)
            parts.append((rows, csr.targets[slots].astype(np.int64), slots))
        if self.direction in ("in", "both"):
            inv = self.inverse()
            rows, slots = _gather(xp, inv.offsets, frontier)
            parts.append((rows, inv.sources[slots].astype(np.int64),
                          inv.positions[slots].astype(np.int64)))
        rows = xp.concatenate([p[0] for p in parts])
        metrics["edges_scanned"] = metrics.get("edges_scanned", 0) + int(rows.size)
        return rows, xp.concatenate([p[1] for p in parts]), xp.concatenate([p[2] for p in parts])


    def neighbours(self, frontier: np.ndarray, metrics: dict) -> np.ndarray:
        """Only the neighbours (with repeats) of ``frontier``, for the dense path (host)."""
        self._check_budget(frontier)
        parts = []
        # The very gather BFS and khop expand their frontiers with.
        if self.direction in ("out", "both"):
            parts.append(expand_frontier(self.graph.out, frontier))
        if self.direction in ("in", "both"):
            inv = self.inverse()
            parts.append(expand_frontier(CSR(inv.offsets, inv.sources), frontier))
        out = parts[0] if len(parts) == 1 else np.concatenate(parts)
        metrics["edges_scanned"] = metrics.get("edges_scanned", 0) + int(out.size)
        return out


def check_budget(budget: int | None, nbytes: int, what: str) -> None:
    """Refuse a step of pattern matching whose arrays would exceed ``budget`` (memory_limit),
    before they are allocated."""
    if budget is not None and nbytes > budget:
        raise DeviceOutOfMemory(
            f"pattern expansion would {what} (~{format_bytes(nbytes)}), over the "
            f"{format_bytes(budget)} budget; filter the start vertices (WHERE a.id = ...), "
            "narrow the quantifier, or raise SET memory_limit")


def _reach_dense(expand: _Expander, source: int, low: int, high: int, n: int, metrics: dict,
                 check: Callable[[], None]) -> np.ndarray:
    """Targets of walks of low..high edges from one source, with bitmap frontiers: no sorting,
    O(V) bits per level plus the frontier's edges (Kuzu's dense frontier, Ligra's dense mode)."""
    reached = np.zeros(n, dtype=bool)
    visited = np.zeros(n, dtype=bool)  # expanded already (pruning, valid when low <= 1)
    visited[source] = True
    if low == 0:
        reached[source] = True
    frontier = np.array([source], dtype=np.int64)
    mark = np.zeros(n, dtype=bool)
    for level in range(1, high + 1):
        check()
        if frontier.size == 0:
            break
        mark[:] = False
        mark[expand.neighbours(frontier, metrics)] = True
        if level >= low:
            reached |= mark
        if low <= 1:
            mark &= ~visited
            visited |= mark
        frontier = np.flatnonzero(mark)
        metrics["iterations"] = metrics.get("iterations", 0) + 1
        metrics["max_frontier"] = max(metrics.get("max_frontier", 0), int(frontier.size))
    return np.flatnonzero(reached)


def _reach(expand: _Expander, start, low: int, high: int, n: int, metrics: dict,
           check: Callable[[], None], row_bytes: int = 16):
    """(row, target) pairs with a walk of low..high edges from ``start[row]``, each once.

    ``row_bytes``: what the caller will keep per result row; results are counted against the
    expander's budget as they accumulate, so a pattern whose answer would not fit is refused
    before it is built."""
    xp = expand.xp
    sources, inverse = xp.unique(start, return_inverse=True)
    if xp is np:
        kind, why = frontier_kind(int(sources.size), n, high)
    else:
        kind, why = "sparse", "on the GPU: sorted keys for all rows at once"
    metrics["frontier"] = f"{kind} ({why})"
    if kind == "dense":
        # One bitmap traversal per distinct start vertex; rows sharing a start share its answer.
        counts = np.bincount(inverse, minlength=sources.size)
        parts, rows_out = [], 0
        for i, v in enumerate(sources):
            parts.append(_reach_dense(expand, int(v), low, high, n, metrics, check))
            rows_out += int(parts[-1].size) * int(counts[i])
            check_budget(expand.budget, rows_out * row_bytes + 3 * n,
                         f"bind {rows_out:,} rows or more")
        offsets = np.zeros(sources.size + 1, dtype=np.int64)
        np.cumsum([p.size for p in parts], out=offsets[1:])
        targets = np.concatenate(parts).astype(np.int64, copy=False) if parts else \
            np.zeros(0, np.int64)
        rows, slots = _gather(np, offsets, inverse.astype(np.int64))
        return rows.astype(np.int64), targets[slots]
    rows = xp.arange(start.size, dtype=np.int64)
    verts = start.astype(np.int64)
    found = [(rows, verts)] if low == 0 else []
    # Sorted keys (row * n + vertex) of visited pairs, for pruning when low <= 1. The start is
    # not seeded for low = 1: a walk that returns to it (a cycle) is a match.
    seen = xp.unique(rows * n + verts) if low == 0 else xp.zeros(0, np.int64)
    for level in range(1, high + 1):
        check()
        if rows.size == 0:
            break
        held = seen.nbytes + sum(r.nbytes + v.nbytes for r, v in found)
        idx, nbrs, _ = expand(verts, metrics, 48, held)  # + the keys, their sort, the union
        keys = xp.unique(rows[idx] * n + nbrs)
        if low <= 1:
            keys = keys[~xp.isin(keys, seen, assume_unique=True)]
            seen = xp.union1d(seen, keys)
        rows, verts = keys // n, keys % n
        metrics["iterations"] = metrics.get("iterations", 0) + 1
        metrics["max_frontier"] = max(metrics.get("max_frontier", 0), int(keys.size))
        if level >= low:
            found.append((rows, verts))
    if not found:
        return xp.zeros(0, np.int64), xp.zeros(0, np.int64)
    keys = xp.unique(xp.concatenate([r * n + v for r, v in found]))
    return keys // n, keys % n


def match_pattern(node: PatternMatch, graph: PatternArrays, start: np.ndarray, metrics: dict,
                  check: Callable[[], None], budget: int | None = None
                  ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The bindings of ``node``'s pattern from the internal vertex ids ``start``, computed with
    the graph's array module (a GPU's bindings are copied to the host once, at the end).

    Returns (vertex variable -> internal ids, edge variable -> out-CSR positions), row-aligned,
    numpy.
    """
    xp = graph.xp
    vertices = {node.start: xp.asarray(start, dtype=np.int64)}
    edges: dict[str, Any] = {}
    current = node.start
    for hop in node.hops:
        check()
        expand = _Expander(graph, hop.direction, budget)
        # Each result row keeps every bound column (8 bytes each), the new one, and the
        # gather's row index and edge slot.
        row_bytes = 8 * (len(vertices) + len(edges) + 4)
        if (hop.low, hop.high) == (1, 1):
            idx, nbrs, positions = expand(vertices[current], metrics, row_bytes + 16)
            metrics["iterations"] = metrics.get("iterations", 0) + 1
        else:
            idx, nbrs = _reach(expand, vertices[current], hop.low, hop.high,
                               max(graph.num_vertices, 1), metrics, check, row_bytes)
            positions = None
        vertices = {k: v[idx] for k, v in vertices.items()}
        edges = {k: v[idx] for k, v in edges.items()}
        if hop.target in vertices:  # the pattern returns to a bound variable: a cycle
            keep = vertices[hop.target] == nbrs
            vertices = {k: v[keep] for k, v in vertices.items()}
            edges = {k: v[keep] for k, v in edges.items()}
            positions = None if positions is None else positions[keep]
        else:
            vertices[hop.target] = nbrs
        if hop.edge is not None and positions is not None:
            edges[hop.edge] = positions
        current = hop.target
    metrics["matches"] = int(next(iter(vertices.values())).size)
    if xp is not np:
        vertices = {k: xp.asnumpy(v) for k, v in vertices.items()}
        edges = {k: xp.asnumpy(v) for k, v in edges.items()}
    return vertices, edges


def edge_columns(graph: Graph, positions: np.ndarray, props: list[str], ids: pa.Array,
                 weight: str | None, properties: Callable[[], pa.Table]) -> dict[str, pa.Array]:
    """Edge properties by stored position; src/dst and the weight (column ``weight``) straight
    from the CSR, the others from ``properties()`` (the stored property columns)."""
    out = {}
    csr = graph.out_csr
    for prop in props:
        if prop == "src":
            src = np.searchsorted(csr.offsets, positions, side="right") - 1
            out[prop] = ids.take(to_arrow(src, pa.int64()))
        elif prop == "dst":
            out[prop] = ids.take(to_arrow(csr.targets[positions].astype(np.int64)))
        elif prop == weight:
            out[prop] = to_arrow(graph.weights("out")[positions])
        else:
            out[prop] = properties().column(prop).take(to_arrow(positions, pa.int64()))
    return out

