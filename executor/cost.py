"""The cost model: which variant of a graph operator runs, and why.

The choice compares the bytes the resident operator needs (topology from the catalog's
statistics plus vertex state) with the device's budget, as DESIGN.md lays out. The reason is a
sentence for EXPLAIN that names the sizes.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphdb.catalog import GraphEntry

from .algorithms import Algorithm
from .device import Device, format_bytes, select_device

__all__ = ["Choice", "choose", "choose_for", "resident_bytes", "hash_join_build_side",
           "HASH_JOIN_REASON", "frontier_kind", "DENSE_FRONTIER_BUDGET"]

#: Bytes of per-vertex state a traversal or PageRank keeps (values, frontier flags, scratch).
STATE_BYTES_PER_VERTEX = 24


@dataclass(frozen=True)
class Choice:
    device: Device
    #: "resident", "subway", "edge_centric", "pages" (executor.streaming) or "refused"
    variant: str
    reason: str


def resident_bytes(entry: GraphEntry) -> tuple[int, int]:
    """(topology bytes, vertex-state bytes) of running resident on ``entry``."""
    topology = int(entry.stats.get("csr_bytes", 0))
    return topology, STATE_BYTES_PER_VERTEX * entry.num_vertices


def choose(algorithm: Algorithm, entry: GraphEntry, device: Device, gpu_impl: bool,
           host_budget: int | None = None) -> Choice:
    return choose_for(algorithm.name, entry, device, gpu_impl, host_budget)


def choose_for(name: str, entry: GraphEntry, device: Device, gpu_impl: bool,
               host_budget: int | None = None) -> Choice:
    """The choice for operator ``name`` (an algorithm, or 'pattern' for GRAPH_TABLE).

    ``host_budget``: host memory a streamed operator may keep the topology in (the setting
    ``host_memory_limit``; None for a share of RAM): past it, page streaming from the store."""
    if device.is_gpu and not gpu_impl:
        # The CPU runs it, so the CPU's budget decides between resident and streamed.
        cpu = select_device("cpu")
        cpu = Device("cpu", cpu.memory_limit, "cpu", f"{name} has no GPU kernel")
        return choose_for(name, entry, cpu, False, host_budget)
    topology, state = resident_bytes(entry)
    need = topology + state
    sizes = (f"needs {format_bytes(need)} (topology {format_bytes(topology)} + vertex state "
             f"{format_bytes(state)}) of a {format_bytes(device.memory_limit)} budget")
    if state > device.memory_limit:
        # DESIGN.md: when even the vertex state cannot be held, no variant can run.
        return Choice(device, "refused",
                      f"{device.kind}: vertex state alone needs {format_bytes(state)} but the "
                      f"budget is {format_bytes(device.memory_limit)}; raise it with "
                      "SET memory_limit")
    if need <= device.memory_limit:
        return Choice(device, "resident", f"{device.kind}: graph fits, {sizes}; {device.reason}")
    # Too big for the budget: a streamed variant, or an error naming the sizes.
    from .streaming.planner import plan

    return plan(name, entry, device, host_budget=host_budget,
                resident_state_bytes=STATE_BYTES_PER_VERTEX)


#: What EXPLAIN says of a hash join before the sizes of its inputs are known.
HASH_JOIN_REASON = ("Acero hash join; its hash table is built on the smaller input "
                    "(sizes known at run time)")


def hash_join_build_side(left_rows: int, right_rows: int) -> str:
    """'right' or 'left': the input to build the hash table on, the smaller one (ties: right,
    Acero's own build side, so no swap is needed)."""
    return "right" if right_rows <= left_rows else "left"


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
