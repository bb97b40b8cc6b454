"""``graphdb check DB`` and ``PRAGMA integrity_check``: the whole database verified, isolated.

The check itself is :func:`graphdb.catalog.integrity.check_database`. It runs in a child
process: a database damaged in a way no check models could at worst crash LMDB in that child,
which is then reported as damage, never in the user's process (an embedding program, the
shell). As in SQLite, the answer is one row ``ok``, or one row per problem::

    graphdb> PRAGMA integrity_check;
     integrity_check
    ─────────────────
     ok

The command prints the same lines and exits with status 0 (whole), 1 (problems) or 2 (the
check could not run).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow as pa

from .errors import OperationalError

__all__ = ["check_command", "integrity_check", "integrity_lines"]

#: Seconds the child may run (a check reads the whole database once).
TIMEOUT = 24 * 3600
#: Test hook: the child kills itself with SIGSEGV (what LMDB on a page no check models does).
TEST_CRASH_ENV = "GRAPHDB_TEST_CRASH_IN_CHECK"


def integrity_lines(path: str | os.PathLike) -> list[str]:
    """The problems of the database at ``path`` as lines (``["ok"]`` when whole), found by a
    child process."""
    root = Path(__file__).resolve().parent.parent  # where ``graphdb`` is importable from
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root)] + [p for p in
                                                      [env.get("PYTHONPATH")] if p])
    try:
        done = subprocess.run([sys.executable, "-m", "graphdb.integrity", str(path)],
                              capture_output=True, text=True, env=env, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise OperationalError(f"the check of '{path}' did not finish in {TIMEOUT} s") from None
    if done.returncode < 0:  # the child died reading the file: damage no check models
        name = signal.Signals(-done.returncode).name
        return [f"meta.lmdb/data.mdb: reading the database crashed the checking process "
                f"({name}): the file is damaged"]
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        raise OperationalError(f"the check of '{path}' could not run: {last[0]}")
    lines = json.loads(done.stdout)
    return lines or ["ok"]


def integrity_check(path: str | os.PathLike) -> pa.Table:
    """``PRAGMA integrity_check``: one column, ``ok`` or a row per problem."""
    return pa.table({"integrity_check": pa.array(integrity_lines(path), pa.string())})


def check_command(path: str) -> int:
    """``graphdb check DB``: the lines on stdout; the exit status."""
    if not Path(path).is_dir():
        print(f"Error: database '{path}' does not exist", file=sys.stderr)
        return 2
    lines = integrity_lines(path)
    print("\n".join(lines))
    return 0 if lines == ["ok"] else 1


def _child(path: str) -> None:
    from graphdb.catalog.integrity import check_database

    if os.environ.get(TEST_CRASH_ENV):
        os.kill(os.getpid(), signal.SIGSEGV)
    print(json.dumps([str(p) for p in check_database(path)]))


if __name__ == "__main__":  # the child process of integrity_lines
    _child(sys.argv[1])
