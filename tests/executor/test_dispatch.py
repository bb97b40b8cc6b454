"""The dispatcher: a GPU implementation when the device is a GPU, the CPU when the GPU fails."""

from __future__ import annotations

import numpy as np

import graphdb.executor.gpu
from graphdb.executor import algorithms
from graphdb.executor.device import Device
from graphdb.executor.errors import DeviceOutOfMemory
from graphdb.executor.graph import Graph


def _graph():
    return Graph.from_edges(np.array([0, 1, 2]), np.array([1, 2, 0]), 4)


def test_cpu_device_runs_the_cpu_implementation():
    out = algorithms.run("bfs", _graph(), {"source": 0}, Device("cpu", 1 << 30))
    assert out.metrics["device"] == "cpu"
    assert dict(zip(out.columns["vertex"].tolist(), out.columns["depth"].tolist())) == {0: 0, 1: 1, 2: 2}


def test_gpu_out_of_memory_falls_back_to_the_cpu(monkeypatch):
    calls = []

    def exhausted(graph, **options):
        calls.append(options)
        raise DeviceOutOfMemory("needed 9 GiB, 1 GiB free")

    monkeypatch.setattr(graphdb.executor.gpu, "implementation_for", lambda name: exhausted)
    out = algorithms.run("bfs", _graph(), {"source": 1}, Device("gpu", 1 << 30, name="fake GPU"))
    assert calls == [{"source": 1}]
    assert out.metrics["device"] == "cpu" and "out of memory" in out.metrics["fallback"]
    assert dict(zip(out.columns["vertex"].tolist(), out.columns["depth"].tolist())) == {1: 0, 2: 1, 0: 2}
