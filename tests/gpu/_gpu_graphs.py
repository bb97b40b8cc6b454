"""Helpers shared by the GPU tests (a plain module: tests/ has no packages)."""

from __future__ import annotations

import numpy as np


def random_edges(rng: np.random.Generator, n: int, m: int):
    """Edges with duplicates and self loops on purpose; the top ~10% of ids stay isolated."""
    hi = max(1, int(n * 0.9))
    src = rng.integers(0, hi, size=m)
    dst = rng.integers(0, hi, size=m)
    if m >= 4:
        src[:2], dst[:2] = src[2], dst[2]  # duplicates
        dst[3] = src[3]  # a self loop
    return src, dst


def gpu_connection():
    """An in-memory connection with ``SET device = 'gpu'`` (a module fixture's body)."""
    import graphdb

    with graphdb.connect() as con:
        con.execute("SET device = 'gpu'")
        yield con
