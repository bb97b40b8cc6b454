"""Parsing: SQL text to sqlglot statements, with errors that carry line and column.

A parsed statement keeps its text and tokens: the binder writes the relational SQL by replacing
pieces of the text (:mod:`.dialect` records where they are). Statements are immutable once
parsed, so :func:`parse` keeps the last few hundred by their text: a program that runs the same
parameterised query again pays for the parse once.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import re
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.errors import ParseError as SqlglotParseError
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from ..errors import ParseError
from .copy import parse_copy, parse_create_graph
from .dialect import GraphSQL
from .property_graph_sql import parse_create_property_graph
from .writes import is_write, parse_write

__all__ = ["Statement", "parse", "parse_sqlglot", "split_statements"]

# sqlglot logs a warning when it falls back to a generic Command; we handle those ourselves.
logging.getLogger("sqlglot").setLevel(logging.ERROR)

_DIALECT = GraphSQL()

_LEADING = re.compile(r"^\s*(?:--[^\n]*\n\s*|/\*.*?\*/\s*)*", re.S)


@dataclass
class Statement:
    """One parsed statement.

    ``kind`` is 'select', 'show_graphs', 'show_settings', 'show_functions', 'describe', 'set',
    'reset', 'drop_graph', 'vacuum', 'copy_to' (COPY (query) TO 'file', ``ast`` the query),
    'load_graph' (COPY g FROM 'edges', CREATE GRAPH g FROM 'edges', CREATE GRAPH h AS GRAPH g
    ...), 'create_property_graph' (``options`` holds its tables) or a write
    (:data:`graphdb.query.writes.WRITE_KINDS`: INSERT, DELETE, UPDATE, BEGIN, COMMIT, ...).
    """

    kind: str
    ast: exp.Expression | None
    text: str  # what was parsed: the spans recorded in ``ast`` are offsets into it
    explain: bool = False
    analyze: bool = False
    name: str = ""  # the object of DROP GRAPH / RESET, the graph a load creates
    if_exists: bool = False  # DROP GRAPH IF EXISTS, CREATE GRAPH IF NOT EXISTS
    path: str = ""  # the file of COPY and CREATE GRAPH
    options: dict = field(default_factory=dict)  # their (name: value) options


def _strip(sql: str) -> str:
    return _LEADING.sub("", sql).strip().rstrip(";").strip()


@functools.lru_cache(maxsize=256)
def parse(sql: str) -> Statement:
    """Parse exactly one statement (the result is shared: do not change it)."""
    text = _strip(sql)
    if not text:
        raise ParseError("empty statement")
    words = text.split()
    head = words[0].upper()
    if head == "EXPLAIN":
        rest = text[len(words[0]):].lstrip()
        analyze = rest[:7].upper() == "ANALYZE" and (len(rest) == 7 or not rest[7].isalnum())
        if analyze:
            rest = rest[7:].lstrip()
        return dataclasses.replace(parse(rest), explain=True, analyze=analyze)
    if head == "SHOW":
        if len(words) == 2 and words[1].upper() in ("GRAPHS", "TABLES"):
            return Statement("show_graphs", None, text)
        if len(words) == 2 and words[1].upper() in ("SETTINGS", "FUNCTIONS"):
            return Statement("show_" + words[1].lower(), None, text)
        raise ParseError(f"unknown SHOW statement '{text}'; try SHOW GRAPHS, SHOW FUNCTIONS "
                         "or SHOW SETTINGS",
                         1, 1)
    if head == "DROP":
        # DROP GRAPH [IF EXISTS] name: sqlglot has no GRAPH object kind, so it is read here.
        upper = [w.upper() for w in words]
        if len(words) >= 2 and upper[1] == "GRAPH":
            if_exists = upper[2:4] == ["IF", "EXISTS"]
            rest = words[4:] if if_exists else words[2:]
            if len(rest) == 1 and re.fullmatch(r'"?[A-Za-z_][A-Za-z0-9_]*"?', rest[0]):
                return Statement("drop_graph", None, text, name=rest[0].strip('"'),
                                 if_exists=if_exists)
            raise ParseError("expected DROP GRAPH [IF EXISTS] name", 1, 1)
        raise ParseError(f"unsupported statement: DROP {words[1] if len(words) > 1 else ''}; "
                         "only DROP GRAPH name", 1, 1)
    if is_write(text):  # INSERT, DELETE, UPDATE, transactions, CHECKPOINT, CREATE GRAPH g (..)
        return parse_write(text)
    if head == "COPY":
        parts = parse_copy(text)
        if parts["kind"] == "load_graph":
            return Statement("load_graph", None, text, name=parts["graph"], path=parts["path"],
                             options=parts["options"])
        inner = parse(parts["query"])
        if inner.kind != "select" or inner.explain:
            raise ParseError("COPY (...) TO takes a query: COPY (SELECT ...) TO 'file'", 1, 1)
        return Statement("copy_to", inner.ast, inner.text, path=parts["path"],
                         options=parts["options"])
    upper = [w.upper() for w in words[:6]]
    if head == "CREATE" and "PROPERTY" in upper and upper[upper.index("PROPERTY") + 1:][:1] \
            == ["GRAPH"]:
        parts = parse_create_property_graph(text)
        return Statement("create_property_graph", None, text, name=parts["graph"],
                         options=parts, if_exists=parts["if_not_exists"])
    if head == "CREATE" and len(words) > 1 and words[1].upper() in ("GRAPH", "OR"):
        parts = parse_create_graph(text)
        ast = None
        if parts.get("subgraph"):  # CREATE GRAPH h AS GRAPH g WHERE ...: its subgraph, parsed
            ast = _subgraph(parts["subgraph"])
        return Statement("load_graph", ast, text, name=parts["graph"], path=parts["path"],
                         options=parts["options"], if_exists=parts["if_not_exists"])
    if head == "VACUUM":
        if len(words) == 1:
            return Statement("vacuum", None, text)
        raise ParseError("expected VACUUM (it compacts the whole database file)", 1, 1)
    if head == "RESET":
        if len(words) == 2 and re.fullmatch(r"[A-Za-z_]+", words[1]):
            return Statement("reset", None, text, name=words[1])
        if len(words) == 2 and words[1].upper() == "ALL":
            return Statement("reset", None, text, name="all")
        raise ParseError("expected RESET setting_name (or RESET ALL)", 1, 1)
    ast = parse_sqlglot(text)
    if isinstance(ast, exp.Describe):
        return Statement("describe", ast, text)
    if isinstance(ast, exp.Set):
        return Statement("set", ast, text)
    if isinstance(ast, exp.Query):
        return Statement("select", ast, text)
    raise ParseError(f"unsupported statement: {head}", 1, 1)


def parse_sqlglot(text: str) -> exp.Expression:
    """One statement parsed by sqlglot (GraphSQL dialect), errors with line and column."""
    try:
        tokens = _DIALECT.tokenize(text)
        _check_nesting(tokens)
        statements = [s for s in _DIALECT.parser().parse(tokens, text) if s is not None]
    except SqlglotParseError as err:
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


def _subgraph(text: str) -> exp.Expression:
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
