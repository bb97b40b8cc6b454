"""``CREATE PROPERTY GRAPH``: SQL/PGQ's statement, read into the tables it names.

::

    CREATE [OR REPLACE] [UNDIRECTED] PROPERTY GRAPH social
      VERTEX TABLES (
        persons KEY (id) LABEL Person PROPERTIES (id, name, birthday),
        'companies.parquet' AS companies KEY (id) LABEL Company
      )
      EDGE TABLES (
        knows SOURCE KEY (person1) REFERENCES persons (id)
              DESTINATION KEY (person2) REFERENCES persons (id) LABEL knows,
        work_at SOURCE KEY (person) REFERENCES persons DESTINATION KEY (company)
                REFERENCES companies PROPERTIES ARE ALL COLUMNS
      )

A table is a table of the connection (registered, a graph's ``g.vertices`` or ``g.Person``) or a
quoted file DuckDB reads (CSV, Parquet, JSON; give it a name with AS). The label defaults to the
table's name, the key to its first column, the properties to all its columns (an edge table's
but its two key columns). Each table has one label. ``UNDIRECTED`` (graphdb's, not SQL/PGQ's)
stores every edge both ways, as ``graphdb ingest --undirected``.
"""

from __future__ import annotations

from typing import Any

from sqlglot.tokens import TokenType

from ..errors import ParseError
from .copy import TokenReader

__all__ = ["parse_create_property_graph"]

_USAGE = ("CREATE [OR REPLACE] PROPERTY GRAPH name VERTEX TABLES (table [AS name] [KEY (column)] "
          "[LABEL label] [PROPERTIES (...)], ...) [EDGE TABLES (table SOURCE KEY (column) "
          "REFERENCES vertex_table DESTINATION KEY (column) REFERENCES vertex_table [LABEL "
          "label], ...)]")


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
        source = r.name("table name")
        if _punct(r, TokenType.DOT):
            source = f"{source}.{r.name('table name')}"
        name, quoted = source.split(".")[-1], False
    if r.word("AS"):
        name = r.name("table name")
    if name is None:
        raise r.error(f"a file ('{source}') needs a name: '{source}' AS persons")
    return {"table": source, "file": quoted, "name": name}


def _label_and_properties(r: TokenReader, item: dict) -> None:
    while True:
        if r.word("LABEL"):
            if item.get("label"):
                raise r.error("a table has one label here")
            item["label"] = r.name("label")
        elif r.word("DEFAULT"):
            r.expect("LABEL")
        elif r.word("NO"):
            r.expect("PROPERTIES")
            item["properties"] = []
        elif r.word("PROPERTIES"):
            if r.word("ARE"):
                r.expect("ALL")
                r.expect("COLUMNS")
                item["properties"] = None
            else:
                item["properties"] = _columns(r)
        else:
            return


def _references(r: TokenReader) -> tuple[str, str | None]:
    r.expect("REFERENCES")
    name = r.name("vertex table")
    column = None
    token = r.peek()
    if token is not None and token.token_type == TokenType.L_PAREN:
        referenced = _columns(r)
        if len(referenced) != 1:
            raise r.error("a key of one column")
        column = referenced[0]
    return name, column


def _list(r: TokenReader, edge: bool) -> list[dict]:
    if not _punct(r, TokenType.L_PAREN):
        raise r.error("expected '(' before the tables")
    items = []
    while True:
        item = _table(r)
        item["properties"] = None
        if r.word("KEY"):
            keys = _columns(r)
            if len(keys) != 1:
                raise r.error("a key of one column")
            item["key"] = keys[0]
        if edge:
            r.expect("SOURCE")
            r.expect("KEY")
            source = _columns(r)
            item["source"], item["source_column"] = _references(r)
            r.expect("DESTINATION")
            r.expect("KEY")
            destination = _columns(r)
            item["destination"], item["destination_column"] = _references(r)
            if len(source) != 1 or len(destination) != 1:
                raise r.error("SOURCE KEY and DESTINATION KEY of one column each")
            item["source_key"], item["destination_key"] = source[0], destination[0]
        _label_and_properties(r, item)
        items.append(item)
        if _punct(r, TokenType.COMMA):
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
    r.expect("VERTEX")
    r.expect("TABLES")
    vertices = _list(r, edge=False)
    edges = []
    if r.word("EDGE"):
        r.expect("TABLES")
        edges = _list(r, edge=True)
    token = r.peek()
    if token is not None and token.token_type != TokenType.SEMICOLON:
        raise ParseError(f"unexpected '{token.text}' after the tables; expected {_USAGE}")
    return {"graph": graph, "replace": replace, "undirected": undirected,
            "if_not_exists": if_not_exists, "vertices": vertices, "edges": edges}
