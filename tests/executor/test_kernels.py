"""The compiled kernels' plumbing: lazy import, threads, and one answer whatever the threads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

from executor.algorithms import pagerank
from executor.graph import Graph
from graphdb.generators import rmat

ROOT = Path(__file__).resolve().parents[2]


def test_numba_and_scipy_are_not_imported_with_the_algorithms():
    """``import graphdb`` must not pay numba's import; the algorithms import scipy nowhere."""
    code = (
        "import sys, executor.algorithms; "
        "assert 'numba' not in sys.modules, 'numba imported eagerly'; "
        "assert 'scipy' not in sys.modules, 'scipy imported by executor.algorithms'; "
        "import graphdb; assert 'numba' not in sys.modules, 'numba imported by graphdb'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=60)


def test_pagerank_follows_the_threads_setting_and_gives_one_answer():
    import numba

    src, dst = rmat(12, 8, seed=4)
    graph = Graph.from_edges(src, dst, 4096, directed=True)
    before = pa.cpu_count()
    try:
        pa.set_cpu_count(1)
        one, _ = pagerank.pagerank_ranks(graph)
        assert numba.get_num_threads() == 1
        pa.set_cpu_count(max(2, before))
        many, _ = pagerank.pagerank_ranks(graph)
        assert numba.get_num_threads() == min(max(2, before), numba.config.NUMBA_NUM_THREADS)
    finally:
        pa.set_cpu_count(before)
    assert np.allclose(one, many, rtol=1e-12, atol=0)
    assert abs(one.sum() - 1.0) < 1e-12
