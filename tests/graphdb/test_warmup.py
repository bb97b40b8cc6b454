"""``graphdb warmup``: kernels compiled ahead, then, on a host with several GPUs, the planner
calibrated (:func:`graphdb.calibration.calibrate_gpus`); with one GPU or none nothing more is
said. The GPU run itself is checked on the device (tests/executor/test_calibration.py holds the
fit); here the CPU path and what warmup does around the calibration."""

from __future__ import annotations

import io

import pytest

from graphdb import calibration as front
from graphdb.cli import main
from graphdb.executor import device
from graphdb.executor.physical import calibration
from graphdb.warmup import calibrate, run_warmup


def _no_calibration(**kwargs):
    raise AssertionError("calibrated without several GPUs")


def test_cpu_warmup_compiles_and_says_nothing_of_gpus(monkeypatch):
    """--device cpu warms the CPU kernels only: even on a host that has several GPUs it neither
    calibrates nor mentions them."""
    monkeypatch.setattr(device, "gpu_count", lambda: 2)
    monkeypatch.setattr(front, "calibrate_gpus", _no_calibration)
    out = io.StringIO()
    assert run_warmup("cpu", out) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("  CPU kernels ready in ")
    assert lines[1].startswith("Kernels ready (") and len(lines) == 2
    assert "GPU" not in out.getvalue()


def test_warmup_without_a_gpu_from_the_command_line(monkeypatch, capsys):
    monkeypatch.setattr(device, "gpu_available", lambda: False)
    assert main(["warmup", "--device", "gpu"]) == 0
    assert capsys.readouterr().out == ("No GPU can be used here (CuPy and a CUDA device): "
                                       "nothing to warm.\n")


@pytest.mark.parametrize("gpus", [0, 1])
def test_one_gpu_or_none_is_not_calibrated(monkeypatch, gpus):
    monkeypatch.setattr(device, "gpu_count", lambda: gpus)
    monkeypatch.setattr(front, "calibrate_gpus", _no_calibration)
    out = io.StringIO()
    assert calibrate(out) == 0
    assert out.getvalue() == ""


def _fake_run(calls):
    def run(progress=None):
        calls.append(progress)
        progress("rmat 22: timed on 1, 2 GPU(s) in 21.0 s")
        progress("grid 1024: timed on 1, 2 GPU(s) in 30.5 s")
        progress("calibration written to /cache/cuda/calibration-k.json:\n"
                 "frontier x1: 20.0 us a step\nfrontier x2: 80.0 us a step")
        return {"path": "/cache/cuda/calibration-k.json", "fits": []}
    return run


def test_several_gpus_are_calibrated_with_progress(monkeypatch):
    calls = []
    monkeypatch.setattr(device, "gpu_count", lambda: 2)
    monkeypatch.setattr(calibration, "calibration_for", lambda kind, backend: None)
    monkeypatch.setattr(front, "calibrate_gpus", _fake_run(calls))
    out = io.StringIO()
    assert calibrate(out) == 0
    lines = out.getvalue().splitlines()
    assert len(calls) == 1
    assert lines[0].startswith("Calibrating the planner on 2 GPUs")
    assert lines[1:6] == ["  rmat 22: timed on 1, 2 GPU(s) in 21.0 s",
                          "  grid 1024: timed on 1, 2 GPU(s) in 30.5 s",
                          "  calibration written to /cache/cuda/calibration-k.json:",
                          "  frontier x1: 20.0 us a step", "  frontier x2: 80.0 us a step"]
    assert lines[6].startswith("GPUs calibrated in ")
    assert "1 against up to 2 GPUs" in lines[6] and "calibration-k.json" in lines[6]


def test_a_kept_calibration_is_reused_unless_asked_again(monkeypatch):
    calls = []
    kept = calibration.Calibration("k", {})
    monkeypatch.setattr(device, "gpu_count", lambda: 4)
    monkeypatch.setattr(calibration, "calibration_for", lambda kind, backend: kept)
    monkeypatch.setattr(calibration, "path_of", lambda c: "/cache/cuda/calibration-k.json")
    monkeypatch.setattr(front, "calibrate_gpus", _fake_run(calls))
    out = io.StringIO()
    assert calibrate(out) == 0
    assert calls == []
    assert out.getvalue() == ("GPU calibration for these 4 GPUs already kept "
                              "(/cache/cuda/calibration-k.json); graphdb warmup --recalibrate "
                              "times them again.\n")
    out = io.StringIO()
    assert calibrate(out, recalibrate=True) == 0
    assert len(calls) == 1 and "GPUs calibrated in" in out.getvalue()


def test_a_failed_calibration_is_said_and_fails_the_command(monkeypatch):
    def broken(progress=None):
        raise RuntimeError("NCCL unavailable")

    monkeypatch.setattr(device, "gpu_count", lambda: 2)
    monkeypatch.setattr(calibration, "calibration_for", lambda kind, backend: None)
    monkeypatch.setattr(front, "calibrate_gpus", broken)
    out = io.StringIO()
    assert calibrate(out) == 1
    assert out.getvalue().splitlines()[-1] == (
        "GPU calibration failed (RuntimeError: NCCL unavailable); queries still run, each on one "
        "GPU when it fits one.")


def test_the_real_calibration_takes_progress_by_keyword():
    """The fakes above stand for it: it takes ``progress`` as warmup passes it."""
    import inspect

    assert "progress" in inspect.signature(front.calibrate_gpus).parameters
