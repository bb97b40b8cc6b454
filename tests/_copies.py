"""Copies of database directories for tests that damage or plant things in a copy.

``shutil.copytree`` writes every byte of a file, so LMDB's sparse ``data.mdb`` (its map, often
1 GiB of which a few MiB hold data) would take its whole length on disk in every copy: a
test run making dozens of copies would fill a CI machine's disk. These copies keep the holes.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["copy_database", "sparse_copy"]


def sparse_copy(src, dst, *, follow_symlinks: bool = True) -> str:
    """Copy one file as ``shutil.copy2`` does, writing only its data regions (holes stay)."""
    if not follow_symlinks and os.path.islink(src):
        os.symlink(os.readlink(src), dst)
        return str(dst)
    with open(src, "rb") as f, open(dst, "wb") as g:
        size = os.fstat(f.fileno()).st_size
        at = 0
        while at < size:
            try:
                start = os.lseek(f.fileno(), at, os.SEEK_DATA)
            except OSError:  # nothing but a hole to the end
                break
            end = os.lseek(f.fileno(), start, os.SEEK_HOLE)
            f.seek(start)
            g.seek(start)
            left = end - start
            while left > 0:
                chunk = f.read(min(left, 1 << 20))
                if not chunk:
                    break
                g.write(chunk)
                left -= len(chunk)
            at = end
        g.truncate(size)
    shutil.copystat(src, dst)
    return str(dst)


def copy_database(src: Path, dst: Path, symlinks: bool = False) -> Path:
    """``shutil.copytree`` of a database directory with sparse files kept sparse."""
    shutil.copytree(src, dst, symlinks=symlinks, copy_function=sparse_copy)
    return Path(dst)
