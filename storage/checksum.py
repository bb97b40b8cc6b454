"""Checksums of stored pages and blocks: xxh3 when the ``xxhash`` package is present, else crc32.

Every page header and block trailer names the algorithm that sealed it, so a database written
on a machine with ``xxhash`` stays readable wherever it is installed, and one written without it
(zlib's crc32, always available) is readable everywhere. Why two: verification runs on every
load into the buffer pool; zlib's crc32 runs at 3-5 GB/s on one core, slower than copying the
page, while xxh3 runs at about 20 GB/s, so with it the check costs a fraction of the copy.
Both keep 32 bits (xxh3's low half), which is what the formats have room for.
"""

from __future__ import annotations

import os
import zlib

from .errors import StorageError

__all__ = ["ALGORITHMS", "CRC32", "XXH3", "algorithm_name", "checksum", "default_algorithm", "file_checksum"]

CRC32 = 1
XXH3 = 2
_NAMES = {CRC32: "crc32", XXH3: "xxh3"}
#: The algorithms a seal may name; any other number is damage.
ALGORITHMS = frozenset(_NAMES)

try:  # optional: ``pip install xxhash``
    import xxhash as _xxhash
except ImportError:  # pragma: no cover - depends on the installation
    _xxhash = None


def default_algorithm() -> int:
    """The algorithm new pages and blocks are sealed with on this installation."""
    return XXH3 if _xxhash is not None else CRC32


def algorithm_name(algorithm: int) -> str:
    return _NAMES.get(algorithm, f"unknown ({algorithm})")


def checksum(data, algorithm: int) -> int:
    """32-bit checksum of a bytes-like object with the given algorithm."""
    if algorithm == XXH3:
        if _xxhash is None:
            raise StorageError("this data was sealed with xxh3 checksums; install the 'xxhash' "
                               "package to read it")
        return _xxhash.xxh3_64_intdigest(data) & 0xFFFFFFFF
    if algorithm == CRC32:
        return zlib.crc32(data)
    raise StorageError(f"unknown checksum algorithm {algorithm}")


#: Bytes a file is read in while its checksum is computed (memory stays bounded by this).
FILE_CHUNK = 8 << 20


def file_checksum(path, algorithm: int) -> int:
    """32-bit checksum of a whole file's bytes, as :func:`checksum` of its contents would be.
    ``path`` may be an open file descriptor (read from its start, left open)."""
    if algorithm == XXH3:
        if _xxhash is None:
            checksum(b"", algorithm)  # raises the 'install xxhash' error
        state = _xxhash.xxh3_64()
        update = state.update
    elif algorithm == CRC32:
        crc = 0

        def update(chunk):
            nonlocal crc
            crc = zlib.crc32(chunk, crc)
    else:
        raise StorageError(f"unknown checksum algorithm {algorithm}")
    buffer = bytearray(FILE_CHUNK)
    view = memoryview(buffer)
    if isinstance(path, int):
        os.lseek(path, 0, os.SEEK_SET)
    with open(path, "rb", buffering=0, closefd=not isinstance(path, int)) as f:
        while True:
            n = f.readinto(buffer)
            if not n:
                break
            update(view[:n])
    return state.intdigest() & 0xFFFFFFFF if algorithm == XXH3 else crc
