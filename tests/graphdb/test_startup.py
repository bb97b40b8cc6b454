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


CLI_PROBE = """
import sys, runpy
sys.argv = ["graphdb", "query", {db!r}, "SELECT 1"]
try:
    runpy.run_module("graphdb", run_name="__main__")
except SystemExit:
    pass
print(" ".join(m for m in {names!r} if m in sys.modules), file=sys.stderr)
"""


def test_graphdb_query_loads_neither_the_shell_nor_the_ingest(tmp_path):
    """``graphdb query`` (not on a terminal) builds every subcommand's options, ingest's among
    them, but loads neither the ingest's readers nor the shell's modules for a SELECT."""
    import graphdb

    db = tmp_path / "db"
    graphdb.connect(str(db)).close()
    # (rich's cell widths lay the table out: the output needs them)
    names = tuple(n for n in NOT_NEEDED if n != "rich") + ("graphdb.repl", "graphdb.shell_commands")
    done = subprocess.run([sys.executable, "-c", CLI_PROBE.format(db=str(db), names=names)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "1" in done.stdout
    assert done.stderr.split() == [], done.stderr
