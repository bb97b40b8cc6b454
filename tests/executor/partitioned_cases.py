"""The partitioned operators against the single-device ones: graphs, runs and the comparison,
shared by the in-process tests (simulated ranks) and the MPI job (tests/cluster/)."""

from __future__ import annotations

import importlib

import numpy as np

from graphdb.executor.algorithms import run
from graphdb.executor.algorithms.spec import OperatorConfig, Placement
from graphdb.executor.graph import Graph
from graphdb.generators import grid, random_weights, rmat

#: algorithm -> (arguments, the column compared, the value of an unreported vertex)
CASES = {
    "bfs": ({"source": 5, "max_depth": None}, "depth", -1),
    "khop": ({"source": 5, "k": 2}, "hops", -1),
    "sssp": ({"source": 5, "weight": None}, "distance", np.inf),
    "pagerank": ({"damping": 0.85, "max_iterations": 20, "tolerance": 0.0}, "rank", None),
    "wcc": ({}, "component", None),
    "cdlp": ({"max_iterations": 10}, "label", None),
    "lcc": ({}, "coefficient", None),
}


def graphs() -> dict[str, Graph]:
    """R-MAT (directed, weighted, duplicates and self loops kept), a grid (undirected,
    weighted) and a skewed graph with two hubs and isolated vertices (directed)."""
    out = {}
    src, dst = rmat(10, 8, seed=3)
    out["rmat"] = Graph.from_edges(src, dst, 1 << 10, weights=random_weights(len(src), seed=1))
    src, dst = grid(24, 30)
    out["grid"] = Graph.from_edges(src, dst, 24 * 30, directed=False,
                                   weights=random_weights(len(src), seed=2))
    rng = np.random.default_rng(7)
    n = 700
    hubs = np.repeat([5, 400], 250)
    src = np.concatenate([rng.integers(0, 600, 1500), hubs, rng.integers(0, 600, 500)])
    dst = np.concatenate([rng.integers(0, 600, 1500), rng.integers(0, 600, 500), hubs])
    out["skewed"] = Graph.from_edges(src, dst, n)  # vertices 600..699 isolated
    return out


def dense(columns: dict, n: int, column: str, missing) -> np.ndarray:
    """A result as one value per vertex (``missing`` where a vertex is not reported)."""
    if missing is None:
        order = np.argsort(columns["vertex"])
        return np.asarray(columns[column])[order]
    out = np.full(n, missing, dtype=np.float64)
    out[np.asarray(columns["vertex"])] = columns[column]
    return out


def single(name: str, graph: Graph) -> np.ndarray:
    args, column, missing = CASES[name]
    return dense(run(name, graph, args).columns, graph.num_vertices, column, missing)


def partitioned(name: str, graph: Graph, config: OperatorConfig):
    """(dense result, metrics) of the partitioned variant of ``name``."""
    args, column, missing = CASES[name]
    family = {"khop": "bfs"}.get(name, name)
    module = importlib.import_module(f"graphdb.executor.algorithms.{family}.partitioned")
    out = getattr(module, name)(graph, config, **args)
    return dense(out.columns, graph.num_vertices, column, missing), out.metrics


def agrees(name: str, got: np.ndarray, want: np.ndarray) -> bool:
    """Exact equality; PageRank to 1e-9 (the summation order differs)."""
    if name == "pagerank":
        return got.shape == want.shape and bool(np.allclose(got, want, rtol=0, atol=1e-9))
    return bool(np.array_equal(got, want))


def config(backend: str, ranks: int, strategy: str = "replicated",
           streamed: bool = False) -> OperatorConfig:
    budget = 1 << 16 if streamed else None  # several chunks of a few thousand edges
    return OperatorConfig(placement=Placement(backend, ranks, strategy=strategy,
                                              streamed=streamed),
                          budget_bytes=budget, state_bytes=0)
