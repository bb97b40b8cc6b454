"""Byte streams under the text readers: comment filtering, byte ranges, pyarrow files as
Python raw streams (for the line-by-line rescans that explain an error)."""

from __future__ import annotations

import io
import re

__all__ = ["CommentFilter", "ByteRange", "NativeRaw"]

class CommentFilter(io.RawIOBase):
    """A byte stream without the lines that start with ``#`` (SNAP) or ``%`` (Matrix Market,
    KONECT): comments may appear anywhere, and pyarrow's CSV reader has no notion of them.
    Whole chunks without either pass through untouched, so the cost is two byte searches per
    chunk on comment-free input."""

    _COMMENT = re.compile(rb"(?m)^[ \t]*[#%][^\n]*(?:\n|$)")

    def __init__(self, raw):
        super().__init__()
        self._raw, self._rest = raw, b""

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        size = 1 << 20 if size is None or size < 0 else size
        while True:
            chunk = self._raw.read(size)
            data = self._rest + chunk
            if chunk:
                cut = data.rfind(b"\n") + 1  # filter whole lines only
                if cut == 0:
                    self._rest = data
                    continue
                data, self._rest = data[:cut], data[cut:]
            else:
                self._rest = b""
            if b"#" in data or b"%" in data:
                data = self._COMMENT.sub(b"", data)
            if data or not chunk:
                return data


class CountingReader(io.RawIOBase):
    """A byte stream that counts the bytes it delivers (a decompressed stream's position,
    which pyarrow's compressed streams do not tell)."""

    def __init__(self, raw):
        super().__init__()
        self._raw, self.count = raw, 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        self.count += len(data)
        return data

    def close(self) -> None:
        self._raw.close()
        super().close()


class ByteRange(io.RawIOBase):
    """Bytes [start, stop) of a file: one part of a text file parsed in parallel."""

    def __init__(self, raw, start: int, stop: int):
        super().__init__()
        self._raw, self._left = raw, stop - start
        raw.seek(start)

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        size = self._left if size is None or size < 0 else min(size, self._left)
        data = self._raw.read(size) if size else b""
        self._left -= len(data)
        return data

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._raw.close()
        super().close()


class NativeRaw(io.RawIOBase):
    def __init__(self, stream):
        super().__init__()
        self._s = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self._s.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._s.close()
        super().close()
