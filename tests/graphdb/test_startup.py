"""What a fresh process loads for its first statement: only what that statement needs.

Start-up is measured by tools (a fresh process timed beside its dependencies' own imports,
``python -X importtime``); what is pinned here is what must stay out of it: a first ``SELECT
1`` (and a first BFS on a graph small enough for the interpreted kernels) imports no compiler,
no scientific stack beyond numpy and pyarrow, no ingest pipeline, no shell libraries.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support import ROOT

#: Never imported by import graphdb + connect + a first query of these kinds.
NOT_NEEDED = ("numba", "scipy", "pandas", "polars", "rich", "prompt_toolkit", "pygments",
              "networkx", "cupy", "pyarrow.compute", "graphdb.catalog.ingest",
              "graphdb.catalog.readers", "graphdb.catalog.writer")

PROBE = """
import sys, graphdb, pyarrow as pa
con = graphdb.connect()
con.execute({query!r}).fetchall()
print(" ".join(m for m in {names!r} if m in sys.modules))
"""


@pytest.mark.parametrize("query", ["SELECT 1", "SELECT count(*) FROM range(10) t(x) WHERE x > 3"])
def test_a_first_statement_imports_only_what_it_needs(query):
    done = subprocess.run([sys.executable, "-c", PROBE.format(query=query, names=NOT_NEEDED)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [], f"{query}: imported {done.stdout.split()}"
