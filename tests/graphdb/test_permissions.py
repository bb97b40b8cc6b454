"""File modes, and a user who may only read a database.

Files are created 0600 and directories 0700 whatever the umask (was: world-readable, and
world-writable under umask 000), or with the ``mode`` the database was created with. A reader
without write access can run SHOW GRAPHS and queries, from Python and from ``graphdb query``
(which opens read-only); a write is refused with a clear error.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import graphdb

ROOT = Path(__file__).resolve().parents[2]


def edges(path: Path) -> Path:
    path.write_text("src,dst,weight\n1,2,1.5\n2,3,2.0\n3,1,1.0\n3,4,4.0\n")
    return path


def modes(db: Path) -> dict[str, int]:
    out = {".": stat.S_IMODE(db.stat().st_mode)}
    for p in db.rglob("*"):
        out[str(p.relative_to(db))] = stat.S_IMODE(p.lstat().st_mode)
    return out


@pytest.fixture
def open_umask():
    old = os.umask(0)
    yield
    os.umask(old)


def test_everything_is_private_by_default_whatever_the_umask(tmp_path, open_umask):
    db = tmp_path / "db"
    with graphdb.connect(db) as con:
        con.ingest("g", edges(tmp_path / "e.csv"))
        con.execute("DROP GRAPH g")
        con.ingest("g", edges(tmp_path / "e.csv"))
    found = modes(db)
    assert len(found) > 8
    wrong = {p: oct(m) for p, m in found.items()
             if m != (0o700 if (db / p).is_dir() else 0o600)}
    assert not wrong, wrong


def test_a_chosen_mode_is_kept_by_later_opens(tmp_path, open_umask):
    db = tmp_path / "db"
    graphdb.connect(db, mode=0o640).close()
    with graphdb.connect(db) as con:  # a later open follows the database's own mode
        con.ingest("g", edges(tmp_path / "e.csv"))
    wrong = {p: oct(m) for p, m in modes(db).items()
             if m != (0o750 if (db / p).is_dir() else 0o640)}
    assert not wrong, wrong
    with pytest.raises(graphdb.OperationalError, match="mode"):
        graphdb.connect(tmp_path / "other", mode=0o1777)


def _as_reader(db: Path) -> list[str]:
    """A command prefix that runs a child as a user who may read ``db`` but not write it.

    Not root: ourselves, with the write bits removed from every file and directory. Root
    ignores permission bits, and another user could not run this Python (it lives under
    /root): the child then gets ``db`` bind-mounted read-only in a mount namespace of its own
    (``unshare --mount``), which refuses every write as a read-only user's permissions would.
    """
    if os.geteuid() != 0:
        for p in [db, *db.rglob("*")]:
            p.chmod(stat.S_IMODE(p.stat().st_mode) & ~0o222)
        return []
    return ["unshare", "--mount", "sh", "-c",
            'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" && exec "$@"', str(db)]


def _run(args, prefix):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(prefix + args, capture_output=True, text=True, timeout=120, env=env)


def test_a_read_only_user_can_query_and_is_refused_a_write(tmp_path):
    parent = Path(tempfile.mkdtemp(prefix="graphdb-shared-"))
    try:
        parent.chmod(0o755)  # pytest's own directories are private to us
        db = parent / "db"
        with graphdb.connect(db, mode=0o644) as con:
            con.ingest("g", edges(tmp_path / "e.csv"))
            expected = con.execute("SELECT * FROM bfs(g, 1) ORDER BY vertex").fetchall()
        before = modes(db)
        prefix = _as_reader(db)
        cli = [sys.executable, "-m", "graphdb", "query", str(db)]
        shown = _run(cli + ["SHOW GRAPHS", "--format", "csv"], prefix)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.splitlines()[1].startswith("g,true,true,4,4")
        bfs = _run(cli + ["SELECT * FROM bfs(g, 1) ORDER BY vertex", "--format", "csv"],
                   prefix)
        assert bfs.returncode == 0, bfs.stderr
        assert [tuple(map(int, line.split(","))) for line in bfs.stdout.splitlines()[1:]] \
            == expected
        drop = _run(cli + ["DROP GRAPH g"], prefix)
        assert drop.returncode == 1 and drop.stderr.startswith("Error: "), drop.stderr
        assert "internal error" not in drop.stderr
        api = _run([sys.executable, "-c", f"""
import graphdb
with graphdb.connect({str(db)!r}, read_only=True) as con:
    print(con.execute("SELECT count(*) FROM g.edges").fetchall())
"""], prefix)
        assert api.returncode == 0, api.stderr
        assert api.stdout.strip() == "[(4,)]"
        if os.geteuid() != 0:
            for p in [db, *db.rglob("*")]:
                p.chmod(stat.S_IMODE(p.stat().st_mode) | 0o200)
        after = modes(db)
        assert {k: v & ~0o222 for k, v in after.items()} == \
            {k: v & ~0o222 for k, v in before.items()}  # the reader created nothing
        with graphdb.connect(db) as con:
            assert con.graphs() == ["g"]
    finally:
        import shutil

        shutil.rmtree(parent, ignore_errors=True)


def test_the_ingest_command_takes_a_mode(tmp_path, open_umask):
    from graphdb.cli import main

    db = tmp_path / "db"
    assert main(["ingest", str(db), "g", str(edges(tmp_path / "e.csv")), "--quiet",
                 "--mode", "640"]) == 0
    wrong = {p: oct(m) for p, m in modes(db).items()
             if m != (0o750 if (db / p).is_dir() else 0o640)}
    assert not wrong, wrong
    with pytest.raises(SystemExit) as refused:  # argparse: not an octal mode
        main(["ingest", str(tmp_path / "other"), "g", str(tmp_path / "e.csv"), "--mode", "9"])
    assert refused.value.code == 2 and not (tmp_path / "other").exists()
