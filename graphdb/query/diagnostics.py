"""DuckDB's errors as graphdb's: the PEP 249 class a mistake belongs to, and a message in the
user's terms.

The relational engine (:mod:`graphdb.executor.relational`) passes DuckDB's exceptions on as
:class:`~graphdb.executor.errors.SQLError` with their kind; here they become
:class:`~graphdb.errors.ProgrammingError` subclasses (the query is wrong: syntax, names, types)
or :class:`~graphdb.errors.DataError` (the data is: overflow, division by zero, a value that
does not convert), with the internals taken out: no ``LINE 1:`` excerpt of the rewritten
statement, no internal relation names (``bfs(g, 1)`` is named as the user wrote it), no
advice about DuckDB settings, and the suggestions graphdb makes elsewhere ("did you mean").
"""

from __future__ import annotations

import difflib
import re

from ..errors import (
    BinderError,
    DataError,
    Error,
    InternalError,
    NotSupportedError,
    OperationalError,
    ParseError,
    ProgrammingError,
)

__all__ = ["sql_error"]

_PREFIX = re.compile(r"^[A-Za-z ]*Error: ")
_INTERNAL = re.compile(r"__graphdb_[A-Za-z0-9_]+")
_DUCK_TYPES = {"INT64": "BIGINT", "INT32": "INTEGER", "INT16": "SMALLINT", "INT8": "TINYINT"}


def _clean(message: str, shown: dict[str, str]) -> str:
    """The first paragraph of DuckDB's message, without its prefix and the statement excerpt,
    internal names replaced by what the user wrote."""
    lines = []
    for line in message.splitlines():
        if line.startswith("LINE ") or (line.strip() and set(line.strip()) <= {"^"}):
            break
        lines.append(line.rstrip())
    text = "\n".join(lines).strip()
    text = _PREFIX.sub("", text)
    text = re.sub(r"\s*Use \"?(SET|TRY)[^.]*\.?", "", text)  # advice on DuckDB's settings
    for name, user in sorted(shown.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(f'"{name}"', user).replace(name, user)
    text = _INTERNAL.sub("(query)", text)
    for duck, sql in _DUCK_TYPES.items():
        text = re.sub(rf"\b{duck}\b", sql, text)
    return text


def _quoted(text: str) -> list[str]:
    return re.findall(r'"([^"]*)"', text)


def _did_you_mean(name: str, candidates: list[str], form: str = "'{}'") -> str:
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.5)
    return f"; did you mean {form.format(close[0])}?" if close else ""


def _binder(text: str, functions: list[str]) -> Error:
    match = re.match(r'Referenced column "([^"]*)" not found in FROM clause!?(.*)', text, re.S)
    if match:
        candidates = [c.split(".")[-1] for c in _quoted(match.group(2))]
        return BinderError(f"unknown column '{match.group(1)}'"
                           + _did_you_mean(match.group(1), candidates))
    match = re.match(r'Referenced table "([^"]*)" not found!?(.*)', text, re.S)
    if match:
        return BinderError(f"unknown table '{match.group(1)}'"
                           + _did_you_mean(match.group(1), _quoted(match.group(2))))
    match = re.match(r'Ambiguous reference to column name "([^"]*)" \(use: (.*)\)', text)
    if match:
        return BinderError(f"column '{match.group(1)}' is ambiguous ({match.group(2)}); "
                           "qualify it")
    if text.startswith("LIMIT/OFFSET cannot be negative"):
        return BinderError("LIMIT and OFFSET must be non-negative integers")
    match = re.match(r"ORDER term out of range - should be between (\d+) and (\d+)", text)
    if match:
        return BinderError(f"ORDER BY position is not in the select list "
                           f"({match.group(1)}..{match.group(2)})")
    match = re.match(r'column "([^"]*)" must appear in the GROUP BY clause', text)
    if match:
        return BinderError(f"column '{match.group(1)}' must appear in GROUP BY or be inside an "
                           f"aggregate function (such as any_value({match.group(1)}))")
    if "cannot contain aggregates" in text or "aggregates are not allowed" in text.lower():
        clause = text.split(" clause")[0]
        return BinderError(f"aggregate functions are not allowed here ({clause}); filter "
                           "groups with HAVING")
    if text.startswith("Cannot compare values of type"):
        return ProgrammingError("type mismatch: " + text[0].lower() + text[1:])
    if text.startswith(("Could not choose a best candidate function",
                        "No function matches the given name and argument types")):
        calls = _quoted(text) or re.findall(r"'([^']*)'", text)
        call = calls[0] if calls else "call"
        return ProgrammingError(f"type mismatch: no function {call} for these argument types; "
                                "add explicit casts (CAST(x AS type) or x::type)")
    if text.startswith("Set operations can only apply to expressions with the same number"):
        return BinderError("each side of UNION, INTERSECT or EXCEPT must have the same number "
                           "of columns")
    return BinderError(text)


def _catalog(text: str, functions: list[str]) -> Error:
    match = re.match(r"(Scalar|Aggregate|Table) Function with name (\S+) does not exist!?(.*)",
                     text, re.S)
    if match:
        kind, name, rest = match.groups()
        if kind == "Table":
            close = difflib.get_close_matches(name.lower(), functions, n=1)
            hint = close[0] if close else (_quoted(rest) or [""])[0]
            return BinderError(f"unknown table function {name}()"
                               + (f"; did you mean {hint}()?" if hint else ""))
        hint = (_quoted(rest) or [""])[0]
        return BinderError(f"unknown function {name}()"
                           + (f"; did you mean {hint}()?" if hint else ""))
    match = re.match(r"Table with name (\S+) does not exist", text)
    if match:
        return BinderError(f"unknown table '{match.group(1)}'")
    return BinderError(text)


def sql_error(kind: str, message: str, shown: dict[str, str], functions: list[str]) -> Error:
    """The graphdb error for a DuckDB error of ``kind`` (see :class:`SQLError`);
    ``functions`` are the graph and built-in table functions, for suggestions."""
    text = _clean(message, shown)
    if "Could not convert string" in text:  # a literal or a column of the wrong type
        text = text.removeprefix("Failed to cast value: ")
        return ProgrammingError("type mismatch: " + text[0].lower() + text[1:])
    if kind == "parser":
        return ParseError(text.removeprefix("syntax error ").strip() or text)
    if kind == "binder":
        return _binder(text, functions)
    if kind == "catalog":
        return _catalog(text, functions)
    if kind == "conversion":
        return DataError(text)
    if kind == "invalid_input":
        if text.startswith("More than one row returned by a subquery"):
            return ProgrammingError("a subquery used as a value returned more than one row; it "
                                    "must return at most one (add LIMIT 1 or an aggregate)")
        return DataError(text)
    if kind == "out_of_range":
        return DataError(text)
    if kind == "not_implemented":
        return NotSupportedError(text)
    if kind in ("out_of_memory", "io"):
        return OperationalError(text)
    return InternalError(text)
