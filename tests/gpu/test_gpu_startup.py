"""Start-up of a GPU query in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.gpu.conftest import ROOT

pytestmark = pytest.mark.gpu

SNIPPET = r"""
import sys
sys.path.insert(0, {root!r})
import graphdb
import numpy as np
import scipy.sparse as sp
with graphdb.connect() as con:
    edges = sp.coo_array((np.ones(4), ([0, 1, 2, 2], [1, 2, 0, 3])), shape=(4, 4))
    con.from_scipy("g", edges, weighted=False)
    con.execute("SET device = 'gpu'")
    rows = con.execute("SELECT vertex, depth FROM bfs(g, 0) ORDER BY vertex").fetchall()
    plan = "\n".join(r[0] for r in con.execute("EXPLAIN SELECT * FROM bfs(g, 0)").fetchall())
with open("/proc/self/maps") as maps:
    nvrtc = "libnvrtc" in maps.read()
print(rows, "cupyx.linalg" in sys.modules, "gpu" in plan.lower(), nvrtc)
"""


def _fresh_bfs_query(cache_dir) -> str:
    env = dict(os.environ, GRAPHDB_CACHE_DIR=str(cache_dir))
    return subprocess.run([sys.executable, "-c", SNIPPET.format(root=str(ROOT))], env=env,
                          capture_output=True, text=True, check=True).stdout.strip()


def test_bfs_query_does_not_import_cupyx(tmp_path):
    """BFS runs on raw kernels, memset and copies: its first query in a process does not pay
    for cupyx (and scipy.sparse with it), which CuPy imports at its first elementwise kernel.
    (``cupy.random`` registers ``cupyx`` as a lazy module at import: ``cupyx.linalg`` is the
    sign that it was executed.) With the kernel cache warm, NVRTC is not even loaded: the
    module comes from graphdb's own cubin cache (graphdb.executor.gpu.compiled)."""
    cold = _fresh_bfs_query(tmp_path)
    assert cold == "[(0, 0), (1, 1), (2, 2), (3, 3)] False True True"  # compiled: NVRTC ran
    assert list(tmp_path.glob("cuda/graphdb-*.cubin"))
    warm = _fresh_bfs_query(tmp_path)
    assert warm == "[(0, 0), (1, 1), (2, 2), (3, 3)] False True False"


def test_kernel_cache_hits_and_repairs(tmp_path, monkeypatch):
    """A second load of a module reads the cubin and never compiles; a damaged cache file is
    compiled again and replaced, and the kernels it yields still agree with the CPU."""
    import numpy as np

    from graphdb.executor.gpu import compiled
    from graphdb.executor.gpu import runtime as rt

    monkeypatch.setenv("GRAPHDB_CACHE_DIR", str(tmp_path))
    from graphdb.executor.algorithms.wcc.gpu import WCC_KERNELS

    source = WCC_KERNELS.source()
    exprs = ("graphdb_wcc_compress<int>",)
    first = compiled.load_module(source, exprs)
    (path,) = tmp_path.glob("cuda/graphdb-*.cubin")
    assert set(first.names) == set(exprs)

    def no_compile(*args):
        raise AssertionError("compiled although the cache holds the module")

    real_compile = compiled._compile
    monkeypatch.setattr(compiled, "_compile", no_compile)
    assert compiled.load_module(source, exprs).names == first.names

    path.write_bytes(path.read_bytes()[:-64])  # damaged: truncated
    monkeypatch.setattr(compiled, "_compile", real_compile)
    repaired = compiled.load_module(source, exprs)
    assert compiled._read(path, exprs) is not None

    # pointer jumping to the roots: parent = [0, 0, 1, 2, 3] compresses to all zeros
    cp = rt.cp()
    parent = cp.asarray(np.array([0, 0, 1, 2, 3], dtype=np.int32))
    compress = repaired.get_function("graphdb_wcc_compress<int>")
    compress((1,), (32,), (parent, np.int64(5)))
    assert parent.get().tolist() == [0, 0, 0, 0, 0]
