"""Graph operators on a changed graph (issue 19) answer what a fresh ingest of the same edges
answers: BFS, SSSP, PageRank and WCC after inserts and deletes (an uncompacted delta), after
CHECKPOINT, and after more writes on the new base (a carried-over delta).

Run on the device with ``SET device = 'gpu'`` (marked ``gpu``: skipped without CuPy and a CUDA
device), resident and with a small device budget (streamed variants where the planner picks
them); tests/graphdb/test_writes_devices.py runs the same case on the CPU everywhere, which keeps
the case's own logic checked where there is no GPU.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

import graphdb

pytestmark = pytest.mark.gpu
#: None: the planner's default (resident); "streamed": the streamed variants forced (on a GPU no
#: budget picks them for a graph this small: their buffers need more than its whole topology)
BUDGETS = [None, "streamed"]


class Edges:
    """The graph's edges and vertices as plain arrays, changed by the writes' definitions."""

    def __init__(self, rng, n: int, m: int):
        self.src = rng.integers(0, n, m)
        self.dst = rng.integers(0, n, m)
        self.weight = rng.integers(1, 20, m).astype(np.float64)
        self.vertices = set(range(n))

    def table(self) -> pa.Table:
        return pa.table({"src": self.src, "dst": self.dst, "weight": self.weight})

    def add(self, src, dst, weight) -> None:
        self.src = np.concatenate([self.src, src])
        self.dst = np.concatenate([self.dst, dst])
        self.weight = np.concatenate([self.weight, weight])
        self.vertices |= set(src.tolist()) | set(dst.tolist())

    def keep(self, mask) -> None:
        self.src, self.dst, self.weight = self.src[mask], self.dst[mask], self.weight[mask]


def _write(con, edges: Edges, rng, round_: int) -> None:
    """Inserts (Arrow and SQL, new vertices among them), deletes by a predicate, a detached
    vertex: the same on the model."""
    n = max(edges.vertices) + 1
    k = max(4, edges.src.size // 20)
    src, dst = rng.integers(0, n + 50, k), rng.integers(0, n + 50, k)
    weight = rng.integers(1, 20, k).astype(np.float64)
    assert con.insert_edges("g", pa.table({"src": src, "dst": dst, "weight": weight})) == k
    edges.add(src, dst, weight)
    con.execute("INSERT INTO g.edges VALUES (?, ?, ?)", [n + 100 + round_, 0, 3.0])
    edges.add(np.array([n + 100 + round_]), np.array([0]), np.array([3.0]))
    cut = 19 - round_
    con.execute("DELETE FROM g.edges WHERE weight >= ?", [cut])
    edges.keep(edges.weight < cut)
    victim = int(rng.choice(sorted(edges.vertices - {0})))
    con.execute("DETACH DELETE FROM g.vertices WHERE id = ?", [victim])
    edges.keep((edges.src != victim) & (edges.dst != victim))
    edges.vertices.discard(victim)


QUERIES = ["SELECT vertex, depth FROM bfs(g, 0)", "SELECT vertex, distance FROM sssp(g, 0)",
           "SELECT vertex, rank FROM pagerank(g)", "SELECT vertex, component FROM wcc(g)"]


def _rows(con, sql):
    return sorted(con.execute(sql).fetchall())


def _same(changed, fresh, sql, rel=1e-9):
    a, b = _rows(changed, sql), _rows(fresh, sql)
    assert len(a) == len(b), f"{sql}: {len(a)} rows, fresh ingest {len(b)}"
    for x, y in zip(a, b):
        assert x[0] == y[0], f"{sql}: {x} != {y}"
        if isinstance(x[1], float) and isinstance(y[1], float) and math.isfinite(y[1]):
            assert math.isclose(x[1], y[1], rel_tol=rel, abs_tol=1e-12), f"{sql}: {x} != {y}"
        else:
            assert x[1] == y[1], f"{sql}: {x} != {y}"


def _check(con, edges: Edges, undirected: bool, settings: list[str]) -> None:
    ids = np.array(sorted(edges.vertices), dtype=np.int64)
    with graphdb.connect() as fresh:
        fresh.ingest("g", edges.table(), vertices=pa.table({"id": ids}), undirected=undirected)
        for statement in settings:
            fresh.execute(statement)
        for sql in QUERIES:
            # the GPU PageRank sums float32 contributions in an order its atomics choose
            gpu_rank = "pagerank" in sql and "SET device = 'gpu'" in settings
            _same(con, fresh, sql, 1e-4 if gpu_rank else 1e-9)


def changed_graph_case(device: str, budget: str | None, undirected: bool) -> None:
    rng = np.random.default_rng(19)
    edges = Edges(rng, 1500, 12000)
    settings = [f"SET device = '{device}'"]
    if budget == "streamed":
        settings.append("SET debug_variant = 'streamed'")
    elif budget is not None:
        settings.append(f"SET memory_limit = '{budget}'")
    with graphdb.connect() as con:
        con.ingest("g", edges.table(), undirected=undirected)
        con.execute("SET compaction_threshold = 0")  # compacted only by CHECKPOINT here
        for statement in settings:
            con.execute(statement)
        _check(con, edges, undirected, settings)
        _write(con, edges, rng, 0)  # an uncompacted delta
        if budget is not None:  # streamed: forced, or the budget is below the topology
            for sql in QUERIES[:3]:
                plan = "\n".join(r[0] for r in con.execute("EXPLAIN " + sql).fetchall())
                assert f"{device} · " in plan and " · resident · " not in plan, plan
        assert con.execute("SELECT delta_edges > 0 FROM graph_changes('g')").fetchone() == (True,)
        _check(con, edges, undirected, settings)
        con.execute("CHECKPOINT g")
        assert con.execute("SELECT delta_edges FROM graph_changes('g')").fetchone() == (0,)
        _check(con, edges, undirected, settings)
        _write(con, edges, rng, 1)  # a delta on the new base
        _check(con, edges, undirected, settings)


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("undirected", [False, True])
def test_gpu_operators_on_a_changed_graph_answer_as_a_fresh_ingest(budget, undirected):
    changed_graph_case("gpu", budget, undirected)
