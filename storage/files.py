"""Files inside a database directory: opened without following links, never outside it.

A database directory may come from someone else (a copy, an archive, a shared folder), and a
symbolic link planted in it would make graphdb read or write outside it: ``meta.lmdb/lock.mdb``
pointing at another user's file gets that file overwritten by LMDB, a dangling ``leases.lock``
gets created wherever it points, ``graphs/<id>/vertices.arrow`` pointing at a copy gets read
as the graph. So:

- every file graphdb opens inside the directory is opened with ``O_NOFOLLOW``, each directory
  on the way opened relative to the one before it with ``O_NOFOLLOW`` too (:func:`open_file`),
  so a path can neither be a link nor pass through one;
- the files LMDB opens itself (``meta.lmdb/data.mdb`` and ``lock.mdb``) and the fixed names of
  the directory are checked before each open (:func:`refuse_links`): no link, and no second
  hard link to a file LMDB writes (a hard link to another user's file is a link too);
- a link found is never followed nor removed: the database is refused with
  :class:`LinkInDatabase`, which names the link and where it points.

The database directory itself is the user's path and may be reached through links; a link *at*
it is refused when it is opened (storage.env).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from .errors import CorruptData

__all__ = ["NOFOLLOW", "LinkInDatabase", "open_file", "refuse_links"]

#: Flags added to every open of a file inside a database directory.
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | NOFOLLOW


class LinkInDatabase(CorruptData):
    """A symbolic (or extra hard) link inside a database directory: refused, never followed."""

    def __init__(self, root: Path, relative: str, target: str | None, hard: bool = False):
        self.root, self.link, self.target = root, relative, target
        if hard:
            what = f"'{relative}' has another hard link (it may be another user's file)"
        else:
            where = f" -> '{target}'" if target is not None else ""
            what = f"'{relative}' is a symbolic link{where}"
        super().__init__(
            f"database '{root}': {what}; graphdb never follows links inside a database "
            "directory (a copied or shared database could make it read or write files outside "
            "it): replace the link by the file it stands for, or remove it", file=relative)


def _target(path: Path) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def refuse_links(root: Path, relatives: Iterable[str], written: Iterable[str] = ()) -> None:
    """Raise :class:`LinkInDatabase` if any of ``relatives`` (paths under ``root``) is a
    symbolic link or lies under one, or if any of ``written`` has a second hard link."""
    written = set(written)
    for relative in relatives:
        path = root
        for part in relative.split("/"):
            path = path / part
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                break
            except NotADirectoryError:
                break
            if stat.S_ISLNK(info.st_mode):
                raise LinkInDatabase(root, str(path.relative_to(root)), _target(path))
        else:
            if relative in written and stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                raise LinkInDatabase(root, relative, None, hard=True)


def open_file(root: Path, relative: str, flags: int = os.O_RDONLY, mode: int = 0o600) -> int:
    """``os.open`` of ``root/relative``, every part opened without following links, each
    directory relative to the one before it; LinkInDatabase for a link on the way."""
    parts = relative.split("/")
    here = os.open(root, _DIRECTORY & ~getattr(os, "O_NOFOLLOW", 0))
    try:
        done = []
        for part in parts[:-1]:
            done.append(part)
            try:
                inner = os.open(part, _DIRECTORY, dir_fd=here)
            except OSError as exc:
                _raise_link(exc, root, "/".join(done))
                raise
            os.close(here)
            here = inner
        try:
            return os.open(parts[-1], flags | NOFOLLOW, mode, dir_fd=here)
        except OSError as exc:
            _raise_link(exc, root, relative)
            raise
    finally:
        os.close(here)


def _raise_link(exc: OSError, root: Path, relative: str) -> None:
    """LinkInDatabase when ``exc`` is what O_NOFOLLOW gives for a link (ELOOP; ENOTDIR for
    a link where a directory was asked for)."""
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        path = root / relative
        if path.is_symlink():
            raise LinkInDatabase(root, relative, _target(path)) from None
