"""SIGKILL at random moments of DROP GRAPH, --replace and the deferred frees after them.

A child replaces and drops one graph in a loop, with a reader holding leases in another
process; it is killed at a random moment. Reopened, the graph is whole (one of its two versions)
or absent, and after the next writer nothing is left of any other version: no blocks, pages,
records or directories.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import graphdb

from .test_snapshots import mentioned_ids, write_edges

ROOT = Path(__file__).resolve().parents[2]
QUERY = "SELECT count(*), sum(weight) FROM g.edges"

WRITER = """
    import itertools, graphdb
    from tests.catalog.test_snapshots import churn
    with graphdb.connect({db!r}) as con:
        for step in itertools.count(1):
            churn(con, {files!r}, step)
"""

READER = """
    import time, graphdb
    with graphdb.connect({db!r}, read_only=True) as con:
        while True:
            try:
                con.execute({query!r}).fetchall()
            except graphdb.CatalogError:
                pass
"""


def _spawn(code: str) -> subprocess.Popen:
    script = f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + textwrap.dedent(code)
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def _rounds(tmp_path: Path, delays: list[float]) -> None:
    db = tmp_path / "db"
    files = [str(write_edges(tmp_path / f"v{i}.csv", 20 + i, m=800 + 400 * i)) for i in range(2)]
    answers = []
    for i, path in enumerate(files):
        with graphdb.connect(tmp_path / f"ref{i}") as con:
            con.ingest("g", path)
            answers.append(con.execute(QUERY).fetchall())
    with graphdb.connect(db, page_size=4096) as con:
        con.ingest("g", files[0])
    for delay in delays:
        reader = _spawn(READER.format(db=str(db), query=QUERY))
        writer = _spawn(WRITER.format(db=str(db), files=files))
        time.sleep(delay)
        writer.send_signal(signal.SIGKILL)
        writer.communicate()
        reader.send_signal(signal.SIGKILL)
        reader.communicate()
        with graphdb.connect(db) as con:
            if "g" in con.graphs():
                assert con.execute(QUERY).fetchall() in answers
            con.execute("DROP GRAPH IF EXISTS nothing")  # a write: nothing to drop, just tidy
            con.ingest("g", files[0], replace=True)  # the next writer frees what was retired
            live = con.catalog.get("g").graph_id
        assert mentioned_ids(db) == {live}


def test_kills_during_drops_and_replaces_leave_a_whole_graph_and_no_leftovers(tmp_path):
    _rounds(tmp_path, [0.7, 1.3])


@pytest.mark.slow
def test_kills_during_drops_and_replaces_many_moments(tmp_path):
    rng = random.Random(5)
    _rounds(tmp_path, [rng.uniform(0.3, 4.0) for _ in range(20)])
