"""The scaling model's calibration: fitted from timed runs, kept beside the kernel cache, used by
the planner in place of its conservative constants."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from graphdb.executor import algorithms
from graphdb.executor.device import Device
from graphdb.executor.physical import calibration, choose
from graphdb.executor.physical.scaling import Fleet, estimate

GiB = 1 << 30


def test_fit_recovers_step_and_edge_costs():
    """Runs with many steps and few edges (a mesh) and few steps and many edges (small-world)
    separate the two figures."""
    truth = {1: (20e-6, 2e11), 2: (80e-6, 3.5e11)}
    samples = []
    for ranks, (step, rate) in truth.items():
        for steps, work in ((4000, 6e7), (10, 4e9), (25, 5e10), (1500, 1e8)):
            samples.append({"traffic": "frontier", "ranks": ranks, "steps": steps,
                            "work": work, "seconds": steps * step + work / rate})
    fitted = calibration.fit(samples, "k")
    for ranks, (step, rate) in truth.items():
        f = fitted.get("frontier", ranks)
        assert f.step_seconds == pytest.approx(step, rel=1e-6)
        assert f.edges_per_second == pytest.approx(rate, rel=1e-6)
        assert f.worst_ratio == pytest.approx(1.0)
    # 4 ranks were not measured: no faster than the most that were
    assert fitted.get("frontier", 4) == fitted.get("frontier", 2)
    assert fitted.get("pull", 2) is None


def test_saved_calibration_drives_the_planner(tmp_path, monkeypatch):
    """A machine whose calibration shows 2 GPUs twice as fast for PageRank partitions it; without
    a calibration (a new driver or GPU) it stays on one GPU."""
    from graphdb.executor.gpu import compiled

    monkeypatch.setattr(compiled, "cache_dir", lambda: tmp_path)
    monkeypatch.setattr(calibration, "device_key", lambda backend="nccl": "test-key")
    monkeypatch.delenv("GRAPHDB_CALIBRATION", raising=False)
    entry = SimpleNamespace(name="g", num_vertices=1 << 26, num_edges=1 << 30, directed=True,
                            weighted=False, stats={"max_out_degree": 900_000})
    spec = algorithms.get("pagerank")
    gpu = Device("gpu", 120 * GiB, name="test GPU", reason="test")
    cpu = Device("cpu", 1 << 40, reason="test")
    fleet = Fleet("nccl", 2, (0, 1), "gpu")
    assert choose(spec, entry, gpu, cpu, None, fleet=fleet, options={}).placement is None
    fits = {("pull", 1): calibration.Fit(50e-6, 2.5e11), ("pull", 2): calibration.Fit(60e-6, 5e11)}
    calibration.save(calibration.Calibration("test-key", fits))
    decision = choose(spec, entry, gpu, cpu, None, fleet=fleet, options={})
    assert decision.placement is not None and decision.placement.ranks == 2
    one = estimate(spec, spec.partitioned("gpu"), entry, fleet, 1, "replicated", {})
    two = estimate(spec, spec.partitioned("gpu"), entry, fleet, 2, "replicated", {})
    assert two.seconds < one.seconds / 1.8
    monkeypatch.setenv("GRAPHDB_CALIBRATION", "0")
    assert choose(spec, entry, gpu, cpu, None, fleet=fleet, options={}).placement is None


def test_timed_rows_become_the_fits_samples_as_the_model_counts_them():
    """The calibration run's rows (and the benchmark's): the one-GPU operator is one rank, the
    partitioned runs over 2 or more GPUs the others (a partitioned run on one GPU is not the
    one-GPU plan the model prices)."""
    from graphdb.executor.physical.measure import rank_counts, samples_of
    from graphdb.executor.physical.scaling import work_terms

    row = {"algorithm": "pagerank", "vertices": 1 << 20, "edges": 1 << 24, "directed": True,
           "max_out_degree": 5000, "one_gpu_s": 0.01,
           "runs": [{"gpus": 1, "seconds": 0.011}, {"gpus": 2, "seconds": 0.006}]}
    samples = samples_of([row])
    entry = SimpleNamespace(num_vertices=1 << 20, num_edges=1 << 24, directed=True,
                            stats={"max_out_degree": 5000})
    traffic, steps, work = work_terms(algorithms.REGISTRY["pagerank"], entry,
                                      {"max_iterations": 20})
    assert [(s["ranks"], s["seconds"]) for s in samples] == [(1, 0.01), (2, 0.006)]
    assert all((s["traffic"], s["steps"], s["work"]) == (traffic, steps, work)
               for s in samples)
    assert rank_counts(1) == [1] and rank_counts(2) == [1, 2] and rank_counts(6) == [1, 2, 4, 6]


def test_calibrating_without_a_gpu_does_nothing(monkeypatch):
    from graphdb import calibration as front
    from graphdb.executor import device

    monkeypatch.setattr(device, "gpu_available", lambda: False)
    assert front.calibrate_gpus() is None
