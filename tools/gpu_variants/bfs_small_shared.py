"""BFS's single-block levels with the frontier queues and the level counters in shared memory
(``bfs_small_shared.cu``), plugged into :func:`graphdb.executor.algorithms.bfs.gpu.
bfs_depths_gpu` in place of ``graphdb_frontier_bfs_small``: same levels, same control block.

Target (issue 31): grid BFS at 5 us per level, against 10.1 us with the default kernel on an
H200 (docs/performance/2026-11-24.md). ``tools/bench_gpu.py`` times both on the 2048 x 2048
grid (``grid_levels``: ``small_shared`` beside ``small``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from graphdb.executor.abi import SMALL_FRONTIER
from graphdb.executor.gpu.runtime import CudaModule

__all__ = ["MODULE", "bfs_depths_shared", "small_kernel"]

MODULE = CudaModule(str(Path(__file__).with_name("bfs_small_shared.cu")),
                    ("graphdb_bfs_small_shared<{id}>",))


def small_kernel(ids: np.dtype, limit: int = SMALL_FRONTIER):
    """(the kernel for vertex ids ``ids``, its dynamic shared memory in bytes) for frontiers of
    at most ``limit`` pieces: two queues of ``limit`` (vertex, piece) entries."""
    from graphdb.executor.gpu.compiled import set_dynamic_shared

    kernel = MODULE.kernel("graphdb_bfs_small_shared", ids)
    shared = 2 * limit * (np.dtype(ids).itemsize + 4)
    set_dynamic_shared(kernel, shared)
    return kernel, shared


def bfs_depths_shared(graph, source: int, **options):
    """:func:`bfs_depths_gpu` with this variant's single-block levels."""
    from graphdb.executor.algorithms.bfs.gpu import bfs_depths_gpu
    from graphdb.executor.gpu import runtime as rt

    ids = rt.device_csr(graph, "out").targets.dtype
    return bfs_depths_gpu(graph, source, small=small_kernel(ids, options.get(
        "small_frontier", SMALL_FRONTIER)), **options)
