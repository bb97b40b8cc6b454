"""Start-up of a GPU query in a fresh process."""

from __future__ import annotations

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
print(rows, "cupyx.linalg" in sys.modules, "gpu" in plan.lower())
"""


def test_bfs_query_does_not_import_cupyx():
    """BFS runs on raw kernels, memset and copies: its first query in a process does not pay
    for cupyx (and scipy.sparse with it), which CuPy imports at its first elementwise kernel.
    (``cupy.random`` registers ``cupyx`` as a lazy module at import: ``cupyx.linalg`` is the
    sign that it was executed.)"""
    out = subprocess.run([sys.executable, "-c", SNIPPET.format(root=str(ROOT))],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[(0, 0), (1, 1), (2, 2), (3, 3)] False True"
