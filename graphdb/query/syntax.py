"""Syntax errors as DuckDB reports them, for statements that are DuckDB's SQL.

graphdb parses with sqlglot, whose error points at the token where it gave up: for ``SELEC 1``
that is ``1``. DuckDB's parser points at the offending token (``syntax error at or near
"SELEC"``), so a statement that sqlglot refuses and that holds no graph syntax is given to
DuckDB's parser (only then: importing DuckDB costs a tenth of a second), and its error, with the
line and column its excerpt marks, is the one raised. Statements with graph syntax
(``GRAPH_TABLE``, ``GRAPH g WHERE``) keep sqlglot's error: DuckDB would stop at the graph
syntax, not at the mistake.
"""

from __future__ import annotations

import re

from ..errors import ParseError

__all__ = ["relational_syntax_error"]

_GRAPH_SYNTAX = re.compile(r"\b(GRAPH_TABLE|GRAPH|MATCH)\b", re.I)
_EXCERPT = re.compile(r"LINE (\d+): (.*)")


def relational_syntax_error(text: str) -> ParseError | None:
    """DuckDB's syntax error for ``text`` (None when it holds graph syntax, or DuckDB parses
    it: then the mistake is graphdb's to name)."""
    if _GRAPH_SYNTAX.search(text):
        return None
    import duckdb

    try:
        duckdb.extract_statements(text)
    except duckdb.ParserException as exc:
        return _error(str(exc), text)
    except duckdb.Error:
        return None
    return None


def _error(message: str, text: str) -> ParseError:
    lines = message.splitlines()
    head = re.sub(r"^[A-Z][A-Za-z ]* Error: ", "", lines[0] if lines else message)
    head = head.removeprefix("syntax error").strip() or head
    line = column = None
    for i, row in enumerate(lines):
        match = _EXCERPT.match(row)
        if match is None or i + 1 >= len(lines) or "^" not in lines[i + 1]:
            continue
        line = int(match.group(1))
        caret = lines[i + 1].index("^") - len(row) + len(match.group(2))
        excerpt = match.group(2)
        column = caret + 1
        if excerpt.startswith("..."):  # a window of a long line: find where it starts
            source = text.splitlines()[line - 1] if line <= len(text.splitlines()) else ""
            body = excerpt[3:].removesuffix("...")
            start = source.find(body)
            column = start + caret - 3 + 1 if start >= 0 else None
        break
    return ParseError(head, line, column)
