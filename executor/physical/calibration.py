"""The scaling model's rates measured on this machine's GPUs, kept beside the kernel cache.

A calibration is, per traffic pattern (:data:`graphdb.executor.algorithms.spec.TRAFFIC`) and rank
count, the two figures of ``seconds = steps x step_seconds + work / edges_per_second`` (work:
the edges a run touches, as :func:`.scaling.estimate` counts them; one rank: the one-GPU
operator), fitted to timed runs by least squares on relative error. Timed runs on a small-world
graph (few steps, many edges) and a mesh (many steps, few edges) separate the two figures.
:func:`graphdb.calibration.calibrate_gpus` (``graphdb warmup``) fits and writes it from a short
run on R-MAT 22 and a 1024 x 1024 grid (:mod:`.measure`); ``tools/bench_multi_gpu.py
--calibrate`` does the same, and every full benchmark run refits.

The file is keyed by what the figures depend on: the GPU's name, the driver's and runtime's
versions and the number of GPUs (``calibration-<key>.json`` in the kernel cache directory). A new
driver or GPU finds no file, and the model falls back on its conservative constants (which keep
every query that fits one GPU there) until a calibration run writes one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Calibration", "Fit", "calibration_for", "device_key", "fit", "path_of", "save"]


@dataclass(frozen=True)
class Fit:
    """``seconds = steps * step_seconds + work / edges_per_second`` for one traffic pattern and
    rank count, and how well it fitted (the largest measured/predicted ratio either way)."""

    step_seconds: float
    edges_per_second: float
    worst_ratio: float = 1.0
    samples: int = 0

    def seconds(self, steps: int, work: float) -> float:
        return steps * self.step_seconds + work / self.edges_per_second


@dataclass(frozen=True)
class Calibration:
    """Fits by (traffic, ranks) for one device kind and backend."""

    key: str
    fits: dict = field(default_factory=dict)  # {(traffic, ranks): Fit}

    def get(self, traffic: str, ranks: int) -> Fit | None:
        """The fit for ``ranks``, else the largest rank count measured below it (more ranks are
        then predicted no faster than the most that were measured)."""
        if (traffic, ranks) in self.fits:
            return self.fits[(traffic, ranks)]
        below = [r for t, r in self.fits if t == traffic and r <= ranks]
        if ranks > 1:
            below = [r for r in below if r > 1]
        return self.fits[(traffic, max(below))] if below else None

    def to_json(self) -> dict:
        return {"key": self.key, "fits": [
            {"traffic": t, "ranks": r, "step_seconds": f.step_seconds,
             "edges_per_second": f.edges_per_second, "worst_ratio": f.worst_ratio,
             "samples": f.samples} for (t, r), f in sorted(self.fits.items())]}

    @classmethod
    def from_json(cls, data: dict) -> "Calibration":
        return cls(data["key"], {(f["traffic"], int(f["ranks"])): Fit(
            float(f["step_seconds"]), float(f["edges_per_second"]),
            float(f.get("worst_ratio", 1.0)), int(f.get("samples", 0)))
            for f in data["fits"]})


def device_key(backend: str = "nccl") -> str | None:
    """What a calibration depends on: the GPUs' name and count, driver and runtime versions, the
    backend (None without a GPU)."""
    try:
        from ..gpu import runtime as rt

        cp = rt.cp()
        count = cp.cuda.runtime.getDeviceCount()
        name = rt.device_info().name
        driver = cp.cuda.runtime.driverGetVersion()
        runtime = cp.cuda.runtime.runtimeGetVersion()
    except Exception:  # no CuPy, no GPU
        return None
    raw = f"{name}|{count}|{driver}|{runtime}|{backend}"
    return hashlib.sha1(raw.encode()).hexdigest()[:16]


def _path(key: str) -> Path:
    from ..gpu.compiled import cache_dir

    return cache_dir() / f"calibration-{key}.json"


def path_of(calibration: Calibration) -> Path:
    """Where ``calibration`` is kept (beside the kernel cache)."""
    return _path(calibration.key)


@functools.lru_cache(maxsize=None)
def _load(key: str, stamp: float) -> Calibration | None:
    try:
        return Calibration.from_json(json.loads(_path(key).read_text()))
    except (OSError, ValueError, KeyError):
        return None


def calibration_for(kind: str, backend: str) -> Calibration | None:
    """This machine's calibration of ``kind`` ranks over ``backend``, or None (GPU ranks only;
    ``GRAPHDB_CALIBRATION=0`` ignores it)."""
    if kind != "gpu" or os.environ.get("GRAPHDB_CALIBRATION") == "0":
        return None
    key = device_key(backend)
    if key is None:
        return None
    try:
        stamp = _path(key).stat().st_mtime
    except OSError:
        return None
    return _load(key, stamp)


def fit(samples: list[dict], key: str) -> Calibration:
    """Fits from timed runs: each sample has ``traffic``, ``ranks``, ``steps`` (the model's
    steps for that graph), ``work`` (edges the model counts) and ``seconds`` (measured)."""
    groups: dict[tuple[str, int], list[dict]] = {}
    for s in samples:
        groups.setdefault((s["traffic"], int(s["ranks"])), []).append(s)
    fits = {}
    for (traffic, ranks), group in groups.items():
        steps = np.array([float(s["steps"]) for s in group])
        work = np.array([float(s["work"]) for s in group])
        seconds = np.array([float(s["seconds"]) for s in group])
        # relative least squares: divide each equation by its measured seconds
        a = np.stack([steps / seconds, work / seconds], axis=1)
        coef, *_ = np.linalg.lstsq(a, np.ones(len(group)), rcond=None)
        step_s, inverse_rate = (max(float(c), 0.0) for c in coef)
        if inverse_rate <= 0:  # all fixed cost: a rate that adds nothing measurable
            inverse_rate = float(np.min(seconds / np.maximum(work, 1))) * 1e-3
        if step_s <= 0 and inverse_rate <= 0:
            continue
        predicted = steps * step_s + work * inverse_rate
        ratio = np.maximum(predicted / seconds, seconds / np.maximum(predicted, 1e-12))
        fits[(traffic, ranks)] = Fit(step_s, 1.0 / inverse_rate, float(ratio.max()),
                                     len(group))
    return Calibration(key, fits)


def save(calibration: Calibration) -> Path:
    """Write the calibration beside the kernel cache (atomically); its path."""
    path = _path(calibration.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(calibration.to_json(), indent=1))
    os.replace(tmp, path)
    return path


def describe(calibration: Any) -> str:
    """One line per fit, for the benchmark's report."""
    return "\n".join(f"{t} x{r}: {f.step_seconds * 1e6:.1f} us a step, "
                     f"{f.edges_per_second:.3g} edges/s (worst ratio {f.worst_ratio:.2f}, "
                     f"{f.samples} runs)" for (t, r), f in sorted(calibration.fits.items()))
