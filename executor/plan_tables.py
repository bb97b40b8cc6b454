"""Logical plan nodes of stored tables (CREATE TABLE): their writes (INSERT, UPDATE, DELETE,
COPY t FROM) and definitions (CREATE TABLE, DROP TABLE), built by the front end and run by the
operators of :mod:`graphdb.executor.writes.tables` and :mod:`graphdb.executor.writes.table_definitions`.
Like every node of :mod:`.plan`, plain frozen dataclasses that EXPLAIN shows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .plan import PlanNode

__all__ = ["CreateTable", "DropTable", "FileRows", "TableDelete", "TableInsert", "TableRows",
           "TableUpdate"]


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


@dataclass(frozen=True, eq=False)
class DropTable(PlanNode):
    """``DROP TABLE [IF EXISTS] t, ...``: refused for a table a property graph is built over
    or another table's FOREIGN KEY references."""

    tables: tuple[str, ...]
    if_exists: bool = False
