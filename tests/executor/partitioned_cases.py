"""The partitioned operators against the single-device ones: graphs, runs and the comparison,
shared by the in-process tests (simulated ranks) and the MPI job (tests/cluster/)."""

from __future__ import annotations

import importlib

import numpy as np

from graphdb.executor.algorithms import run
from graphdb.executor.algorithms.spec import OperatorConfig, Placement
from graphdb.executor.comm import (
    allgatherv_bytes,
    allreduce_bytes,
    alltoallv_bytes,
    broadcast_bytes,
)
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
    """A result as one value per vertex (``missing`` where a vertex is not reported); device
    columns (a GPU operator's rows stay on the device) are copied to the host."""
    columns = {k: v.get() if hasattr(v, "get") else np.asarray(v) for k, v in columns.items()}
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


def config(backend: str, ranks: int, strategy: str = "replicated", streamed: bool = False,
           devices: tuple[int, ...] = ()) -> OperatorConfig:
    budget = 1 << 16 if streamed else None  # several chunks of a few thousand edges
    return OperatorConfig(device="gpu" if devices else "cpu", variant="partitioned",
                          placement=Placement(backend, ranks, devices, strategy, streamed),
                          budget_bytes=budget, state_bytes=0)


def check_collectives(comm, xp=np) -> list[str]:
    """Every collective's result on each of this process's ranks, and the bytes it counted
    against the formulas (any backend: ``xp`` is the ranks' array module)."""
    problems = []
    size, ranks = comm.size, comm.ranks

    def each(make):
        out = []
        for i, r in enumerate(ranks):
            with comm.on(i):
                out.append(make(r))
        return out

    def host(values):
        return [np.asarray(comm.fetch(i, v)) for i, v in enumerate(values)]

    before = comm.counters.snapshot()
    for got in host(comm.allreduce(each(lambda r: xp.arange(4.0) * (r + 1)), "sum")):
        if not np.array_equal(got, np.arange(4.0) * size * (size + 1) / 2):
            problems.append(f"allreduce gave {got}")
    for got in host(comm.allreduce(each(lambda r: xp.full(3, r, dtype=np.int64)), "min")):
        if got.tolist() != [0, 0, 0]:
            problems.append(f"allreduce min gave {got}")
    for got in host(comm.allgatherv(each(lambda r: xp.full(r + 1, r, dtype=np.int32)))):
        if got.tolist() != [r for r in range(size) for _ in range(r + 1)]:
            problems.append(f"allgatherv gave {got}")
    sent = each(lambda r: xp.asarray([10 * r + d for d in range(size) for _ in range(d + 1)],
                                     dtype=np.int64))
    got, counts = comm.alltoallv(sent, [np.arange(1, size + 1) for _ in ranks])
    for r, values, count in zip(ranks, host(got), counts):
        if values.tolist() != [10 * s + r for s in range(size) for _ in range(r + 1)] \
                or count.tolist() != [r + 1] * size:
            problems.append(f"alltoallv gave {values} ({count})")
    for got in host(comm.broadcast(each(lambda r: xp.full(5, r, dtype=np.uint8)),
                                   root=size - 1)):
        if got.tolist() != [size - 1] * 5:
            problems.append(f"broadcast gave {got}")
    comm.barrier()
    done = {k: (c.calls, c.bytes) for k, c in comm.counters.since(before).items()}
    want = {
        "allreduce": (2, sum(allreduce_bytes(32, size) + allreduce_bytes(24, size)
                             for _ in ranks)),
        "allgatherv": (1, sum(allgatherv_bytes([4 * (s + 1) for s in range(size)], r)
                              for r in ranks)),
        "alltoallv": (1, sum(alltoallv_bytes(np.full(size, r + 1) * 8, r) for r in ranks)),
        "broadcast": (1, sum(broadcast_bytes(5, r, size - 1) for r in ranks)),
        "barrier": (1, 0),
    }
    if done != want:
        problems.append(f"counted {done}, formulas give {want}")
    return problems
