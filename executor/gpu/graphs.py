"""Steps captured once as CUDA graphs and replayed: one launch where a step had dozens.

A partitioned operator on several GPUs is bound by the host when one Python thread issues every
rank's kernels (PageRank on R-MAT 25 over 2 GPUs: about 290 launches an iteration, 1 ms of
host time against 0.5 ms of GPU work a rank; docs/performance/2026-11-28-multi-gpu.md). A step
whose launches take the same arguments every time it recurs (the same arrays, the same
scalars) is captured on the rank's stream the first time (``cudaStreamBeginCapture``, relaxed
mode: nothing runs while it is recorded) and replayed by one ``cudaGraphLaunch`` after that.

The caller keys each step by everything its arguments depend on (PageRank: the phase and the
iteration modulo 3, the rotation of its totals) and keeps the arrays the captured kernels read
alive as long as the :class:`StepGraphs` (they hold pointers, not references). Anything that
cannot be captured (a host read inside the step, an old driver) ends the capture; the step then
runs eagerly, as it would without graphs, and so do the later ones of this run.
``GRAPHDB_CUDA_GRAPHS=0`` turns capture off (a measurement switch, not a setting).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable
from typing import Any

from . import runtime as rt

__all__ = ["StepGraphs", "enabled"]


def enabled() -> bool:
    """Whether steps are captured (``GRAPHDB_CUDA_GRAPHS=0`` turns it off)."""
    return os.environ.get("GRAPHDB_CUDA_GRAPHS", "1") != "0"


class StepGraphs:
    """One rank's captured steps, by key (see the module docstring)."""

    def __init__(self, active: bool = True):
        self.active = active and enabled()
        self._graphs: dict[Hashable, Any] = {}
        self.captured = 0
        self.replayed = 0

    def run(self, key: Hashable, step: Callable[[], None]) -> None:
        """Launch ``step``'s work on the current stream: its graph if ``key`` was captured,
        else capture it now and launch that (eagerly when capture is off or fails)."""
        if not self.active:
            step()
            return
        stream = rt.cp().cuda.get_current_stream()
        graph = self._graphs.get(key)
        if graph is None:
            graph = self._capture(stream, step)
            if graph is None:
                step()
                return
            self._graphs[key] = graph
            self.captured += 1
        else:
            self.replayed += 1
        graph.launch(stream)

    def _capture(self, stream, step: Callable[[], None]):
        try:
            stream.begin_capture()
        except Exception:  # the legacy stream, a driver without capture: run eagerly
            self.active = False
            return None
        try:
            step()
        except BaseException as exc:
            try:
                stream.end_capture()
            except Exception:
                pass
            if not isinstance(exc, Exception):
                raise  # an interrupt: nothing of the step ran
            self.active = False  # something in the step cannot be recorded: run it eagerly
            return None
        try:
            return stream.end_capture()
        except Exception:  # the capture was invalidated
            self.active = False
            return None

    def stats(self) -> dict:
        return {"graphs_captured": self.captured, "graph_replays": self.replayed}
