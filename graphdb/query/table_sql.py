"""Parsing the statements of tables, views and schemas (their kinds from sqlglot's AST)::

    CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t (col TYPE [PRIMARY KEY] [NOT NULL]
        [DEFAULT expr] [UNIQUE] [REFERENCES p (col)] [CHECK (...)], ...,
        [PRIMARY KEY (a, b)], [UNIQUE (...)], [FOREIGN KEY (c) REFERENCES p (k)])
    CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t AS query
    DROP TABLE|VIEW [IF EXISTS] t, ...          DROP SCHEMA [IF EXISTS] s [CASCADE]
    ALTER TABLE t ADD [COLUMN] c TYPE [DEFAULT x] | DROP [COLUMN] c | RENAME [COLUMN] a TO b
                | RENAME TO u
    CREATE [OR REPLACE] VIEW v [(a, b)] AS query   CREATE SCHEMA [IF NOT EXISTS] s
    TRUNCATE [TABLE] t
    COPY t FROM 'file' [(options)]              (a table's rows from a file; see
                                                 :mod:`graphdb.table_statements`)

Each parses to a :class:`TableStatement` node of its kind (its clauses in a
:class:`TableCommand`), run by the handlers of :mod:`graphdb.query.statements.tables`; the
statement's query (CREATE TABLE AS, CREATE VIEW) is kept as its text, bound when it runs like any
query.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp
from sqlglot.tokens import TokenType

from ..errors import InvalidInputError, ParseError
from .copy import TokenReader as _Reader

__all__ = ["TABLE_KINDS", "TableCommand", "TableStatement", "parse_table_statement",
           "table_node"]

#: Statement kinds this module parses (executed by graphdb.table_statements).
TABLE_KINDS = ("create_table", "drop_table", "alter_table", "create_view", "drop_view",
               "create_schema", "drop_schema", "truncate", "copy_from")


@dataclass(frozen=True)
class TableCommand:
    """What a table, view or schema statement says: its kind, sqlglot's tree of it (where
    sqlglot parses it), its text, the object it names, IF [NOT] EXISTS, a file and its
    clauses."""

    kind: str
    ast: Any
    text: str
    name: str = ""
    if_exists: bool = False
    path: str | None = None
    options: dict = field(default_factory=dict)
    explain: bool = False


class TableStatement(exp.Expression):
    """A statement of tables, views or schemas: ``spec`` its :class:`TableCommand`."""

    arg_types = {"spec": True}

    @property
    def command(self) -> TableCommand:
        return self.args["spec"]


#: The node class of each kind (the handler table is keyed by them).
NODES = {kind: type("".join(w.title() for w in kind.split("_")), (TableStatement,), {
    "__doc__": f"``{kind.replace('_', ' ').upper()}`` (see :class:`TableStatement`)."})
    for kind in TABLE_KINDS + ("show_tables", "show_property_graphs")}


def table_node(text: str) -> TableStatement | None:
    """The node of a table, view or schema statement; None when ``text`` is not one."""
    found = parse_table_statement(text)
    if found is None:
        return None
    command = TableCommand(found.pop("kind"), found.pop("ast"), text, **found)
    return NODES[command.kind](spec=command)


#: COPY t FROM options (DuckDB's names for CSV, Parquet and JSON input).
COPY_FROM_OPTIONS = ("format", "header", "delimiter", "delim", "sep", "quote", "escape",
                     "null", "nullstr", "skip", "dateformat", "timestampformat",
                     "auto_detect", "columns", "compression", "ignore_errors", "all_varchar",
                     "new_line", "strict_mode", "null_padding", "union_by_name", "encoding",
                     "allow_quoted_nulls", "force_not_null", "max_line_size", "types", "names")


def _query_after_as(text: str, r: _Reader) -> str:
    """The text of the query after the next top-level ``AS``."""
    depth = 0
    while r.i < len(r.tokens):
        token = r.tokens[r.i]
        r.i += 1
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and token.text.upper() == "AS" and token.token_type not in (
                TokenType.STRING, TokenType.IDENTIFIER):
            following = r.peek()
            if following is None:
                raise r.error("AS needs a query")
            return text[following.start:].strip().rstrip(";").strip()
    raise r.error("missing AS query")


def _name(r: _Reader, what: str) -> str:
    name = r.name(what).strip('"')
    if r.peek() is not None and r.peek().token_type == TokenType.DOT:
        r.i += 1
        name = f"{name}.{r.name(what).strip(chr(34))}"
    return name


def _create_head(text: str, kind: str) -> tuple[_Reader, dict[str, Any]]:
    r = _Reader(text, f"CREATE [OR REPLACE] {kind} [IF NOT EXISTS] name ...")
    r.expect("CREATE")
    replace = r.phrase("OR", "REPLACE")
    temporary = r.word("TEMP", "TEMPORARY")
    r.expect(kind)
    if_not_exists = r.phrase("IF", "NOT", "EXISTS")
    return r, {"replace": replace, "if_not_exists": if_not_exists, "temporary": temporary}


def parse_table_statement(text: str) -> dict[str, Any] | None:
    """(kind, ast, name, if_exists, path, options) of a table, view or schema statement, as
    the fields of a Statement; None when ``text`` is not one of them."""
    from .parser import parse_sqlglot

    words = text.split(None, 4)
    head = [w.upper() for w in words[:4]]
    if not head:
        return None
    if head[0] == "COPY":
        return _copy_from(text)
    if head[0] == "CREATE":
        rest = [w for w in head[1:] if w not in ("OR", "REPLACE", "TEMP", "TEMPORARY")]
        what = rest[0] if rest else ""
        if what == "SCHEMA":
            ast = parse_sqlglot(text, plain=True)
            name = ast.this.args.get("db") or ast.this.this
            return {"kind": "create_schema", "ast": ast, "name": name.name,
                    "if_exists": bool(ast.args.get("exists"))}
        if what == "VIEW":
            r, options = _create_head(text, "VIEW")
            name = _name(r, "view name")
            columns = []
            if r.peek() is not None and r.peek().token_type == TokenType.L_PAREN:
                start, stop = r.balanced()
                columns = [c.strip().strip('"') for c in text[start:stop].split(",")
                           if c.strip()]
            options.update(query=_query_after_as(text, r), columns=columns)
            return {"kind": "create_view", "ast": None, "name": name,
                    "if_exists": options["if_not_exists"], "options": options}
        if what != "TABLE":
            return None
        r, options = _create_head(text, "TABLE")
        name = _name(r, "table name")
        token = r.peek()
        if token is not None and token.token_type == TokenType.L_PAREN:
            # CREATE TABLE t (a, b) AS query: the query's columns renamed (no types given)
            at = r.i
            start, stop = r.balanced()
            after = r.peek()
            names = [c.strip() for c in text[start:stop].split(",")]
            if after is not None and after.text.upper() == "AS" and after.token_type not in (
                    TokenType.STRING, TokenType.IDENTIFIER) and all(
                    _bare_name(c) for c in names):
                options["columns"] = [c[1:-1].replace('""', '"') if c.startswith('"') else c
                                      for c in names]
                token = after
            else:
                r.i = at
        if token is not None and token.text.upper() == "AS" and token.token_type not in (
                TokenType.STRING, TokenType.IDENTIFIER):
            options["query"] = _query_after_as(text, r)
            return {"kind": "create_table", "ast": None, "name": name,
                    "if_exists": options["if_not_exists"], "options": options}
        ast = parse_sqlglot(text, plain=True)
        if not isinstance(ast, exp.Create) or not isinstance(ast.this, exp.Schema) or \
                ast.expression is not None:  # (a query after typed columns is no form of it)
            raise ParseError("expected CREATE TABLE name (column TYPE, ...), CREATE TABLE "
                             "name AS query or CREATE TABLE name (column, ...) AS query", 1, 1)
        return {"kind": "create_table", "ast": ast, "name": name,
                "if_exists": options["if_not_exists"], "options": options}
    if head[0] == "DROP" and len(head) > 1 and head[1] in ("TABLE", "VIEW", "SCHEMA"):
        ast = parse_sqlglot(text, plain=True)
        if not isinstance(ast, exp.Drop):
            raise ParseError(f"expected DROP {head[1]} [IF EXISTS] name", 1, 1)
        targets = ast.args.get("tables") or ([ast.this] if ast.this is not None else [])
        names = [".".join(p.name for p in (t.args.get("db"), t.this) if p is not None)
                 if isinstance(t, exp.Table) else t.name for t in targets]
        if head[1] == "SCHEMA":
            names = [t.args["db"].name if isinstance(t, exp.Table) and t.args.get("db") and
                     not t.name else n for t, n in zip(targets, names)]
        return {"kind": "drop_" + head[1].lower(), "ast": ast, "name": names[0] if names else "",
                "if_exists": bool(ast.args.get("exists")),
                "options": {"names": names, "cascade": bool(ast.args.get("cascade"))}}
    if head[0] == "ALTER" and len(head) > 1 and head[1] == "TABLE":
        ast = parse_sqlglot(text, plain=True)
        if not isinstance(ast, exp.Alter):
            raise ParseError("expected ALTER TABLE name ADD|DROP|RENAME ...", 1, 1)
        table = ast.this
        name = ".".join(p.name for p in (table.args.get("db"), table.this) if p is not None)
        return {"kind": "alter_table", "ast": ast, "name": name,
                "if_exists": bool(ast.args.get("exists"))}
    if head[0] == "TRUNCATE":
        ast = parse_sqlglot(text, plain=True)
        tables = ast.expressions if isinstance(ast, exp.TruncateTable) else []
        if not tables or ast.args.get("is_database"):
            raise ParseError("expected TRUNCATE [TABLE] name, ... [RESTART IDENTITY]", 1, 1)
        if ast.args.get("option") or ast.args.get("partition"):
            raise InvalidInputError("TRUNCATE takes tables and RESTART | CONTINUE IDENTITY; "
                                    "CASCADE and the rest are not supported")
        names = [".".join(p.name for p in (t.args.get("db"), t.this) if p is not None)
                 for t in tables]
        return {"kind": "truncate", "ast": ast, "name": names[0], "options": {
            "names": names, "restart": str(ast.args.get("identity") or "").upper() == "RESTART"}}
    return None


def _bare_name(text: str) -> bool:
    """Whether ``text`` is one column name alone (``a``, ``"a b"``), not a column definition."""
    import re

    return re.fullmatch(r'[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+"', text) is not None


def _copy_from(text: str) -> dict[str, Any] | None:
    """``COPY t FROM 'file' [(options)]`` of a table (a graph load has the same form: which
    one it is shows when it runs, by what ``t`` names)."""
    r = _Reader(text, "COPY table FROM 'file' [(HEADER, DELIMITER ',', FORMAT csv, ...)]")
    r.expect("COPY")
    token = r.peek()
    if token is None or token.token_type == TokenType.L_PAREN:
        return None
    name = _name(r, "table name")
    columns = []
    if r.peek() is not None and r.peek().token_type == TokenType.L_PAREN:
        start, stop = r.balanced()
        columns = [c.strip().strip('"') for c in text[start:stop].split(",") if c.strip()]
    if not r.word("FROM"):
        return None
    path = r.string("file name")
    end = r.i
    try:
        options = r.options(COPY_FROM_OPTIONS)
    except ParseError:
        options = None  # a graph load's options (COPY g FROM ... (UNDIRECTED)): not a table's
    r.i = end
    return {"kind": "copy_from", "ast": None, "name": name, "path": path,
            "options": {"options": options, "columns": columns}}
