"""Write statements: INSERT, DELETE, UPDATE on a graph's tables, transactions, CREATE GRAPH
of an empty graph, CHECKPOINT.

::

    INSERT INTO g.edges [(src, dst[, weight][, prop ...])] VALUES (...), ... | SELECT ...
    INSERT INTO g.vertices [(id[, prop ...])] VALUES (...), ... | SELECT ...
    DELETE FROM g.edges [WHERE ...]
    [DETACH] DELETE FROM g.vertices [WHERE ...]    -- a vertex with edges needs DETACH
    UPDATE g.edges SET col = expr, ... [WHERE ...]
    UPDATE g.vertices SET prop = expr, ... [WHERE ...]
    BEGIN [TRANSACTION] | START TRANSACTION ; COMMIT | END ; ROLLBACK | ABORT
    CREATE [OR REPLACE] GRAPH [IF NOT EXISTS] g ([VERTICES (id BIGINT|VARCHAR, prop TYPE, ...)]
        [, EDGES (weight DOUBLE, prop TYPE, ...)] [, UNDIRECTED])
    CHECKPOINT [g]

Statements are parsed with sqlglot (write statements are cached by their text, so
``executemany`` and a loop of single inserts parse once) and carried out by
:mod:`graphdb.query.dml` on the catalog's writer (:mod:`graphdb.catalog.writer`). Everything
this module asks of the query engine (the rows a WHERE picks, a SELECT's rows) goes through
:func:`run_select`.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from ..errors import BinderError, InvalidInputError, ParseError

if TYPE_CHECKING:
    from ..connection import Connection
    from .parser import Statement

__all__ = ["WRITE_KINDS", "execute_write", "is_write", "parse_write", "run_select"]

#: Statement kinds this module executes.
WRITE_KINDS = ("insert", "delete", "update", "begin", "commit", "rollback", "checkpoint",
               "create_graph")
_HEADS = {"INSERT", "DELETE", "UPDATE", "DETACH", "BEGIN", "START", "COMMIT", "END",
          "ROLLBACK", "ABORT", "CHECKPOINT"}
#: Parsed write statements by text (their ASTs are never changed after parsing).
_CACHE: OrderedDict[str, Any] = OrderedDict()
_CACHE_SIZE = 256

_SQL_TYPES = {
    "BIGINT": pa.int64(), "INT8": pa.int64(), "LONG": pa.int64(), "INTEGER": pa.int32(),
    "INT": pa.int32(), "INT4": pa.int32(), "SMALLINT": pa.int16(), "TINYINT": pa.int8(),
    "DOUBLE": pa.float64(), "FLOAT8": pa.float64(), "FLOAT": pa.float32(), "REAL": pa.float32(),
    "VARCHAR": pa.string(), "TEXT": pa.string(), "STRING": pa.string(), "BOOLEAN": pa.bool_(),
    "BOOL": pa.bool_(), "DATE": pa.date32(), "TIMESTAMP": pa.timestamp("us"),
    "BLOB": pa.binary(),
}


def is_write(text: str) -> bool:
    """Whether ``text`` (stripped) starts a statement this module parses."""
    words = text.split(None, 3)
    if not words:
        return False
    head = words[0].upper()
    if head in _HEADS:
        return True
    return head == "CREATE" and _create_without_from(text)


def _create_without_from(text: str) -> bool:
    """CREATE [OR REPLACE] GRAPH [IF NOT EXISTS] name, then '(' or nothing: an empty graph
    (a load names its file: CREATE GRAPH g FROM 'edges.csv')."""
    return re.match(r"\s*CREATE\s+(OR\s+REPLACE\s+)?GRAPH\s+(IF\s+NOT\s+EXISTS\s+)?"
                    r'("[^"]*"|[A-Za-z_][A-Za-z0-9_]*)\s*(\(|$)', text, re.I) is not None


def parse_write(text: str) -> "Statement":
    """The Statement of a write (see the module docstring)."""
    from .parser import Statement

    cached = _CACHE.get(text)
    if cached is not None:
        _CACHE.move_to_end(text)
        return Statement(**cached)
    words = text.split()
    head = words[0].upper()
    fields: dict[str, Any] = {"ast": None, "text": text}
    if head in ("BEGIN", "START"):
        rest = [w.upper() for w in words[1:]]
        if (head == "BEGIN" and rest not in ([], ["TRANSACTION"], ["WORK"])) or (
                head == "START" and rest != ["TRANSACTION"]):
            raise ParseError("expected BEGIN [TRANSACTION] or START TRANSACTION", 1, 1)
        fields["kind"] = "begin"
    elif head in ("COMMIT", "END", "ROLLBACK", "ABORT"):
        if [w.upper() for w in words[1:]] not in ([], ["TRANSACTION"], ["WORK"]):
            raise ParseError(f"expected {head} [TRANSACTION]", 1, 1)
        fields["kind"] = "commit" if head in ("COMMIT", "END") else "rollback"
    elif head == "CHECKPOINT":
        if len(words) > 2 or (len(words) == 2 and not re.fullmatch(
                r'"?[A-Za-z_][A-Za-z0-9_]*"?', words[1])):
            raise ParseError("expected CHECKPOINT [graph]", 1, 1)
        fields.update(kind="checkpoint", name=words[1].strip('"') if len(words) == 2 else "")
    elif head == "CREATE":
        fields.update(kind="create_graph", **_parse_create(text))
    else:
        detach = head == "DETACH"
        ast = _sqlglot(text[len(words[0]):].lstrip() if detach else text)
        kinds = {exp.Insert: "insert", exp.Delete: "delete", exp.Update: "update"}
        kind = kinds.get(type(ast))
        if kind is None or (detach and kind != "delete"):
            raise ParseError(f"unsupported statement: {head}", 1, 1)
        fields.update(kind=kind, ast=ast, options={"detach": detach})
    _CACHE[text] = fields
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return Statement(**fields)


def _sqlglot(text: str) -> exp.Expression:
    from .parser import parse_sqlglot

    return parse_sqlglot(text)


def _parse_create(text: str) -> dict:
    """CREATE GRAPH g (...) of an empty graph (see the module docstring)."""
    from .copy import _Reader, create_graph_head

    reader = _Reader(text, "CREATE [OR REPLACE] GRAPH [IF NOT EXISTS] g ([VERTICES (id TYPE, "
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


# -- execution ----------------------------------------------------------------------------------
def execute_write(con: "Connection", statement: "Statement", parameters: Any
                  ) -> tuple[pa.Table, str | None]:
    """Carry out a write statement on ``con``; (result table, status message)."""
    from . import dml

    kind = statement.kind
    if statement.explain:
        raise BinderError(f"EXPLAIN shows how a query runs; {kind.upper().replace('_', ' ')} "
                          "is not a query")
    if parameters and kind not in ("insert", "delete", "update"):
        raise InvalidInputError(f"{kind.upper()} takes no parameters")
    writer = con._writes()
    if kind == "begin":
        from .buffered import InsertBuffer

        writer.begin()
        con._buffer = InsertBuffer(con)
        return pa.table({}), "transaction started"
    if kind == "commit":
        if not writer.in_transaction:
            return pa.table({}), "no transaction is open; nothing to commit"
        dml.commit(con)
        return pa.table({}), "committed"
    if kind == "rollback":
        if not writer.in_transaction:
            return pa.table({}), "no transaction is open; nothing to roll back"
        dml.rollback(con)
        return pa.table({}), "rolled back"
    if writer.in_transaction and kind in ("create_graph", "checkpoint"):
        raise InvalidInputError(f"{kind.upper().replace('_', ' ')} cannot run inside a "
                                "transaction: COMMIT or ROLLBACK first")
    con._writable()
    if kind == "create_graph":
        return pa.table({}), dml.create_graph(con, statement)
    if kind == "checkpoint":
        return pa.table({}), dml.checkpoint(con, statement.name)
    count = dml.write(con, statement, parameters)
    return pa.table({"Count": pa.array([count], pa.int64())}), None


def run_select(con: "Connection", query: exp.Expression, tables: dict[str, pa.Table]
               ) -> pa.Table:
    """The rows of a query (an AST without parameters), ``tables`` registered under their
    names while it runs: the one place writes use the query engine. The query goes through
    the engine as text, as any statement does."""
    from .binder import bind_query
    from .dialect import GraphSQL
    from .parser import parse

    statement = parse(query.sql(dialect=GraphSQL))
    snapshot = con._runner.snapshot()
    context = con.context(snapshot)
    context.tables.update(tables)
    try:
        logical = bind_query(statement.ast, statement.text, None, context)
        return con._runner.run(con._runner.plan(logical, snapshot))
    finally:
        for name in tables:  # not kept registered in the engine after the statement
            con._runner.sql.forget(f"__graphdb_table_{name.lower()}")


def bind(ast: exp.Expression, parameters: Any) -> exp.Expression:
    """A copy of ``ast`` with its parameters (``?``, ``$1``, ``$name``) replaced by their
    values as literals."""
    import sqlglot

    from .parameters import Parameters

    values = Parameters(ast, parameters)

    def replace(node: exp.Expression) -> exp.Expression:
        if isinstance(node, (exp.Placeholder, exp.Parameter)):
            return sqlglot.parse_one(values.sql(node), read="duckdb")
        return node

    return ast.transform(replace)
