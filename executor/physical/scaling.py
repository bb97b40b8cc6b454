"""How many devices a graph operator runs on: the work of a step against the exchange it costs.

A partitioned run (:mod:`graphdb.executor.operators.partitioned`) divides each step's edge work
by the ranks and adds, per step, the collectives' latency, the bytes a rank receives over the
link's bandwidth, and the partitioned code's fixed cost (launches, a host round trip). One
device runs the family's tuned operator. For every rank count the fleet allows, the model
predicts both and the planner takes the fastest; it takes more ranks only when they are
predicted faster by :data:`MARGIN` (never a count it predicts slower), so a high-diameter
graph, thousands of BFS levels each paying several collectives, stays on one device.

Inputs come from the catalog entry alone (no topology is read at plan time): |V|, |E|, the
largest out-degree (a skewed graph is small-world: a few levels; an even one is mesh-like: about
sqrt(|V|) levels), the algorithm's iterations, and per-rank rates. On a machine whose GPUs were
calibrated (:mod:`.calibration`: a step's fixed seconds and the edges a second, per traffic
pattern and rank count, fitted to timed runs of this machine's GPUs and cached beside the
kernel cache) the prediction is the calibrated one. Elsewhere the figures of :data:`RATES` are
deliberately conservative for partitioned plans (about 2e10 edges a second per rank and 20 ms
of fixed cost a step, what the first partitioned operators measured), so an uncalibrated
machine keeps every query that fits one GPU there; a graph one GPU cannot hold still runs
partitioned when N GPUs hold it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..algorithms.spec import AlgorithmSpec, Placement, Variant

__all__ = ["Estimate", "Fleet", "MARGIN", "RATES", "Rates", "estimate", "levels", "weigh",
           "work_terms"]

#: More ranks must be predicted at least this much faster than fewer.
MARGIN = 1.1
#: Edge imbalance the segments are cut within (max/mean), counted against the slowest rank.
IMBALANCE = 1.1


@dataclass(frozen=True)
class Fleet:
    """The ranks this statement may partition graph operators over.

    ``backend``: ``none`` (one device), ``local`` (simulated ranks in this process: tests),
    ``nccl`` (the GPUs ``devices`` of this host), ``mpi`` (a cluster job of ``ranks``
    processes; ``devices`` this process's GPU when its ranks use one). ``kind`` is where a
    rank's arrays live (``cpu``/``gpu``); ``force`` (``debug_variant = 'partitioned'``) takes
    the partitioned plan whenever it can run."""

    backend: str = "none"
    ranks: int = 1
    devices: tuple[int, ...] = ()
    kind: str = "cpu"
    force: bool = False
    reason: str = ""

    @property
    def active(self) -> bool:
        return self.backend != "none"

    def counts(self) -> tuple[int, ...]:
        """Rank counts a plan may use: every count up to the GPUs of a host, the whole job (or
        the simulated ranks) otherwise."""
        if self.backend == "nccl":
            low = 1 if self.force and self.ranks == 1 else 2
            return tuple(range(low, self.ranks + 1))
        return (self.ranks,) if self.active else ()

    def placement(self, ranks: int, strategy: str, streamed: bool) -> Placement:
        devices = self.devices[:ranks] if self.backend == "nccl" else self.devices
        return Placement(self.backend, ranks, tuple(devices), strategy, streamed)

    def unit(self, ranks: int = 2) -> str:
        word = "GPU" if self.kind == "gpu" else "rank"
        return word if ranks == 1 else word + "s"


@dataclass(frozen=True)
class Rates:
    """Per-rank figures of one kind of fleet."""

    #: edges a second of the partitioned steps, per rank
    partitioned_edges: float
    #: edges a second of the tuned one-device operator
    single_edges: float
    #: fixed seconds of a partitioned step (kernel launches, the host round trip)
    partitioned_step: float
    #: fixed seconds of a one-device step
    single_step: float
    #: seconds of one collective
    latency: float
    #: bytes a second a rank receives
    bandwidth: float
    #: ranks run one after the other (simulated ranks in one process)
    sequential: bool = False


RATES = {
    ("gpu", "nccl"): Rates(2e10, 2e11, 2e-2, 2e-5, 4e-5, 1.2e11),
    ("gpu", "mpi"): Rates(2e10, 2e11, 2.5e-2, 2e-5, 6e-5, 2.5e10),
    ("gpu", "local"): Rates(2e10, 2e11, 2e-2, 2e-5, 1e-5, 5e11, sequential=True),
    ("cpu", "mpi"): Rates(5e7, 2e8, 5e-5, 1e-6, 2e-5, 5e9),
    ("cpu", "local"): Rates(5e7, 2e8, 5e-5, 1e-6, 1e-6, 1e10, sequential=True),
}

#: Work per edge of each algorithm relative to a pull over its edges (CDLP sorts its relations
#: every iteration, LCC walks two-step paths).
WORK = {"cdlp": 12.0, "lcc": 30.0, "sssp": 2.0}
#: Collectives a step issues, per traffic pattern (an alltoallv is two: counts, then data).
COLLECTIVES = {"pull": 2, "frontier": 3, "relax": 5, "labels": 2, "rows": 5}


def levels(entry: Any) -> int:
    """Levels a traversal is expected to take: a few on a skewed (small-world) graph, about
    sqrt(|V|) on an even, mesh-like one (a 4096 x 4096 grid: 4096 from its middle)."""
    n, m = max(entry.num_vertices, 1), entry.num_edges
    mean = m / n
    largest = float(entry.stats.get("max_out_degree") or mean)
    if largest >= 8 * max(mean, 1.0):
        return int(math.ceil(math.log(n) / math.log(max(mean, 2.0)))) + 3
    return max(1, int(math.ceil(math.sqrt(n))))


def _steps(spec: AlgorithmSpec, entry: Any, options: dict) -> int:
    traffic = spec.partitioned("cpu").partitioning.traffic
    if traffic == "pull":
        iterations = options.get("max_iterations")
        if iterations is None:
            param = spec.param("max_iterations")
            iterations = param.default if param is not None else 20
        return max(1, int(iterations))
    depth = levels(entry)
    limit = options.get("max_depth", options.get("k"))
    if limit is not None:
        depth = min(depth, int(limit) + 1)
    return {"frontier": depth, "relax": 2 * depth, "labels": 3, "rows": 1}[traffic]


@dataclass(frozen=True)
class Estimate:
    """The model's figures for one rank count (``ranks == 1``: the one-device operator)."""

    ranks: int
    steps: int
    seconds: float
    work_seconds: float
    exchange_seconds: float
    overhead_seconds: float
    bytes_per_step: int

    def describe(self) -> str:
        per = max(self.steps, 1)
        return (f"per step: work {_ms(self.work_seconds / per)}, exchange "
                f"{_ms(self.exchange_seconds / per)}, fixed {_ms(self.overhead_seconds / per)}")


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"


def exchange_bytes(variant: Variant, entry: Any, ranks: int, strategy: str, steps: int) -> int:
    """Bytes a rank receives per step (the byte formulas of :mod:`graphdb.executor.comm`)."""
    n, m, p = entry.num_vertices, entry.num_edges, ranks
    if p <= 1:
        return 0
    remote = (p - 1) / p
    traffic = variant.partitioning.traffic
    if traffic == "pull":  # the contributions: float32 on GPUs, float64 on CPU ranks
        item = 4 if variant.device == "gpu" else 8
        vector = item * n * remote if strategy == "replicated" else 8 * min(n * remote, m / p)
        return int(vector + 2 * 8 * (p - 1))
    if traffic == "frontier":  # every rank's bitmap of |V| bits, every level
        return int((p - 1) * n / 8)
    if traffic == "relax":  # a lowered vertex's id and distance, about twice a vertex
        return int(2 * 16 * n * remote / max(steps, 1))
    if traffic == "labels":
        return int(2 * remote * 4 * n)
    return int(8 * (m / p) * remote)  # rows: the remote out-rows, once


def work_terms(spec: AlgorithmSpec, entry: Any, options: dict) -> tuple[str, int, float]:
    """(traffic, steps, edges touched) of ``spec`` on ``entry``: what the model (and a
    calibration's fit, :mod:`.calibration`) prices."""
    traffic = spec.partitioned("cpu").partitioning.traffic
    steps = _steps(spec, entry, options)
    touched = entry.num_edges * (1.0 if traffic != "frontier" else 1.5)
    touched *= WORK.get(spec.name, 1.0) * (steps if traffic in ("pull", "labels") else 1)
    return traffic, steps, touched


def estimate(spec: AlgorithmSpec, variant: Variant, entry: Any, fleet: Fleet, ranks: int,
             strategy: str, options: dict) -> Estimate:
    """Predicted seconds of ``spec`` on ``ranks`` ranks of ``fleet`` (1: the one-device
    operator): from this machine's calibration where it has one (:mod:`.calibration`), else
    from :data:`RATES`."""
    from .calibration import calibration_for

    rates = RATES[(fleet.kind, fleet.backend if fleet.active else "local")]
    traffic, steps, touched = work_terms(spec, entry, options)
    calibrated = calibration_for(fleet.kind, fleet.backend if fleet.active else "nccl")
    fit = calibrated.get(traffic, ranks) if calibrated is not None else None
    if fit is not None:
        work = touched / fit.edges_per_second
        nbytes = exchange_bytes(variant, entry, ranks, strategy, steps)
        return Estimate(ranks, steps, work + steps * fit.step_seconds, work, 0.0,
                        steps * fit.step_seconds, nbytes)
    if ranks == 1:
        work = touched / rates.single_edges
        return Estimate(1, steps, work + steps * rates.single_step, work, 0.0,
                        steps * rates.single_step, 0)
    per_rank = touched * IMBALANCE / ranks
    work = per_rank / rates.partitioned_edges * (ranks if rates.sequential else 1)
    nbytes = exchange_bytes(variant, entry, ranks, strategy, steps)
    exchange = steps * (COLLECTIVES[traffic] * rates.latency + nbytes / rates.bandwidth)
    overhead = steps * rates.partitioned_step * (ranks if rates.sequential else 1)
    return Estimate(ranks, steps, work + exchange + overhead, work, exchange, overhead, nbytes)


def rank_bytes(variant: Variant, entry: Any, ranks: int, strategy: str,
               streamed: bool) -> tuple[int, int]:
    """(topology, state) bytes one rank holds: its share of the rows it reads (none when
    streamed), its owned vertices' state and per-edge scratch, and the shared vectors."""
    from .sizing import topology_bytes

    n, m, p = entry.num_vertices, entry.num_edges, ranks
    topology = 0 if streamed else int(topology_bytes(entry, variant.reads) * IMBALANCE / p)
    owned = variant.state_per_vertex * n / p + variant.state_per_edge * m * IMBALANCE / p
    shared = variant.partitioning.shared_per_vertex * (
        n if strategy == "replicated" else n / p + min(n * (p - 1) / p, m / p))
    return topology, int(owned + shared)




def _streamed_seconds(entry: Any, variant: Variant, kind: str, ranks: int, steps: int) -> float:
    """Seconds a rank spends moving its rows in when they stream (every step)."""
    from .sizing import STREAM_BANDWIDTH, topology_bytes

    return steps * topology_bytes(entry, variant.reads) / ranks / STREAM_BANDWIDTH[kind]


def _fitting(spec: AlgorithmSpec, variant: Variant, entry: Any, fleet: Fleet, ranks: int,
             budget: int, options: dict):
    """The first (strategy, streamed) of the variant's preference that fits one rank's budget,
    with its bytes and estimate; None when nothing does."""
    from .sizing import STREAM_MIN_FREE

    shapes = [(s, False) for s in variant.partitioning.strategies]
    if variant.partitioning.streams:
        shapes.append(("replicated", True))
    for strategy, streamed in shapes:
        topology, state = rank_bytes(variant, entry, ranks, strategy, streamed)
        if topology + state + (STREAM_MIN_FREE[fleet.kind] if streamed else 0) > budget:
            continue
        est = estimate(spec, variant, entry, fleet, ranks, strategy, options)
        if streamed:
            extra = _streamed_seconds(entry, variant, fleet.kind, ranks, est.steps)
            est = Estimate(est.ranks, est.steps, est.seconds + extra, est.work_seconds + extra,
                           est.exchange_seconds, est.overhead_seconds, est.bytes_per_step)
        return strategy, streamed, topology, state, est
    return None


def weigh(spec: AlgorithmSpec, entry: Any, device: Any, host: int, fleet: Fleet, options: dict,
          single: Any, force: bool, why_device: str) -> Any:
    """The decision among one device (``single``, or None when nothing fits it) and every rank
    count of ``fleet`` (see the module docstring); None when neither can run."""
    from .sizing import Decision

    variant = spec.partitioned(fleet.kind)
    budget = int(device.memory_limit)
    if not fleet.counts():
        return single
    baseline = None
    if single is not None:
        baseline = estimate(spec, variant, entry, fleet, 1, "replicated", options)
        if single.variant.streamed:
            extra = _streamed_seconds(entry, single.variant, fleet.kind, 1, baseline.steps)
            baseline = Estimate(1, baseline.steps, baseline.seconds + extra,
                                baseline.work_seconds + extra, 0.0, baseline.overhead_seconds, 0)
    best = None
    for ranks in fleet.counts():
        fit = _fitting(spec, variant, entry, fleet, ranks, budget, options)
        if fit is not None and (best is None or fit[4].seconds < best[4].seconds):
            best = fit
    unit = fleet.unit
    if best is None:
        if single is None:
            return None
        return _note(single, baseline, f"{fleet.ranks} {unit(fleet.ranks)}: the partitioned "
                                       "plan does not fit one rank's budget")
    strategy, streamed, topology, state, est = best
    if single is not None and not force and est.seconds * MARGIN >= baseline.seconds:
        return _note(single, baseline, (
            f"one {unit(1)}: {est.ranks} {unit(est.ranks)} predicted {_ms(est.seconds)} against "
            f"{_ms(baseline.seconds)} on one ({est.steps} steps; {est.describe()})"))
    if single is None:
        why = f"the graph does not fit one {unit(1)}'s budget, {est.ranks} fit"
    elif force:
        why = (f"debug_variant = 'partitioned'; predicted {_ms(est.seconds)} against "
               f"{_ms(baseline.seconds)} on one {unit(1)}")
    else:
        why = f"predicted {_ms(est.seconds)} against {_ms(baseline.seconds)} on one {unit(1)}"
    placement = fleet.placement(est.ranks, strategy, streamed)
    reason = f"{why_device}; {why}"
    return Decision(device, variant, budget, host, topology, state, reason, placement=placement,
                    estimate=est, baseline=baseline,
                    scaling_reason=f"{est.ranks} {unit(est.ranks)}: {why} ({est.describe()})")


def _note(single: Any, baseline: Estimate | None, why: str) -> Any:
    """The one-device decision, with why it did not take more ranks."""
    import dataclasses

    return dataclasses.replace(single, baseline=baseline, scaling_reason=why)
