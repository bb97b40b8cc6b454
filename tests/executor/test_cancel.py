"""Cancellation points: a cancel reaches an operator inside its iterations, not only after it."""

from __future__ import annotations

import threading

import pytest

from executor.cancel import cancellable, checkpoint
from executor.errors import QueryCancelled


def test_checkpoint_raises_only_inside_a_cancelled_block():
    checkpoint()  # outside a query: nothing to watch
    event = threading.Event()
    with cancellable(event):
        checkpoint()
        event.set()
        with pytest.raises(QueryCancelled):
            checkpoint()
    checkpoint()  # the block's event is no longer watched


def test_cancellation_is_per_thread():
    event = threading.Event()
    event.set()
    seen = []
    with cancellable(event):
        worker = threading.Thread(target=lambda: seen.append(checkpoint() is None))
        worker.start()
        worker.join()
    assert seen == [True]
