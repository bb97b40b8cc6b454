"""Parts of one file read in parallel report the error a single reader would: the first in file
order, whichever thread fails first (a race that showed on a 16-core machine)."""

from __future__ import annotations

import threading

import pyarrow as pa
import pytest

from graphdb.catalog.readers import _parallel


class _Part:
    def __init__(self, rows: int, error: str | None = None, wait: threading.Event | None = None,
                 done: threading.Event | None = None):
        self.rows, self.error, self.wait, self.done = rows, error, wait, done

    def batches(self, column_types):
        if self.wait is not None:
            self.wait.wait(5)  # this part is slow: a later part fails before it gets going
        yield pa.record_batch({"x": list(range(self.rows))})
        if self.done is not None:
            self.done.set()
        if self.error is not None:
            raise ValueError(self.error)


def test_the_earliest_part_error_wins_even_when_a_later_part_fails_first():
    later_failed = threading.Event()

    class _Signal(_Part):
        def batches(self, column_types):
            try:
                yield from super().batches(column_types)
            finally:
                later_failed.set()

    parts = [_Part(3, "part 0 is bad at its line 3", wait=later_failed), _Part(2),
             _Signal(1, "part 2 is bad")]
    seen = []
    with pytest.raises(ValueError, match="part 0"):
        for _f, _row, batch, part in _parallel(parts, None):
            seen.append((part, batch.num_rows))
    assert (0, 3) in seen  # the earlier part ran on after the later one failed


def test_without_errors_every_part_is_read():
    parts = [_Part(3), _Part(2), _Part(4)]
    got = sorted((part, batch.num_rows) for _f, _r, batch, part in _parallel(parts, None))
    assert got == [(0, 3), (1, 2), (2, 4)]
