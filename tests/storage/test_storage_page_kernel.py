"""The compiled page kernel writes exactly the bytes of the numpy page builder it replaces."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from graphdb.storage import page_kernel
from graphdb.storage.errors import StorageError
from graphdb.storage.pages import PageLayout, iter_pages, plan_pages

from .test_storage_pages import random_csr


@pytest.fixture(scope="module")
def compiled():
    """The compiled kernel, loaded by the worker that runs this file (not at collection, which
    every xdist worker does)."""
    kernel = page_kernel.RECORDS.load()
    if not kernel:
        pytest.skip("numba is not installed")
    return kernel


def pages(offsets, targets, weights, plan, monkeypatch, kernel):
    with monkeypatch.context() as patch:
        patch.setattr(page_kernel.RECORDS, "get", lambda: kernel)
        return [(pid, bytes(page)) for pid, page in iter_pages(offsets, targets, weights, plan)]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 300), m=st.integers(0, 3000), hub=st.sampled_from([0, 700, 5000]),
       weighted=st.booleans(), seed=st.integers(0, 2**16),
       layout=st.sampled_from([(512, 3, 3), (1024, 2, 1), (256, 2, 2), (4096, 1, 3),
                               (512, 5, 5), (2048, 4, 4), (4096, 8, 1)]),
       wide_targets=st.booleans())
def test_kernel_pages_equal_numpy_pages(compiled, monkeypatch, n, m, hub, weighted, seed, layout,
                                        wide_targets):
    offsets, targets, weights = random_csr(n, m, seed, hub_degree=hub)
    if wide_targets:
        targets = targets.astype(np.int64)
    page_size, p, q = layout
    try:
        plan = plan_pages(offsets, PageLayout(page_size, p, q), weighted)
    except StorageError:  # more pages than p bytes can number
        assume(False)
    weights = weights if weighted else None
    expected = pages(offsets, targets, weights, plan, monkeypatch, None)
    assert pages(offsets, targets, weights, plan, monkeypatch, compiled) == expected
