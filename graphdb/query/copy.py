"""The clauses of COPY and CREATE GRAPH: moving data between files and the database in SQL,
and empty graphs.

::

    COPY (query) TO 'file' [(FORMAT parquet|csv|json, HEADER true, DELIMITER ',', ...)]
    COPY table TO 'file' [(...)]                  -- g.edges, g.vertices, a registered table
    COPY g FROM 'edges' [(UNDIRECTED, VERTICES 'v.csv', WEIGHT 'w', HEADER false, ...)]
    CREATE [OR REPLACE] GRAPH [IF NOT EXISTS] g FROM 'edges' [(...)]
    CREATE [OR REPLACE] GRAPH [IF NOT EXISTS] g ([VERTICES (id BIGINT|VARCHAR, prop TYPE, ...)]
        [, EDGES (weight DOUBLE, prop TYPE, ...)] [, UNDIRECTED])

Options are ``name value`` or ``name = value`` pairs, comma separated, optionally after
``WITH``; a name alone means true (``HEADER``, ``UNDIRECTED``). Values are strings, numbers,
TRUE/FALSE or bare words (``FORMAT parquet``). ``COPY g FROM`` and ``CREATE GRAPH`` load a
new graph with the ingest options of ``graphdb ingest`` (see :data:`LOAD_OPTIONS`).
"""

from __future__ import annotations

import difflib
import re
from typing import Any

import pyarrow as pa
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from ..errors import ParseError
from .dialect import GraphSQL

__all__ = ["LOAD_OPTIONS", "EXPORT_OPTIONS", "TokenReader", "arrow_type", "creates_empty_graph",
           "parse_copy", "parse_create_empty_graph", "parse_create_graph"]

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
#: Column types of CREATE GRAPH g (...).
_SQL_TYPES = {
    "BIGINT": pa.int64(), "INT8": pa.int64(), "LONG": pa.int64(), "INTEGER": pa.int32(),
    "INT": pa.int32(), "INT4": pa.int32(), "SMALLINT": pa.int16(), "TINYINT": pa.int8(),
    "DOUBLE": pa.float64(), "FLOAT8": pa.float64(), "FLOAT": pa.float32(), "REAL": pa.float32(),
    "VARCHAR": pa.string(), "TEXT": pa.string(), "STRING": pa.string(), "BOOLEAN": pa.bool_(),
    "BOOL": pa.bool_(), "DATE": pa.date32(), "TIMESTAMP": pa.timestamp("us"),
    "BLOB": pa.binary(),
}


def _tokens(text: str) -> list[Token]:
    try:
        return list(GraphSQL().tokenize(text))
    except TokenError as err:
        raise ParseError(str(err)) from None


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


class TokenReader:
    """Walks the tokens of one statement (the clauses of graphdb's own statements)."""

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

    def expect(self, *words: str) -> None:
        """Consume the next token, which must be one of ``words``."""
        if not self.word(*words):
            raise self.error(f"missing {words[0]}")

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
    r = TokenReader(text, usage)
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


def create_graph_head(r: "TokenReader") -> tuple[bool, bool, str]:
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
    r = TokenReader(text, "CREATE [OR REPLACE] GRAPH name FROM 'edges' [(options)] or CREATE GRAPH "
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


def creates_empty_graph(text: str) -> bool:
    """CREATE [OR REPLACE] GRAPH [IF NOT EXISTS] name, then '(' or nothing: an empty graph
    (a load names its file: CREATE GRAPH g FROM 'edges.csv')."""
    return re.match(r"\s*CREATE\s+(OR\s+REPLACE\s+)?GRAPH\s+(IF\s+NOT\s+EXISTS\s+)?"
                    r'("[^"]*"|[A-Za-z_][A-Za-z0-9_]*)\s*(\(|$)', text, re.I) is not None


def parse_create_empty_graph(text: str) -> dict:
    """CREATE GRAPH g (...) of an empty graph (see the module docstring)."""
    reader = TokenReader(text, "CREATE [OR REPLACE] GRAPH [IF NOT EXISTS] g ([VERTICES (id TYPE, "
                           "...)], [EDGES (col TYPE, ...)], [UNDIRECTED])")
    replace, if_not_exists, name = create_graph_head(reader)
    name = name.strip('"')
    options = {"replace": replace, "undirected": False, "vertices": [], "edges": []}
    if reader.peek() is not None:
        start, stop = reader.balanced()
        for item in _split_top(text[start:stop]):
            words = item.split(None, 1)
            key = words[0].upper() if words else ""
            if key in ("UNDIRECTED", "DIRECTED") and len(words) == 1:
                options["undirected"] = key == "UNDIRECTED"
            elif key in ("VERTICES", "EDGES") and len(words) == 2 and \
                    words[1].strip().startswith("(") and words[1].strip().endswith(")"):
                options[key.lower()] = _columns(words[1].strip()[1:-1], key)
            else:
                raise ParseError(f"unknown item '{item.strip()[:40]}' in CREATE GRAPH; "
                                 "expected VERTICES (...), EDGES (...) or UNDIRECTED", 1, 1)
    if reader.peek() is not None:
        raise reader.error(f"unexpected '{reader.peek().text}'")
    return {"name": name, "if_exists": if_not_exists, "options": options}


def _split_top(text: str) -> list[str]:
    """``text`` split at the commas outside parentheses."""
    parts, depth, current = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p for p in parts if p.strip()]


def _columns(text: str, what: str) -> list[tuple[str, pa.DataType]]:
    out = []
    for item in _split_top(text):
        words = item.split(None, 1)
        if len(words) != 2 or not re.fullmatch(r'"?[A-Za-z_][A-Za-z0-9_]*"?', words[0]):
            raise ParseError(f"{what}: expected 'name TYPE', got '{item.strip()[:40]}'", 1, 1)
        out.append((words[0].strip('"'), arrow_type(words[1].strip())))
    return out


def arrow_type(text: str) -> pa.DataType:
    """The Arrow type of an SQL type name (BIGINT, DOUBLE, VARCHAR, DATE, ...)."""
    key = re.sub(r"\(.*\)$", "", text.strip()).strip().upper()
    if key in ("DECIMAL", "NUMERIC"):
        return pa.float64()
    found = _SQL_TYPES.get(key)
    if found is None:
        raise ParseError(f"unknown type {text!r}; use one of " + ", ".join(sorted(_SQL_TYPES)),
                         1, 1)
    return found
