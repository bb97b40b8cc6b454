"""GPU kernel variants waiting for a measurement (tools/gpu_variants) against their CPU twins:
each must give exactly the default's answers before its timing means anything."""

from __future__ import annotations

import numpy as np
import pytest

from graphdb.executor.graph import CSR, Graph
from graphdb.generators import grid, rmat
from tests.gpu._gpu_graphs import random_edges

pytestmark = pytest.mark.gpu


def _depths(g: Graph, source: int, max_depth=None):
    from graphdb.executor.algorithms.bfs.cpu import bfs_depths

    return bfs_depths(g, source, max_depth)[0]


def _graphs():
    src, dst = grid(120, 100)
    yield "grid", Graph.from_edges(src, dst, 12000, directed=False)
    src, dst = rmat(12, 16, seed=3)
    yield "rmat directed", Graph.from_edges(src, dst, 1 << 12, directed=True)
    rng = np.random.default_rng(5)
    src, dst = random_edges(rng, 3000, 9000)
    g = Graph.from_edges(src, dst, 3000, directed=True)
    yield "random", g
    out = g.csr("out")
    yield "random, int64 ids", Graph.from_csr("wide", CSR(out.offsets,
                                                          out.targets.astype(np.int64)),
                                              directed=True)


@pytest.mark.parametrize("small_frontier", [4096, 64, 3])
def test_bfs_small_shared_equals_the_cpu(small_frontier):
    """The shared-memory single-block levels, including their appends past the shared queue
    (a tiny limit: the block hands a grown frontier back to the many-block kernel)."""
    from tools.gpu_variants.bfs_small_shared import bfs_depths_shared

    for name, g in _graphs():
        deg = g.out_csr.degrees()
        for source in (0, int(np.argmax(deg)), g.num_vertices // 2):
            for max_depth in (None, 3):
                want = _depths(g, source, max_depth)
                depth, stats = bfs_depths_shared(g, source, max_depth=max_depth,
                                                 small_frontier=small_frontier)
                np.testing.assert_array_equal(depth.get(), want, err_msg=name)
                assert stats["reached"] == int((want >= 0).sum()), name
                if max_depth is None:
                    assert stats["levels"] == int(want.max()) + 1, name


def test_bfs_small_shared_runs_the_grid_in_single_block_levels():
    from graphdb.executor.algorithms.bfs.gpu import bfs_depths_gpu
    from tools.gpu_variants.bfs_small_shared import bfs_depths_shared

    src, dst = grid(120, 100)
    g = Graph.from_edges(src, dst, 12000, directed=False)
    _, default = bfs_depths_gpu(g, 0)
    depth, shared = bfs_depths_shared(g, 0)
    np.testing.assert_array_equal(depth.get(), _depths(g, 0))
    assert shared["small_levels"] == default["small_levels"] > 200
    assert shared["host_syncs"] == default["host_syncs"]
