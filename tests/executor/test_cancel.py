"""Cancellation points: a cancel reaches an operator inside its iterations, not only after it."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp

import graphdb
from graphdb.executor.cancel import cancellable, checkpoint
from graphdb.executor.errors import QueryCancelled


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


def test_interrupt_stops_a_long_pagerank_within_its_iterations(tmp_path):
    """PageRank with a tolerance of zero runs up to a million iterations: without cancellation
    points inside it, interrupt() would wait for all of them."""
    rng = np.random.default_rng(3)
    n, m = 20000, 200000
    con = graphdb.connect(str(tmp_path / "db"), device="cpu")
    matrix = sp.coo_matrix((np.ones(m), (rng.integers(0, n, m), rng.integers(0, n, m))),
                           shape=(n, n))
    con.from_scipy("g", matrix, weighted=False)
    errors, done = [], threading.Event()

    def run():
        try:
            con.execute("SELECT count(*) FROM pagerank(g, tolerance => 0.0, "
                        "max_iterations => 1000000)").fetchall()
        except graphdb.Error as exc:
            errors.append(exc)
        done.set()

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    time.sleep(0.5)
    started = time.perf_counter()
    con.interrupt()
    assert done.wait(10), "the query did not stop"
    assert time.perf_counter() - started < 5
    assert errors and "cancel" in str(errors[0]).lower()
    con.close()
