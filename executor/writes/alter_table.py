"""ALTER TABLE: the operator of :class:`~graphdb.executor.plan_tables.AlterTable`. Its actions
run in order in one statement of the session's writer (inside BEGIN ... COMMIT, with the
transaction), each on the table as the one before left it. A change of columns rewrites the
table's live rows as a new generation, their row ids kept; a table a property graph is built over
is refused (the error names the graph)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from graphdb.catalog import CatalogError
from graphdb.catalog.tables import ForeignKey, TableEntry, rebased
from graphdb.catalog.tables.entries import schema_bytes

from ..errors import ConstraintViolation
from ..physical.nodes import PhysicalNode
from ..plan_tables import AddColumn, DropColumn, RenameColumn, RenameTable
from .definitions import status_table
from .table_graphs import refuse_if_graph

if TYPE_CHECKING:
    from ..runner import Runner

__all__ = ["AlterTableOperator"]


@dataclass(eq=False, kw_only=True)
class AlterTableOperator(PhysicalNode):
    """Runs :class:`graphdb.executor.plan_tables.AlterTable`."""

    reads_data: bool = False

    def run(self, runner: "Runner", metrics: dict) -> pa.Table:
        node = self.logical
        writer = runner.writer_for()
        messages = []
        with writer.statement():
            writes = writer.tables
            entry = writes.find(node.table)
            if entry is None:
                if node.if_exists:
                    return status_table(f"table '{node.table}' does not exist; nothing altered")
                writes.entry(node.table)  # raises TableNotFound with suggestions
            refuse_if_graph(runner.catalog, entry.name, "alter")
            for action in node.actions:
                entry, message = _ACTIONS[type(action)](runner, writes, entry, action)
                messages.append(message)
        return status_table("; ".join(messages))


def _rewrite(runner: "Runner", writes, entry: TableEntry, rows: pa.Table, **changes
             ) -> TableEntry:
    """``entry`` as a new generation holding ``rows`` (its live rows changed: its schema and
    columns as changed), their row ids kept."""
    new = rebased(runner.catalog, entry, rows, arrow_schema=schema_bytes(rows.schema), **changes)
    return writes.create(new, replace=True)


def _rows(runner: "Runner", entry: TableEntry) -> pa.Table:
    return runner.catalog.tables.view(entry).table


def _names(entry: TableEntry) -> list[str]:
    return [c.name for c in entry.columns]


def _add(runner: "Runner", writes, entry: TableEntry, action: AddColumn):
    column = action.column
    if column.name.lower() in (n.lower() for n in _names(entry)):
        if action.if_not_exists:
            return entry, f"column {column.name} exists"
        raise CatalogError(f"table {entry.name} has a column '{column.name}' already")
    rows = _rows(runner, entry)
    if column.default is not None:
        value, _ = runner.sql.run(f"SELECT CAST({column.default} AS {column.type}) AS v "
                                  f"FROM range({rows.num_rows})", {})
        values = value.column(0).cast(action.arrow)
    else:
        values = pa.nulls(rows.num_rows, action.arrow)
    if not column.nullable and values.null_count:
        raise ConstraintViolation(f"cannot add NOT NULL column {column.name} without a DEFAULT "
                                  f"to table {entry.name} with rows")
    rows = rows.append_column(pa.field(column.name, action.arrow), values)
    new = _rewrite(runner, writes, entry, rows, columns=entry.columns + (column,))
    return new, f"added column {column.name} to table {entry.name}"


def _drop(runner: "Runner", writes, entry: TableEntry, action: DropColumn):
    names = _names(entry)
    found = [n for n in names if n.lower() == action.name.lower()]
    if not found:
        if action.if_exists:
            return entry, f"column {action.name} does not exist"
        raise CatalogError(f"table {entry.name} has no column '{action.name}'")
    column = found[0]
    if column in entry.primary_key or any(column in u for u in entry.unique) or any(
            column in fk.columns for fk in entry.foreign_keys):
        raise CatalogError(f"cannot drop column {column} of table {entry.name}: a key or "
                           "constraint uses it")
    if len(names) == 1:
        raise CatalogError(f"cannot drop the only column of table {entry.name}")
    rows = _rows(runner, entry).drop_columns([column])
    new = _rewrite(runner, writes, entry, rows,
                   columns=tuple(c for c in entry.columns if c.name != column),
                   identity_next={k: v for k, v in entry.identity_next.items() if k != column})
    return new, f"dropped column {column} of table {entry.name}"


def _rename_column(runner: "Runner", writes, entry: TableEntry, action: RenameColumn):
    names = _names(entry)
    found = [n for n in names if n.lower() == action.old.lower()]
    if not found:
        raise CatalogError(f"table {entry.name} has no column '{action.old}'")
    old, to = found[0], action.new
    if to.lower() in (n.lower() for n in names if n != old):
        raise CatalogError(f"table {entry.name} has a column '{to}' already")

    def rename(columns):
        return tuple(to if c == old else c for c in columns)

    rows = _rows(runner, entry)
    rows = rows.rename_columns([to if n == old else n for n in rows.column_names])
    new = _rewrite(runner, writes, entry, rows, columns=tuple(
        dataclasses.replace(c, name=to) if c.name == old else c
        for c in entry.columns), primary_key=rename(entry.primary_key),
        identity_next={to if k == old else k: v for k, v in entry.identity_next.items()},
        unique=tuple(rename(u) for u in entry.unique),
        foreign_keys=tuple(ForeignKey(rename(f.columns), f.table, f.references)
                           for f in entry.foreign_keys))
    return new, f"renamed column {old} of table {entry.name} to {to}"


def _rename_table(runner: "Runner", writes, entry: TableEntry, action: RenameTable):
    if writes.find(action.new) is not None:
        raise CatalogError(f"table '{action.new}' already exists")
    writes.drop(entry.name)
    new = writes.create(entry.with_changes(name=action.new), fresh=False)
    return new, f"renamed table {entry.name} to {action.new}"


_ACTIONS = {AddColumn: _add, DropColumn: _drop, RenameColumn: _rename_column,
            RenameTable: _rename_table}
