"""The one registry: algorithm specs by name, implementations by (algorithm, device, variant).

Each family package registers its specs when imported (:func:`register`); an implementation is
named in its spec's :class:`Variant` as ``"module:function"`` and imported on first use
(:func:`implementation`), so a CPU-only process never imports a GPU module.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from ..errors import InvalidArgument
from .common import GRAPH_WEIGHTS
from .spec import AlgorithmOutput, AlgorithmSpec, OperatorConfig, Variant

__all__ = ["REGISTRY", "get", "implementation", "many", "register", "run"]

REGISTRY: dict[str, AlgorithmSpec] = {}
_RESOLVED: dict[tuple[str, str, str], Callable[..., AlgorithmOutput]] = {}


def register(spec: AlgorithmSpec) -> AlgorithmSpec:
    if spec.name in REGISTRY:
        raise ValueError(f"algorithm {spec.name!r} registered twice")
    if spec.variant("cpu") is None:
        raise ValueError(f"algorithm {spec.name!r} needs a resident CPU implementation")
    REGISTRY[spec.name] = spec
    return spec


def get(name: str) -> AlgorithmSpec | None:
    return REGISTRY.get(name.lower())


def _resolve(spec: AlgorithmSpec, key: tuple[str, str, str], path: str) -> Callable:
    """The function ``"module:function"`` of ``spec``'s family package (imported on first use)."""
    func = _RESOLVED.get(key)
    if func is None:
        module, name = path.split(":")
        package = f"{__name__.rpartition('.')[0]}.{spec.family}"
        func = getattr(importlib.import_module(module, package), name)
        _RESOLVED[key] = func
    return func


def implementation(spec: AlgorithmSpec, variant: Variant) -> Callable[..., AlgorithmOutput]:
    """The function that runs ``variant`` of ``spec`` (imported on first use)."""
    return _resolve(spec, (spec.name, variant.device, variant.name, variant.implementation),
                    variant.implementation)


def many(spec: AlgorithmSpec) -> Callable[..., AlgorithmOutput]:
    """The multi-source form a spec declares (:attr:`AlgorithmSpec.many`)."""
    return _resolve(spec, (spec.name, "cpu", "many"), spec.many[1])


def run(name: str, graph: Any, options: dict[str, Any],
        config: OperatorConfig | None = None) -> AlgorithmOutput:
    """Run algorithm ``name`` on ``graph`` directly (tests, benchmarks, the Python API's
    internals): the variant ``config`` names (default: resident on the CPU, no budget).
    Queries go through the physical planner instead, which fills ``config``."""
    config = config or OperatorConfig()
    spec = REGISTRY[name]
    variant = spec.variant(config.device, config.variant)
    if variant is None:
        raise InvalidArgument(f"{name}() has no {config.variant} implementation on the "
                              f"{config.device}")
    # (a default that means "the graph's own": what an implementation does when not told)
    options = {k: v for k, v in options.items() if v is not GRAPH_WEIGHTS}
    if spec.local is not None:  # the local form when its vertices are given
        if options.get(spec.local[0]) is not None:
            return _resolve(spec, (spec.name, "cpu", "local"), spec.local[1])(graph, config,
                                                                             **options)
        options.pop(spec.local[0], None)
    return implementation(spec, variant)(graph, config, **options)
