"""Helpers for the executor tests: run a registered algorithm as the front end would."""

from __future__ import annotations

from typing import Any

import numpy as np

from graphdb.executor.algorithms import REGISTRY, run
from graphdb.executor.graph import Graph


def run_cpu(name: str, graph: Graph, **options: Any) -> dict[str, np.ndarray]:
    """Run an algorithm through the registry on the CPU; defaults filled in as the binder does."""
    algorithm = REGISTRY[name]
    bound = {}
    for param in algorithm.params:
        if param.name in options:
            bound[param.name] = param.coerce(options[param.name], name)
        elif not param.required:
            bound[param.name] = param.default
    output = run(name, graph, bound)
    assert set(output.columns) == {c.name for c in algorithm.columns}
    lengths = {len(col) for col in output.columns.values()}
    assert len(lengths) <= 1, "columns of one output must have one length"
    return output.columns
