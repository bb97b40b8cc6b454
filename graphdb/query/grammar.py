"""The statements of graphdb's own in the GraphSQL dialect: each parses to an AST node of its
kind, so a statement's kind is the class of its parsed tree (never a word looked at before
parsing).

sqlglot's DuckDB dialect parses SELECT, INSERT, UPDATE, DELETE, SET and DESCRIBE. The statements
it does not know, or knows as other things (``SHOW GRAPHS``, ``DROP GRAPH``, ``COPY g FROM``,
``CREATE [PROPERTY] GRAPH``, ``CHECKPOINT``, ``VACUUM``, ``RESET``, ``EXPLAIN``, ``DETACH
DELETE``, and the transaction statements, whose forms we check ourselves), are read by
:meth:`StatementGrammar._parse_statement` before sqlglot's own rules: a statement's first words
pick the rule, whose clauses are read from the statement's tokens (:mod:`.copy`,
:mod:`.property_graph_sql`). The nodes below hold what those clauses say.
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp
from sqlglot.tokens import TokenType

from ..errors import ParseError

__all__ = [
    "Checkpoint", "CopyTo", "CreateGraph", "CreateGraphAs", "CreatePropertyGraph",
    "DetachDelete", "DropGraph", "Explain", "GraphStatement", "ImportDatabase", "LoadGraph",
    "Pragma", "Reset",
    "ShowFunctions", "ShowGraphs", "ShowSettings", "StatementGrammar", "Vacuum",
]


class GraphStatement(exp.Expression):
    """A statement of graphdb's own: ``this`` names its object (a graph, a setting), ``spec``
    holds what its clauses say (a dict of plain values), ``exists`` its IF [NOT] EXISTS."""

    arg_types = {"this": False, "spec": False, "exists": False}

    @property
    def spec(self) -> dict[str, Any]:
        return self.args.get("spec") or {}

    @property
    def exists(self) -> bool:
        return bool(self.args.get("exists"))


class Explain(exp.Expression):
    """``EXPLAIN [ANALYZE] statement``: ``this`` the statement's tree, ``start`` the offset in
    the text where that statement starts."""

    arg_types = {"this": True, "analyze": False, "start": False}


class ShowGraphs(GraphStatement):
    """``SHOW GRAPHS`` (and ``SHOW TABLES``, ``this`` the word given)."""


class ShowSettings(GraphStatement):
    """``SHOW SETTINGS``."""


class ShowFunctions(GraphStatement):
    """``SHOW FUNCTIONS``."""


class DropGraph(GraphStatement):
    """``DROP GRAPH [IF EXISTS] name``."""


class CreateGraph(GraphStatement):
    """``CREATE [OR REPLACE] GRAPH [IF NOT EXISTS] g [(VERTICES (...), EDGES (...),
    UNDIRECTED)]``: an empty graph; ``spec``: replace, undirected, vertices and edges as
    (column, Arrow type) pairs."""


class LoadGraph(GraphStatement):
    """``COPY g FROM 'edges' [(...)]`` and ``CREATE [OR REPLACE] GRAPH [IF NOT EXISTS] g FROM
    'edges' [(...)]``: ``spec``: path, options (by their SQL names)."""


class CreateGraphAs(GraphStatement):
    """``CREATE [OR REPLACE] GRAPH [IF NOT EXISTS] h AS GRAPH g [WHERE ...]``: ``subgraph`` the
    :class:`~.dialect.SubgraphRef` (its spans are offsets into ``meta['text']``)."""

    arg_types = {"this": False, "spec": False, "exists": False, "subgraph": True}


class CreatePropertyGraph(GraphStatement):
    """``CREATE [OR REPLACE] PROPERTY GRAPH ...``: ``spec`` as
    :func:`~.property_graph_sql.parse_create_property_graph` reads it."""


class CopyTo(GraphStatement):
    """``COPY (query) TO 'file' [(...)]`` and ``COPY table TO 'file'``: ``spec``: query (its
    text), path, options."""


class Checkpoint(GraphStatement):
    """``CHECKPOINT [g]`` (``this`` empty: every changed graph)."""


class Vacuum(GraphStatement):
    """``VACUUM``."""


class Pragma(GraphStatement):
    """``PRAGMA integrity_check`` (``this``: the pragma's name, as in SQLite)."""


class Reset(GraphStatement):
    """``RESET setting`` or ``RESET ALL`` (``this`` is 'all')."""


class ImportDatabase(GraphStatement):
    """``IMPORT DATABASE 'directory'``: the schema.sql and load.sql that DuckDB's ``EXPORT
    DATABASE`` writes, run as scripts (``this`` the directory)."""


class DetachDelete(exp.Delete):
    """``DETACH DELETE FROM g.vertices ...``: a DELETE that deletes a vertex's edges with it."""


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _is_name(token) -> bool:
    """Whether ``token`` can name a graph: an identifier, quoted or not."""
    return token.token_type == TokenType.IDENTIFIER or (
        token.token_type != TokenType.STRING and _NAME.fullmatch(token.text) is not None)


class StatementGrammar:
    """The parser rules of graphdb's statements (mixed into the dialect's parser)."""

    def _parse_statement(self):
        if self._ended():
            return super()._parse_statement()
        word = self._curr.text.upper() if self._curr.token_type not in (
            TokenType.STRING, TokenType.IDENTIFIER) else ""
        rule = _RULES.get(word)
        if rule is not None:
            node = rule(self)
            if node is not None:
                return node
        return super()._parse_statement()

    # -- helpers --------------------------------------------------------------------------------
    def _ended(self, ahead: int = 0) -> bool:
        """Whether the statement has no token ``ahead`` of the current one (sqlglot's parser
        shows a sentinel token there, not None)."""
        return self._index + ahead >= len(self._tokens)

    def _words(self) -> list[str]:
        """The rest of the statement's tokens as upper-case words (the tokens stay)."""
        return [t.text.upper() for t in self._tokens[self._index:]]

    def _rest_text(self) -> str:
        """The statement's text from the current token to its end."""
        return self.sql[self._curr.start:self._tokens[-1].end + 1]

    def _finish(self, node):
        """Consume the rest of the statement; ``node`` is what it parsed to."""
        self._advance(len(self._tokens) - self._index)
        return node

    # -- the rules ------------------------------------------------------------------------------
    def _parse_explain(self):
        self._advance()
        analyze = bool(not self._ended() and self._curr.text.upper() == "ANALYZE"
                       and self._curr.token_type not in (TokenType.STRING,
                                                         TokenType.IDENTIFIER))
        if analyze:
            self._advance()
        if self._ended():
            raise ParseError("empty statement")
        start = self._curr.start
        inner = self._parse_statement()
        while isinstance(inner, Explain):  # EXPLAIN EXPLAIN x: one EXPLAIN
            start, inner = inner.args["start"], inner.this
        return Explain(this=inner, analyze=analyze, start=start)

    def _parse_show(self):
        from .table_sql import NODES, TableCommand

        text = self.sql[self._curr.start:self._tokens[-1].end + 1]
        words = self._words()
        if words[1:] == ["GRAPHS"]:
            return self._finish(ShowGraphs(this="graphs"))
        if words[1:] in (["TABLES"], ["ALL", "TABLES"], ["PROPERTY", "GRAPHS"]):
            kind = "show_tables" if words[-1] == "TABLES" else "show_property_graphs"
            return self._finish(NODES[kind](spec=TableCommand(kind, None, text)))
        if words[1:] == ["SETTINGS"]:
            return self._finish(ShowSettings())
        if words[1:] == ["FUNCTIONS"]:
            return self._finish(ShowFunctions())
        raise ParseError(f"unknown SHOW statement '{text}'; try SHOW GRAPHS, SHOW TABLES, SHOW "
                         "PROPERTY GRAPHS, SHOW FUNCTIONS or SHOW SETTINGS", 1, 1)

    def _parse_drop_graph(self):
        tokens = self._tokens[self._index:]
        words = self._words()
        if words[1:2] in (["TABLE"], ["VIEW"], ["SCHEMA"]):
            return self._table_statement()
        what = "PROPERTY GRAPH" if words[1:3] == ["PROPERTY", "GRAPH"] else "GRAPH"
        if len(words) < 2 or words[1] != what.split()[0]:
            what = tokens[1].text if len(tokens) > 1 else ""
            raise ParseError(f"unsupported statement: DROP {what}; expected DROP GRAPH, DROP "
                             "PROPERTY GRAPH, DROP TABLE, DROP VIEW or DROP SCHEMA", 1, 1)
        tokens, words = tokens[len(what.split()) - 1:], words[len(what.split()) - 1:]
        if_exists = words[2:4] == ["IF", "EXISTS"]
        rest = tokens[4:] if if_exists else tokens[2:]
        if len(rest) == 1 and _is_name(rest[0]):
            return self._finish(DropGraph(this=rest[0].text.strip('"'), exists=if_exists,
                                          spec={"property": what != "GRAPH"}))
        raise ParseError(f"expected DROP {what} [IF EXISTS] name", 1, 1)

    def _parse_describe_graph(self):
        """``DESCRIBE PROPERTY GRAPH g`` (DuckPGQ's: a row per element table); None (sqlglot's)
        for any other DESCRIBE."""
        tokens = self._tokens[self._index:]
        if [t.text.upper() for t in tokens[1:3]] != ["PROPERTY", "GRAPH"]:
            return None
        if len(tokens) != 4 or not _is_name(tokens[3]):
            raise ParseError("expected DESCRIBE PROPERTY GRAPH name", 1, 1)
        return self._finish(exp.Describe(this=exp.to_table(tokens[3].text),
                                         kind="PROPERTY GRAPH"))

    def _table_statement(self):
        """A statement of tables, views or schemas (:mod:`.table_sql`), or None."""
        from .table_sql import table_node

        node = table_node(self._rest_text())
        return None if node is None else self._finish(node)

    def _parse_begin(self):
        words = self._words()
        head, rest = words[0], words[1:]
        if (head == "BEGIN" and rest not in ([], ["TRANSACTION"], ["WORK"])) or (
                head == "START" and rest != ["TRANSACTION"]):
            raise ParseError("expected BEGIN [TRANSACTION] or START TRANSACTION", 1, 1)
        return self._finish(exp.Transaction())

    def _parse_end(self):
        words = self._words()
        head = words[0]
        if words[1:] not in ([], ["TRANSACTION"], ["WORK"]):
            raise ParseError(f"expected {head} [TRANSACTION]", 1, 1)
        return self._finish(exp.Commit() if head in ("COMMIT", "END") else exp.Rollback())

    def _parse_checkpoint(self):
        tokens = self._tokens[self._index:]
        if len(tokens) > 2 or (len(tokens) == 2 and not _is_name(tokens[1])):
            raise ParseError("expected CHECKPOINT [graph]", 1, 1)
        return self._finish(Checkpoint(this=tokens[1].text if len(tokens) == 2 else ""))

    def _parse_vacuum(self):
        if len(self._tokens) - self._index == 1:
            return self._finish(Vacuum())
        raise ParseError("expected VACUUM (it compacts the whole database file)", 1, 1)

    def _parse_import(self):
        tokens = self._tokens[self._index:]
        if len(tokens) == 3 and tokens[1].text.upper() == "DATABASE" and \
                tokens[2].token_type == TokenType.STRING:
            return self._finish(ImportDatabase(this=tokens[2].text))
        raise ParseError("expected IMPORT DATABASE 'directory'", 1, 1)

    def _parse_pragma(self):
        tokens = self._tokens[self._index:]
        name = tokens[1].text.lower() if len(tokens) == 2 else \
            " ".join(t.text for t in tokens[1:]).lower()
        if name == "integrity_check":  # as in SQLite (graphdb.integrity)
            return self._finish(Pragma(this=name))
        raise ParseError(f"unknown PRAGMA {name[:40]!r}; graphdb has PRAGMA integrity_check",
                         1, 1)

    def _parse_reset(self):
        tokens = self._tokens[self._index:]
        if len(tokens) == 2 and tokens[1].text.upper() == "ALL":
            return self._finish(Reset(this="all"))
        if len(tokens) == 2 and tokens[1].token_type not in (TokenType.STRING,
                                                              TokenType.IDENTIFIER) and \
                re.fullmatch(r"[A-Za-z_]+", tokens[1].text):
            return self._finish(Reset(this=tokens[1].text))
        raise ParseError("expected RESET setting_name (or RESET ALL)", 1, 1)

    def _parse_detach(self):
        if self._ended(1) or self._next.token_type != TokenType.DELETE:
            return None  # DuckDB's DETACH DATABASE: not ours
        self._advance()
        delete = self._parse_statement()
        if not isinstance(delete, exp.Delete):
            raise ParseError("unsupported statement: DETACH", 1, 1)
        return DetachDelete(**delete.args)

    def _parse_copy_statement(self):
        from .copy import parse_copy
        from .table_sql import table_node

        table = table_node(self._rest_text())  # COPY t FROM 'file' (a table's, or a graph's)
        if table is not None and table.command.options.get("options") is not None:
            return self._finish(table)
        parts = parse_copy(self._rest_text())
        if parts["kind"] == "load_graph":
            return self._finish(LoadGraph(this=parts["graph"], spec={
                "path": parts["path"], "options": parts["options"]}))
        return self._finish(CopyTo(spec={"query": parts["query"], "path": parts["path"],
                                         "options": parts["options"]}))

    def _parse_create_statement(self):
        words = self._words()[:6]
        what = [w for w in words[1:] if w not in ("OR", "REPLACE", "TEMP", "TEMPORARY")]
        if what[:1] in (["TABLE"], ["VIEW"], ["SCHEMA"]):
            return self._table_statement()
        if "PROPERTY" in words and words[words.index("PROPERTY") + 1:][:1] == ["GRAPH"]:
            from .property_graph_sql import parse_create_property_graph

            parts = parse_create_property_graph(self._rest_text())
            return self._finish(CreatePropertyGraph(this=parts["graph"], spec=parts,
                                                    exists=parts["if_not_exists"]))
        if len(words) < 2 or words[1] not in ("GRAPH", "OR"):
            return None  # CREATE TABLE, ...: sqlglot's
        from .copy import creates_empty_graph, parse_create_empty_graph, parse_create_graph

        text = self._rest_text()
        if creates_empty_graph(text):
            parts = parse_create_empty_graph(text)
            return self._finish(CreateGraph(this=parts["name"], spec=parts["options"],
                                            exists=parts["if_exists"]))
        parts = parse_create_graph(text)
        if parts.get("subgraph"):  # CREATE GRAPH h AS GRAPH g WHERE ...
            from .parser import parse_subgraph

            return self._finish(CreateGraphAs(this=parts["graph"], spec={
                "options": parts["options"]}, exists=parts["if_not_exists"],
                subgraph=parse_subgraph(parts["subgraph"])))
        return self._finish(LoadGraph(this=parts["graph"], spec={
            "path": parts["path"], "options": parts["options"]}, exists=parts["if_not_exists"]))


#: The first word of a statement -> the rule that reads it (None from a rule: sqlglot's own).
_RULES = {
    "EXPLAIN": StatementGrammar._parse_explain,
    "SHOW": StatementGrammar._parse_show,
    "DROP": StatementGrammar._parse_drop_graph,
    "BEGIN": StatementGrammar._parse_begin,
    "START": StatementGrammar._parse_begin,
    "COMMIT": StatementGrammar._parse_end,
    "END": StatementGrammar._parse_end,
    "ROLLBACK": StatementGrammar._parse_end,
    "ABORT": StatementGrammar._parse_end,
    "CHECKPOINT": StatementGrammar._parse_checkpoint,
    "VACUUM": StatementGrammar._parse_vacuum,
    "PRAGMA": StatementGrammar._parse_pragma,
    "RESET": StatementGrammar._parse_reset,
    "IMPORT": StatementGrammar._parse_import,
    "DETACH": StatementGrammar._parse_detach,
    "COPY": StatementGrammar._parse_copy_statement,
    "CREATE": StatementGrammar._parse_create_statement,
    "ALTER": StatementGrammar._table_statement,
    "DESCRIBE": StatementGrammar._parse_describe_graph,
    "TRUNCATE": StatementGrammar._table_statement,
}
