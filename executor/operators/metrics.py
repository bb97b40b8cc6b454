"""Per-run instrumentation of the streamed operators (AlgorithmOutput.metrics).

One :class:`StreamMetrics` per run records what EXPLAIN ANALYZE shows: outer and inner
iterations, active vertices and edges per outer iteration, whether an iteration streamed a SubCSR
or whole partitions, the pieces (partitions) moved, bytes sent to the device (or, on the CPU,
bytes copied into the budgeted working set), transfer time against kernel time, and the page
cache's hits. Times are wall-clock seconds measured by the backend (CUDA events on the GPU).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..algorithms.spec import OperatorConfig
from ..errors import DeviceOutOfMemory

__all__ = ["StreamMetrics", "Timer", "check_budget"]


class Timer:
    """Accumulates wall time of ``with timer:`` blocks."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def __enter__(self) -> "Timer":
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds += time.perf_counter() - self._t0


@dataclass
class StreamMetrics:
    strategy: str
    device: str
    budget_bytes: int
    outer_iterations: int = 0
    inner_iterations: int = 0
    partitions: int = 0
    bytes_to_device: int = 0
    bytes_from_device: int = 0
    transfer_s: float = 0.0
    kernel_s: float = 0.0
    gather_s: float = 0.0
    full_iterations: int = 0  # outer iterations that streamed every partition
    per_iteration: list[dict[str, Any]] = field(default_factory=list)
    cache_hits: int = 0
    cache_misses: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def iteration(self, *, active_vertices: int, active_edges: int, mode: str,
                  pieces: int, nbytes: int) -> None:
        self.outer_iterations += 1
        self.full_iterations += mode != "subcsr"
        self.per_iteration.append({"active_vertices": int(active_vertices),
                                   "active_edges": int(active_edges), "mode": mode,
                                   "pieces": int(pieces), "bytes": int(nbytes)})

    def as_dict(self, wall_s: float | None = None) -> dict[str, Any]:
        looked = self.cache_hits + self.cache_misses
        out = {
            "strategy": self.strategy, "device": self.device, "budget_bytes": self.budget_bytes,
            "iterations": self.outer_iterations, "outer_iterations": self.outer_iterations,
            "inner_iterations": self.inner_iterations, "partitions": self.partitions,
            "full_iterations": self.full_iterations,
            "bytes_to_device": self.bytes_to_device, "bytes_from_device": self.bytes_from_device,
            "transfer_s": round(self.transfer_s, 6), "kernel_s": round(self.kernel_s, 6),
            "gather_s": round(self.gather_s, 6),
            "cache_hit_rate": (self.cache_hits / looked) if looked else None,
            "active_vertices": [r["active_vertices"] for r in self.per_iteration],
            "active_edges": [r["active_edges"] for r in self.per_iteration],
            "per_iteration": self.per_iteration,
            **self.extra,
        }
        if wall_s is not None:
            out["wall_s"] = round(wall_s, 6)
        return out


def check_budget(what: str, n: int, config: OperatorConfig) -> int:
    """The vertex state's bytes (the spec's figure the planner reserved), or DeviceOutOfMemory
    naming the sizes when it leaves nothing of the budget for streaming."""
    state, budget = int(config.state_bytes), int(config.budget_bytes)
    if state >= budget:
        raise DeviceOutOfMemory(
            f"{what}: vertex state of {n} vertices needs {state} B, more than the {budget} B "
            "budget; no streamed plan can run (raise memory_limit)")
    return state
