"""The one cost model: which device and variant runs a graph operator, with the bytes behind it.

DESIGN.md's rule, with the figures of the algorithm's spec (:class:`~graphdb.executor.algorithms.
spec.Variant`: the vertex state each variant keeps, the stored forms it reads) and the sizes in
the graph's catalog entry:

1. the device: the GPU when one is selected and the algorithm has a GPU implementation, else
   the CPU (against the host's budget), the reason said either way;
2. the variant, in the spec's order for that device: ``resident`` when the stored forms it reads
   and its vertex state fit the device budget; otherwise a streamed variant whose vertex state
   fits with room left to stream: ``subway`` and ``edge_centric`` keep the topology in host memory
   (within the host budget, ``SET host_memory_limit``), ``pages`` stream it from the store;
3. none: :class:`DeviceOutOfMemory` at plan time, naming the sizes;
4. with several ranks at hand (the GPUs of the host, a cluster job: a :class:`.scaling.Fleet`)
   and a partitioned variant, how many ranks: each rank count whose per-rank bytes fit the
   budget (vertex state replicated, else split, else the edges streamed) is predicted by
   :mod:`.scaling` against the one-device plan, and more ranks are taken only when predicted
   faster; a graph that fits no single device but fits the ranks together runs partitioned.

The operators receive the same figures (:class:`OperatorConfig`) and split their budget with
them, so what EXPLAIN shows is what runs. A decision is made once, when the statement is
planned; EXPLAIN prints it and the runner executes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphdb.catalog import GraphEntry

from ..algorithms.spec import AlgorithmSpec, OperatorConfig, Placement, Variant
from ..device import Device, format_bytes, host_memory_bytes
from ..errors import DeviceOutOfMemory

__all__ = ["DEBUG_VARIANTS", "Decision", "HOST_SHARE", "choose", "topology_bytes"]

#: Bytes a second a rank streams its rows in at, placed streamed (PCIe to a GPU, the buffer
#: pool on the CPU).
STREAM_BANDWIDTH = {"gpu": 2.5e10, "cpu": 1e10}

#: Share of physical memory the host side of a streamed plan may take by default.
HOST_SHARE = 0.5
#: Bytes a streamed variant needs beside its vertex state to stream at all: on the CPU a piece
#: of one row and one edge with its temporaries, on the GPU its buffers and slack; the GPU's page
#: streamer needs room for this many pages in flight, counted from the page size.
STREAM_MIN_FREE = {"cpu": 128, "gpu": 4 << 20}
PAGES_IN_FLIGHT = 4
DEFAULT_PAGE_BYTES = 2 << 20
#: The ``debug_variant`` setting (tests run the SQL corpus under each): 'auto' lets this model
#: decide; the others force that kind of variant where the algorithm has one, with a budget cut
#: to its vertex state plus a quarter of the topology, so that it streams in several pieces.
DEBUG_VARIANTS = ("auto", "resident", "streamed", "pages", "partitioned")


def topology_bytes(entry: GraphEntry, forms: tuple[str, ...]) -> int:
    """Bytes of the stored forms ``forms`` (see :data:`~graphdb.executor.algorithms.spec.FORMS`)
    of a graph: CSR offsets and targets per direction read (the in-CSR of an undirected graph is
    its out-CSR), the out-CSR's weights on a weighted graph."""
    n, m = entry.num_vertices, entry.num_edges
    csr = 8 * (n + 1) + (4 if n < 2**31 else 8) * m
    directions = {"out" if d == "in" and not entry.directed else d
                  for d in forms if d in ("out", "in")}
    total = csr * len(directions)
    if "weights" in forms and entry.weighted:
        total += 8 * m
    return total


@dataclass(frozen=True)
class Decision:
    """Where and how one graph operator runs, and why."""

    device: Device
    variant: Variant
    #: device bytes the operator may use (SET memory_limit, or the device's default share)
    budget_bytes: int
    #: host bytes a streamed variant may keep the topology in
    host_budget_bytes: int
    #: bytes of the stored forms the variant reads (in the budget when resident, else in host
    #: memory, or streamed from the store for pages)
    topology_bytes: int
    #: bytes of vertex state (and scratch) the variant keeps in the budget
    state_bytes: int
    reason: str
    #: a partitioned plan's ranks (then the bytes above are one rank's, against one device's
    #: budget), or None
    placement: Placement | None = None
    #: the scaling model's figures for this plan and for one device (when a fleet was weighed)
    estimate: Any = None
    baseline: Any = None
    #: why this many devices, when more were at hand (EXPLAIN's "why N GPUs" line)
    scaling_reason: str = ""

    @property
    def needed_bytes(self) -> int:
        """Bytes of the device budget the plan takes (per rank when partitioned)."""
        held = 0 if self.variant.streamed or (self.placement and self.placement.streamed) \
            else self.topology_bytes
        return self.state_bytes + held

    @property
    def reserved_bytes(self) -> int:
        """Device bytes to free in the residency owner before the operator runs: its vertex
        state, which it allocates itself (a resident variant's topology is an entry of the
        owner, which makes its own room); a streamed variant sizes its buffers to the rest of
        the budget, so nothing another graph left there may stay."""
        streamed = self.variant.streamed or (self.placement and self.placement.streamed)
        return self.budget_bytes if streamed else self.state_bytes

    def config(self, tuning: Any = None) -> OperatorConfig:
        return OperatorConfig(device=self.variant.device, variant=self.variant.name,
                              budget_bytes=self.budget_bytes, state_bytes=self.state_bytes,
                              host_budget_bytes=self.host_budget_bytes,
                              placement=self.placement, tuning=tuning)


def _min_free(variant: Variant, entry: GraphEntry) -> int:
    if variant.name == "pages" and variant.device == "gpu":
        return PAGES_IN_FLIGHT * int(entry.stats.get("page_size") or DEFAULT_PAGE_BYTES)
    return STREAM_MIN_FREE[variant.device] if variant.streamed else 0


def _forced(spec: AlgorithmSpec, entry: GraphEntry, device: Device, force: str, host: int,
            why_device: str) -> Decision | None:
    """The ``debug_variant`` decision, or None where the algorithm has no such variant."""
    wanted = {"resident": ("resident",), "streamed": ("subway", "edge_centric"),
              "pages": ("pages",)}[force]
    variant = next((v for v in spec.variants_on(device.kind) if v.name in wanted
                    and not (v.name == "pages" and getattr(entry, "changed", False))), None)
    if variant is None:
        return None
    n, m = entry.num_vertices, entry.num_edges
    state, topology = variant.state_bytes(n, m), topology_bytes(entry, variant.reads)
    budget = int(device.memory_limit)
    if state + _min_free(variant, entry) + (0 if variant.streamed else topology) > budget:
        return None  # the cost model's own choice then says what does not fit
    if variant.streamed:
        budget = min(budget, state + _min_free(variant, entry) + max(topology // 4, 1024))
    return Decision(device, variant, budget, host, topology, state,
                    f"{why_device}; debug_variant = '{force}'")


def choose(spec: AlgorithmSpec, entry: GraphEntry, device: Device, cpu: Device,
           host_budget: int | None, force: str = "auto", fleet: Any = None,
           options: dict | None = None) -> Decision:
    """The decision for ``spec`` on ``entry``: on ``device`` when it is a GPU that can run the
    algorithm, else on ``cpu`` (the host's budget), over several ranks of ``fleet`` (a
    :class:`.scaling.Fleet`) when that is predicted faster or nothing else fits; raises
    :class:`DeviceOutOfMemory` when no variant fits. ``force``: the ``debug_variant`` setting;
    ``options``: the call's arguments (iterations, depth limits)."""
    host = int(host_budget if host_budget is not None else host_memory_bytes() * HOST_SHARE)
    why_device = device.reason
    if device.is_gpu and spec.variant("gpu") is None:
        device, why_device = cpu, f"{spec.name} has no GPU implementation" + (
            f" ({spec.cpu_reason})" if spec.cpu_reason else "")
    if fleet is None or not fleet.active or fleet.kind != device.kind \
            or spec.partitioned(device.kind) is None or force not in ("auto", "partitioned"):
        return _one_device(spec, entry, device, host, force, why_device)
    from .scaling import weigh

    try:
        single = _one_device(spec, entry, device, host, "auto", why_device)
    except DeviceOutOfMemory as exc:
        single, refusal = None, exc
    else:
        refusal = None
    decision = weigh(spec, entry, device, host, fleet, options or {}, single,
                     force == "partitioned" or fleet.force, why_device)
    if decision is None:
        assert refusal is not None
        raise refusal
    return decision


def _one_device(spec: AlgorithmSpec, entry: GraphEntry, device: Device, host: int, force: str,
                why_device: str) -> Decision:
    """The one-device decision (steps 1-3 of the module docstring)."""
    if force not in ("auto", "partitioned"):
        forced = _forced(spec, entry, device, force, host, why_device)
        if forced is not None:
            return forced
    n, m = entry.num_vertices, entry.num_edges
    budget = int(device.memory_limit)
    tried = []
    for variant in spec.variants_on(device.kind):
        if variant.name == "pages" and getattr(entry, "changed", False):
            tried.append("pages streams the stored base only, and the graph has writes not "
                         "compacted into it yet (CHECKPOINT compacts them)")
            continue
        state = variant.state_bytes(n, m)
        topology = topology_bytes(entry, variant.reads)
        sizes = (f"topology {format_bytes(topology)}, vertex state {format_bytes(state)}, "
                 f"budget {format_bytes(budget)}")
        if not variant.streamed:
            if topology + state <= budget:
                return Decision(device, variant, budget, host, topology, state,
                                f"{why_device}; the graph fits ({sizes})")
            tried.append(f"resident needs {format_bytes(topology + state)}")
            continue
        room = budget - state - _min_free(variant, entry)
        if room < 0:
            tried.append(f"{variant.name} needs {format_bytes(state + _min_free(variant, entry))}"
                         " for its vertex state and buffers")
            continue
        if variant.name == "pages" or topology <= host:
            how = {"subway": "subgraph streaming from host memory (only the active vertices' "
                             "edges move each iteration)",
                   "edge_centric": "edge chunks streamed from host memory each iteration, copy "
                                   "and compute overlapped",
                   "pages": "slotted pages streamed from the store"}[variant.name]
            return Decision(device, variant, budget, host, topology, state, (
                f"{why_device}; {'; '.join(tried)} ({sizes}): {how}, "
                f"{format_bytes(room)} left beside the vertex state"))
        tried.append(f"{variant.name} needs the topology in host memory "
                     f"({format_bytes(topology)} > host budget {format_bytes(host)})")
    raise DeviceOutOfMemory(
        f"{spec.name}() on graph '{entry.name}' ({n} vertices, {m} stored edges) cannot run "
        f"within the {format_bytes(budget)} {device.kind} budget: " + "; ".join(tried)
        + ". Raise it with SET memory_limit (or host_memory_limit)")
