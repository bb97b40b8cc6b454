"""The synthetic graph generators: deterministic, the right shape, and loadable."""

from __future__ import annotations

import numpy as np
import pytest

import graphdb
from graphdb.generators import grid, random_weights, rmat
from tools.generate import main as generate


def test_rmat_is_deterministic_and_skewed():
    a = rmat(10, 8, seed=5)
    b = rmat(10, 8, seed=5)
    c = rmat(10, 8, seed=6)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0])
    src, dst = a
    assert len(src) == len(dst) == 8 * 1024
    assert src.min() >= 0 and max(src.max(), dst.max()) < 1024
    degrees = np.bincount(src, minlength=1024)
    # R-MAT's power law: the busiest vertex has far more edges than the average (8).
    assert degrees.max() > 10 * degrees.mean()


def test_grid_shape():
    src, dst = grid(4, 5)
    assert len(src) == 4 * 4 + 3 * 5  # horizontal + vertical edges
    assert set(np.abs(dst - src)) == {1, 5}
    with pytest.raises(ValueError):
        grid(0, 3)


def test_random_weights_range():
    w = random_weights(1000, low=1, high=100, seed=1)
    assert w.min() >= 1 and w.max() <= 100 and np.all(w == np.round(w))


@pytest.mark.parametrize("suffix", [".csv", ".e", ".parquet"])
def test_generate_tool_writes_loadable_files(tmp_path, suffix):
    path = tmp_path / f"g{suffix}"
    assert generate(["grid", "--rows", "3", "--cols", "3", "--weights", str(path)]) == 0
    with graphdb.connect(tmp_path / "db") as con:
        summary = con.ingest("g", path, undirected=True)
        assert summary["vertices"] == 9 and summary["edges"] == 12 and summary["weighted"]
        far = con.execute("SELECT vertex, depth FROM bfs(g, 0) ORDER BY depth DESC LIMIT 1").fetchone()
        assert far == (8, 4)
