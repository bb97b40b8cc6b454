"""Logical plan nodes of stored tables (CREATE TABLE): their writes (INSERT, UPDATE, DELETE,
TRUNCATE, COPY t FROM) and definitions (CREATE, DROP and ALTER TABLE), and of views and schemas,
built by the front end and run by the operators of :mod:`graphdb.executor.writes.tables`,
:mod:`graphdb.executor.writes.table_definitions`, :mod:`graphdb.executor.writes.alter_table` and
:mod:`graphdb.executor.writes.namespaces`.
Like every node of :mod:`.plan`, plain frozen dataclasses that EXPLAIN shows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .plan import PlanNode

__all__ = ["AddColumn", "AlterTable", "CreateSchema", "CreateTable", "CreateView", "DropColumn",
           "DropSchema", "DropTable", "DropView", "FileRows", "RenameColumn", "RenameTable",
           "TableDelete", "TableInsert", "TableRows", "TableUpdate", "TruncateTables"]


@dataclass(frozen=True, eq=False)
class TableRows(PlanNode):
    """The rows of stored table ``table`` a DELETE or UPDATE picks from, at the transaction's
    newest version (read once the writer lock is held), each with its row id in
    :data:`~.plan.ROW`."""

    table: str


@dataclass(frozen=True, eq=False)
class FileRows(PlanNode):
    """The rows of a file as DuckDB reads them (``sql``: its ``read_csv``/``read_parquet``/
    ``read_json`` query), read when the statement runs (COPY t FROM 'file')."""

    path: str
    sql: str


@dataclass(frozen=True, eq=False)
class TableInsert(PlanNode):
    """``INSERT INTO t [(columns)] VALUES ... | SELECT ...`` and ``COPY t FROM 'file'``: the
    rows of ``rows`` (positionally the ``columns``; None: every column of the table, in order)
    checked against the table's constraints and appended, the graphs over the table following
    as delta records. ``conflict``: None, ``('nothing' | 'replace', None)``, or ``('update',
    ((column, DuckDB SQL), ...))``; ``source``: what EXPLAIN calls the rows (``VALUES``,
    ``SELECT``, ``COPY``)."""

    table: str
    columns: tuple[str, ...] | None
    rows: PlanNode
    conflict: tuple | None = None
    source: str = "VALUES"


@dataclass(frozen=True, eq=False)
class TableDelete(PlanNode):
    """``DELETE FROM t [USING ...] [WHERE ...]`` and ``TRUNCATE t``: ``picked`` is the query
    of the :data:`~.plan.ROW` of the rows to delete, over :class:`TableRows`."""

    table: str
    picked: PlanNode


@dataclass(frozen=True, eq=False)
class TruncateTables(PlanNode):
    """``TRUNCATE [TABLE] t, ... [RESTART IDENTITY | CONTINUE IDENTITY]``: every row of each
    table deleted in one statement (a table whose rows another table's FOREIGN KEY references
    is refused unless that table is truncated too); ``restart``: identity columns count from
    their start again."""

    tables: tuple[str, ...]
    restart: bool = False


@dataclass(frozen=True, eq=False)
class TableUpdate(PlanNode):
    """``UPDATE t SET ... [FROM ...] [WHERE ...]``: ``picked`` is the query of the rows to
    change over :class:`TableRows`, their :data:`~.plan.ROW` then the new value of every
    column; ``columns``: the columns SET assigns. A changed row is deleted and appended anew."""

    table: str
    columns: tuple[str, ...]
    picked: PlanNode


@dataclass(frozen=True, eq=False)
class CreateTable(PlanNode):
    """``CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t (columns, constraints)``: ``entry`` is
    the table as declared (a :class:`graphdb.catalog.tables.TableEntry`, its generation made
    when it runs); ``CREATE TABLE t AS query``: ``rows`` is the query, whose columns and types
    the table takes."""

    table: str
    entry: Any = None
    rows: PlanNode | None = None
    replace: bool = False
    if_not_exists: bool = False
    #: ``CREATE TABLE t (a, b) AS query``: the names the query's first columns take
    columns: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class DropTable(PlanNode):
    """``DROP TABLE [IF EXISTS] t, ...``: refused for a table a property graph is built over
    or another table's FOREIGN KEY references."""

    tables: tuple[str, ...]
    if_exists: bool = False


@dataclass(frozen=True, eq=False)
class AddColumn:
    """``ADD [COLUMN] [IF NOT EXISTS] c TYPE [DEFAULT x] [NOT NULL]``: ``column`` is its
    :class:`graphdb.catalog.tables.Column`, ``arrow`` its Arrow type; each existing row gets the
    default (``column.default``, DuckDB SQL) or NULL."""

    column: Any
    arrow: Any
    if_not_exists: bool = False

    def __str__(self) -> str:
        column = self.column
        return (f"ADD COLUMN {column.name} {column.type}"
                + (f" DEFAULT {column.default}" if column.default is not None else "")
                + ("" if column.nullable else " NOT NULL"))


@dataclass(frozen=True, eq=False)
class DropColumn:
    """``DROP [COLUMN] [IF EXISTS] c``: refused for a column a key or constraint uses."""

    name: str
    if_exists: bool = False

    def __str__(self) -> str:
        return f"DROP COLUMN {self.name}"


@dataclass(frozen=True, eq=False)
class RenameColumn:
    """``RENAME [COLUMN] a TO b``: the keys and constraints follow the new name."""

    old: str
    new: str

    def __str__(self) -> str:
        return f"RENAME COLUMN {self.old} TO {self.new}"


@dataclass(frozen=True, eq=False)
class RenameTable:
    """``RENAME TO t2``."""

    new: str

    def __str__(self) -> str:
        return f"RENAME TO {self.new}"


@dataclass(frozen=True, eq=False)
class AlterTable(PlanNode):
    """``ALTER TABLE [IF EXISTS] t action, ...``: the actions (:class:`AddColumn`,
    :class:`DropColumn`, :class:`RenameColumn`, :class:`RenameTable`) applied in order in one
    statement; a change of columns rewrites the table's live rows as a new generation, their row
    ids kept. Refused for a table a property graph is built over."""

    table: str
    actions: tuple
    if_exists: bool = False


@dataclass(frozen=True, eq=False)
class CreateView(PlanNode):
    """``CREATE [OR REPLACE] VIEW [IF NOT EXISTS] v [(columns)] AS query``: the query's text is
    kept and expanded where a query names the view; ``output`` is its (name, DuckDB type)
    columns, as bound when the view is made."""

    view: str
    query: str
    columns: tuple[str, ...] = ()
    output: tuple = ()
    replace: bool = False
    if_not_exists: bool = False


@dataclass(frozen=True, eq=False)
class DropView(PlanNode):
    """``DROP VIEW [IF EXISTS] v, ...``."""

    views: tuple[str, ...]
    if_exists: bool = False


@dataclass(frozen=True, eq=False)
class CreateSchema(PlanNode):
    """``CREATE SCHEMA [IF NOT EXISTS] s``: a namespace for tables and views (``s.t``)."""

    schema: str
    if_not_exists: bool = False


@dataclass(frozen=True, eq=False)
class DropSchema(PlanNode):
    """``DROP SCHEMA [IF EXISTS] s, ... [CASCADE]``: refused for a schema with tables or views
    unless CASCADE, which drops them too (each table as DROP TABLE would)."""

    schemas: tuple[str, ...]
    if_exists: bool = False
    cascade: bool = False
