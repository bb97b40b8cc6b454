"""Algorithms as declared table functions.

Each algorithm declares its parameters (name, type, default, validation), the columns it
returns and its implementations: a CPU one always, a GPU one where ``graphdb.executor.gpu`` offers it.
The query layer binds SQL arguments against :attr:`Algorithm.params`; the executor runs
:func:`graphdb.executor.algorithms.run`, which picks the implementation for the device.

Implementations take ``(graph, **options)`` with internal vertex ids and return an
:class:`AlgorithmOutput` whose vertex-valued columns still hold internal ids; the front end maps
them to the user's ids.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pyarrow as pa

from ..errors import InvalidArgument
from ..graph import Graph

__all__ = [
    "MAX_ITERATIONS",
    "REQUIRED",
    "Param",
    "Column",
    "Algorithm",
    "AlgorithmOutput",
    "REGISTRY",
    "register",
]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()

#: Upper bound of ``max_iterations`` arguments: a typo such as 1e30 must be an error, not a query
#: that never ends (one iteration is at least one pass over the edges).
MAX_ITERATIONS = 1_000_000

#: Parameter kinds: ``vertex`` is a user vertex id that the front end maps to an internal id.
PARAM_KINDS = ("int", "float", "bool", "str", "vertex")


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    default: Any = REQUIRED
    doc: str = ""
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] | None = None

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def coerce(self, value: Any, algorithm: str) -> Any:
        """Check and convert one argument value; raise :class:`InvalidArgument` if it is wrong."""
        where = f"{algorithm}(): argument '{self.name}'"
        if value is None:
            if self.default is None:
                return None
            raise InvalidArgument(f"{where} must not be NULL")
        if self.kind == "vertex":
            return value  # resolved by the front end against the graph's id map
        if self.kind == "bool":
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            raise InvalidArgument(f"{where} must be TRUE or FALSE, got {value!r}")
        if self.kind == "str":
            if not isinstance(value, str):
                raise InvalidArgument(f"{where} must be a string, got {value!r}")
            if self.choices is not None and value.lower() not in self.choices:
                raise InvalidArgument(f"{where} must be one of {', '.join(self.choices)}; got {value!r}")
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
class AlgorithmOutput:
    columns: dict[str, np.ndarray]
    metrics: dict[str, Any] = field(default_factory=dict)


Implementation = Callable[..., AlgorithmOutput]


@dataclass(frozen=True)
class Algorithm:
    name: str
    params: tuple[Param, ...]
    columns: tuple[Column, ...]
    cpu: Implementation
    doc: str = ""
    #: Whether the algorithm reads every edge every iteration (PageRank) or only the frontier's.
    all_active: bool = False

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


REGISTRY: dict[str, Algorithm] = {}


def register(algorithm: Algorithm) -> Algorithm:
    if algorithm.name in REGISTRY:
        raise ValueError(f"algorithm {algorithm.name!r} registered twice")
    REGISTRY[algorithm.name] = algorithm
    return algorithm


def check_source(graph: Graph, source: int, algorithm: str) -> None:
    if not 0 <= source < graph.num_vertices:
        raise InvalidArgument(f"{algorithm}(): source vertex is not in graph '{graph.name}'")
