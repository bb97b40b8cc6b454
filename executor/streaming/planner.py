"""Which operator runs a graph algorithm: resident, Subway, edge-centric or page streaming.

DESIGN.md's rule, with the streamed variants filled in. Sizes come from the catalog entry
(``num_vertices``, ``num_edges``, ``stats['csr_bytes']``, ``stats['pages']`` and
``stats['page_size']`` when the store wrote pages), the budget from :class:`Device`
(``SET memory_limit``) and, for the topology's home, the host memory budget:

1. topology + vertex state fit the device budget: ``resident``;
2. the vertex state alone does not fit: :class:`DeviceOutOfMemory` naming the sizes;
3. the topology fits host memory (where the streamed operators keep it, page-locked on a GPU):
   traversals (BFS, SSSP, WCC) stream SubCSRs (``subway``); all-active algorithms (PageRank,
   CDLP) stream edge chunks (``edge_centric``);
4. it does not: BFS and PageRank stream slotted pages from the store (``pages``); others have no
   plan that bounds host memory and fail with the sizes.

The same rule serves the CPU: its budget is host memory, and the streamed variants' working set
(vertex state plus pieces) stays inside it. The reason string names every size it compared.

Hook for the runner (see :func:`plan` and :func:`implementation_for`)::

    choice = streaming.planner.plan(algorithm, entry, device)     # -> cost.Choice
    impl = streaming.planner.implementation_for(choice, algorithm.name)
    output = impl(graph, **options) if impl else executor.algorithms.run(name, graph, options, choice.device)
"""

from __future__ import annotations

import functools
from typing import Callable

from ..device import Device, format_bytes, host_memory_bytes
from ..errors import DeviceOutOfMemory
from . import edge_centric as _edge_centric
from . import subway as _subway

__all__ = ["STATE_BYTES", "TRAVERSALS", "ALL_ACTIVE", "PAGE_STREAMED", "plan",
           "implementation_for", "topology_bytes"]

#: Bytes of vertex state per vertex of each streamed operator (what must stay in the budget);
#: the operators' own constants, so the planner and the operators cannot disagree.
STATE_BYTES = {"bfs": _subway.STATE_BYTES_PER_VERTEX, "sssp": _subway.STATE_BYTES_PER_VERTEX,
               "wcc": _subway.STATE_BYTES_PER_VERTEX,
               "pagerank": _edge_centric.PAGERANK_STATE_BYTES,
               "cdlp": _edge_centric.CDLP_STATE_BYTES}
#: The GPU Subway backend also reads the active ids out through a device scan.
GPU_EXTRA_BYTES = {"bfs": 20, "sssp": 20, "wcc": 20}
TRAVERSALS = ("bfs", "sssp", "wcc")
ALL_ACTIVE = ("pagerank", "cdlp")
PAGE_STREAMED = ("bfs", "pagerank")
#: Share of physical memory the host side of a streamed plan may take by default.
HOST_SHARE = 0.5


def topology_bytes(entry) -> int:
    """Bytes of the resident topology (out- and in-CSR with weights) from the catalog."""
    stored = int(entry.stats.get("csr_bytes", 0))
    if stored:
        return stored
    per_edge = 4 + (8 if entry.weighted else 0)
    one = 8 * (entry.num_vertices + 1) + per_edge * entry.num_edges
    return 2 * one if entry.directed else one


def _name(algorithm) -> str:
    return getattr(algorithm, "name", algorithm)


def plan(algorithm, entry, device: Device, *, host_budget: int | None = None,
         resident_state_bytes: int = 24):
    """The :class:`graphdb.executor.cost.Choice` for ``algorithm`` on ``entry`` within ``device``'s budget."""
    from ..cost import Choice

    name = _name(algorithm)
    budget = int(device.memory_limit)
    topo = topology_bytes(entry)
    n, m = entry.num_vertices, entry.num_edges
    resident = topo + resident_state_bytes * n
    sizes = (f"{n} vertices, {m} edges: topology {format_bytes(topo)}, resident needs "
             f"{format_bytes(resident)} of a {format_bytes(budget)} {device.kind} budget")
    if resident <= budget:
        return Choice(device, "resident", f"{device.kind}: graph fits ({sizes})")
    per_vertex = STATE_BYTES.get(name)
    if per_vertex is not None and device.is_gpu:
        per_vertex += GPU_EXTRA_BYTES.get(name, 0)
    if per_vertex is None:
        return Choice(device, "resident", f"{device.kind}: graph does NOT fit ({sizes}) and "
                      f"{name} has no streamed variant; running resident")
    state = per_vertex * n
    if state >= budget:
        raise DeviceOutOfMemory(
            f"{name}: the vertex state alone ({n} vertices x {per_vertex} B = "
            f"{format_bytes(state)}) does not fit the {format_bytes(budget)} {device.kind} "
            f"budget (topology {format_bytes(topo)}); raise memory_limit")
    if host_budget is None:  # where the streamed operators keep the topology (both devices)
        host_budget = int(host_memory_bytes() * HOST_SHARE)
    pieces = f"vertex state {format_bytes(state)}, {format_bytes(budget - state)} left for pieces"
    in_host = topo <= host_budget
    if in_host and name in TRAVERSALS:
        return Choice(device, "subway", f"{device.kind}: graph does not fit ({sizes}); {pieces}: "
                      "subgraph streaming (only the active vertices' edges move each iteration)")
    if in_host and name in ALL_ACTIVE:
        return Choice(device, "edge_centric", f"{device.kind}: graph does not fit ({sizes}); "
                      f"{pieces}: edge chunks streamed every iteration, copy and compute "
                      "overlapped")
    if name in PAGE_STREAMED:
        pages = entry.stats.get("pages")
        page_size = entry.stats.get("page_size")
        where = "slotted pages"
        if pages and page_size:
            from .pages import predict_seconds

            kind = "gpu" if device.is_gpu else "cpu"
            one_pass = predict_seconds(kind, state, [pages * page_size], [pages],
                                       store_bytes=max(0, pages * page_size - host_budget))
            where = (f"{pages} pages of {format_bytes(page_size)} (GTS model: {one_pass:.3g} s a "
                     "pass over every page)")
        return Choice(device, "pages", f"{device.kind}: topology {format_bytes(topo)} exceeds "
                      f"host memory for streaming ({format_bytes(host_budget)}); {pieces}: "
                      f"{where} streamed from the store through the buffer manager")
    raise DeviceOutOfMemory(
        f"{name}: topology {format_bytes(topo)} fits neither the {format_bytes(budget)} budget "
        f"nor host memory ({format_bytes(host_budget)}), and {name} has no page-streamed variant")


def implementation_for(choice, name: str) -> Callable | None:
    """The streamed implementation ``(graph, **options) -> AlgorithmOutput`` of ``choice``.

    None for ``resident``: the caller runs :func:`graphdb.executor.algorithms.run` as before. The device
    and its budget are bound here, so the runner passes only the algorithm's own options.
    """
    from . import edge_centric, pages, subway

    device = "gpu" if choice.device.is_gpu else "cpu"
    table = {
        ("subway", "bfs"): subway.subway_bfs,
        ("subway", "sssp"): subway.subway_sssp,
        ("subway", "wcc"): subway.subway_wcc,
        ("edge_centric", "pagerank"): edge_centric.pagerank_edge_centric,
        ("edge_centric", "cdlp"): edge_centric.cdlp_edge_centric,
        ("pages", "bfs"): pages.bfs_pages,
        ("pages", "pagerank"): pages.pagerank_pages,
    }
    func = table.get((choice.variant, name))
    if func is None:
        return None
    bound = functools.partial(func, device=device, budget_bytes=int(choice.device.memory_limit))
    return _with_choice(bound, choice)


def _with_choice(func, choice):
    @functools.wraps(func)
    def run(graph, **options):
        output = func(graph, **options)
        output.metrics.setdefault("plan", choice.variant)
        output.metrics.setdefault("plan_reason", choice.reason)
        return output
    return run
