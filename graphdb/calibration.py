"""Calibrate the planner to this machine's GPUs: ``graphdb.calibration.calibrate_gpus()``.

With several GPUs the planner weighs one GPU against partitioned plans over 2, 4 ... of them by
a cost model whose rates come from this machine's own timed runs. Until those runs have been
made it prices partitioned plans conservatively, keeping every query that fits one GPU there
(a graph one GPU cannot hold still runs over several). :func:`calibrate_gpus` makes the runs
(about a minute; once per machine, GPU model, GPU count and driver) and keeps the rates in
graphdb's cache directory (``~/.cache/graphdb``, or ``$GRAPHDB_CACHE_DIR``), where every
process on the machine finds them; ``graphdb warmup`` calls it. EXPLAIN shows the predicted
times of the plans it weighed, and EXPLAIN ANALYZE the predicted beside the actual.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["calibrate_gpus"]


def calibrate_gpus(progress: Callable[[str], None] | None = None) -> dict | None:
    """Time this machine's GPUs and keep the planner's rates; None when no GPU can be used.

    Returns what was written: ``{"path": file, "fits": [{"traffic", "ranks",
    "step_seconds", "edges_per_second", "worst_ratio", "samples"}, ...]}``. ``progress``
    receives a line per graph timed and the fitted rates."""
    from .executor.device import gpu_available

    if not gpu_available():
        return None
    from .executor.physical.calibration import path_of
    from .executor.physical.measure import calibrate_gpus as measure
    from .generators import GRAPH500_ABC

    fitted = measure(GRAPH500_ABC, progress=progress)
    if fitted is None:
        return None
    return {"path": str(path_of(fitted)), **fitted.to_json()}
