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

from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np
import pyarrow as pa

from graphdb.storage.lazy import pc

from .arrays import to_arrow
from .cycles import edges_between, intersect
from .device import format_bytes
from .errors import DeviceOutOfMemory
from .graph import CSR, Graph
from .operators.frontier import expand_frontier
from .path_search import search
from .paths import ragged_take, segment_owners
from .pattern_count import countable_by_vertex, walks_by_vertex
from .plan import PatternMatch

__all__ = ["DENSE_FRONTIER_BUDGET", "PATH_COLUMNS", "HopMasks", "InIndex", "PathValue",
           "PatternArrays", "count_matches", "device_arrays", "edge_columns", "frontier_kind",
           "host_arrays", "in_index", "in_index_on", "match_pattern", "path_column"]


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
    #: ``derived(name, build)``: ``build()`` once per graph version (and device), held by the
    #: residency owner (None: built every time)
    derived: Callable[[str, Callable[[], Any]], Any] | None = None


def host_arrays(graph: Graph, inverse: Callable[[], InIndex]) -> PatternArrays:
    return PatternArrays(np, graph.num_vertices, graph.directed, graph.out_csr, inverse,
                         graph.derived)


def device_arrays(graph: Graph) -> PatternArrays:
    """The graph's out-CSR on the current device and its in-edge index built there, both held
    by the residency owner."""
    from .gpu import runtime as rt

    cp = rt.cp()
    out = rt.device_csr(graph, "out")
    device = rt.device_name()
    return PatternArrays(cp, graph.num_vertices, graph.directed, out,
                         lambda: in_index_on(graph, cp),
                         lambda name, build: graph.derived(name, build, device=device))


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

    def __init__(self, graph: PatternArrays, direction: str, budget: int | None = None,
                 masks: "HopMasks | None" = None):
        self.graph, self.inverse, self.budget = graph, graph.inverse, budget
        self.xp = graph.xp
        # An undirected graph stores each edge both ways: every direction is the out-CSR.
        self.direction = "out" if not graph.directed else direction
        self.masks = masks if masks is not None and masks.any() else None
        self._kept = None  # the out-CSR of the edges the edge mask keeps, built when worth it

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
        kept = self._masked_out(frontier)
        if kept is not None:  # the edge mask applied once to the CSR, not to every gather
            rows, slots = _gather(xp, kept.offsets, frontier)
            parts.append((rows, kept.targets[slots].astype(np.int64), kept.kept[slots]))
        elif self.direction in ("out", "both"):
            csr = self.graph.out
            rows, slots = _gather(xp, csr.offsets, frontier)
            parts.append((rows, csr.targets[slots].astype(np.int64), slots))
        if self.direction in ("in", "both"):
            inv = self.inverse()
            rows, slots = _gather(xp, inv.offsets, frontier)
            sources = inv.sources[slots].astype(np.int64)
            positions = inv.positions[slots].astype(np.int64)
            if self.direction == "both":  # a self-loop is one edge: the out part has it
                other = sources != frontier[rows]
                rows, sources, positions = rows[other], sources[other], positions[other]
            parts.append((rows, sources, positions))
        rows = xp.concatenate([p[0] for p in parts])
        metrics["edges_scanned"] = metrics.get("edges_scanned", 0) + int(rows.size)
        nbrs = xp.concatenate([p[1] for p in parts])
        positions = xp.concatenate([p[2] for p in parts])
        if self.masks is not None:
            keep = self.masks.keep(xp, frontier[rows], nbrs, positions,
                                   edges=kept is None)
            rows, nbrs, positions = rows[keep], nbrs[keep], positions[keep]
        return rows, nbrs, positions

    def _masked_out(self, frontier):
        """For an edge mask on the out-CSR (a label, ``-[e WHERE ...]->``) and a frontier that
        gathers more than a quarter of the edges: the out-CSR compacted to the edges kept
        (the same rows in the same order as masking every gather). Built once per hop, or,
        for a mask with an ``edges_key``, once per graph version and key: rebuilding it took
        6 of a 26 ms shortest path over a property graph's knows edges."""
        if self._kept is None:
            masks, out = self.masks, self.graph.out
            if masks is None or masks.edges is None or self.direction != "out" or \
                    4 * self.gathered(frontier) < int(out.targets.size):
                return None
            from .subgraph import compact

            def build():
                return compact(self.xp, out.offsets, out.targets, keep_edge=masks.edges)

            derived = self.graph.derived
            self._kept = build() if masks.edges_key is None or derived is None else derived(
                f"pattern:kept:{masks.edges_key}", build)
        return self._kept

    def neighbours(self, frontier: np.ndarray, metrics: dict) -> np.ndarray:
        """Only the neighbours (with repeats) of ``frontier``, for the dense path (host)."""
        if self.masks is not None or self.direction == "both":  # (both: self-loops once)
            return self(frontier, metrics)[1]
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


_FLIP = {"out": "in", "in": "out", "both": "both"}


class _Counting:
    """An expander as a path search calls it: ``(vertices) -> (index, neighbour, position)``,
    its gathers counted in ``metrics`` and held to the budget; ``gathered`` says what a step
    would gather before it does."""

    def __init__(self, expander: "_Expander", metrics: dict, bytes_per_edge: int):
        self.expander, self.metrics, self.bytes_per_edge = expander, metrics, bytes_per_edge

    def __call__(self, vertices):
        return self.expander(vertices, self.metrics, self.bytes_per_edge)

    def gathered(self, vertices) -> int:
        return self.expander.gathered(vertices)


@dataclass
class HopMasks:
    """Which steps a hop may take (a quantified hop's conditions, a subgraph's labels): the
    stored edges it may use (bool per out-CSR position), the vertices a step may leave and
    the vertices it may reach (bool per vertex); None allows all. Numpy or CuPy."""

    edges: Any = None
    sources: Any = None
    targets: Any = None
    #: the vertices the hop may end at (checked after it, not on every step)
    ends: Any = None
    #: what names ``edges`` for the graph's version (the mask's query over the graph's own
    #: tables), so what is derived from it may be kept; None: nothing is kept
    edges_key: Any = None

    def any(self) -> bool:
        return any(m is not None for m in (self.edges, self.sources, self.targets))

    def reversed(self) -> "HopMasks":
        """The same steps taken backwards (from the vertex a step reaches to the one it
        leaves): the sources' and the targets' masks change places; no ends."""
        return HopMasks(self.edges, self.targets, self.sources, None, self.edges_key)

    def keep(self, xp, frm, to, positions, edges: bool = True):
        """Which of the steps ``frm -> to`` over stored edges ``positions`` the masks allow
        (``edges`` False: the edge mask was applied already)."""
        keep = xp.ones(to.size, dtype=bool)
        if self.edges is not None and edges:
            keep &= self.edges[positions]
        if self.sources is not None:
            keep &= self.sources[frm]
        if self.targets is not None:
            keep &= self.targets[to]
        return keep


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


@dataclass
class PathValue:
    """Each binding's path, on the host: its first vertex, and (``length`` steps per row,
    flat in row order) the vertex each step reaches and the stored edge it takes."""

    first: np.ndarray
    length: np.ndarray
    vertices: np.ndarray
    edges: np.ndarray


def match_pattern(node: PatternMatch, graph: PatternArrays, start: np.ndarray, metrics: dict,
                  check: Callable[[], None], budget: int | None = None,
                  masks: dict[int, HopMasks] | None = None, limit: int = 10_000_000
                  ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], PathValue | None]:
    """The bindings of ``node``'s pattern from the internal vertex ids ``start``, computed with
    the graph's array module (a GPU's bindings are copied to the host once, at the end).

    ``masks`` are the steps each hop (by index) may take; ``limit`` bounds the rows a
    quantified hop makes (one per path, :mod:`.paths`). Returns (vertex variable -> internal
    ids, edge variable -> out-CSR positions, the path of each row when the pattern names one),
    row-aligned, numpy.
    """
    xp = graph.xp
    vertices = {node.start: xp.asarray(start, dtype=np.int64)}
    edges: dict[str, Any] = {}
    segments: list[tuple] = []  # per hop: (length per row, step vertices, step edges), ragged
    want = node.path is not None
    n = max(graph.num_vertices, 1)
    current = node.start
    pending = None  # the edges of a cycle's last hop, when the hop before it found them
    for i, hop in enumerate(node.hops):
        check()
        expand = _Expander(graph, hop.direction, budget, (masks or {}).get(i))
        # Each result row keeps every bound column (8 bytes each), the new one, and the
        # gather's row index and edge slot.
        row_bytes = 8 * (len(vertices) + len(edges) + 4)
        single = (hop.low, hop.high) == (1, 1)
        segment = None
        closes = _closes(node, i + 1, vertices)
        if pending is not None:  # a cycle's last hop, found with the hop before it
            idx, nbrs, positions = xp.arange(pending.size), vertices[hop.target], pending
            pending = None
            segment = (xp.ones(idx.size, dtype=np.int64), nbrs, positions)
        elif single and node.mode == "walk" and closes:
            # this hop and the next, back to a bound vertex: neighbour lists intersected
            later = node.hops[i + 1]
            second = _Expander(graph, later.direction, budget, (masks or {}).get(i + 1))
            later_masks = (masks or {}).get(i + 1)
            second_back = _Expander(graph, _FLIP[later.direction], budget,
                                    None if later_masks is None else later_masks.reversed())
            idx, nbrs, positions, pending = intersect(expand, second, second_back,
                                                      vertices[current],
                                                      vertices[later.target], metrics)
            metrics["iterations"] = metrics.get("iterations", 0) + 1
            segment = (xp.ones(idx.size, dtype=np.int64), nbrs, positions)
        elif single and node.mode == "walk" and hop.target in vertices:
            # back to a bound vertex: the edges between the two looked up, not gathered
            idx, positions = edges_between(expand, vertices[current], vertices[hop.target],
                                           metrics)
            nbrs = vertices[hop.target][idx]
            segment = (xp.ones(idx.size, dtype=np.int64), nbrs, positions)
        elif single and node.mode == "walk":
            idx, nbrs, positions = expand(vertices[current], metrics, row_bytes + 16)
            metrics["iterations"] = metrics.get("iterations", 0) + 1
            segment = (xp.ones(idx.size, dtype=np.int64), nbrs, positions.astype(np.int64))
        elif node.mode == "any" and node.k == 1 and not want:
            idx, nbrs = _reach(expand, vertices[current], hop.low, hop.high, n, metrics, check,
                               row_bytes)
            positions = None
            if single:  # one edge per (row, neighbour): its position, for its properties
                idx, nbrs, positions = _one_edge_each(expand, vertices[current], idx, nbrs,
                                                      metrics, n)
        else:
            hop_masks = (masks or {}).get(i)
            back = _Expander(graph, _FLIP[hop.direction], budget,
                             None if hop_masks is None else hop_masks.reversed())
            found = search(
                _Counting(expand, metrics, row_bytes + 16),
                _Counting(back, metrics, row_bytes + 16), vertices[current], hop.low, hop.high,
                n, xp, mode=node.mode, k=node.k,
                ends=None if hop_masks is None else hop_masks.ends,
                want_walks=want or single, limit=limit, check=check,
                memory=lambda nbytes, what: check_budget(budget, nbytes, what))
            idx, nbrs = found.row, found.end
            positions = found.edges if single else None
            if want:
                segment = (found.length, found.vertices, found.edges)
            metrics["paths"] = metrics.get("paths", 0) + int(idx.size)
        vertices = {k: v[idx] for k, v in vertices.items()}
        edges = {k: v[idx] for k, v in edges.items()}
        if want:
            segments = [_take_segment(xp, seg, idx) for seg in segments]
            segments.append(segment if segment is not None else
                            (xp.ones(idx.size, dtype=np.int64), nbrs, positions))
        ends = (masks or {}).get(i)
        if ends is not None and ends.ends is not None:  # the target's labels
            keep = ends.ends[nbrs]
            idx, nbrs = idx[keep], nbrs[keep]
            positions = None if positions is None else positions[keep]
            pending = None if pending is None else pending[keep]
            vertices = {k: v[keep] for k, v in vertices.items()}
            edges = {k: v[keep] for k, v in edges.items()}
            if want:
                segments = [_take_segment(xp, seg, xp.flatnonzero(keep)) for seg in segments]
        if hop.target in vertices:  # the pattern returns to a bound variable: a cycle
            keep = vertices[hop.target] == nbrs
            vertices = {k: v[keep] for k, v in vertices.items()}
            edges = {k: v[keep] for k, v in edges.items()}
            positions = None if positions is None else positions[keep]
            pending = None if pending is None else pending[keep]
            if want:
                segments = [_take_segment(xp, seg, xp.flatnonzero(keep)) for seg in segments]
        else:
            vertices[hop.target] = nbrs
        if hop.edge is not None and positions is not None:
            edges[hop.edge] = positions
        current = hop.target
    metrics["matches"] = int(next(iter(vertices.values())).size)
    path = _path_value(xp, vertices[node.start], segments, node.reversed) if want else None
    if xp is not np:
        vertices = {k: xp.asnumpy(v) for k, v in vertices.items()}
        edges = {k: xp.asnumpy(v) for k, v in edges.items()}
    return vertices, edges, path


def count_matches(node: PatternMatch, graph: PatternArrays, start, metrics: dict,
                  check: Callable[[], None], budget: int | None = None,
                  masks: dict[int, HopMasks] | None = None, limit: int = 10_000_000) -> int:
    """The number of ``node``'s rows from the internal vertex ids ``start``, without building
    them (:mod:`.pattern_count`): walks counted per vertex where the rows are walks that never
    return to a bound vertex, else the bindings counted (no walk built, no row limit)."""
    xp = graph.xp
    masks = masks or {}
    if not countable_by_vertex(node):
        plain = replace(node, path=None)  # the number of rows does not need the paths
        bound, _, _ = match_pattern(plain, graph, start, metrics, check, budget, masks,
                                    limit=2**62)
        return int(next(iter(bound.values())).size)
    hops = []
    for i, hop in enumerate(node.hops):
        expand = _Expander(graph, hop.direction, budget, masks.get(i))
        ends = masks[i].ends if i in masks else None
        hops.append((_Counting(expand, metrics, 24), hop.low, hop.high, ends))
    count = walks_by_vertex(xp, max(graph.num_vertices, 1), start, hops, check)
    metrics["matches"] = count
    return count


def _closes(node: PatternMatch, at: int, bound: dict) -> bool:
    """Whether hop ``at`` is one edge, after one edge, from a new vertex back to one bound
    before it (then the two hops are one intersection: :mod:`.cycles`)."""
    if node.mode != "walk" or at >= len(node.hops) or at < 1:
        return False
    hop, before = node.hops[at], node.hops[at - 1]
    return (hop.low, hop.high) == (1, 1) and (before.low, before.high) == (1, 1) and \
        hop.target in bound and before.target not in bound


def _one_edge_each(expand: _Expander, frontier, idx, nbrs, metrics: dict, n: int):
    """For (row, neighbour) pairs one edge apart, the pairs with the position of one edge
    between them (the first stored)."""
    xp = expand.xp
    rows, targets, positions = expand(frontier, metrics)
    keys = rows * n + targets
    order = xp.lexsort(xp.stack([positions, keys]))
    keys, positions = keys[order], positions[order]
    first = xp.concatenate([xp.ones(min(keys.size, 1), dtype=bool), keys[1:] != keys[:-1]])
    keys, positions = keys[first], positions[first]
    return keys // n, keys % n, positions


def _take_segment(xp, segment: tuple, idx) -> tuple:
    lengths, flat_vertices, flat_edges = segment
    taken, (v, e) = ragged_take(xp, lengths, [flat_vertices, flat_edges], idx)
    return taken, v, e


def _path_value(xp, first, segments: list[tuple], backwards: bool) -> PathValue:
    """The rows' paths from their hops' segments, joined in hop order (and turned around for
    a pattern matched from its last vertex), on the host."""
    host = (lambda a: a) if xp is np else xp.asnumpy
    first = host(first)
    rows = first.size
    lengths = [host(seg[0]) for seg in segments]
    total = np.zeros(rows, dtype=np.int64)
    for lengths_h in lengths:
        total += lengths_h
    offsets = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(total, out=offsets[1:])
    vertices = np.empty(int(offsets[-1]), dtype=np.int64)
    edges = np.empty(int(offsets[-1]), dtype=np.int64)
    before = np.zeros(rows, dtype=np.int64)
    for lengths_h, seg in zip(lengths, segments):
        count = int(lengths_h.sum())
        owner = segment_owners(np, lengths_h, count)
        starts = np.zeros(rows + 1, dtype=np.int64)
        np.cumsum(lengths_h, out=starts[1:])
        slot = offsets[owner] + before[owner] + (np.arange(count) - starts[owner])
        vertices[slot] = host(seg[1])
        edges[slot] = host(seg[2])
        before += lengths_h
    if backwards and vertices.size:  # matched from the pattern's last vertex: as written
        owner = segment_owners(np, total, int(offsets[-1]))
        within = np.arange(offsets[-1]) - offsets[owner]
        at = offsets[owner] + total[owner] - 2 - within  # the vertex a reversed step reaches
        new_vertices = np.where(at >= offsets[owner], vertices[np.maximum(at, 0)], first[owner])
        new_edges = edges[offsets[owner] + total[owner] - 1 - within]
        first = np.where(total > 0, vertices[np.maximum(offsets[1:] - 1, 0)], first)
        vertices, edges = new_vertices, new_edges
    return PathValue(first, total, vertices, edges)


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
        elif prop == "__position":  # the edge's stored position (element_id)
            out[prop] = to_arrow(np.asarray(positions, dtype=np.int64), pa.int64())
        else:
            out[prop] = properties().column(prop).take(to_arrow(positions, pa.int64()))
    return out



#: The columns of a path variable ``p`` (``vertices(p)`` and so on in COLUMNS).
PATH_COLUMNS = ("vertices", "edges", "length", "cost", "elements")


def path_column(graph: Graph, path: PathValue, what: str, ids, weight: str | None,
                edge_properties: Callable[[], pa.Table | None] | None = None,
                vertex_rows: Callable[[pa.Array], np.ndarray | None] | None = None
                ) -> pa.Array:
    """Column ``what`` (:data:`PATH_COLUMNS`) of the rows' paths: the list of its vertices (the
    user's ids, first to last), the list of its edges (``{src, dst}`` as ``g.edges`` lists
    them), its number of edges, the sum of the weight column's values along it (hops on an
    unweighted graph), or its elements (``element_id(p)``: vertex, edge, vertex, ... as
    integers: a vertex's row in its stored table (``vertex_rows``), else its key; an edge's row
    in its table, else its stored position)."""
    rows = path.first.size
    offsets = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(path.length, out=offsets[1:])
    if what == "length":
        return to_arrow(path.length.astype(np.int64), pa.int64())
    if what == "cost":
        if weight is None:
            return to_arrow(path.length.astype(np.float64), pa.float64())
        owner = np.repeat(np.arange(rows), path.length)
        values = graph.weights("out")[path.edges]
        return to_arrow(np.bincount(owner, weights=values, minlength=rows), pa.float64())
    if what == "elements":
        return _elements(path, ids, edge_properties() if edge_properties else None,
                         vertex_rows)
    if what == "vertices":
        full = np.zeros(rows + 1, dtype=np.int64)
        np.cumsum(path.length + 1, out=full[1:])
        flat = np.empty(int(full[-1]), dtype=np.int64)
        flat[full[:-1]] = path.first
        steps = np.ones(flat.size, dtype=bool)
        steps[full[:-1]] = False
        flat[steps] = path.vertices
        return _lists(full, ids.user(flat))
    csr = graph.out_csr
    src = np.searchsorted(csr.offsets, path.edges, side="right") - 1
    dst = csr.targets[path.edges].astype(np.int64)
    if not graph.directed:
        src, dst = np.minimum(src, dst), np.maximum(src, dst)
    pairs = pa.StructArray.from_arrays([ids.user(src), ids.user(dst)], names=["src", "dst"])
    return _lists(offsets, pairs)


def _elements(path: PathValue, ids, properties: pa.Table | None,
              vertex_rows: Callable[[pa.Array], np.ndarray | None] | None) -> pa.Array:
    """``element_id(p)``: each path's vertices and edges interleaved, as integers."""
    rows = path.first.size
    full = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(2 * path.length + 1, out=full[1:])
    vertex_at = np.ones(int(full[-1]), dtype=bool)
    step = np.arange(full[-1]) - np.repeat(full[:-1], 2 * path.length + 1)
    vertex_at[step % 2 == 1] = False
    vertices = np.empty(int(vertex_at.sum()), dtype=np.int64)
    starts = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(path.length + 1, out=starts[1:])
    firsts = np.zeros(vertices.size, dtype=bool)
    firsts[starts[:-1]] = True
    vertices[firsts] = path.first
    vertices[~firsts] = path.vertices
    keys = ids.user(vertices)
    rows_of = vertex_rows(keys) if vertex_rows is not None else None
    if rows_of is not None:
        keys = pa.array(rows_of, pa.int64())
    elif pa.types.is_string(keys.type) or pa.types.is_large_string(keys.type):
        keys = pc.list_element(pc.split_pattern(keys, ":", max_splits=1), 1)  # 'Label:key'
    try:
        keys = np.asarray(keys.cast(pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        keys = vertices  # keys that are no integers: the graph's own ids
    edges = np.asarray(path.edges, dtype=np.int64)
    if properties is not None and "__row" in properties.column_names:
        edges = np.asarray(properties.column("__row").take(to_arrow(edges, pa.int64()))
                           .to_numpy(zero_copy_only=False), dtype=np.int64)
    flat = np.empty(int(full[-1]), dtype=np.int64)
    flat[vertex_at] = keys
    flat[~vertex_at] = edges
    return _lists(full, to_arrow(flat, pa.int64()))


def _lists(offsets: np.ndarray, values: pa.Array) -> pa.Array:
    if offsets[-1] < 2**31:
        return pa.ListArray.from_arrays(to_arrow(offsets, pa.int32()), values)
    return pa.LargeListArray.from_arrays(to_arrow(offsets, pa.int64()), values)
