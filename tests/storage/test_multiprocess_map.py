"""The LMDB map shared by processes, and a full disk.

With ``writemap`` LMDB sets the data file's length to the opener's map size: a read-write open
with a smaller map than a running writer's cut the file under it, and the writer died with
SIGBUS (exit 135). Reproduced here with a writer paused inside its commit after growing the
map, and a second process opening the database read-write meanwhile.

A full disk: a small filesystem made without root, a tmpfs in a user and mount namespace
(``unshare --user --map-root-user --mount``; skipped where unprivileged namespaces are off), and
a file size limit (``RLIMIT_FSIZE``, SIGXFSZ ignored) which works everywhere. Either way the
ingest that does not fit fails with OperationalError naming the bytes, the process survives,
and the database answers as before.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import graphdb
from graphdb.generators import rmat
from graphdb.storage.topology import TEST_PAUSE_ENV

from .test_storage_crash import child, write_edges

ROOT = Path(__file__).resolve().parents[2]


def edges(path: Path, scale: int, seed: int) -> Path:
    return write_edges(path, *rmat(scale, seed=seed))


def test_a_read_write_open_during_a_grown_write_never_cuts_the_file(tmp_path):
    db, marker = tmp_path / "db", tmp_path / "paused"
    big = edges(tmp_path / "big.csv", 14, 5)
    small_map = {"GRAPHDB_INITIAL_MAP_SIZE": str(1 << 20)}
    with graphdb.connect(db, page_size=16384) as con:
        con.ingest("small", edges(tmp_path / "small.csv", 6, 1))
    writer = child(f"""
        import graphdb
        with graphdb.connect({str(db)!r}) as con:
            con.ingest("big", {str(big)!r})
        print("committed")
    """, env={**small_map, TEST_PAUSE_ENV: str(marker), TEST_PAUSE_ENV + "_SECONDS": "1"})
    deadline = time.time() + 120
    while not marker.exists():
        assert writer.poll() is None, writer.communicate()
        assert time.time() < deadline
        time.sleep(0.02)
    data = db / "meta.lmdb" / "data.mdb"
    grown = data.stat().st_size
    assert grown > 1 << 20  # the writer's map is larger than the opener's initial one
    opener = child(f"""
        import graphdb
        with graphdb.connect({str(db)!r}) as con:   # read-write, a 1 MiB initial map
            print(con.graphs())
    """, env=small_map)
    sizes = []
    while opener.poll() is None or writer.poll() is None:
        sizes.append(data.stat().st_size)
        time.sleep(0.01)
    out, err = writer.communicate()
    assert writer.returncode == 0, err  # was -7 (SIGBUS)
    assert out.strip() == "committed"
    out, err = opener.communicate()
    assert opener.returncode == 0, err
    assert min(sizes) >= grown  # nobody shrank the file under the writer
    src, _dst = rmat(14, seed=5)
    with graphdb.connect(db, read_only=True) as con:
        assert con.graphs() == ["big", "small"]
        assert dict(con.execute("DESCRIBE big").fetchall())["edges"] == str(len(src))


FULL_DISK = """
    import os, graphdb
    db, small, big = {db!r}, {small!r}, {big!r}
    with graphdb.connect(db, page_size=16384) as con:
        con.ingest("small", small)
        before = con.execute("SELECT * FROM bfs(small, 0) ORDER BY vertex").fetchall()
        try:
            con.ingest("big", big)
            print("stored")
        except graphdb.OperationalError as exc:
            print("refused:", exc)
        assert con.graphs() == ["small"], con.graphs()
        assert con.execute("SELECT * FROM bfs(small, 0) ORDER BY vertex").fetchall() == before
    with graphdb.connect(db) as con:  # reopened: as before
        assert con.graphs() == ["small"]
        assert con.execute("SELECT * FROM bfs(small, 0) ORDER BY vertex").fetchall() == before
    print("intact")
"""


def _namespaces_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "true"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _namespaces_work(), reason="needs unprivileged user namespaces")
def test_a_full_disk_refuses_the_write_cleanly(tmp_path):
    mount = tmp_path / "small-disk"
    mount.mkdir()
    small = edges(tmp_path / "small.csv", 6, 1)
    big = edges(tmp_path / "big.csv", 17, 2)  # 2 M edges: 17 MB of CSR blocks on a 12 MB disk
    script = tmp_path / "full.py"
    script.write_text(f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + textwrap.dedent(
        FULL_DISK.format(db=str(mount / "db"), small=str(small), big=str(big))))
    run = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
         f"mount -t tmpfs -o size=12m tmpfs {mount} && exec {sys.executable} {script}"],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "GRAPHDB_INITIAL_MAP_SIZE": str(1 << 20)})
    assert run.returncode == 0, run.stderr  # was -7 (SIGBUS) in the commit
    lines = run.stdout.splitlines()
    assert lines[0].startswith("refused: not enough disk space"), lines
    assert "MiB" in lines[0] and "nothing was written" in lines[0]
    assert lines[-1] == "intact"


def test_a_file_size_limit_refuses_the_write_cleanly(tmp_path):
    import resource
    import signal

    small = edges(tmp_path / "small.csv", 6, 1)
    big = edges(tmp_path / "big.csv", 17, 2)  # 2 M edges: 17 MB of CSR blocks on a 12 MB disk
    limit = 6 << 20

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # then writes past it fail with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    script = f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + textwrap.dedent(
        FULL_DISK.format(db=str(tmp_path / "db"), small=str(small), big=str(big)))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300, preexec_fn=limited,
                         env={**os.environ, "GRAPHDB_INITIAL_MAP_SIZE": str(1 << 20)})
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("refused:") and "disk" in lines[0], lines
    assert lines[-1] == "intact"
