"""The merged CSR of a changed graph version, every way it is built, against a fresh ingest.

A directed graph's merged arrays are exactly (bitwise) a fresh ingest's of the same edge list
(the base's edges in load order, then the inserted ones): a fresh ingest keeps input order
within a row, which is the merge's order. An undirected fresh ingest puts every reversed edge
after the forward ones, so there rows are compared as sorted multisets. The compiled merge,
its Python source and the vectorized (numpy/CuPy) form the GPU runs must agree; the GPU's
device merge is run here with numpy standing in for CuPy.
"""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

import graphdb
from graphdb.catalog.merge import KERNELS, merge_payload, merge_payload_xp
from graphdb.executor.delta import DeltaGraph


def _build(directed: bool, seed: int):
    """A loaded graph changed by random writes; (connection, its edges in model order)."""
    rng = random.Random(seed)
    con = graphdb.connect()
    con.execute("SET compaction_threshold = 0")
    edges = [(rng.randrange(30), rng.randrange(30), float(rng.randint(1, 9)))
             for _ in range(200)]
    con.ingest("g", pa.table({"src": [e[0] for e in edges], "dst": [e[1] for e in edges],
                              "weight": [e[2] for e in edges]}), undirected=not directed)
    for _step in range(30):
        kind = rng.random()
        if kind < 0.5:  # inserts, some with new vertices (ids below and above the base's)
            new = [(rng.randrange(-10, 45), rng.randrange(-10, 45), float(rng.randint(1, 9)))
                   for _ in range(rng.randint(1, 6))]
            con.executemany("INSERT INTO g.edges VALUES (?, ?, ?)", new)
            edges += new
        elif kind < 0.8:
            v = rng.randrange(30)
            con.execute("DELETE FROM g.edges WHERE src = ?", [v])
            edges = [e for e in edges if e[0] != v and (directed or e[1] != v)]
        else:
            v = rng.choice(sorted({x for e in edges for x in e[:2]}))
            con.execute("DETACH DELETE FROM g.vertices WHERE id = ?", [v])
            edges = [e for e in edges if v not in e[:2]]
    return con, edges


def _fresh(con, edges, directed):
    ids = con.execute("SELECT id FROM g.vertices").arrow().column("id")
    fresh = graphdb.connect()
    fresh.ingest("g", pa.table({"src": pa.array([e[0] for e in edges], pa.int64()),
                                "dst": pa.array([e[1] for e in edges], pa.int64()),
                                "weight": [e[2] for e in edges]}),
                 vertices=pa.table({"id": ids}), undirected=not directed)
    return fresh


def _rows(offsets, targets, weights):
    return [sorted(zip(targets[a:b].tolist(), weights[a:b].tolist()))
            for a, b in zip(offsets[:-1], offsets[1:])]


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_merged_csr_is_a_fresh_ingests(directed, seed):
    con, edges = _build(directed, seed)
    fresh = _fresh(con, edges, directed)
    entry, reference = con.catalog.get("g"), fresh.catalog.get("g")
    assert entry.changed and (entry.num_vertices, entry.num_edges) == \
        (reference.num_vertices, reference.num_edges)
    graph = con.session.runner.graph(entry)
    assert isinstance(graph, DeltaGraph)
    assert not graph.view().identity  # ids below the base's: the view renumbers
    for direction in ("out", "in") if directed else ("out",):
        mine = graph.csr(direction, weights=True)
        theirs = fresh.catalog.read_csr(reference, direction, weights=True)
        if directed:
            for a, b in zip((mine.offsets, mine.targets, mine.weights), theirs):
                np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_array_equal(mine.offsets, theirs.offsets)
            assert _rows(mine.offsets, mine.targets, mine.weights) == _rows(*theirs)
        # the catalog's own merge (read_csr of a version) is the executor's
        catalog = con.catalog.read_csr(entry, direction, weights=True)
        for a, b in zip((mine.offsets, mine.targets, mine.weights), catalog):
            np.testing.assert_array_equal(a, b)
    con.close()
    fresh.close()


@pytest.mark.parametrize("directed", [True, False])
def test_compiled_python_and_vectorized_merges_agree(directed):
    con, _edges = _build(directed, 4)
    graph = con.session.runner.graph(con.catalog.get("g"))
    for direction in ("out", "in") if directed else ("out",):
        plan = graph.plan(direction)
        base = graph.base.csr(direction, weights=True)
        for values, delta, ids in ((base.targets, plan.dtargets, True),
                                   (base.weights, plan.dweights, False)):
            compiled = merge_payload(plan, base.offsets, values, delta, ids=ids)
            python = np.empty_like(compiled)
            KERNELS.python._merge_rows(plan.offsets, plan.base_row, base.offsets, values,
                                       plan.tombstones, plan.tstart, plan.doffsets,
                                       delta.astype(values.dtype), python)
            if ids and plan.lut is not None:
                python = plan.lut[python].astype(values.dtype)
            vectorized = merge_payload_xp(np, plan, values, delta, ids=ids)
            np.testing.assert_array_equal(compiled, python)
            np.testing.assert_array_equal(compiled, vectorized)
            assert compiled.dtype == values.dtype
    con.close()


def test_device_merge_with_numpy_standing_in_for_cupy(monkeypatch):
    """DeltaGraph.upload_merged: the base's resident arrays merged with the uploaded delta
    (numpy as the array module, the host base CSR as the 'resident' copy)."""
    from graphdb.executor.gpu import runtime

    con, _edges = _build(True, 5)
    graph = con.session.runner.graph(con.catalog.get("g"))
    monkeypatch.setattr(runtime, "cp", lambda: np)
    monkeypatch.setattr(runtime, "device_name", lambda: "gpu:0")

    class Resident:
        def __init__(self, csr):
            self.offsets, self.targets, self.weights = csr.offsets, csr.targets, csr.weights

    monkeypatch.setattr(runtime, "device_csr", lambda g, d, weights=False: Resident(
        g.csr(d, weights=True)))
    for direction in ("out", "in"):
        host = graph.csr(direction, weights=True)
        for kind, want in (("offsets", host.offsets), ("targets", host.targets),
                           ("weights", host.weights)):
            got = graph.upload_merged(f"{direction}_{kind}", want.dtype)
            np.testing.assert_array_equal(got, want)
    con.close()
