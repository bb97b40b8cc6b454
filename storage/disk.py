"""A full disk, told apart from other failures to write, and reported naming the space.

Writes fail on a full disk in more than one way: ``OSError`` with ``ENOSPC`` (or ``EDQUOT``,
``EFBIG``), LMDB's "No space left on device", and numpy's ``tofile`` reporting only a short
write ("5668 requested and 3465 written", no errno). :func:`disk_full` recognises each and
returns :class:`~graphdb.storage.errors.DiskFull` naming the folder that is full and what is
free there, so a spill to a full temp folder and a CHECKPOINT on a full disk say what to do
instead of showing a raw ``OSError``.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from .errors import DiskFull, size_text

__all__ = ["disk_full", "free_bytes"]

_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
#: Below this many free bytes a short write counts as the disk being full.
_NEARLY_FULL = 64 << 20


def free_bytes(path: Path) -> int | None:
    """Bytes available to this user on the filesystem of ``path`` (its nearest existing
    parent); None when it cannot be told."""
    path = Path(path)
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        vfs = os.statvfs(path)
    except OSError:
        return None
    return vfs.f_bavail * vfs.f_frsize


def disk_full(exc: BaseException, places: dict[str, Path]) -> DiskFull | None:
    """The DiskFull that ``exc`` (raised while writing) stands for, or None when it is not a
    full disk. ``places`` names the folders the write used (``{"temp folder": ..., "database":
    ...}``); the one that is full is named, with what is free there."""
    text = str(exc)
    certain = (isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS) or \
        "No space left" in text or "Disk quota" in text or "File too large" in text
    short_write = "requested and" in text and "written" in text
    if not certain and not short_write:
        return None
    filename = getattr(exc, "filename", None)
    candidates = list(places.items())
    if filename:
        inside = [(what, p) for what, p in candidates
                  if Path(filename) == Path(p) or Path(p) in Path(filename).parents]
        candidates = inside or candidates
    measured = [(free_bytes(p), what, Path(p)) for what, p in candidates]
    measured = [m for m in measured if m[0] is not None]
    if not measured:
        return DiskFull(None, None, None, detail=f"{text}; nothing was committed") \
            if certain else None
    free, what, path = min(measured, key=lambda m: m[0])
    if not certain and free > _NEARLY_FULL:
        return None
    return DiskFull(path, None, free, detail=(
        f"no space left in '{path}' (the {what}): {size_text(free)} free; free some space there"
        f"{' or choose another temp folder' if 'temp' in what else ''} and run it again; "
        "nothing was committed"))
