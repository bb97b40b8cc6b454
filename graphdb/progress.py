"""Ingest progress on a terminal (rich): bytes read, rows, rate and ETA, then the later phases."""

from __future__ import annotations

import sys

from graphdb.catalog.progress import Progress

__all__ = ["terminal_progress", "RichProgress"]


class RichProgress(Progress):
    def __init__(self, stream=None):
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )
        from rich.progress import Progress as Bar

        self._bar = Bar(SpinnerColumn(), TextColumn("{task.description:<10}"),
                        BarColumn(bar_width=24), DownloadColumn(), TransferSpeedColumn(),
                        TextColumn("{task.fields[rows]}"), TextColumn("ETA"),
                        TimeRemainingColumn(), TimeElapsedColumn(),
                        console=Console(file=stream or sys.stderr), transient=False)
        self._task = None
        self._bar.start()

    def phase(self, name: str, total: int | None = None) -> None:
        if self._task is not None:
            task = self._bar.tasks[-1]
            if task.total is not None:
                self._bar.update(self._task, completed=task.total)
            self._bar.stop_task(self._task)
        self._task = self._bar.add_task(name, total=total, rows="")

    def advance(self, done: int, rows: int | None = None) -> None:
        if self._task is not None:
            self._bar.update(self._task, completed=done,
                             rows="" if rows is None else f"{rows:,} rows")

    def close(self) -> None:
        if self._task is not None:
            self._bar.stop_task(self._task)
        self._bar.stop()


def terminal_progress(stream=None) -> Progress | None:
    """A progress bar when ``stream`` (default stderr) is a terminal, else None (quiet)."""
    stream = stream or sys.stderr
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return None
    try:
        return RichProgress(stream)
    except ImportError:  # rich is optional: no bar, still a summary
        return None
