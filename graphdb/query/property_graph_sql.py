"""``CREATE PROPERTY GRAPH``: SQL/PGQ's statement, read into the tables it names.

::

    CREATE [OR REPLACE] [UNDIRECTED] PROPERTY GRAPH [IF NOT EXISTS] social
      VERTEX TABLES (
        persons KEY (id) LABEL Person PROPERTIES (id, name, birthday AS born,
                                                  year(birthday) AS born_in),
        'companies.parquet' AS companies KEY (id) LABEL Company LABEL Organisation,
        cities NO PROPERTIES
      )
      EDGE TABLES (
        knows SOURCE KEY (person1) REFERENCES persons (id)
              DESTINATION KEY (person2) REFERENCES persons (id) LABEL knows,
        work_at SOURCE persons DESTINATION companies
                PROPERTIES ARE ALL COLUMNS EXCEPT (note)
      )

A table is a stored table (CREATE TABLE: writes to it reach the graph), a table of the
connection (registered, a graph's ``g.vertices`` or ``g.Person``) or a quoted file DuckDB reads
(CSV, Parquet, JSON; give it a name with AS). A table's labels default to its name (its AS
name), its properties to all its columns; ``LABEL`` may be given several times (each a label
of every row of the table), ``DEFAULT LABEL`` is its name, ``PROPERTIES (col AS name)`` renames,
``PROPERTIES (expression AS name)`` works a property out from the row's columns
(:mod:`graphdb.executor.property_expressions`).
A vertex table's key defaults to its primary key, else to the column its edge tables
reference, else to its first column (a stored table: its rows' identity). An edge table's
``SOURCE persons`` without KEY takes its foreign key to persons. ``UNDIRECTED`` (graphdb's, not
SQL/PGQ's) stores every edge both ways, as ``graphdb ingest --undirected``. ``NODE TABLES`` and
``RELATIONSHIP TABLES`` are accepted for VERTEX and EDGE TABLES.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from graphdb.executor.property_expressions import Expression

from ..errors import ParseError
from .copy import TokenReader

__all__ = ["parse_create_property_graph"]

_USAGE = ("CREATE [OR REPLACE] PROPERTY GRAPH name VERTEX TABLES (table [AS name] [KEY (column)] "
          "[LABEL label ...] [PROPERTIES (column [AS name] | expression AS name, ...) | "
          "PROPERTIES ARE ALL COLUMNS [EXCEPT (...)] | NO "
          "PROPERTIES], ...) [EDGE TABLES (table SOURCE [KEY (column) REFERENCES] vertex_table "
          "DESTINATION [KEY (column) REFERENCES] vertex_table [LABEL label ...] [PROPERTIES ...], "
          "...)]")


def _columns(r: TokenReader) -> list[str]:
    """``(a, b, ...)``."""
    if not _punct(r, TokenType.L_PAREN):
        raise r.error("expected '('")
    names = []
    while True:
        names.append(r.name("column name"))
        if _punct(r, TokenType.COMMA):
            continue
        if _punct(r, TokenType.R_PAREN):
            return names
        raise r.error("expected ',' or ')'")


def _punct(r: TokenReader, kind) -> bool:
    token = r.peek()
    if token is not None and token.token_type == kind:
        r.i += 1
        return True
    return False


def _table(r: TokenReader) -> dict[str, Any]:
    token = r.peek()
    if token is None:
        raise r.error("missing a table")
    if token.token_type == TokenType.STRING:
        r.i += 1
        source, name = token.text, None
        quoted = True
    else:
        source = _qualified(r, "table name")
        name, quoted = source.split(".")[-1], False
    if r.word("AS"):
        name = r.name("table name")
    if name is None:
        raise r.error(f"a file ('{source}') needs a name: '{source}' AS persons")
    return {"table": source, "file": quoted, "name": name.strip('"')}


def _qualified(r: TokenReader, what: str) -> str:
    """A table's name, ``t`` or ``schema.t``."""
    name = r.name(what)
    if _punct(r, TokenType.DOT):
        name = f"{name}.{r.name(what)}"
    return name


def _property_list(r: TokenReader) -> list[tuple[str, str]]:
    """``(column [AS name], ...)``: (property, column) each."""
    if not _punct(r, TokenType.L_PAREN):
        raise r.error("expected '(' after PROPERTIES")
    found = []
    while True:
        token = r.peek()
        if token is not None and token.token_type == TokenType.STAR:
            raise r.error("PROPERTIES (*) is not SQL/PGQ: write PROPERTIES ALL COLUMNS, or leave "
                          "the clause out")
        token, after = r.peek(), r.peek(1)
        if token is None:
            raise r.error("expected a column or an expression")
        if token.token_type in (TokenType.STRING, TokenType.NUMBER, TokenType.L_PAREN) or (
                after is not None and after.text.upper() != "AS"
                and after.token_type not in (TokenType.COMMA, TokenType.R_PAREN)):
            expression = _expression(r)
            if not r.word("AS"):
                raise r.error(f"the property of an expression needs a name: {expression.sql} "
                              "AS name")
            found.append((r.name("property name").strip('"'), expression))
        else:
            column = r.name("column name").strip('"')
            prop = r.name("property name").strip('"') if r.word("AS") else column
            found.append((prop, column))
        if _punct(r, TokenType.COMMA):
            continue
        if _punct(r, TokenType.R_PAREN):
            return found
        raise r.error("expected ',' or ')'")


def _expression(r: TokenReader) -> Expression:
    """A property's expression: the tokens up to AS, ',' or ')' outside parentheses, checked
    to read only its own row."""
    first, depth = r.peek(), 0
    last = first
    while True:
        token = r.peek()
        if token is None:
            raise r.error("an expression is not closed")
        kind = token.token_type
        if depth == 0 and (kind in (TokenType.COMMA, TokenType.R_PAREN) or (
                token.text.upper() == "AS" and kind == TokenType.ALIAS)):
            break
        depth += kind == TokenType.L_PAREN
        depth -= kind == TokenType.R_PAREN
        last = token
        r.i += 1
    text = r.text[first.start:last.end + 1]
    try:
        tree = parse_one(text, read="duckdb")
    except SqlglotError as exc:
        raise ParseError(f"property expression {text}: {exc}") from None
    for node in tree.walk():
        if isinstance(node, (exp.AggFunc, exp.Window, exp.Subquery, exp.Select, exp.Star)):
            raise r.error(f"property expression {text}: a property is worked out from its own "
                          "row (no aggregates, window functions or subqueries)")
    return Expression(text)


def _properties(r: TokenReader, item: dict) -> list | None:
    """A properties clause: its (property, column) pairs, ``["*"]`` for all columns (EXCEPT
    kept in ``item``), ``[]`` for NO PROPERTIES; None when there is none."""
    if r.word("NO"):
        r.expect("PROPERTIES")
        return []
    if not r.word("PROPERTIES"):
        return None
    if r.word("ARE") or (r.peek() is not None and r.peek().text.upper() == "ALL"):
        r.expect("ALL")
        r.expect("COLUMNS")
        if r.word("EXCEPT"):
            item["except"] = [c for c in _columns(r)]
        return ["*"]
    return _property_list(r)


def _add_label(r: TokenReader, labels: list[str], label: str) -> None:
    if label.lower() in (n.lower() for n in labels):
        raise r.error(f"label {label} is given twice to one table")
    labels.append(label)


def _label_and_properties(r: TokenReader, item: dict) -> None:
    """``[PROPERTIES ...] [LABEL name [PROPERTIES ...] | DEFAULT LABEL [...]] ...``: the
    element's labels (its name without any) and properties. As SQL/PGQ's, each label has its
    own properties, all the table's columns when its clause is left out; the element has the
    union of its labels' (a properties clause before every LABEL, DuckPGQ's order, is that of
    the labels without one)."""
    labels = item.setdefault("labels", [])
    clauses: list[list | None] = []  # per label; None: none given
    leading = None
    while True:
        if r.word("IN"):  # DuckPGQ's `table IN column (...)`: the table's name is the label
            _row_labels(r, item)
            _add_label(r, labels, item["name"])
            clauses.append(None)
            continue
        if r.word("LABEL"):
            label = r.name("label").strip('"')
            if r.word("IN"):  # DuckPGQ's labels chosen per row by a column's value
                _row_labels(r, item)
            _add_label(r, labels, label)
            clauses.append(None)
        elif r.word("DEFAULT"):
            r.expect("LABEL")
            _add_label(r, labels, item["name"])  # the table's name
            clauses.append(None)
        else:
            clause = _properties(r, item)
            if clause is None:
                break
            if clauses and clauses[-1] is None:
                clauses[-1] = clause
            elif not clauses and leading is None:
                leading = clause
            else:
                raise r.error("a second properties clause for one label")
    item["label"] = labels[0] if labels else None
    chosen: list = []
    for clause in clauses or [None]:
        for prop in (clause if clause is not None else leading if leading is not None
                     else ["*"]):
            if prop not in chosen:
                chosen.append(prop)
    item["properties"] = None if chosen == ["*"] else chosen


def _row_labels(r: TokenReader, item: dict) -> None:
    """``column (label, ...)`` of DuckPGQ's ``LABEL l IN column (...)``: label i is given to
    the rows whose integer ``column`` has bit i set."""
    if item.get("row_labels"):
        raise r.error("one IN column (...) per table")
    item["row_label_column"] = r.name("column").strip('"')
    names = [c.strip('"') for c in _columns(r)]
    seen: set[str] = set()
    for name in names:
        if name.lower() in seen:
            raise r.error(f"label {name.lower()} is given twice in IN (...): labels must be "
                          "unique")
        seen.add(name.lower())
    item["row_labels"] = names


def _references(r: TokenReader) -> tuple[str, str | None]:
    r.expect("REFERENCES")
    name = _qualified(r, "vertex table")
    column = None
    token = r.peek()
    if token is not None and token.token_type == TokenType.L_PAREN:
        referenced = _columns(r)
        if len(referenced) != 1:
            raise r.error("a key of one column")
        column = referenced[0]
    return name, column


def _endpoint(r: TokenReader, item: dict, side: str) -> None:
    """``SOURCE KEY (column) REFERENCES table [(column)]`` or ``SOURCE table`` (its key
    columns from the edge table's foreign key to it)."""
    r.expect(side.upper())
    if r.word("KEY"):
        token = r.peek()
        keys = _columns(r) if token is not None and token.token_type == TokenType.L_PAREN \
            else [r.name("key column").strip('"')]
        if len(keys) != 1:
            raise r.error(f"{side.upper()} KEY of one column")
        item[f"{side}_key"] = keys[0]
        item[side], item[f"{side}_column"] = _references(r)
    else:
        item[f"{side}_key"] = None
        item[side], item[f"{side}_column"] = _qualified(r, "vertex table"), None


def _list(r: TokenReader, edge: bool) -> list[dict]:
    if not _punct(r, TokenType.L_PAREN):
        raise r.error("expected '(' before the tables")
    items = []
    while True:
        item = _table(r)
        if r.word("KEY"):
            keys = _columns(r)
            if len(keys) != 1 and not edge:
                raise r.error("a key of one column")
            item["key"] = keys[0] if not edge else None
        if edge:
            _endpoint(r, item, "source")
            _endpoint(r, item, "destination")
        _label_and_properties(r, item)
        items.append(item)
        if _punct(r, TokenType.COMMA):
            token = r.peek()
            if token is not None and token.token_type == TokenType.R_PAREN:
                raise r.error("a ',' before ')'")
            continue
        if _punct(r, TokenType.R_PAREN):
            return items
        raise r.error("expected ',' or ')' after a table")


def parse_create_property_graph(text: str) -> dict[str, Any]:
    """The parts of a CREATE PROPERTY GRAPH statement: graph, replace, undirected, if_not_exists,
    vertex tables and edge tables (dicts: table, file, name, key, label, properties, and for
    edges source/destination with their key columns)."""
    r = TokenReader(text, _USAGE)
    r.expect("CREATE")
    replace = r.phrase("OR", "REPLACE")
    undirected = r.word("UNDIRECTED")
    r.expect("PROPERTY")
    r.expect("GRAPH")
    if_not_exists = r.phrase("IF", "NOT", "EXISTS")
    graph = r.name("graph name")
    r.expect("VERTEX", "NODE")
    r.expect("TABLES")
    vertices = _list(r, edge=False)
    edges = []
    if r.word("EDGE", "RELATIONSHIP"):
        r.expect("TABLES")
        edges = _list(r, edge=True)
    token = r.peek()
    if token is not None and token.token_type != TokenType.SEMICOLON:
        raise ParseError(f"unexpected '{token.text}' after the tables; expected {_USAGE}")
    labels = [label.lower() for item in vertices + edges for label in item["labels"]]
    for item in vertices + edges:
        for label in item.get("row_labels", []):
            if label.lower() in labels:
                raise ParseError(f"label {label.lower()} is given by IN ({label}) and to a "
                                 "table: labels must be unique")
    return {"graph": graph, "replace": replace, "undirected": undirected,
            "if_not_exists": if_not_exists, "vertices": vertices, "edges": edges}
