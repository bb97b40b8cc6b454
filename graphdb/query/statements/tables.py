"""Tables, views and schemas: CREATE/DROP/ALTER TABLE, TRUNCATE, COPY t FROM, CREATE/DROP VIEW,
CREATE/DROP SCHEMA (bound into plans by :mod:`graphdb.query.table_statements`, which EXPLAIN
shows), SHOW TABLES and SHOW PROPERTY GRAPHS.

The definitions change the catalog's table entries inside the session's write transaction
(:mod:`graphdb.catalog.tables`). ``COPY t FROM`` is a plan (EXPLAIN shows it): the file's rows
read by DuckDB into a table insert; of a name that is a graph, not a table, that graph's load
(:mod:`.copy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from graphdb.executor.plan import PlanNode, ValuesScan

from .. import grammar
from ..table_sql import NODES, TABLE_KINDS
from . import Handler

if TYPE_CHECKING:
    from graphdb.executor.snapshot import StatementCatalog

    from ...session import Session
    from ..parser import Statement

__all__ = ["HANDLERS"]


class TablePlan(Handler):
    """A definition of tables, views or schemas, or TRUNCATE: a plan
    (:func:`graphdb.query.table_statements.definition_plan`) run by the executor's operators,
    which EXPLAIN shows."""

    explainable = True

    def __init__(self, kind: str):
        self.kind = kind
        self.parameters = kind == "create_table"  # CREATE TABLE t AS SELECT ... WHERE x = ?

    def check(self, session: "Session", statement: "Statement") -> None:
        session.writable()

    def uses_lease(self, statement: "Statement") -> bool:
        # CREATE TABLE AS reads tables; CREATE VIEW binds its query when planned
        return "query" in (statement.ast.command.options or {})

    def plan(self, session: "Session", statement: "Statement", parameters: Any,
             snapshot: "StatementCatalog") -> PlanNode:
        from ..table_statements import definition_plan

        return definition_plan(session, statement.ast.command, parameters, snapshot)

    def finish(self, session: "Session", statement: "Statement", table: pa.Table
               ) -> tuple[pa.Table, str | None]:
        if not session.transaction.open:
            session.after_commit(session.transaction.writer.committed)
        if self.kind == "truncate":
            return table, None
        return pa.table({}), table.column("status")[0].as_py()


class CopyFrom(Handler):
    """``COPY t [(columns)] FROM 'file'``: a stored table's rows, inserted by the plan
    :func:`graphdb.query.table_statements.copy_plan` gives; or else graph ``t``'s load."""

    kind = "copy_from"
    explainable = True

    def files(self, statement: "Statement") -> str | None:
        return "COPY ... FROM reads a file"

    def check(self, session: "Session", statement: "Statement") -> None:
        session.writable()

    @staticmethod
    def _load(session: "Session", statement: "Statement") -> "Statement | None":
        """The graph load a COPY of a name that is no stored table is."""
        if session.catalog.tables_now().find(statement.ast.command.name) is not None:
            return None
        from ..copy import parse_copy
        from ..parser import Statement

        parts = parse_copy(statement.text)
        return Statement(grammar.LoadGraph(this=parts["graph"], spec={
            "path": parts["path"], "options": parts["options"]}), statement.text)

    def plan(self, session: "Session", statement: "Statement", parameters: Any,
             snapshot: "StatementCatalog") -> PlanNode:
        load = self._load(session, statement)
        if load is not None:
            from . import handler_for

            return handler_for(load.ast).plan(session, load, parameters, snapshot)
        from ..table_statements import copy_plan

        return copy_plan(session, statement.ast.command)

    def execute(self, session: "Session", statement: "Statement", parameters: Any
                ) -> tuple[pa.Table, str | None]:
        load = self._load(session, statement)
        if load is not None:
            from . import handler_for

            return handler_for(load.ast).execute(session, load, parameters)
        if parameters:
            from ...errors import InvalidInputError

            raise InvalidInputError("COPY FROM takes no parameters")
        return super().execute(session, statement, parameters)

    def finish(self, session: "Session", statement: "Statement", table: pa.Table
               ) -> tuple[pa.Table, str | None]:
        if not session.transaction.open:
            session.after_commit(session.transaction.writer.committed)
        return table, None


class ImportDatabase(Handler):
    """``IMPORT DATABASE 'dir'``: the directory's schema.sql, then its load.sql (DuckDB's
    ``EXPORT DATABASE`` writes them), each statement run as the session runs any; a file a
    ``COPY ... FROM`` names that is not there is looked for in the directory."""

    kind = "import_database"
    leased = False

    def files(self, statement: "Statement") -> str | None:
        return "IMPORT DATABASE reads files"

    def execute(self, session: "Session", statement: "Statement", parameters: Any
                ) -> tuple[pa.Table, str | None]:
        import os
        import re

        from ...errors import InvalidInputError
        from ..parser import parse, split_script

        directory = statement.ast.name
        if not os.path.isdir(directory):
            raise InvalidInputError(f"IMPORT DATABASE: '{directory}' is no directory")
        count = 0
        for script in ("schema.sql", "load.sql"):
            path = os.path.join(directory, script)
            if not os.path.exists(path):
                continue
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for piece in split_script(text):
                def here(match: re.Match) -> str:
                    name = match.group(2).replace("''", "'")
                    if not os.path.exists(name):
                        moved = os.path.join(directory, os.path.basename(name))
                        if os.path.exists(moved):
                            name = moved
                    return match.group(1) + "'" + name.replace("'", "''") + "'"

                piece = re.sub(r"(?is)^(\s*COPY\s+\S+\s+FROM\s+)'((?:[^']|'')*)'", here, piece)
                session.execute(parse(piece))
                count += 1
        return pa.table({}), f"imported '{directory}': {count} statements"


class ShowTables(Handler):
    """``SHOW TABLES`` (the stored tables, views and registered tables) and ``SHOW PROPERTY
    GRAPHS`` (each property graph with its labels and tables)."""

    explainable = True

    def __init__(self, kind: str):
        self.kind = kind

    def plan(self, session: "Session", statement: "Statement", parameters: Any,
             snapshot: "StatementCatalog") -> PlanNode:
        if self.kind == "show_tables":
            from ..table_statements import show_tables

            return ValuesScan("tables", show_tables(session))
        from ...property_graphs import show_property_graphs

        return ValuesScan("property_graphs", show_property_graphs(session))


HANDLERS: dict[type, Handler] = {NODES[kind]: TablePlan(kind) for kind in TABLE_KINDS
                                 if kind != "copy_from"}
HANDLERS[NODES["copy_from"]] = CopyFrom()
HANDLERS[grammar.ImportDatabase] = ImportDatabase()
HANDLERS.update({NODES[kind]: ShowTables(kind) for kind in ("show_tables",
                                                            "show_property_graphs")})
