"""Keeping LMDB's memory map out of the process's resident set.

LMDB reads and (with ``writemap``) writes through one shared memory map of its data file. Every
page touched through it stays mapped in this process: a scan of a graph larger than the buffer
pool, or the commit of a large ingest, would show the whole graph as resident memory although
it is only page cache, which the kernel may reclaim at any time. ``MADV_DONTNEED`` unmaps such
pages. For a shared file mapping no data is lost: clean and dirty pages alike stay in the page
cache (dirty ones are written back by LMDB's sync at commit), and a later access maps the same
page again. Linux only; elsewhere these functions do nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

import numpy as np

__all__ = ["RELEASE_BYTES", "advise_file", "release_view", "release_file", "start_writeback",
           "trim_heap"]

#: Views smaller than this are not worth a system call.
RELEASE_BYTES = 256 << 10

_MADV_NORMAL, _MADV_RANDOM, _MADV_DONTNEED = 0, 1, 4
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_madvise = None  # resolved on first use: libc's madvise, or False where there is none


def _libc_madvise():
    global _madvise
    if _madvise is None:
        _madvise = False
        if sys.platform.startswith("linux"):
            try:
                libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
                fn = libc.madvise
                fn.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
                fn.restype = ctypes.c_int
                _madvise = fn
            except (OSError, AttributeError):
                pass
    return _madvise


def _dontneed(start: int, stop: int) -> None:
    fn = _libc_madvise()
    first = -(-start // _PAGE) * _PAGE  # whole pages only: never the neighbours' bytes
    last = stop // _PAGE * _PAGE
    if fn and last > first:
        fn(first, last - first, _MADV_DONTNEED)  # advisory: a failure changes nothing


def release_view(view) -> None:
    """Unmap the whole memory pages under ``view``, a buffer inside LMDB's map."""
    array = np.frombuffer(view, dtype=np.uint8)
    if array.nbytes >= RELEASE_BYTES:
        start = array.ctypes.data
        _dontneed(start, start + array.nbytes)


def _advise_file(path: str | os.PathLike, advice: int) -> int:
    fn = _libc_madvise()
    if not fn:
        return 0
    target = os.path.realpath(path)
    try:
        with open("/proc/self/maps") as maps:
            spans = [line.split(maxsplit=1)[0] for line in maps
                     if line.rstrip().endswith(target)]
    except OSError:
        return 0
    advised = 0
    for span in spans:
        start, stop = (int(x, 16) for x in span.split("-"))
        fn(start, stop - start, advice)  # advisory: a failure changes nothing
        advised += stop - start
    return advised


def release_file(path: str | os.PathLike) -> int:
    """Unmap every mapping of ``path`` in this process; returns the bytes of address space
    advised (0 where nothing maps it or the platform has no ``madvise``)."""
    return _advise_file(path, _MADV_DONTNEED)


def advise_file(path: str | os.PathLike, bulk_write: bool) -> int:
    """``bulk_write``: tell the kernel that the mappings of ``path`` are written, not read in
    order (``MADV_RANDOM``), until called again with False (``MADV_NORMAL``).

    Writing a large transaction through LMDB's map faults on holes of a sparse file. With the
    default advice each of those faults reads ahead and maps large folios, which costs time, and
    LMDB's commit, which touches the header of every page it wrote, then maps the whole of them
    again. Measured on 300 MB of 2 MiB values (Linux 6.18): the puts took 0.25 s instead of
    0.67-0.89 s, and the commit left 9 MB resident instead of 265 MB. Reads want the default
    back (read-ahead), hence the pair."""
    return _advise_file(path, _MADV_RANDOM if bulk_write else _MADV_NORMAL)


_sync_file_range = None  # libc's sync_file_range, or False where there is none
_SYNC_FILE_RANGE_WRITE = 2


def start_writeback(path: str | os.PathLike) -> bool:
    """Start writing ``path``'s dirty pages to disk, without waiting for them (Linux's
    ``sync_file_range(SYNC_FILE_RANGE_WRITE)``); False where that is not available.

    A large write transaction ends with LMDB's ``msync``, which waits for every page it wrote;
    started while the rest is still being put, most of that I/O overlaps the puts (RMAT20's
    commit: 150 MB of blocks, ~0.09 s of waiting on the disk at the end otherwise). Nothing
    about durability changes: the commit still syncs before its meta page points at the data."""
    global _sync_file_range
    if _sync_file_range is None:
        _sync_file_range = False
        if sys.platform.startswith("linux"):
            try:
                fn = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6",
                                 use_errno=True).sync_file_range
                fn.argtypes = (ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint)
                fn.restype = ctypes.c_int
                _sync_file_range = fn
            except (OSError, AttributeError):
                pass
    if not _sync_file_range:
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        return _sync_file_range(fd, 0, 0, _SYNC_FILE_RANGE_WRITE) == 0
    finally:
        os.close(fd)


_malloc_trim = None  # glibc's malloc_trim, or False where there is none


def trim_heap() -> None:
    """Give the C heap's free memory back to the system (glibc's ``malloc_trim``).

    glibc raises its mmap threshold after a large block is freed, so numpy arrays of a few MiB
    that come and go (an ingest's batches, buckets and pages) end up in heap arenas whose free
    space it keeps: measured on an R-MAT 21 ingest under a 32 MiB limit, 45 MiB of the peak.
    Long writes call this where they unmap what they wrote. Elsewhere it does nothing."""
    global _malloc_trim
    if _malloc_trim is None:
        _malloc_trim = False
        if sys.platform.startswith("linux"):
            try:
                _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
                _malloc_trim.argtypes = (ctypes.c_size_t,)
            except (OSError, AttributeError):  # musl and others: no malloc_trim
                pass
    if _malloc_trim:
        _malloc_trim(0)
