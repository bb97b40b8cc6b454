"""Line-by-line rescans of a text file, used only to explain a failure.

The fast path parses with pyarrow and knows rows, not lines; when something is wrong these scans
find the line a user must look at (comments, blank lines and the header do not count as rows).
"""

from __future__ import annotations

from typing import Iterable

from .errors import excerpt

__all__ = ["line_of_data_row", "first_bad_line"]


def _data_lines(lines: Iterable[str], header: bool, comments: bool):
    """(line number, text) of each data line."""
    seen_header = not header
    for number, line in enumerate(lines, start=1):
        text = line.rstrip("\r\n")
        if not text.strip() or (comments and text.lstrip().startswith(("#", "%"))):
            continue
        if not seen_header:
            seen_header = True
            continue
        yield number, text


def line_of_data_row(lines, row: int, header: bool, comments: bool) -> int | None:
    """The 1-based line of 0-based data row ``row``."""
    with lines:
        for index, (number, _text) in enumerate(_data_lines(lines, header, comments)):
            if index == row:
                return number
    return None


def _kind(value: str) -> str:
    try:
        int(value)
        return "integer"
    except ValueError:
        pass
    try:
        float(value)
        return "number"
    except ValueError:
        return "text"


def first_bad_line(lines, delimiter: str, header: bool, comments: bool
                   ) -> tuple[int | None, str | None]:
    """The first line whose field count or value kinds differ from the first data line's."""
    expected = kinds = None
    with lines:
        for number, text in _data_lines(lines, header, comments):
            fields = text.split(delimiter)
            if expected is None:
                expected, kinds = len(fields), [_kind(f) for f in fields]
                continue
            if len(fields) != expected:
                return number, (f"expected {expected} fields separated by {delimiter!r}, "
                                f"found {len(fields)}: {text[:80]!r}")
            for position, (value, kind) in enumerate(zip(fields, kinds), start=1):
                if kind == "text":
                    continue
                got = _kind(value)
                if got == "text" or (kind == "integer" and got == "number"):
                    what = "an integer" if kind == "integer" else "a number"
                    shown = excerpt(value) if value else "an empty field"
                    return number, (f"column {position} holds {what} on the lines before, "
                                    f"but {shown} here")
    return None, None
