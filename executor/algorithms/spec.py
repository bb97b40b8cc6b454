"""What an algorithm is, declared once: its parameters, output columns and the ways it can run.

An :class:`AlgorithmSpec` is a table function's whole contract, Kuzu's ``bind`` step and
networkx's signature in one place:

- :class:`Param` s check and convert each argument when the query is bound, before any data is
  read or any device is touched (so a CPU and a GPU implementation can never disagree on what
  they accept), and ``check`` validates the arguments against the graph's schema (a weight
  column that does not exist) from the catalog alone;
- :class:`Column` s are the output; vertex-valued ones hold internal ids that the runner maps
  to the user's ids;
- :class:`Variant` s are the implementations keyed by (device, variant), each with the bytes of
  vertex state it keeps and the stored forms it reads: the physical planner sizes a plan with
  these figures and the operators split their budget with the same figures (they receive them in
  :class:`OperatorConfig`), so what EXPLAIN promises is what runs.

Implementations take ``(graph, config, **options)`` with internal vertex ids and return an
:class:`AlgorithmOutput`: numpy columns of rows, or (:class:`VertexValues`) one value per vertex,
numpy or CuPy, of which the result path (:mod:`graphdb.executor.results`) keeps the reached
vertices and maps the ids; on a GPU it does so on the device and copies only the rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pyarrow as pa

from ..errors import InvalidArgument

__all__ = [
    "MAX_ITERATIONS", "REQUIRED", "DEVICES", "VARIANTS", "Param", "Column", "Variant",
    "AlgorithmSpec", "AlgorithmOutput", "OperatorConfig", "Partitioning", "Placement",
    "STRATEGIES", "TRAFFIC", "VertexValues",
]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()

#: Upper bound of ``max_iterations`` arguments: a typo such as 1e30 must be an error, not a query
#: that never ends (one iteration is at least one pass over the edges).
MAX_ITERATIONS = 1_000_000

#: Parameter kinds: ``vertex`` is a user vertex id that the planner maps to an internal id;
#: ``vertices`` a set of them (a list, or a subquery's rows), mapped to an array of internal
#: ids (ids not in the graph, and NULLs, left out).
PARAM_KINDS = ("int", "float", "bool", "str", "vertex", "vertices")

DEVICES = ("cpu", "gpu")
#: resident: the topology is held in the budget; subway: only the active vertices' edges move
#: (traversals); edge_centric: every edge streams each iteration in chunks (all-active
#: algorithms); pages: slotted pages stream from the store, no host copy of the topology;
#: partitioned: the graph cut into vertex-range segments over several ranks (GPUs, or the
#: processes of a cluster).
VARIANTS = ("resident", "subway", "edge_centric", "pages", "partitioned")

#: Vertex state of a partitioned operator: ``replicated`` on every rank (GTS Strategy-P; each
#: rank computes its owned vertices and the owned slices are gathered), or ``split`` (GTS
#: Strategy-S: a rank keeps its owned vertices and the remote ones its edges read).
STRATEGIES = ("replicated", "split")


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    default: Any = REQUIRED
    doc: str = ""
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] | None = None
    #: NULL is a value of its own (``weight => NULL``: no weights), not the default
    nullable: bool = False

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def coerce(self, value: Any, algorithm: str) -> Any:
        """Check and convert one argument value; raise :class:`InvalidArgument` if it is wrong."""
        where = f"{algorithm}(): argument '{self.name}'"
        if value is None:
            if self.default is None or self.nullable:
                return None
            raise InvalidArgument(f"{where} must not be NULL")
        if self.kind == "vertex":
            return value  # resolved by the planner against the graph's id map
        if self.kind == "vertices":
            if isinstance(value, (list, tuple, np.ndarray)):
                return value  # resolved by the planner against the graph's id map
            raise InvalidArgument(f"{where} must be a list of vertex ids ([1, 2, 3]) or a "
                                  f"subquery, got {value!r}")
        if self.kind == "bool":
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            raise InvalidArgument(f"{where} must be TRUE or FALSE, got {value!r}")
        if self.kind == "str":
            if not isinstance(value, str):
                raise InvalidArgument(f"{where} must be a string, got {value!r}")
            if self.choices is not None and value.lower() not in self.choices:
                raise InvalidArgument(f"{where} must be one of {', '.join(self.choices)}; "
                                      f"got {value!r}")
            return value.lower() if self.choices is not None else value
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise InvalidArgument(f"{where} must be a number, got {value!r}")
        if self.kind == "int":
            if isinstance(value, (float, np.floating)) and not float(value).is_integer():
                raise InvalidArgument(f"{where} must be an integer, got {value!r}")
            value = int(value)
        else:
            value = float(value)
            if math.isnan(value):
                raise InvalidArgument(f"{where} must not be NaN")
        if self.minimum is not None and value < self.minimum:
            raise InvalidArgument(f"{where} must be >= {self.minimum:g}, got {value!r}")
        if self.maximum is not None and value > self.maximum:
            raise InvalidArgument(f"{where} must be <= {self.maximum:g}, got {value!r}")
        return value


@dataclass(frozen=True)
class Column:
    """An output column. ``vertex=True`` columns hold internal ids mapped to user ids on output."""

    name: str
    type: pa.DataType
    vertex: bool = False


@dataclass
class VertexValues:
    """An output as one value per vertex (its position is the internal id), on the host (numpy)
    or a device (CuPy): the rows are the vertices whose entry of column ``reached`` is not
    marked unreached by ``drop`` (see :data:`graphdb.executor.abi.RESULT_DROP`: ``negative``,
    ``pos_inf``, ``neg_inf``; ``none`` keeps every vertex), in ascending internal id.

    ``values`` holds every output column but ``position``, the vertex column that is the
    position itself; vertex-valued columns among them (a WCC component) hold internal ids,
    mapped to the user's like the position."""

    values: dict[str, Any]
    reached: str | None = None
    drop: str = "none"
    position: str = "vertex"

    def __post_init__(self):
        from ..abi import RESULT_DROP

        assert self.drop in RESULT_DROP and (self.drop == "none") == (self.reached is None), (
            self.reached, self.drop)

    @property
    def num_vertices(self) -> int:
        return int(next(iter(self.values.values())).shape[0])

    @property
    def on_device(self) -> bool:
        return not isinstance(next(iter(self.values.values())), np.ndarray)

    def xp(self):
        """The array module of the values (numpy, or CuPy for device values)."""
        if not self.on_device:
            return np
        import cupy

        return cupy

    def mask(self):
        """Which vertices are rows (None: all), written for numpy and CuPy alike: the
        reference of the device compaction (``operators/results.cu``)."""
        xp = self.xp()
        if self.reached is None:
            return None
        marks = self.values[self.reached]
        return {"negative": lambda: marks >= 0, "pos_inf": lambda: marks != xp.inf,
                "neg_inf": lambda: marks != -xp.inf, "zero": lambda: marks != 0}[self.drop]()

    def rows(self) -> dict[str, Any]:
        """The rows as arrays by column (internal ids; position int64), in the values' array
        module."""
        xp = self.xp()
        mask = self.mask()
        ids = (xp.arange(self.num_vertices, dtype=np.int64) if mask is None
               else xp.flatnonzero(mask).astype(np.int64))
        out = {self.position: ids}
        out.update({name: values if mask is None else values[ids]
                    for name, values in self.values.items()})
        return out


class AlgorithmOutput:
    """Columns of rows (arrays by output column name), or one value per vertex
    (``per_vertex``, whose rows ``columns`` gives on first use), and the run's metrics."""

    def __init__(self, columns: dict[str, Any] | None = None,
                 metrics: dict[str, Any] | None = None,
                 per_vertex: VertexValues | None = None):
        assert (columns is None) != (per_vertex is None)
        self._columns = columns
        self.metrics = metrics if metrics is not None else {}
        self.per_vertex = per_vertex

    @classmethod
    def vertices(cls, values: dict[str, Any], metrics: dict[str, Any] | None = None, *,
                 reached: str | None = None, drop: str = "none",
                 position: str = "vertex") -> "AlgorithmOutput":
        """An output of one value per vertex (see :class:`VertexValues`)."""
        return cls(None, metrics, VertexValues(values, reached, drop, position))

    @property
    def columns(self) -> dict[str, Any]:
        if self._columns is None:
            self._columns = self.per_vertex.rows()
        return self._columns

    @columns.setter
    def columns(self, value: dict[str, Any]) -> None:
        self._columns, self.per_vertex = value, None


#: Device bytes a GPU operator leaves unplanned (see :meth:`OperatorConfig.slack_bytes`).
DEVICE_SLACK = 16 << 20


@dataclass(frozen=True)
class OperatorConfig:
    """What the physical planner decided for one operator run, handed to the implementation:
    the one tunable object of an operator (everything else is the algorithm's own arguments).

    ``budget_bytes`` is the device memory the operator may use (None: unbounded, for direct
    calls), ``state_bytes`` the part of it its vertex state takes (the spec's figure, which a
    streamed operator subtracts to size its pieces), ``host_budget_bytes`` the host memory a
    streamed operator may keep the topology in."""

    device: str = "cpu"
    variant: str = "resident"
    budget_bytes: int | None = None
    state_bytes: int = 0
    host_budget_bytes: int | None = None
    #: where the ranks of a partitioned variant run (None: one device)
    placement: "Placement | None" = None
    #: the family's own tuning, filled by its spec's ``tune`` (e.g. PageRank's blocking)
    tuning: Any = None

    def slack_bytes(self) -> int:
        """Device bytes left unplanned: on the GPU, room for CuPy's pool rounding, flag words and
        stacks (:data:`DEVICE_SLACK`, an eighth of a smaller budget); none on the CPU."""
        if self.device != "gpu" or self.budget_bytes is None:
            return 0
        return min(DEVICE_SLACK, int(self.budget_bytes) // 8)

    @property
    def gpus(self) -> int:
        """GPUs the operator runs on."""
        if self.device != "gpu":
            return 0
        return 1 if self.placement is None else max(1, len(self.placement.devices))

    def free_bytes(self) -> int:
        """Bytes of the budget left beside the vertex state and the slack (for pieces, chunks,
        caches)."""
        if self.budget_bytes is None:
            raise InvalidArgument(f"a {self.variant} operator needs a memory budget")
        return int(self.budget_bytes) - int(self.state_bytes) - self.slack_bytes()

    @classmethod
    def with_room(cls, device: str, variant: str, state_bytes: int, room: int,
                  **kw) -> OperatorConfig:
        """The smallest configuration whose :meth:`free_bytes` is at least ``room``."""
        need = int(state_bytes) + int(room)
        if device != "gpu":
            budget = need
        elif need >= 7 * DEVICE_SLACK:
            budget = need + DEVICE_SLACK
        else:
            budget = -(-need * 8 // 7)
        return cls(device, variant, budget, int(state_bytes), **kw)


@dataclass(frozen=True)
class Placement:
    """Where the ranks of a partitioned operator run, as the physical planner decided.

    ``backend``: ``local`` (every rank in this process: tests, several ranks on one device),
    ``nccl`` (the GPUs ``devices`` of this host, one process) or ``mpi`` (a cluster job, one
    rank per process; ``devices`` is this process's GPU, if its ranks use one). ``ranks`` is
    the number of segments; ``strategy`` one of :data:`STRATEGIES`; ``streamed``: each rank
    streams its segment's edges every pass instead of holding them (they do not fit)."""

    backend: str
    ranks: int
    devices: tuple[int, ...] = ()
    strategy: str = "replicated"
    streamed: bool = False

    def __post_init__(self):
        assert self.backend in ("local", "nccl", "mpi"), self.backend
        assert self.strategy in STRATEGIES, self.strategy


#: Stored forms a variant may read (the planner counts their bytes): ``out``/``in`` CSR (offsets
#: and targets; ``in`` is the out-CSR itself on an undirected graph), ``weights`` of each CSR
#: read (on a weighted graph).
FORMS = ("out", "in", "weights")


#: What the ranks of a partitioned variant exchange each step, as the scaling model
#: (:mod:`graphdb.executor.physical.scaling`) prices it: ``pull`` (a value per vertex: the owned
#: slices), ``frontier`` (discovered vertices to their owners, or a frontier bitmap),
#: ``relax`` (candidate distances to their owners), ``labels`` (a label per vertex, reduced by
#: MIN), ``rows`` (remote out-rows, once).
TRAFFIC = ("pull", "frontier", "relax", "labels", "rows")


@dataclass(frozen=True)
class Partitioning:
    """How a partitioned variant divides the work, for the planner: ``shared_per_vertex`` bytes
    each rank holds per vertex of the graph beside its owned state (the replicated vector,
    bitmaps; with split state, per owned and ghost vertex), its ``traffic`` (one of
    :data:`TRAFFIC`), the vertex-state ``strategies`` it has (preferred first), whether it can
    stream its rows when they do not fit (``streams``), and what travels, as EXPLAIN says it
    (``exchange``; ``split_exchange`` with split state)."""

    shared_per_vertex: float
    traffic: str
    exchange: str
    strategies: tuple[str, ...] = ("replicated",)
    streams: bool = False
    #: what travels with split state, when the variant has it
    split_exchange: str = ""

    def describe(self, strategy: str) -> str:
        return self.split_exchange if strategy == "split" and self.split_exchange \
            else self.exchange

    def __post_init__(self):
        assert self.traffic in TRAFFIC, self.traffic
        assert set(self.strategies) <= set(STRATEGIES), self.strategies


@dataclass(frozen=True)
class Variant:
    """One implementation: ``implementation`` is ``"module:function"`` (module relative to the
    family's package, imported on first use so that CPU installs never import CuPy).

    A ``partitioned`` variant's ``state_per_vertex`` and ``state_per_edge`` count per *owned*
    vertex and per edge of a rank's segment; ``partitioning`` says the rest."""

    device: str
    name: str
    implementation: str
    state_per_vertex: int
    state_per_edge: float = 0.0
    reads: tuple[str, ...] = ("out",)
    partitioning: Partitioning | None = None

    def __post_init__(self):
        assert self.device in DEVICES and self.name in VARIANTS, (self.device, self.name)
        assert set(self.reads) <= set(FORMS), self.reads
        assert (self.name == "partitioned") == (self.partitioning is not None), self.name

    def state_bytes(self, num_vertices: int, num_edges: int) -> int:
        """Bytes of the vertex state (and per-edge scratch) this variant keeps in the budget."""
        return int(self.state_per_vertex * num_vertices + self.state_per_edge * num_edges)

    @property
    def streamed(self) -> bool:
        """Whether the topology streams through the budget (a partitioned variant's ranks hold
        theirs, unless placed streamed)."""
        return self.name not in ("resident", "partitioned")


@dataclass(frozen=True)
class AlgorithmSpec:
    name: str
    family: str
    params: tuple[Param, ...]
    columns: tuple[Column, ...]
    variants: tuple[Variant, ...]
    doc: str = ""
    #: Whether every vertex is active every iteration (PageRank) rather than a frontier.
    all_active: bool = False
    #: Bind-time check of the arguments against the graph's catalog entry (no topology read):
    #: ``check(entry, options)`` raises :class:`InvalidArgument`.
    check: Callable[[Any, dict[str, Any]], None] | None = None
    #: The family's tuning for a plan: ``tune(entry, device, variant)`` returns what goes into
    #: :attr:`OperatorConfig.tuning` (None: nothing to tune).
    tune: Callable[[Any, Any, Variant], Any] | None = None
    #: The multi-source form (``LATERAL khop(g, p.id, 2)``): ``(param, "module:function")``, a
    #: CPU implementation taking the internal ids of many values of vertex parameter ``param``
    #: at once (``function(graph, config, param=array, **options)``), whose output columns add
    #: ``param`` (the value each row came from). Without one, the runner runs the algorithm once
    #: per distinct value, still as one operator.
    many: tuple[str, str] | None = None
    #: why the algorithm has no GPU variant (EXPLAIN says it when a GPU was asked for)
    cpu_reason: str = ""
    #: The local form (``lcc(g, vertices => [1, 2])``): ``(param, "module:function")``, a CPU
    #: implementation that computes the result of the vertices given in parameter ``param`` (a
    #: ``vertices`` one) from their neighbourhoods only, run instead of the whole-graph
    #: variants when that parameter is given.
    local: tuple[str, str] | None = None

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def signature(self) -> str:
        parts = ["graph"]
        for p in self.params:
            default = "NULL" if p.default is None else repr(p.default)
            parts.append(p.name if p.required else f"{p.name} => {default}")
        return f"{self.name}({', '.join(parts)})"

    def schema(self) -> pa.Schema:
        return pa.schema([(c.name, c.type) for c in self.columns])

    def variant(self, device: str, name: str = "resident") -> Variant | None:
        return next((v for v in self.variants if v.device == device and v.name == name), None)

    def variants_on(self, device: str) -> tuple[Variant, ...]:
        """This device's one-device variants, resident first, then the streamed ones in
        preference order (the partitioned one is :meth:`partitioned`)."""
        return tuple(v for v in self.variants if v.device == device and v.partitioning is None)

    def partitioned(self, device: str) -> Variant | None:
        """The variant that runs over several ranks on ``device``, if the family has one."""
        return self.variant(device, "partitioned")

    def validate(self, entry: Any, options: dict[str, Any]) -> None:
        """The bind-time check against the graph (``check``), if the spec has one."""
        if self.check is not None:
            self.check(entry, options)
