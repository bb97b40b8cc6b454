"""Device selection and the background GPU warm-up (CPU machines: the probe says why not)."""

from __future__ import annotations

import threading

import pytest

import graphdb.executor.device as device


@pytest.fixture
def fresh_probe(monkeypatch):
    """A process state in which the GPU was never probed (restored afterwards)."""
    probe = device._probe
    monkeypatch.setattr(device, "_warm_up_thread", None)
    probe.cache_clear()
    yield
    if device._warm_up_thread is not None:
        device._warm_up_thread.join(30)
    probe.cache_clear()


def test_warm_up_does_nothing_for_the_cpu(fresh_probe, monkeypatch):
    calls = []
    monkeypatch.setattr(device, "_probe", _counting(calls, device._probe))
    device.warm_up("cpu")
    device.warm_up("CPU")
    assert device._warm_up_thread is None and calls == []


def test_warm_up_probes_once_in_the_background_and_selection_waits(fresh_probe, monkeypatch):
    monkeypatch.setenv("GRAPHDB_DISABLE_GPU", "1")
    release, calls = threading.Event(), []
    real = device._probe

    def slow_probe():
        calls.append(threading.current_thread().name)
        release.wait(10)
        return real()

    slow_probe.cache_info = real.cache_info
    monkeypatch.setattr(device, "_probe", slow_probe)
    device.warm_up("auto")
    thread = device._warm_up_thread
    assert thread is not None and thread.name == "graphdb-gpu-warm-up"
    device.warm_up("gpu")  # already under way: no second thread
    assert device._warm_up_thread is thread

    chosen = []
    chooser = threading.Thread(target=lambda: chosen.append(device.select_device("auto")))
    chooser.start()
    chooser.join(0.2)
    assert chooser.is_alive(), "device selection must wait for the probe in flight"
    release.set()
    chooser.join(10)
    thread.join(10)
    assert chosen[0].kind == "cpu" and "GRAPHDB_DISABLE_GPU" in chosen[0].reason
    assert calls[0] == "graphdb-gpu-warm-up"


def _counting(calls, probe):
    def wrapped():
        calls.append(1)
        return probe()

    wrapped.cache_info = probe.cache_info
    return wrapped
