"""The planned fallback: a GPU plan carries the CPU plan to take if the device runs out of
memory after all (another process took it, transients); the runner takes it and says so."""

from __future__ import annotations

import contextlib

import numpy as np
import scipy.sparse as sp

import graphdb
from graphdb.executor import algorithms
from graphdb.executor.device import Device
from graphdb.executor.errors import DeviceOutOfMemory


def test_gpu_out_of_memory_falls_back_to_the_planned_cpu_plan(tmp_path, monkeypatch):
    import graphdb.executor.algorithms.registry as registry
    import graphdb.executor.gpu.runtime as rt

    calls = []

    def exhausted(graph, config, **options):
        calls.append((config.device, options))
        raise DeviceOutOfMemory("needed 9 GiB, 1 GiB free")

    spec = algorithms.get("bfs")
    monkeypatch.setitem(registry._RESOLVED, ("bfs", "gpu", "resident", ".gpu:bfs"), exhausted)
    # no GPU here: the runtime's budget and name are stand-ins
    monkeypatch.setattr(rt, "device_name", lambda: "gpu:0")
    monkeypatch.setattr(rt, "memory_budget", lambda *a, **k: contextlib.nullcontext())
    monkeypatch.setattr(rt, "translate_oom", lambda what: contextlib.nullcontext())
    with graphdb.connect(tmp_path / "db", device="cpu") as con:
        edges = sp.coo_array((np.ones(3), ([0, 1, 2], [1, 2, 0])), shape=(4, 4))
        con.from_scipy("g", edges, weighted=False)
        expected = con.execute("SELECT vertex, depth FROM bfs(g, 1) ORDER BY vertex").fetchall()
        monkeypatch.setattr(con.session.runner, "device_for", lambda: Device(
            "gpu", 1 << 30, name="fake GPU", reason="test"))
        plan = con.plan("SELECT vertex, depth FROM bfs(g, 1)")
        op = next(n for n in plan.walk() if n.kind == "AlgorithmScan")
        assert (op.device, op.fallback.device, op.fallback.variant) == ("gpu", "cpu", "resident")
        rows = con.execute("SELECT vertex, depth FROM bfs(g, 1) ORDER BY vertex").fetchall()
        metrics = next(s.metrics for s in con.session.runner.stats.values() if "variant" in s.metrics)
    assert calls == [("gpu", {"source": 1})]
    assert rows == expected
    assert metrics["device"] == "cpu" and "out of memory" in metrics["fallback"]
    assert spec.variant("gpu") is not None
