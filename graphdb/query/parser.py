"""Parsing: SQL text to sqlglot statements, with errors that carry line and column.

A parsed statement keeps its text and tokens: the binder writes the relational SQL by replacing
pieces of the text (:mod:`.dialect` records where they are). Statements are immutable once
parsed, so :func:`parse` keeps the last few hundred by their text: a program that runs the same
parameterised query again pays for the parse once.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.errors import ParseError as SqlglotParseError
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from ..errors import ParseError
from .dialect import GraphSQL
from .fast_values import fast_insert
from .grammar import CopyTo, Explain
from .syntax import relational_syntax_error

#: Statement kinds that only read the database and touch no file.
READ_KINDS = frozenset({"select", "show_graphs", "show_tables", "show_property_graphs",
                        "show_settings", "show_functions", "describe"})

__all__ = ["READ_KINDS", "Statement", "parse", "parse_sqlglot", "parse_subgraph", "split_script",
           "split_statements"]

# sqlglot logs a warning when it falls back to a generic Command; we handle those ourselves.
logging.getLogger("sqlglot").setLevel(logging.ERROR)

_DIALECT = GraphSQL()
_PLAIN = DuckDB()
_DASHED = re.compile(r"-\s*[A-Za-z]")

_LEADING = re.compile(r"^\s*(?:--[^\n]*(?:\n|$)\s*|/\*.*?\*/\s*)*", re.S)


@dataclass(frozen=True)
class Statement:
    """One parsed statement: its tree and the text it was parsed from (the spans recorded in
    the tree are offsets into ``text``). Its kind is the class of its tree; the handler of
    that kind (:mod:`graphdb.query.statements`) carries it out.

    Of ``EXPLAIN [ANALYZE] s``, ``ast`` is the :class:`~.grammar.Explain` node and ``text`` the
    statement's text with the EXPLAIN words blanked out, so ``s``'s spans still hold in it.
    """

    ast: exp.Expression
    text: str

    @property
    def explain(self) -> bool:
        return isinstance(self.ast, Explain)

    @property
    def analyze(self) -> bool:
        return self.explain and bool(self.ast.args.get("analyze"))

    def explained(self) -> "Statement":
        """The statement EXPLAIN explains (the statement itself without EXPLAIN)."""
        return Statement(self.ast.this, self.text) if self.explain else self

    @property
    def reads_only(self) -> bool:
        """Whether the statement (EXPLAIN's statement for EXPLAIN) only reads the database."""
        return self.explained().kind in READ_KINDS

    @property
    def kind(self) -> str:
        """What ran, as results say it: 'select', 'insert', 'show_graphs', 'explain', ..."""
        from .statements import handler_for

        return "explain" if self.explain else handler_for(self.ast).kind


def _strip(sql: str) -> str:
    text = _LEADING.sub("", sql).strip().rstrip(";").strip()
    # DuckPGQ's scripts write '-' before a statement its parser takes (-CREATE PROPERTY GRAPH,
    # -FROM GRAPH_TABLE ...): no statement starts with a minus sign, so it is read as absent
    return text[1:].lstrip() if _DASHED.match(text) else text


@functools.lru_cache(maxsize=256)
def parse(sql: str) -> Statement:
    """Parse exactly one statement (the result is shared: do not change it)."""
    from .statements import handler_for

    text = _strip(sql)
    if not text:
        raise ParseError("empty statement")
    text = without_catalog(text)
    ast = fast_insert(text) if text[:6].upper() == "INSERT" else None
    if ast is not None:  # rows of literals, read without tokenizing them (.fast_values)
        return Statement(ast, text)
    ast = parse_sqlglot(text)
    inner = ast
    if isinstance(ast, Explain):
        start = ast.args["start"]
        text = " " * start + text[start:]
        inner = ast.this
    if handler_for(inner) is None:
        head = text.split(None, 1)[0].upper()
        raise ParseError(f"unsupported statement: {head}", 1, 1)
    if isinstance(inner, CopyTo):
        query = parse(inner.spec["query"])
        if query.kind != "select":
            raise ParseError("COPY (...) TO takes a query: COPY (SELECT ...) TO 'file'", 1, 1)
    return Statement(ast, text)


#: The name of the database's one catalog, as ``current_database()`` returns it (DuckDB's name
#: for the catalog of an in-memory database, which is where the relational part runs).
CATALOG = "memory"
_NAME_TOKENS = frozenset({TokenType.VAR, TokenType.IDENTIFIER})


def without_catalog(text: str) -> str:
    """``text`` with the catalog part of three-part names (``memory.main.t``, ``memory.s.t``)
    blanked out, so they name what ``main.t`` and ``s.t`` name. Offsets stay as they were (the
    part becomes spaces). A catalog other than the database's own is left for the binder to
    refuse."""
    if CATALOG not in text.lower():
        return text
    try:
        tokens = _DIALECT.tokenize(text)
    except (TokenError, SqlglotParseError):
        return text
    blanks = []
    for i in range(len(tokens) - 4):
        first = tokens[i]
        if first.token_type not in _NAME_TOKENS or first.text.lower() != CATALOG or \
                (i and tokens[i - 1].token_type == TokenType.DOT):
            continue
        if tokens[i + 1].token_type == TokenType.DOT and tokens[i + 3].token_type == \
                TokenType.DOT and tokens[i + 2].token_type != TokenType.DOT and \
                tokens[i + 4].token_type not in (TokenType.DOT, TokenType.STAR):
            blanks.append((first.start, tokens[i + 1].end + 1))
    for start, end in reversed(blanks):
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def parse_sqlglot(text: str, *, plain: bool = False) -> exp.Expression:
    """One statement parsed by sqlglot (GraphSQL dialect; ``plain``: DuckDB's, without
    graphdb's own statements), errors with line and column."""
    dialect = _PLAIN if plain else _DIALECT
    try:
        tokens = dialect.tokenize(text)
        _check_nesting(tokens)
        statements = [s for s in dialect.parser().parse(tokens, text) if s is not None]
    except SqlglotParseError as err:
        duckdb_error = relational_syntax_error(text)
        if duckdb_error is not None:
            raise duckdb_error from None
        first = err.errors[0] if err.errors else {}
        message = _readable(first.get("description", str(err)))
        highlight = first.get("highlight")
        if highlight:
            message += f" (near '{highlight}')"
        raise ParseError(message, first.get("line"), first.get("col")) from None
    except TokenError as err:
        raise ParseError(str(err)) from None
    if len(statements) != 1:
        raise ParseError(f"expected one statement, found {len(statements)}")
    ast = statements[0]
    _check_depth(ast)
    return ast


def parse_subgraph(text: str) -> exp.Expression:
    """``GRAPH g [WHERE ...]`` parsed as the graph argument of a call (its spans are offsets
    into ``SELECT * FROM f(`` + text + ``)``, kept as the node's ``meta['text']``)."""
    wrapped = f"SELECT * FROM f({text})"
    select = parse(wrapped).ast
    call = select.args["from_"].this.this if select.args.get("from_") else None
    if not isinstance(call, exp.Func) or not call.expressions or len(call.expressions) != 1 or \
            type(call.expressions[0]).__name__ != "SubgraphRef":
        raise ParseError("CREATE GRAPH name AS takes GRAPH source [WHERE condition]")
    node = call.expressions[0]
    node.meta["text"] = wrapped
    return node


#: Deepest nesting of parentheses (subqueries, calls, groupings) a statement may have. The
#: parser and the binder recurse per level (sqlglot's parser some ten frames per subquery):
#: past this, Python's stack could run out (RecursionError from 31 nested scalar subqueries,
#: 62 parentheses; 16 of them run). Connection turns any RecursionError left into a
#: ProgrammingError too, but this one says where.
MAX_NESTING = 32
#: Deepest expression tree a statement may have (``1 + 1 + ... + 1`` is as deep as it is long):
#: the binder walks trees recursively.
MAX_DEPTH = 256


def _check_nesting(tokens) -> None:
    depth = 0
    for token in tokens:
        if token.token_type == TokenType.L_PAREN:
            depth += 1
            if depth > MAX_NESTING:
                raise ParseError(f"parentheses and subqueries are nested more than "
                                 f"{MAX_NESTING} deep", token.line, token.col)
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1


def _check_depth(ast: exp.Expression) -> None:
    stack = [(ast, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ParseError(f"the statement's expressions are nested more than {MAX_DEPTH} "
                             "deep (a very long chain of operators?); split it up")
        stack.extend((child, depth + 1) for child in node.iter_expressions())


_OPERATORS = {"EQ": "=", "NEQ": "<>", "GT": ">", "GTE": ">=", "LT": "<", "LTE": "<=",
              "Add": "+", "Sub": "-", "Mul": "*", "Div": "/", "Mod": "%", "And": "AND",
              "Or": "OR", "DPipe": "||", "Like": "LIKE"}


def _readable(description: str) -> str:
    """sqlglot's 'Required keyword: 'this' missing for <class '...Where'>' in plain words."""
    match = re.search(r"missing for <class '[\w.]*\.(\w+)'>", description)
    if match:
        operator = _OPERATORS.get(match.group(1))
        if operator is not None:
            return f"'{operator}' is missing its right-hand side"
        return f"incomplete {match.group(1).upper()} clause"
    return description


def split_statements(text: str) -> list[str]:
    """Split a script on ';' outside quotes and comments; the last piece may be incomplete."""
    pieces, current, quote, i = [], [], None, 0
    while i < len(text):
        ch = text[i]
        if quote:
            current.append(ch)
            if ch == quote:
                quote = None
        elif ch in ("'", '"'):
            quote = ch
            current.append(ch)
        elif text.startswith("--", i):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            current.append(text[i:end])
            i = end
            continue
        elif ch == ";":
            pieces.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    pieces.append("".join(current))
    return pieces


def split_script(text: str) -> list[str]:
    """The statements of a script (``CREATE TABLE t (...); INSERT INTO t ...``), without the
    empty ones (only a ``;``, spaces or comments)."""
    return [piece for piece in split_statements(text) if _strip(piece)]
