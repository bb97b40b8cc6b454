"""Columns of numbers that stay in memory up to a budget and go to temporary files past it.

An ingest keeps its edges here between reading them and sorting them; the sort keeps its buckets
and its output here. Files are written and read with plain sequential I/O (``tofile``/``fromfile``)
rather than memory maps, so the pages of a big spill never count against the process's resident
memory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import numpy as np

__all__ = ["Spool", "SpoolSet"]


class Spool:
    """Append-only columns (same length each); in memory until ``budget_bytes``, then on disk."""

    def __init__(self, directory: Path, name: str, dtypes: dict[str, np.dtype],
                 budget_bytes: int):
        self.directory, self.name = Path(directory), name
        self.dtypes = {k: np.dtype(v) for k, v in dtypes.items()}
        self.budget_bytes = budget_bytes
        self.rows = 0
        self._memory: list[dict[str, np.ndarray]] = []
        self._memory_bytes = 0
        # Files are opened for each write and closed again: a sort may hold thousands of
        # bucket spools at once, more than the open-file limit allows.
        self._on_disk = False

    @property
    def row_bytes(self) -> int:
        return sum(d.itemsize for d in self.dtypes.values())

    @property
    def spilled(self) -> bool:
        return self._on_disk

    def path(self, column: str) -> Path:
        return self.directory / f"{self.name}.{column}.bin"

    def append(self, columns: dict[str, np.ndarray]) -> None:
        length = len(next(iter(columns.values())))
        if not length:
            return
        arrays = {k: np.ascontiguousarray(columns[k], dtype=d) for k, d in self.dtypes.items()}
        self.rows += length
        fits = self._memory_bytes + length * self.row_bytes <= self.budget_bytes
        if not self._on_disk and fits:
            self._memory.append(arrays)
            self._memory_bytes += length * self.row_bytes
            return
        if not self._on_disk:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._on_disk = True
            held, self._memory, self._memory_bytes = self._memory, [], 0
            for chunk in held:
                self._write(chunk)
        self._write(arrays)

    def _write(self, arrays: dict[str, np.ndarray]) -> None:
        for k in self.dtypes:
            with open(self.path(k), "ab") as f:
                arrays[k].tofile(f)

    def chunks(self, max_rows: int) -> Iterator[dict[str, np.ndarray]]:
        """The columns in order, at most ``max_rows`` rows at a time (held chunks as they are)."""
        if not self._on_disk:
            yield from self._memory
            return
        handles = {k: open(self.path(k), "rb") for k in self.dtypes}
        try:
            for start in range(0, self.rows, max_rows):
                count = min(max_rows, self.rows - start)
                yield {k: np.fromfile(h, dtype=self.dtypes[k], count=count)
                       for k, h in handles.items()}
        finally:
            for h in handles.values():
                h.close()

    def concatenated(self) -> dict[str, np.ndarray]:
        """Everything in memory at once (only for spools that never spilled)."""
        assert not self._on_disk
        if len(self._memory) == 1:
            return self._memory[0]
        if not self._memory:
            return {k: np.zeros(0, d) for k, d in self.dtypes.items()}
        return {k: np.concatenate([m[k] for m in self._memory]) for k in self.dtypes}

    def memmaps(self) -> dict[str, np.ndarray]:
        """The columns as read-only memory maps of the spilled files (or the arrays in memory)."""
        if not self._on_disk:
            return self.concatenated()
        return {k: (np.memmap(self.path(k), dtype=d, mode="r", shape=(self.rows,)) if self.rows
                    else np.zeros(0, d)) for k, d in self.dtypes.items()}

    def discard(self) -> None:
        self._memory = []
        for k in self.dtypes:
            try:
                os.unlink(self.path(k))
            except FileNotFoundError:
                pass


class SpoolSet:
    """One :class:`Spool` per input part, read back part after part: the order is that of the
    input whatever order the parts' batches arrived in."""

    def __init__(self, directory: Path, name: str, dtypes: dict[str, np.dtype],
                 budget_bytes: int, parts: int):
        share = budget_bytes // max(parts, 1)
        self.spools = [Spool(directory, f"{name}{i}", dtypes, share) for i in range(parts)]
        self.dtypes = self.spools[0].dtypes

    @property
    def rows(self) -> int:
        return sum(s.rows for s in self.spools)

    @property
    def row_bytes(self) -> int:
        return self.spools[0].row_bytes

    @property
    def spilled(self) -> bool:
        return any(s.spilled for s in self.spools)

    def append(self, columns: dict[str, np.ndarray], part: int = 0) -> None:
        self.spools[part].append(columns)

    def chunks(self, max_rows: int) -> Iterator[dict[str, np.ndarray]]:
        for s in self.spools:
            yield from s.chunks(max_rows)

    def discard(self) -> None:
        for s in self.spools:
            s.discard()
