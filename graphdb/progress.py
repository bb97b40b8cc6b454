"""Progress: reports to a connection's progress handler, and the ingest bar on a terminal.

A statement reports :class:`ProgressReport` s to the handler set with
``Connection.set_progress_handler``: an iterative algorithm once per iteration, an ingest per
phase and while it reads. ``graphdb ingest`` draws its own bar (:class:`RichProgress`), one
line per phase, each with its own measure:

    ✓ read     ━━━━━━━━━━━━━━━━ 100%  254.6/254.6 MiB  8,000,000 rows  0:00:05
    ✓ sort                                                            0:00:01
    ⠋ commit                                                          0:00:00

the read with bytes (compressed bytes of a compressed file), rows, and the time left while it
runs; later phases with their time only. A finished phase shows ✓ and stops its clock; every
line fits 80 columns.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable

from graphdb.catalog.progress import Progress
from graphdb.executor.device import format_bytes

__all__ = ["ProgressReport", "HandlerProgress", "RichProgress", "terminal_progress", "time_line",
           "describe_report"]


@dataclass(frozen=True)
class ProgressReport:
    """How far a running statement is.

    ``task``: the algorithm (``pagerank``) or ingest phase (``read``, ``sort``, ``commit``);
    ``done`` of ``total`` (None when unknown) ``unit``s ('iterations', 'steps', 'bytes' or
    '' for a phase without a measure); ``rows`` read so far, for an ingest."""

    task: str
    done: int
    total: int | None
    unit: str
    rows: int | None = None


#: One-time kernel costs shorter than this go unmentioned in a statement's time.
ONE_TIME_SHOWN = 0.05


def time_line(elapsed: float, before: tuple[float, float] = (0.0, 0.0),
              after: tuple[float, float] = (0.0, 0.0)) -> str:
    """``Time: 1813.9 ms``, saying how much of it was a one-time kernel cost that later
    statements do not pay: compiling kernels (``before`` and ``after`` are
    :func:`graphdb.storage.compiled.first_use_seconds` around the statement), or loading the
    compiler in a fresh process.

    >>> time_line(1.8139, (0.0, 0.0), (1.62, 0.2))
    'Time: 1813.9 ms (1620 ms of it compiling kernels, once: graphdb warmup compiles them ahead)'
    >>> time_line(0.9, (0.0, 0.0), (0.0, 0.6))
    'Time: 900.0 ms (600 ms of it loading compiled kernels, once per process)'
    """
    line = f"Time: {elapsed * 1000:.1f} ms"
    compiling, loading = after[0] - before[0], after[1] - before[1]
    if compiling >= ONE_TIME_SHOWN:
        line += (f" ({min(compiling, elapsed) * 1000:.0f} ms of it compiling kernels, once: "
                 "graphdb warmup compiles them ahead)")
    elif loading >= ONE_TIME_SHOWN:
        line += (f" ({min(loading, elapsed) * 1000:.0f} ms of it loading compiled kernels, "
                 "once per process)")
    return line


def describe_report(report: ProgressReport) -> str:
    """A report in a few words (the shell's status line)."""
    if report.unit == "bytes":
        text = f"{report.task} {format_bytes(report.done)}"
        if report.total:
            text += f" of {format_bytes(report.total)} ({100 * report.done / report.total:.0f}%)"
        return text + (f", {report.rows:,} rows" if report.rows is not None else "")
    if report.unit == "iterations":
        return f"{report.task}: iteration {report.done} (of at most {report.total})"
    if report.unit == "steps":
        return f"{report.task}: step {report.done}"
    return report.task


class HandlerProgress(Progress):
    """An ingest's progress as reports to a connection's progress handler."""

    def __init__(self, handler: Callable[[ProgressReport], None]):
        self._handler = handler
        self._phase, self._total = "", None

    def phase(self, name: str, total: int | None = None) -> None:
        self._phase, self._total = name, total
        self._handler(ProgressReport(name, 0, total, "bytes" if total else ""))

    def advance(self, done: int, rows: int | None = None) -> None:
        self._handler(ProgressReport(self._phase, done, self._total, "bytes", rows))


class RichProgress(Progress):
    """The ingest's progress on a terminal: one line per phase (see the module docstring)."""

    #: The widest line: status, name, bar, percent, bytes, rows, time, with their gaps.
    WIDTH = 80

    def __init__(self, stream=None):
        from rich.console import Console
        from rich.progress import BarColumn, ProgressColumn, SpinnerColumn, TextColumn
        from rich.progress import Progress as Bar
        from rich.text import Text

        spinner, bar = SpinnerColumn(), BarColumn(bar_width=16)

        class Status(ProgressColumn):
            def render(self, task):
                return Text("✓") if task.fields.get("ended") else spinner.render(task)

        class Measured(BarColumn):
            """The bar of a phase with a total; nothing for the others."""

            def render(self, task):
                return Text(" " * 16) if task.total is None else bar.render(task)

        class Percent(ProgressColumn):
            def render(self, task):
                return Text("    " if task.total is None else f"{task.percentage:>3.0f}%")

        class Clock(ProgressColumn):
            """Time left while a measured phase runs; else the time it took (or takes)."""

            max_refresh = 0.5

            def render(self, task):
                seconds = task.elapsed or 0.0
                prefix = ""
                if not task.fields.get("ended") and task.total and task.completed:
                    left = task.time_remaining
                    if left is not None:
                        seconds, prefix = left, "eta "
                seconds = int(seconds)
                return Text(f"{prefix}{seconds // 3600}:{seconds // 60 % 60:02d}:"
                            f"{seconds % 60:02d}", justify="right")

        self._bar = Bar(Status(), TextColumn("{task.description:<8}"), Measured(), Percent(),
                        TextColumn("{task.fields[measure]:>15}"),
                        TextColumn("{task.fields[rows]:>17}"), Clock(),
                        console=Console(file=stream or sys.stderr, width=self.WIDTH),
                        transient=False)
        self._task = None
        self._bar.start()

    def _end_phase(self) -> None:
        if self._task is not None:
            task = self._bar.tasks[-1]
            if task.total is not None:
                self._bar.update(self._task, completed=task.total,
                                 measure=_bytes(task.total, task.total))
            self._bar.update(self._task, ended=True)
            self._bar.stop_task(self._task)

    def phase(self, name: str, total: int | None = None) -> None:
        self._end_phase()
        self._task = self._bar.add_task(name, total=total, rows="", ended=False,
                                        measure=_bytes(0, total) if total else "")

    def advance(self, done: int, rows: int | None = None) -> None:
        if self._task is not None:
            task = self._bar.tasks[-1]
            total = task.total
            self._bar.update(self._task, completed=done if total is None else min(done, total),
                             measure=_bytes(done, total) if total else "",
                             rows="" if rows is None else f"{rows:,} rows")

    def close(self) -> None:
        self._end_phase()
        self._bar.refresh()
        self._bar.stop()


def _bytes(done: int, total: int | None) -> str:
    """'120.3/267.0 MiB': done and total in the total's unit."""
    if not total:
        return format_bytes(done)
    value, unit = format_bytes(total).split()
    scale = total / float(value) if float(value) else 1.0
    if unit == "B":
        return f"{min(done, total)}/{total} B"
    return f"{min(done, total) / scale:.1f}/{value} {unit}"


def terminal_progress(stream=None) -> Progress | None:
    """A progress bar when ``stream`` (default stderr) is a terminal, else None (quiet)."""
    stream = stream or sys.stderr
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return None
    try:
        return RichProgress(stream)
    except ImportError:  # rich is optional: no bar, still a summary
        return None
