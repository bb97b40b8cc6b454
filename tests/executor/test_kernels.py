"""The compiled kernels' plumbing: lazy import, threads, and one answer whatever the threads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

from graphdb.executor.algorithms.pagerank import cpu as pagerank
from graphdb.executor.graph import Graph
from graphdb.generators import rmat

ROOT = Path(__file__).resolve().parents[2]


def test_numba_and_scipy_are_not_imported_with_the_algorithms():
    """``import graphdb`` must not pay numba's import; the algorithms import scipy nowhere."""
    code = (
        "import sys, graphdb.executor.algorithms; "
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


SAME_ANSWERS = """
import sys
import numpy as np
from graphdb.executor.algorithms import REGISTRY, run
from graphdb.executor.algorithms.bfs import cpu as bfs
from graphdb.executor.algorithms.pagerank import cpu as pagerank
from graphdb.executor.algorithms.sssp import cpu as sssp
from graphdb.executor.algorithms.wcc import cpu as wcc
from tests.executor.test_kernels import kernel_cases
if sys.argv[2] == "compiled":
    for module in (bfs, pagerank, sssp, wcc):
        module.KERNELS.load()
results = {}
for key, graph, name, options in kernel_cases():
    for column, values in run(name, graph, options).columns.items():
        results[f"{key}/{column}"] = np.asarray(values)
np.savez(sys.argv[1], **results)
assert ("numba" in sys.modules) == (sys.argv[2] == "compiled")
"""


def kernel_cases():
    """Small graphs, every algorithm with a kernel: (key, graph, algorithm, options)."""
    from graphdb.generators import grid, random_weights

    src, dst = grid(9, 11)
    rsrc, rdst = rmat(7, 6, seed=5)
    graphs = {
        "grid": Graph.from_edges(src, dst, 99, directed=False, weights=random_weights(len(src))),
        "rmat": Graph.from_edges(rsrc, rdst, 128, directed=True, weights=random_weights(len(rsrc))),
    }
    for gname, graph in graphs.items():
        for name, options in [
            ("bfs", {"source": 3}),
            ("khop", {"source": 3, "k": 2}),
            ("wcc", {}),
            ("sssp", {"source": 3}),
            ("sswp", {"source": 3}),
            ("pagerank", {}),
            ("pagerank", {"tolerance": 1e-6, "max_iterations": 100}),
            ("shortest_path", {"source": 3, "target": 90}),
        ]:
            yield f"{gname}/{name}/{sorted(options.items())}", graph, name, options


def test_interpreted_kernels_give_the_compiled_answers(tmp_path):
    """GRAPHDB_KERNELS=python runs the kernels' source uncompiled (as tiny graphs do before
    numba is loaded): same answers as the compiled kernels, and numba is never imported."""
    import os

    answers = {}
    for mode in ("python", "compiled"):
        out = tmp_path / f"{mode}.npz"
        env = dict(os.environ, GRAPHDB_KERNELS="python" if mode == "python" else "")
        subprocess.run(
            [sys.executable, "-c", SAME_ANSWERS, str(out), mode],
            check=True,
            cwd=ROOT,
            env=env,
            timeout=120,
        )
        answers[mode] = dict(np.load(out))
    assert answers["python"].keys() == answers["compiled"].keys()
    for key, expected in answers["compiled"].items():
        assert np.allclose(answers["python"][key], expected, rtol=1e-12), key
