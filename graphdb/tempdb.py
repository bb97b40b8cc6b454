"""In-memory databases (``connect()``, ``connect(":memory:")``): a temporary directory that is
never left behind.

LMDB, under the catalog, needs files, so an in-memory database is a directory in the system's
temporary folder (``$TMPDIR``), ``graphdb-memory-XXXX/db``, owned by this process. It goes away

- when the connection closes, or at the latest when the interpreter exits (``atexit``);
- when the process is killed (``SIGKILL``, ``os._exit``, a crash): a small watchdog process,
  started with the first in-memory database of a process, holds the read end of a pipe whose
  write end only this process has; when the pipe closes it removes every directory it was told
  about and exits;
- and if even the watchdog could not run (or was killed with the process group), the next
  in-memory database any process makes removes folders whose owner (``owner.pid``) is gone.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

__all__ = ["create", "remove", "PREFIX"]

PREFIX = "graphdb-memory-"
_OWNER = "owner.pid"

#: The watchdog: one path per line, '+' to watch it, '-' to forget it; at end of input it
#: removes what it still watches. Runs isolated (-I -S): no site-packages, no user code.
_WATCHDOG = r"""
import shutil, sys
watched = set()
for line in sys.stdin:
    line = line.rstrip("\n")
    if line[:1] == "+":
        watched.add(line[1:])
    elif line[:1] == "-":
        watched.discard(line[1:])
for path in watched:
    shutil.rmtree(path, ignore_errors=True)
"""

_lock = threading.Lock()
_watchdog: subprocess.Popen | None = None
_watchdog_pid: int | None = None  # the process that started it (a fork must not use it)
_mine: dict[str, int] = {}  # directory -> pid of the process that made it


def _tell(line: str) -> None:
    """Send one line to the watchdog (started on first use); without one, nothing happens."""
    global _watchdog, _watchdog_pid
    if _watchdog is None or _watchdog_pid != os.getpid():
        try:
            _watchdog = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _WATCHDOG], stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
                start_new_session=True, close_fds=True)
            _watchdog_pid = os.getpid()
        except OSError:
            _watchdog = None
            return
    try:
        _watchdog.stdin.write(line + "\n")
        _watchdog.stdin.flush()
    except (OSError, ValueError):  # it died: the startup sweep is the fallback
        _watchdog = None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def _sweep(base: Path) -> None:
    """Remove in-memory databases whose owning process is gone."""
    for folder in base.glob(PREFIX + "*"):
        try:
            pid = int((folder / _OWNER).read_text().strip())
        except (OSError, ValueError):
            continue  # not (yet) ours to judge: being created, or not a graphdb folder
        if not _alive(pid):
            shutil.rmtree(folder, ignore_errors=True)


def create() -> Path:
    """A new, empty directory for an in-memory database (the database goes in ``db/``)."""
    base = Path(tempfile.gettempdir())
    _sweep(base)
    folder = Path(tempfile.mkdtemp(prefix=PREFIX, dir=base))
    (folder / _OWNER).write_text(f"{os.getpid()}\n")
    with _lock:
        _mine[str(folder)] = os.getpid()
        _tell("+" + str(folder))
    return folder / "db"


def remove(database: Path) -> None:
    """Delete an in-memory database made by :func:`create` (its whole folder)."""
    folder = str(Path(database).parent)
    shutil.rmtree(folder, ignore_errors=True)
    with _lock:
        if _mine.pop(folder, None) is not None and _watchdog_pid == os.getpid():
            _tell("-" + folder)


@atexit.register
def _at_exit() -> None:
    global _watchdog
    for folder, pid in list(_mine.items()):
        if pid == os.getpid():  # a forked child exiting leaves its parent's databases alone
            shutil.rmtree(folder, ignore_errors=True)
    if _watchdog is not None and _watchdog_pid == os.getpid():
        try:
            _watchdog.stdin.close()  # the watchdog removes what is left, then exits
            _watchdog.wait(timeout=1)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            pass
        _watchdog = None
