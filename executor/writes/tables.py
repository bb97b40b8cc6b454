"""INSERT, DELETE, UPDATE and COPY of stored tables (CREATE TABLE): the operators of
:class:`~graphdb.executor.plan_tables.TableInsert`, :class:`~graphdb.executor.plan_tables.TableDelete`
and :class:`~graphdb.executor.plan_tables.TableUpdate`, and of the rows they read.

Each runs as one statement of the session's writer (:mod:`graphdb.catalog.writer`): it reads
the table's newest entry (which takes the writer lock), computes its input (the rows to insert,
or the rows the WHERE picks from the table's rows, :class:`TableRowsScan`), then checks and
records them (:mod:`.table_rows`); the property graphs over the table get the same change as
delta records in the same transaction (:mod:`.table_graphs`). Outside BEGIN ... COMMIT the
statement commits when it ends: one LMDB write transaction holds the table's records, its
entry and the graphs'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from graphdb.catalog import CatalogError

from ..cancel import check_cancelled
from ..errors import InvalidArgument, StatementMismatch
from ..physical.nodes import PhysicalNode
from ..plan import ROW
from .delete import PickingWrite
from .insert import count_table
from .table_rows import TableTarget, delete_picked, insert_table, update_picked
from .target import WriteRowsScan

if TYPE_CHECKING:
    from ..runner import Runner

__all__ = ["FileRowsScan", "TableDeleteOperator", "TableInsertOperator", "TableRowsScan",
           "TableUpdateOperator", "TruncateOperator"]


@dataclass(eq=False, kw_only=True)
class TableRowsScan(WriteRowsScan):
    """The rows of a stored table a DELETE or UPDATE picks from, each with its row id."""


@dataclass(eq=False, kw_only=True)
class FileRowsScan(PhysicalNode):
    """A file's rows, read by DuckDB (:class:`~graphdb.executor.plan_tables.FileRows`)."""

    def run(self, runner: "Runner", metrics: dict) -> pa.Table:
        rows, _ = runner.sql.run(self.logical.sql, {})
        return rows


@dataclass(eq=False, kw_only=True)
class TableWrite(PickingWrite):
    """A write of a stored table: in one statement of the session's writer, its input computed
    against the table's newest version, then :meth:`change` records it."""

    reads_data: bool = False

    def target_of(self, runner: "Runner", writer) -> TableTarget:
        return TableTarget(runner, writer, self.logical.table)


@dataclass(eq=False, kw_only=True)
class TableInsertOperator(TableWrite):
    """Runs :class:`graphdb.executor.plan_tables.TableInsert`."""

    def change(self, target: TableTarget, rows: pa.Table) -> int:
        node = self.logical
        if node.columns is None:
            names = [c.name for c in target.entry.columns]
        else:
            names = [target.column(c) for c in node.columns]
            if len({n.lower() for n in names}) != len(names):
                raise StatementMismatch("a column is named twice in the INSERT's column list")
        if rows.num_columns != len(names):
            shown = ", ".join(names)
            if node.source == "COPY":
                raise InvalidArgument(
                    f"COPY {target.name} FROM: the file has {rows.num_columns} columns, "
                    f"{'the table' if node.columns is None else 'the list'} {len(names)} "
                    f"({shown})")
            raise StatementMismatch(
                f"a VALUES row has {rows.num_columns} values for the {len(names)} columns "
                f"({shown})" if node.source == "VALUES" else
                f"the query gives {rows.num_columns} columns for the {len(names)} of the "
                f"INSERT ({shown})")
        return insert_table(target, pa.table(list(rows.columns), names=names), node.conflict)


@dataclass(eq=False, kw_only=True)
class TableDeleteOperator(TableWrite):
    """Runs :class:`graphdb.executor.plan_tables.TableDelete`."""

    def change(self, target: TableTarget, rows: pa.Table) -> int:
        rowids = np.unique(np.asarray(rows.column(ROW).to_numpy(), dtype=np.int64))
        if rowids.size:
            delete_picked(target, target.rows_of(rowids))
        return int(rowids.size)


@dataclass(eq=False, kw_only=True)
class TableUpdateOperator(TableWrite):
    """Runs :class:`graphdb.executor.plan_tables.TableUpdate`."""

    def change(self, target: TableTarget, rows: pa.Table) -> int:
        names = [c.name for c in target.entry.columns]
        if rows.num_columns != len(names) + 1:
            raise CatalogError(f"table {target.name} changed while the UPDATE was planned; "
                               "run it again")
        return update_picked(target, pa.table(list(rows.columns), names=[ROW] + names),
                             self.logical.columns)


@dataclass(eq=False, kw_only=True)
class TruncateOperator(PhysicalNode):
    """Runs :class:`graphdb.executor.plan_tables.TruncateTables`: the tables that reference
    others first, so a reference between two of them does not refuse the statement."""

    reads_data: bool = False

    def run(self, runner: "Runner", metrics: dict) -> pa.Table:
        node = self.logical
        writer = runner.writer_for()
        count = 0
        with writer.statement():
            targets = [TableTarget(runner, writer, name) for name in node.tables]
            if len({t.name.lower() for t in targets}) != len(targets):
                raise StatementMismatch("TRUNCATE names a table twice")
            for target in _referencing_first(targets):
                rows = target.rows()
                restarts = node.restart and bool(target.entry.identity_next)
                if restarts:
                    target.entry = target.entry.with_changes(identity_next={})
                if rows.num_rows:
                    delete_picked(target, rows)
                elif restarts:
                    target.record([])  # an empty table's counter restarts too
                count += rows.num_rows
            check_cancelled()
        return count_table(count)


def _referencing_first(targets: list[TableTarget]) -> list[TableTarget]:
    """``targets`` ordered so that a table comes before every table it references (a cycle
    of references keeps the order given)."""
    left = list(targets)
    ordered: list[TableTarget] = []
    while left:
        def referenced(target: TableTarget) -> bool:
            return any(fk.table.lower() == target.name.lower()
                       for other in left if other is not target
                       for fk in other.entry.foreign_keys)

        free = [t for t in left if not referenced(t)] or left[:1]
        ordered.append(free[0])
        left.remove(free[0])
    return ordered
