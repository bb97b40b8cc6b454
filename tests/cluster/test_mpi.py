"""The cluster path through a real MPI runtime: ``mpiexec -n 2`` on this machine's cores.

The partitioned operators and the collectives through MPI (tests/cluster/mpi_cases.py), SQL
through ``graphdb.connect(path, cluster="mpi")``, ``graphdb query ... --cluster mpi`` and the
shell with rank 0 reading statements, and a job whose rank is killed or frozen mid-query: it
ends, with a clear error, within its timeout. Skipped where mpi4py or mpiexec is missing (the
``cluster`` extra, which the ``dev`` extra includes).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import graphdb
from graphdb.generators import rmat
from tests.support import ROOT
from tools.mpi_runtime import mpi_environment, mpiexec


def _mpiexec() -> str | None:
    return mpiexec()


def _have_mpi4py() -> bool:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


pytestmark = pytest.mark.skipif(_mpiexec() is None or not _have_mpi4py(),
                                reason="needs mpi4py and mpiexec (pip install 'graphdb[cluster]')")

GRAPHDB = [sys.executable, "-m", "graphdb"]


def _env() -> dict:
    env = mpi_environment()
    path = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return {**env, "PYTHONPATH": path, "NUMBA_NUM_THREADS": "1", "GRAPHDB_DISABLE_GPU": "1"}


@pytest.fixture(scope="module", autouse=True)
def _mpi_runtime_agrees():
    """Skip (not hang) where mpiexec and the MPI library mpi4py loads are different runtimes:
    each rank then starts as a job of one and the collectives wait for peers that never come
    (seen on a machine with a system Open MPI beside the mpich wheel; MPI4PY_MPIABI=mpich or
    MPI4PY_LIBMPI choose the library)."""
    probe = [sys.executable, "-c", "from mpi4py import MPI; print(MPI.COMM_WORLD.Get_size())"]
    try:
        done = job(probe, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.skip("mpiexec -n 2 did not finish a two-rank hello in 60 s")
    sizes = done.stdout.split()
    if done.returncode != 0 or sizes != ["2", "2"]:
        pytest.skip(f"mpiexec and mpi4py's MPI library disagree (ranks saw sizes {sizes}, "
                    f"status {done.returncode}): {done.stderr.strip()[:300]}")


def job(args: list[str], ranks: int = 2, timeout: float = 180, stdin: str | None = None):
    return subprocess.run([_mpiexec(), "-n", str(ranks), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=_env(), input=stdin)


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    """A database with an R-MAT graph, closed before the jobs open it (read-only, shared)."""
    path = tmp_path_factory.mktemp("cluster") / "db"
    src, dst = rmat(11, 8, seed=4)
    matrix = sp.coo_matrix((np.ones(len(src)), (src, dst)), shape=(1 << 11, 1 << 11))
    with graphdb.connect(path, device="cpu") as con:
        con.from_scipy("g", matrix, weighted=False)
    return path


def test_partitioned_operators_and_collectives_through_mpi():
    done = job([sys.executable, "-m", "tests.cluster.mpi_cases"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok 30 cases on 2 ranks" in done.stdout


QUERY = "SELECT vertex, rank FROM pagerank(g) ORDER BY rank DESC, vertex LIMIT 5"


def test_query_command_prints_once_from_rank_0(db):
    with graphdb.connect(db, device="cpu", read_only=True) as con:
        expected = con.execute(QUERY).fetchall()
    done = job(GRAPHDB + ["query", str(db), QUERY, "--format", "csv", "--cluster", "mpi",
                          "--device", "cpu"])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0] == "vertex,rank" and len(lines) == 6  # one header: rank 0 alone prints
    got = [(int(v), float(r)) for v, r in (line.split(",") for line in lines[1:])]
    assert [v for v, _ in got] == [v for v, _ in expected]
    assert np.allclose([r for _, r in got], [r for _, r in expected], rtol=1e-9)


SCRIPT = """
SET debug_variant = 'partitioned';
EXPLAIN ANALYZE SELECT count(*) FROM wcc(g);
SELECT count(DISTINCT component) AS wcc_count FROM wcc(g);
SELECT max(depth) AS bfs_deepest FROM bfs(g, 1);
"""


def test_shell_rank_0_reads_the_statements(db):
    with graphdb.connect(db, device="cpu", read_only=True) as con:
        components = con.execute("SELECT count(DISTINCT component) FROM wcc(g)").fetchone()[0]
        deepest = con.execute("SELECT max(depth) FROM bfs(g, 1)").fetchone()[0]
    done = job(GRAPHDB + ["shell", str(db), "--cluster", "mpi"], stdin=SCRIPT)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    flat = " ".join(out.split())  # EXPLAIN wraps its lines wherever the numbers end
    assert "cpu · partitioned · 2 ranks (MPI)" in flat
    assert "bytes exchanged" in flat and "collective time" in flat and "predicted" in flat
    assert out.count("wcc_count") == 1 and f"{components}" in out
    assert out.count("bfs_deepest") == 1 and f"{deepest}" in out


def test_copies_that_differ_are_refused(tmp_path):
    script = tmp_path / "differ.py"
    script.write_text(
        "import sys, graphdb\n"
        "from mpi4py import MPI\n"
        "rank = MPI.COMM_WORLD.Get_rank()\n"
        f"path = r'{tmp_path}' + f'/db{{rank}}'\n"
        "with graphdb.connect(path, device='cpu') as con:\n"
        "    con.from_scipy('g', __import__('scipy.sparse').sparse.eye(3 + rank).tocoo())\n"
        "try:\n"
        "    graphdb.connect(path, cluster='mpi')\n"
        "except graphdb.OperationalError as exc:\n"
        "    print(rank, exc)\n")
    done = job([sys.executable, str(script)])
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("copy of the database differs from rank 0's (graph 'g')") == 2


def _start_long_query(db: Path, folder: Path, timeout: float) -> tuple[subprocess.Popen, list]:
    proc = subprocess.Popen(
        [_mpiexec(), "-n", "2", sys.executable, "-m", "tests.cluster.long_query", str(db),
         str(folder), str(timeout)], cwd=ROOT, env=_env(), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    files = [folder / "rank0.pid", folder / "rank1.pid"]
    while not all(f.exists() and f.read_text() for f in files):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the job did not start: {proc.communicate()[0]}")
        time.sleep(0.05)
    time.sleep(1.0)  # well inside the query: a million iterations
    return proc, [int(f.read_text()) for f in files]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_rank_killed_mid_query_ends_the_job(db, tmp_path):
    proc, (rank0, rank1) = _start_long_query(db, tmp_path, timeout=10)
    killed = time.monotonic()
    os.kill(rank1, signal.SIGKILL)
    out, _ = proc.communicate(timeout=60)
    assert time.monotonic() - killed < 15
    assert proc.returncode != 0
    assert "BAD TERMINATION" in out or "graphdb cluster:" in out, out
    assert not _alive(rank0)


def test_a_rank_frozen_mid_query_is_noticed_within_the_timeout(db, tmp_path):
    proc, (rank0, rank1) = _start_long_query(db, tmp_path, timeout=3)
    frozen = time.monotonic()
    os.kill(rank1, signal.SIGSTOP)
    try:
        out, _ = proc.communicate(timeout=60)
    finally:
        if _alive(rank1):
            os.kill(rank1, signal.SIGKILL)
    assert time.monotonic() - frozen < 20
    assert proc.returncode != 0
    assert "graphdb cluster: rank 0 of 2 waited" in out and "a rank has died or hangs" in out
    assert not _alive(rank0)
