"""Steps captured as CUDA graphs (:mod:`graphdb.executor.gpu.graphs`): captured once, replayed
after, and run eagerly whenever capture is off or fails (a stand-in for CuPy's stream)."""

from __future__ import annotations

import pytest

from graphdb.executor.gpu import graphs
from graphdb.executor.gpu import runtime as rt


class _Stream:
    def __init__(self, fail_begin=False, fail_end=False):
        self.capturing, self.fail_begin, self.fail_end = False, fail_begin, fail_end
        self.launched = []

    def begin_capture(self):
        if self.fail_begin:
            raise RuntimeError("cudaErrorStreamCaptureUnsupported")
        self.capturing = True

    def end_capture(self):
        self.capturing = False
        if self.fail_end:
            raise RuntimeError("cudaErrorStreamCaptureInvalidated")
        return _Graph(self.recorded[:])


class _Graph:
    def __init__(self, work):
        self.work = work

    def launch(self, stream):
        stream.launched.extend(self.work)


@pytest.fixture
def stream(monkeypatch):
    s = _Stream()
    s.recorded = []
    cuda = type("cuda", (), {"get_current_stream": staticmethod(lambda: s)})
    monkeypatch.setattr(rt, "cp", lambda: type("cp", (), {"cuda": cuda}))
    monkeypatch.delenv("GRAPHDB_CUDA_GRAPHS", raising=False)
    return s


def _step(stream, name):
    def run():
        if stream.capturing:
            stream.recorded.append(name)  # recorded, not run
        else:
            stream.launched.append(name)
    return run


def test_a_step_is_captured_once_then_replayed(stream):
    steps = graphs.StepGraphs()
    for _ in range(3):
        stream.recorded.clear()
        steps.run("a", _step(stream, "a"))
    assert stream.launched == ["a", "a", "a"]
    assert steps.stats() == {"graphs_captured": 1, "graph_replays": 2}


def test_a_failed_capture_runs_the_step_eagerly_from_then_on(stream):
    stream.fail_end = True
    steps = graphs.StepGraphs()
    steps.run("a", _step(stream, "a"))
    steps.run("a", _step(stream, "a"))
    assert stream.launched == ["a", "a"] and not steps.active
    assert steps.stats()["graphs_captured"] == 0


def test_a_step_that_cannot_be_recorded_runs_eagerly(stream):
    steps = graphs.StepGraphs()
    calls = []

    def reads_the_host():
        calls.append(stream.capturing)
        if stream.capturing:
            raise RuntimeError("operation not permitted when stream is capturing")

    steps.run("a", reads_the_host)
    assert calls == [True, False] and not stream.capturing and not steps.active


def test_capture_off(stream, monkeypatch):
    monkeypatch.setenv("GRAPHDB_CUDA_GRAPHS", "0")
    steps = graphs.StepGraphs()
    steps.run("a", _step(stream, "a"))
    assert stream.launched == ["a"] and steps.stats()["graphs_captured"] == 0
