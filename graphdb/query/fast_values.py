"""``INSERT INTO t [(columns)] VALUES (...), (...)`` of literals and ``?``, read without the
general parser.

A batch of a thousand rows is some twelve thousand tokens: sqlglot parses them into an
expression tree at tens of microseconds a token (about a second per statement), while the
rows are only numbers, strings, NULL, TRUE/FALSE and parameters. Such a statement is read
here by one regular expression over its tokens, into Python rows; anything else (an
expression, a cast, a named parameter, a comment) makes :func:`scan_insert` return None and
the statement goes to the general parser, which reads every form.
"""

from __future__ import annotations

import decimal
import re
from typing import Any

from sqlglot import exp

__all__ = ["FastValues", "PARAMETER", "fast_insert", "fill", "number", "scan_insert"]

_IDENT = r'(?:[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+")'
_HEAD = re.compile(
    rf"\s*INSERT\s+INTO\s+(?P<table>{_IDENT}(?:\s*\.\s*{_IDENT})?)\s*"
    rf"(?:\((?P<columns>\s*{_IDENT}(?:\s*,\s*{_IDENT})*\s*)\))?\s*VALUES\s*", re.I)
_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')"
    r"|(?P<num>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)(?![A-Za-z0-9_.'])"
    r"|(?P<kw>NULL|TRUE|FALSE)(?![A-Za-z0-9_])"
    r"|(?P<q>\?)(?![A-Za-z0-9_:])"
    r"|(?P<p>[(),;]))", re.I)
_KEYWORDS = {"null": None, "true": True, "false": False}


class _Parameter:
    """A ``?`` in a row, filled in when the statement runs."""

    def __repr__(self) -> str:
        return "?"


PARAMETER: Any = _Parameter()


def number(literal: str) -> int | float | decimal.Decimal:
    """A numeric literal's value as SQL reads it: an integer, an exact decimal (``1.25``),
    or a double (``1e3``)."""
    if any(c in literal for c in "eE"):
        return float(literal)
    if "." in literal:
        return decimal.Decimal(literal)
    return int(literal)


def _name(text: str) -> exp.Identifier:
    text = text.strip()
    if text.startswith('"'):
        return exp.to_identifier(text[1:-1].replace('""', '"'), quoted=True)
    return exp.to_identifier(text)


def scan_insert(text: str) -> tuple[exp.Insert, list[list[Any]], int] | None:
    """(the INSERT's target as an AST without its rows, the rows, the number of ``?``) of an
    ``INSERT ... VALUES`` of literals and ``?``; None for any other statement."""
    head = _HEAD.match(text)
    if head is None:
        return None
    parts = [p.strip() for p in re.split(r"\s*\.\s*", head["table"])]
    table = exp.Table(this=_name(parts[-1]), db=_name(parts[0]) if len(parts) == 2 else None)
    target: exp.Expression = table
    if head["columns"]:
        target = exp.Schema(this=table, expressions=[
            _name(c) for c in re.split(r"\s*,\s*", head["columns"].strip())])
    rows: list[list[Any]] = []
    row: list[Any] | None = None
    expect_value = between = False
    parameters = 0
    at, end = head.end(), len(text)
    while at < end:
        match = _TOKEN.match(text, at)
        if match is None:
            if text[at:].strip() == "":
                break
            return None
        at = match.end()
        kind = match.lastgroup
        if kind == "p":
            mark = match["p"]
            if mark == "(":
                if row is not None or (rows and not between):
                    return None  # a nested parenthesis (an expression), or rows without ','
                row, expect_value, between = [], True, False
            elif mark == ")":
                if row is None or expect_value:
                    return None
                rows.append(row)
                row = None
            elif mark == ",":
                if row is None:
                    if not rows or between:
                        return None
                    between = True
                    continue  # between rows
                if expect_value:
                    return None
                expect_value = True
            else:  # ';' ends the statement
                if row is not None or text[at:].strip():
                    return None
                break
            continue
        if row is None or not expect_value:
            return None
        expect_value = False
        if kind == "str":
            row.append(match["str"][1:-1].replace("''", "'"))
        elif kind == "num":
            row.append(number(match["num"]))
        elif kind == "kw":
            row.append(_KEYWORDS[match["kw"].lower()])
        else:
            row.append(PARAMETER)
            parameters += 1
    if row is not None or between or not rows or len({len(r) for r in rows}) != 1:
        return None
    return exp.Insert(this=target), rows, parameters


#: A parsed INSERT of at most this many rows keeps them for its next runs (a parameterised
#: single-row INSERT run again and again is not scanned again); a larger one scans its text
#: again where its rows are used, so the parse cache does not hold them.
KEPT_ROWS = 16


class FastValues(exp.Expression):
    """The rows of an INSERT that :func:`scan_insert` reads: the statement's text and the
    number of rows and columns (and the rows themselves where they are few, see
    :data:`KEPT_ROWS`)."""

    arg_types = {"this": True, "rows": True, "width": True}

    def rows(self, parameters: Any = None) -> list[list[Any]]:
        """The rows, ``?`` filled in from ``parameters`` (a sequence) in order."""
        from ..errors import InvalidInputError

        kept = self.meta.get("rows")  # read by the parse
        if kept is not None and self.args["rows"] > KEPT_ROWS:
            self.meta.pop("rows", None)  # a large statement's rows: its first run takes them
        found = (None, *kept) if kept is not None else scan_insert(self.this)
        if found is None:  # (the text was read once already)
            raise InvalidInputError("cannot read the INSERT's rows again")
        _ast, rows, count = found
        if not count:
            if parameters:
                raise InvalidInputError(f"{len(parameters)} parameters given but the INSERT "
                                        "has no '?'")
            return [list(row) for row in rows] if kept is not None else rows
        if not isinstance(parameters, (list, tuple)):
            raise InvalidInputError("the INSERT uses '?': give its parameters as a list or "
                                    "tuple")
        if len(parameters) != count:
            raise InvalidInputError(f"the INSERT has {count} '?' placeholders but "
                                    f"{len(parameters)} parameters were given")
        values = iter(parameters)
        return [[next(values) if v is PARAMETER else v for v in row] for row in rows]

    def template(self) -> list[Any]:
        """The one row of ``INSERT ... VALUES (?, ?, 3)`` with its parameters as
        :data:`PARAMETER` (``executemany``)."""
        kept = self.meta.get("rows")
        return list(kept[0][0]) if kept is not None else scan_insert(self.this)[1][0]


def fast_insert(text: str) -> exp.Insert | None:
    """The AST of an INSERT of literal rows whose rows are a :class:`FastValues`; None when
    ``text`` is not one."""
    found = scan_insert(text)
    if found is None:
        return None
    ast, rows, count = found
    values = FastValues(this=text, rows=len(rows), width=len(rows[0]))
    values.meta["rows"] = (rows, count)  # (for its first run only where they are many)
    ast.set("expression", values)
    return ast


def fill(row: list[Any], parameters: Any) -> list[Any]:
    """``row`` with its :data:`PARAMETER` s replaced by ``parameters`` in order."""
    from ..errors import InvalidInputError

    count = sum(1 for v in row if v is PARAMETER)
    if not isinstance(parameters, (list, tuple)) or len(parameters) != count:
        raise InvalidInputError(f"the INSERT has {count} '?' placeholders; each parameter set "
                                f"must be a list or tuple of {count} values")
    values = iter(parameters)
    return [next(values) if v is PARAMETER else v for v in row]
