"""CREATE TABLE and DROP TABLE of stored tables: the operators of
:class:`~graphdb.executor.plan_tables.CreateTable` and
:class:`~graphdb.executor.plan_tables.DropTable`. Each changes the table entries in one
statement of the session's writer (all of a DROP's tables or none; inside BEGIN ... COMMIT, with
the transaction) and returns its status line."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from graphdb.catalog import CatalogError
from graphdb.catalog.tables import new_generation

from ..errors import StatementMismatch
from ..physical.nodes import PhysicalNode
from ..table_types import entry_of_rows
from .definitions import status_table
from .table_graphs import refuse_if_graph

if TYPE_CHECKING:
    from ..runner import Runner

__all__ = ["CreateTableOperator", "DropTableOperator", "refuse_if_referenced"]


@dataclass(eq=False, kw_only=True)
class CreateTableOperator(PhysicalNode):
    """Runs :class:`graphdb.executor.plan_tables.CreateTable`."""

    reads_data: bool = False

    def run(self, runner: "Runner", metrics: dict) -> pa.Table:
        node = self.logical
        writer = runner.writer_for()
        with writer.statement():
            writes = writer.tables
            existing = writes.find(node.table)
            if existing is not None and not node.replace:
                if node.if_not_exists:
                    return status_table(f"table '{existing.name}' exists; nothing created")
                raise CatalogError(f"table '{existing.name}' already exists: CREATE OR REPLACE "
                                   f"TABLE {node.table} ..., or DROP TABLE {node.table} first")
            # when the table is made: a new table of an old name is told from the old one
            # by it (a property graph over the old one is not over the new one)
            created = time.time()
            if existing is not None:
                refuse_if_graph(runner.catalog, existing.name, "replace")
                created = max(created, existing.created + 1e-3)
            if node.rows is not None:
                rows = runner.input(self, 0)
                if node.columns:
                    if len(node.columns) > rows.num_columns:
                        raise StatementMismatch(
                            f"CREATE TABLE {node.table} names {len(node.columns)} columns; its "
                            f"query gives {rows.num_columns}")
                    rows = rows.rename_columns(list(node.columns) + rows.column_names[
                        len(node.columns):])
                entry = entry_of_rows(runner.sql, node.table, rows, "CREATE TABLE AS")
                table_id, files = new_generation(runner.catalog, rows)
                entry = writes.create(entry.with_changes(
                    table_id=table_id, files=files, base_rows=rows.num_rows,
                    rows=rows.num_rows, created=created), replace=node.replace)
                line = f"created table '{entry.name}' ({rows.num_rows:,} rows)"
            else:
                entry = writes.create(node.entry.with_changes(
                    table_id=new_generation(runner.catalog, None)[0], created=created),
                    replace=node.replace)
                line = f"created table '{entry.name}'"
        return status_table(line)


@dataclass(eq=False, kw_only=True)
class DropTableOperator(PhysicalNode):
    """Runs :class:`graphdb.executor.plan_tables.DropTable`."""

    reads_data: bool = False

    def run(self, runner: "Runner", metrics: dict) -> pa.Table:
        node = self.logical
        dropped = []
        writer = runner.writer_for()
        with writer.statement():
            writes = writer.tables
            for name in node.tables:
                entry = writes.find(name)
                if entry is None:
                    if node.if_exists:
                        continue
                    if runner.catalog.tables_now().find_view(name) is not None:
                        raise CatalogError(f"'{name}' is a view: DROP VIEW {name}")
                    writes.entry(name)  # raises TableNotFound with suggestions
                refuse_if_graph(runner.catalog, entry.name, "drop")
                refuse_if_referenced(writes, entry, dropping=node.tables)
                writes.drop(entry.name)
                dropped.append(entry.name)
        if not dropped:
            return status_table("no table dropped")
        return status_table("dropped table " + ", ".join(f"'{n}'" for n in dropped))


def refuse_if_referenced(writes, entry, dropping: "list[str] | tuple[str, ...]" = ()) -> None:
    """A table another table's FOREIGN KEY references cannot be dropped (unless that table is
    dropped with it: one of ``dropping``)."""
    gone = {entry.name.lower()} | {name.lower() for name in dropping}
    for name in writes.names():
        other = writes.find(name)
        if other is None or other.name.lower() in gone:
            continue
        if any(fk.table.lower() == entry.name.lower() for fk in other.foreign_keys):
            raise CatalogError(f"cannot drop table '{entry.name}': table '{other.name}' has a "
                               "foreign key referencing it")
