"""Line-by-line rescans of a text file, used only to explain a failure.

The fast path parses with pyarrow and knows rows, not lines; when something is wrong these scans
find the line a user must look at (comments, blank lines and the header do not count as rows).
Lines arrive as bytes and are decoded one by one with Python's UTF-8 codec, so a file that is
not UTF-8 text is named at the first line that does not decode.
"""

from __future__ import annotations

from typing import Iterable

from .errors import excerpt

__all__ = ["line_of_data_row", "first_bad_line", "fields_of_data_rows", "encoding_problem"]

#: Byte order marks of the encodings a text file may be in that graphdb does not read.
_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
         (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


def encoding_problem(head: bytes) -> str | None:
    """What is wrong with a text file's encoding, judged from its first bytes (a UTF-16 or
    UTF-32 byte order mark, NUL bytes), or None."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            return (f"the file is {name} text (it starts with a {name} byte order mark); graphdb "
                    f"reads UTF-8: convert it first, e.g. iconv -f {name} -t UTF-8")
    if b"\x00" in head.split(b"\n", 1)[0]:
        return ("the first line holds NUL bytes: the file is not UTF-8 text (UTF-16 without a "
                "byte order mark?); convert it to UTF-8 first")
    return None


def _undecodable(raw: bytes, error: UnicodeDecodeError) -> str:
    column = len(raw[:error.start].decode("utf-8", "replace")) + 1
    return (f"not valid UTF-8 text (byte 0x{raw[error.start]:02x} at column {column}); graphdb "
            "reads UTF-8: convert the file first, e.g. iconv -f LATIN1 -t UTF-8")


class _NotText(Exception):
    def __init__(self, number: int, problem: str):
        self.number, self.problem = number, problem


def _data_lines(lines: Iterable[bytes], header: bool, comments: bool, strict: bool = False):
    """(line number, text) of each data line; with ``strict``, a line that is not UTF-8
    raises _NotText (the header's too)."""
    seen_header = not header
    for number, raw in enumerate(lines, start=1):
        try:
            line = raw.decode("utf-8", "strict" if strict else "replace")
        except UnicodeDecodeError as error:
            raise _NotText(number, _undecodable(raw, error)) from None
        if number == 1:
            line = line.removeprefix("\ufeff")  # a UTF-8 byte order mark
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


def fields_of_data_rows(lines, rows: set[int], header: bool, comments: bool, delimiter: str,
                        position: int) -> dict[int, str]:
    """The text of field ``position`` (0-based) of each data row in ``rows``, as written."""
    found: dict[int, str] = {}
    last = max(rows, default=-1)
    with lines:
        for index, (_number, text) in enumerate(_data_lines(lines, header, comments)):
            if index in rows:
                fields = text.split(delimiter)
                if position < len(fields):
                    found[index] = fields[position].strip().strip('"')
            if index >= last:
                break
    return found


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
    """The first line that is not UTF-8, or whose field count or value kinds differ from the
    first data line's."""
    expected = kinds = None
    try:
        with lines:
            for number, text in _data_lines(lines, header, comments, strict=True):
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
    except _NotText as bad:
        return bad.number, bad.problem
    return None, None
