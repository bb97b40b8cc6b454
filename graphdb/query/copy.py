"""COPY and CREATE GRAPH: moving data between files and the database in SQL.

::

    COPY (query) TO 'file' [(FORMAT parquet|csv|json, HEADER true, DELIMITER ',', ...)]
    COPY table TO 'file' [(...)]                  -- g.edges, g.vertices, a registered table
    COPY g FROM 'edges' [(UNDIRECTED, VERTICES 'v.csv', WEIGHT 'w', HEADER false, ...)]
    CREATE [OR REPLACE] GRAPH [IF NOT EXISTS] g FROM 'edges' [(...)]

Options are ``name value`` or ``name = value`` pairs, comma separated, optionally after
``WITH``; a name alone means true (``HEADER``, ``UNDIRECTED``). Values are strings, numbers,
TRUE/FALSE or bare words (``FORMAT parquet``). ``COPY g FROM`` and ``CREATE GRAPH`` load a
new graph with the ingest options of ``graphdb ingest`` (see :data:`LOAD_OPTIONS`).
"""

from __future__ import annotations

import difflib
from typing import Any

from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from ..errors import ParseError
from .dialect import GraphSQL

__all__ = ["LOAD_OPTIONS", "EXPORT_OPTIONS", "parse_copy", "parse_create_graph"]

#: Options of COPY g FROM / CREATE GRAPH: SQL name -> keyword of ``Connection.ingest``.
LOAD_OPTIONS = {
    "format": "format", "vertices": "vertices", "undirected": "undirected", "src": "src",
    "dst": "dst", "weight": "weight", "vertex_format": "vertex_format",
    "vertex_id": "vertex_id", "delimiter": "delimiter", "delim": "delimiter", "sep": "delimiter",
    "header": "header", "id_type": "id_type", "self_loops": "self_loops",
    "duplicates": "duplicates", "merge_weights": "merge_weights",
    "missing_vertices": "missing_vertices", "memory_limit": "memory_limit",
    "temp_dir": "temp_dir", "replace": "replace", "invalid_weights": "invalid_weights",
    "pages": "pages", "device": "device",
}
#: Options of COPY ... TO.
EXPORT_OPTIONS = ("format", "header", "delimiter", "compression", "array")


def _tokens(text: str) -> list[Token]:
    try:
        return list(GraphSQL().tokenize(text))
    except TokenError as err:
        raise ParseError(str(err)) from None


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


class _Reader:
    """Walks the tokens of one statement."""

    def __init__(self, text: str, usage: str):
        self.text, self.usage = text, usage
        self.tokens = _tokens(text)
        self.i = 0

    def error(self, message: str) -> ParseError:
        token = self.peek()
        offset = token.start if token is not None else len(self.text)
        return ParseError(f"{message}; expected {self.usage}", *_position(self.text, offset))

    def peek(self, ahead: int = 0) -> Token | None:
        j = self.i + ahead
        return self.tokens[j] if j < len(self.tokens) else None

    def word(self, *words: str) -> bool:
        """Consume the next token if it is one of ``words`` (case-insensitive)."""
        token = self.peek()
        if token is not None and token.text.upper() in words and token.token_type not in (
                TokenType.STRING, TokenType.IDENTIFIER):
            self.i += 1
            return True
        return False

    def phrase(self, first: str, *rest: str) -> bool:
        """Consume ``first`` and then ``rest`` if the next token is ``first`` (``OR REPLACE``,
        ``IF NOT EXISTS``); an error when ``first`` is not followed by ``rest``."""
        if not self.word(first):
            return False
        for word in rest:
            self.expect(word)
        return True

    def expect(self, word: str) -> None:
        if not self.word(word):
            raise self.error(f"missing {word}")

    def name(self, what: str) -> str:
        token = self.peek()
        if token is None or token.token_type in (TokenType.STRING, TokenType.NUMBER,
                                                 TokenType.L_PAREN, TokenType.R_PAREN,
                                                 TokenType.COMMA, TokenType.SEMICOLON):
            raise self.error(f"missing the {what}")
        self.i += 1
        return token.text

    def string(self, what: str) -> str:
        token = self.peek()
        if token is None or token.token_type != TokenType.STRING:
            raise self.error(f"the {what} must be a quoted string such as 'edges.csv'")
        self.i += 1
        return token.text

    def balanced(self) -> tuple[int, int]:
        """Consume ``( ... )``; the text offsets just inside the parentheses."""
        open_token = self.peek()
        depth = 0
        while self.i < len(self.tokens):
            token = self.tokens[self.i]
            self.i += 1
            if token.token_type == TokenType.L_PAREN:
                depth += 1
            elif token.token_type == TokenType.R_PAREN:
                depth -= 1
                if depth == 0:
                    return open_token.end + 1, token.start
        raise self.error("a '(' is not closed")

    def options(self, known) -> dict[str, Any]:
        """``[WITH] (name [=] value, ...)`` at the end of the statement."""
        out: dict[str, Any] = {}
        self.word("WITH")
        if self.peek() is None:
            return out
        if self.peek().token_type != TokenType.L_PAREN:
            raise self.error(f"unexpected '{self.peek().text}'")
        self.i += 1
        while True:
            token = self.peek()
            if token is None:
                raise self.error("the option list is not closed")
            if token.token_type == TokenType.R_PAREN:
                self.i += 1
                break
            key = self.name("option name").lower()
            if key not in known:
                close = difflib.get_close_matches(key, list(known), n=1)
                hint = f"did you mean {close[0].upper()}?" if close else \
                    "options: " + ", ".join(k.upper() for k in known)
                raise ParseError(f"unknown option {key.upper()}; {hint}",
                                 *_position(self.text, token.start))
            if key in out:
                raise ParseError(f"option {key.upper()} given twice",
                                 *_position(self.text, token.start))
            if self.peek() is not None and self.peek().token_type == TokenType.EQ:
                self.i += 1
            out[key] = self.value()
            if not (self.peek() is not None and self.peek().token_type == TokenType.COMMA):
                continue
            self.i += 1
        if self.peek() is not None and self.peek().token_type != TokenType.SEMICOLON:
            raise self.error(f"unexpected '{self.peek().text}' after the options")
        return out

    def value(self) -> Any:
        token = self.peek()
        if token is None or token.token_type in (TokenType.COMMA, TokenType.R_PAREN):
            return True  # a name alone: HEADER, UNDIRECTED
        self.i += 1
        if token.token_type == TokenType.STRING:
            return token.text
        if token.token_type == TokenType.NUMBER:
            return float(token.text) if any(c in token.text for c in ".eE") else int(token.text)
        if token.token_type == TokenType.TRUE:
            return True
        if token.token_type == TokenType.FALSE:
            return False
        if token.text.upper() in ("ON", "OFF"):
            return token.text.upper() == "ON"
        return token.text  # a bare word: FORMAT parquet


def parse_copy(text: str) -> dict[str, Any]:
    """The parts of a COPY statement: ``{'kind': 'copy_to', 'query': SQL text, 'path',
    'options'}`` or ``{'kind': 'load_graph', 'graph', 'path', 'options'}``."""
    usage = ("COPY (query) TO 'file' [(FORMAT parquet|csv|json)] or COPY graph FROM 'edges' "
             "[(options)]")
    r = _Reader(text, usage)
    r.expect("COPY")
    token = r.peek()
    if token is not None and token.token_type == TokenType.L_PAREN:
        start, end = r.balanced()
        query = text[start:end]
    else:
        name = r.name("table or graph name")
        if r.peek() is not None and r.peek().token_type == TokenType.DOT:
            r.i += 1
            name = f"{name}.{r.name('table name')}"
        if r.word("FROM"):
            if "." in name:
                raise ParseError(f"COPY {name} FROM: load a graph with COPY graph FROM 'edges'",
                                 1, 1)
            path = r.string("file name")
            return {"kind": "load_graph", "graph": name, "path": path,
                    "options": r.options(LOAD_OPTIONS)}
        query = f"SELECT * FROM {name}"
    r.expect("TO")
    path = r.string("file name")
    return {"kind": "copy_to", "query": query, "path": path,
            "options": r.options(EXPORT_OPTIONS)}


def create_graph_head(r: "_Reader") -> tuple[bool, bool, str]:
    """``CREATE [OR REPLACE] GRAPH [IF NOT EXISTS] name``: (replace, if_not_exists, name)."""
    r.expect("CREATE")
    replace = r.phrase("OR", "REPLACE")
    r.expect("GRAPH")
    if_not_exists = r.phrase("IF", "NOT", "EXISTS")
    return replace, if_not_exists, r.name("graph name")


def parse_create_graph(text: str) -> dict[str, Any]:
    """``CREATE [OR REPLACE] GRAPH [IF NOT EXISTS] g FROM 'edges' [(options)]``, or
    ``... g AS GRAPH source [WHERE ...]`` (a subgraph kept as a graph of its own: ``path`` is
    empty and ``subgraph`` the text from ``GRAPH`` on)."""
    r = _Reader(text, "CREATE [OR REPLACE] GRAPH name FROM 'edges' [(options)] or CREATE GRAPH "
                      "name AS GRAPH source [WHERE condition]")
    replace, if_not_exists, graph = create_graph_head(r)
    if r.word("AS"):
        token = r.peek()
        if token is None or token.text.upper() != "GRAPH":
            raise r.error("AS takes a subgraph: GRAPH source [WHERE condition]")
        return {"kind": "load_graph", "graph": graph, "path": "", "options":
                {"replace": True} if replace else {}, "if_not_exists": if_not_exists,
                "subgraph": text[token.start:].rstrip().rstrip(";")}
    r.expect("FROM")
    path = r.string("file name")
    options = r.options(LOAD_OPTIONS)
    if replace:
        options["replace"] = True
    return {"kind": "load_graph", "graph": graph, "path": path, "options": options,
            "if_not_exists": if_not_exists}
