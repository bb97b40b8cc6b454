"""In-memory databases: ``connect()`` and ``connect(":memory:")`` leave nothing on disk, whether
the connection is closed, the process exits, or the process is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest

import graphdb
from graphdb import tempdb
from tests.support import ROOT


@pytest.fixture
def tmpdir_only(tmp_path, monkeypatch):
    """The system temporary folder is ``tmp_path/tmp`` (for this process and its children)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setenv("TMPDIR", str(folder))
    return folder


def _left(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_memory_is_not_a_directory_name(tmp_path, tmpdir_only, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for path in (":memory:", None):
        with graphdb.connect(path) as con:
            con.from_networkx("g", __import__("networkx").path_graph(3))
            assert con.execute("SELECT count(*) FROM g.vertices").fetchone() == (3,)
            assert con.path.is_relative_to(tmpdir_only)
        assert not (tmp_path / ":memory:").exists()
        assert _left(tmpdir_only) == []


def test_in_memory_databases_are_separate(tmpdir_only):
    with graphdb.connect() as a, graphdb.connect(":memory:") as b:
        a.from_networkx("g", __import__("networkx").path_graph(3))
        assert a.graphs() == ["g"] and b.graphs() == []


def _child(code: str, tmpdir) -> subprocess.Popen:
    env = dict(os.environ, TMPDIR=str(tmpdir), PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                            text=True)


def _wait_empty(folder, seconds: float = 10.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while _left(folder) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _left(folder)


def test_exit_without_close_leaves_nothing(tmpdir_only):
    child = _child("import graphdb; con = graphdb.connect(); print(con.path)", tmpdir_only)
    out, _ = child.communicate(timeout=60)
    assert child.returncode == 0 and out.strip()
    assert _wait_empty(tmpdir_only) == []


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_killed_process_leaves_nothing(tmpdir_only):
    code = ("import graphdb, sys, time; con = graphdb.connect(); "
            "print(con.path, flush=True); time.sleep(60)")
    child = _child(code, tmpdir_only)
    path = child.stdout.readline().strip()
    assert path and os.path.isdir(path)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert _wait_empty(tmpdir_only) == []  # the watchdog removed it


def test_a_stale_folder_is_swept_by_the_next_database(tmpdir_only):
    # as a killed process whose watchdog was killed too would leave it
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    stale = tmpdir_only / f"{tempdb.PREFIX}stale"
    (stale / "db").mkdir(parents=True)
    (stale / "owner.pid").write_text(dead + "\n")
    alive = tmpdir_only / f"{tempdb.PREFIX}alive"
    alive.mkdir()
    (alive / "owner.pid").write_text(f"{os.getpid()}\n")
    with graphdb.connect():
        assert not stale.exists() and alive.exists()


def test_gpu_that_cannot_be_used_is_reported_at_connect(tmpdir_only, monkeypatch):
    from graphdb.executor import device

    monkeypatch.setenv("GRAPHDB_DISABLE_GPU", "1")
    device._probe.cache_clear()
    try:
        with pytest.raises(graphdb.OperationalError, match="device = 'gpu'.*'auto' or 'cpu'"):
            graphdb.connect(device="gpu")
        assert _left(tmpdir_only) == []  # the refused connection left nothing either
        with graphdb.connect() as con, pytest.raises(graphdb.OperationalError):
            con.execute("SET device = 'gpu'")
    finally:
        device._probe.cache_clear()
