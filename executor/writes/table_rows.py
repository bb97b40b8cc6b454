"""The rows of a stored table's write (INSERT, UPDATE, DELETE, COPY, ``create_table``), checked
and recorded: what the table write operators (:mod:`.tables`) do under the writer lock.

A statement becomes records on the table's generation (:mod:`graphdb.catalog.tables`) in the
connection's write transaction (:mod:`graphdb.catalog.writer`): the rows INSERT adds,
converted to the columns' types as DuckDB's CAST converts them (:mod:`..table_types`), with
defaults for the columns it leaves out; the row ids DELETE picks; UPDATE as both (the rows it
picks deleted, the changed rows appended).

Constraints are checked before anything is recorded: NOT NULL, the primary key and UNIQUE
columns (against the rows of the newest version, through the key index, and among the new
rows), CHECK conditions (by DuckDB), and FOREIGN KEY references (the referenced table's key
index). A violation is a :class:`~graphdb.executor.errors.ConstraintViolation` (the front
end's IntegrityError) naming the table, the constraint and a value, and the statement changes
nothing. ``INSERT ... ON CONFLICT DO NOTHING`` (``INSERT OR IGNORE``) skips rows whose key
exists, ``ON CONFLICT DO UPDATE SET`` and ``INSERT OR REPLACE`` replace them.

Property graphs built over a table change with it, in the same transaction
(:mod:`.table_graphs`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from graphdb.catalog.tables import Record, TableEntry
from graphdb.storage.lazy import pc

from ..errors import ConstraintViolation as IntegrityError
from ..errors import StatementMismatch as BinderError
from ..table_types import conform
from .table_graphs import ROW_ID as ROW
from .table_graphs import table_changed

if TYPE_CHECKING:
    from graphdb.catalog.writer import Writer

    from ..runner import Runner

__all__ = ["BASE_ROWS", "ROW", "TableTarget", "check", "check_new_rows", "delete_picked",
           "insert_table", "update_picked"]

#: An insert of at least this many rows into an empty table writes them as its base file.
BASE_ROWS = 50_000
_TARGET = "__graphdb_target"


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class TableTarget:
    """A stored table a statement writes, at the transaction's newest version (reading its
    entry takes the writer lock)."""

    def __init__(self, runner: "Runner", writer: "Writer", name: str):
        self.runner = runner
        self.catalog = runner.catalog
        self.writer = writer
        self.writes = writer.tables
        self.entry: TableEntry = self.writes.entry(name)
        self.name = self.entry.name

    @property
    def log(self):
        return self.catalog.tables.log(self.entry)

    def column(self, name: str) -> str:
        try:
            return self.entry.column(name).name
        except KeyError:
            raise BinderError(f"table {self.name} has no column '{name}' (columns: "
                              f"{', '.join(c.name for c in self.entry.columns)})") from None

    def rows(self) -> pa.Table:
        """The live rows of the newest version, each with its row id (:data:`ROW`)."""
        view = self.catalog.tables.view(self.entry)
        return view.table.append_column(ROW, pa.array(view.row_ids(), pa.int64()))

    def rows_of(self, rowids: np.ndarray) -> pa.Table:
        """The live rows with these row ids (with :data:`ROW`), in their order."""
        view = self.catalog.tables.view(self.entry)
        positions = pa.array(view.positions_of(rowids), pa.int64())
        return view.table.take(positions).append_column(
            ROW, pa.array(np.asarray(rowids, np.int64), pa.int64()))

    def rebase(self, rows: pa.Table) -> None:
        """The table (it has no rows) becomes ``rows``, written as a new base generation at
        once (a COPY into an empty table is written once, not as a record and again when
        compacted); they take the next row ids."""
        from graphdb.catalog.tables import new_generation

        before = self.entry
        first = self.log.next_rowid
        rowids = first + np.arange(rows.num_rows, dtype=np.int64)
        table_id, files = new_generation(self.catalog, rows, rowids if first else None)
        self.entry = self.writes.create(before.with_changes(
            table_id=table_id, files=files, base_rows=rows.num_rows, rows=rows.num_rows,
            version=0, delta={}, appended_from=first + rows.num_rows,
            base_rowids=bool(first)), replace=True)
        table_changed(self.runner, self.writer, before, self.entry,
                      rows.append_column(ROW, pa.array(rowids, pa.int64())), None)

    def record(self, records: list[Record], appended: pa.Table | None = None,
               deleted: pa.Table | None = None) -> None:
        """Add ``records`` to the transaction; the graphs over the table follow."""
        before = self.entry
        first = self.log.next_rowid  # the row ids the appended rows get
        self.entry = self.writes.write(self.entry, records)
        if appended is not None and ROW not in appended.column_names:
            appended = appended.append_column(ROW, pa.array(
                np.arange(first, first + appended.num_rows), pa.int64()))
        table_changed(self.runner, self.writer, before, self.entry, appended, deleted)


# -- INSERT -------------------------------------------------------------------------------------
def _full_rows(target: TableTarget, rows: pa.Table) -> pa.Table:
    """``rows`` with every column of the table (defaults for those left out), in its order,
    converted to its types."""
    entry = target.entry
    n = rows.num_rows
    given = {name.lower(): name for name in rows.column_names}
    columns = {}
    for column in entry.columns:
        name = given.get(column.name.lower())
        if name is not None:
            columns[column.name] = rows.column(name)
        elif column.identity is not None:
            columns[column.name] = _identity_values(target, column, n)
        else:
            columns[column.name] = _default(target, column, n)
    full = pa.table(columns)
    return conform(target.runner.sql, full, entry.schema, [c.type for c in entry.columns], entry.name)


def _identity_values(target: TableTarget, column, n: int) -> pa.Array:
    """The next ``n`` values of identity column ``column``; the table's entry takes the one
    after them (recorded with the write, so a rolled-back INSERT gives its values back)."""
    _, start, increment = column.identity
    first = target.entry.identity_next.get(column.name, start)
    target.entry = target.entry.with_changes(identity_next={
        **target.entry.identity_next, column.name: first + n * increment})
    return pa.array(first + increment * np.arange(n, dtype=np.int64), pa.int64())


def _default(target: TableTarget, column, n: int) -> pa.Array:
    if column.default is None:
        return pa.nulls(n, target.entry.schema.field(column.name).type)
    result, _ = target.runner.sql.run(
        f"SELECT CAST({column.default} AS {column.type}) AS v FROM range({n})", {})
    return result.column(0).combine_chunks()


def insert_table(target: TableTarget, rows: pa.Table, conflict=None) -> int:
    """Insert ``rows`` (columns named as the table's, any subset); ``conflict``: None, or
    ('nothing' | 'replace', None), or ('update', ((column, DuckDB SQL), ...)) of an INSERT's
    conflict clause. Returns the rows inserted."""
    if rows.num_rows == 0:
        return 0
    full = _full_rows(target, rows)
    replaced = None
    if conflict is not None and target.entry.key_columns:
        full, replaced = _resolve_conflicts(target, full, conflict)
    check(target, full, replacing=replaced)
    if replaced is not None and replaced.num_rows:  # one change, as an UPDATE's: the graphs
        rowids = pa.array(replaced.column(ROW).to_numpy(), pa.int64())  # keep such vertices
        target.record([Record("delete", pa.table({"row": rowids})), Record("append", full)],
                      appended=full, deleted=replaced)
        return full.num_rows
    if full.num_rows >= BASE_ROWS and target.entry.rows == 0:
        target.rebase(full)  # a load into an empty table: its rows are the new base
    elif full.num_rows:
        target.record([Record("append", full)], appended=full)
    return full.num_rows


def _resolve_conflicts(target: TableTarget, full: pa.Table, conflict
                       ) -> tuple[pa.Table, pa.Table | None]:
    """The rows to insert and the existing rows they replace, by the conflict clause."""
    kind, clause = conflict
    key = target.entry.key_columns
    keys = _keys(full, key)
    existing = target.log.rowids_of(keys, target.log.version)
    clash = np.array([r >= 0 for r in existing], dtype=bool)
    if not clash.any():
        return full, None
    if kind == "nothing":
        return full.filter(pa.array(~clash)), None
    rowids = np.array([r for r in existing if r >= 0], dtype=np.int64)
    old = target.rows_of(rowids)
    if kind == "replace":
        return full, old
    # ON CONFLICT DO UPDATE SET col = expr (excluded.col: the row that was to be inserted)
    incoming = full.filter(pa.array(clash))
    updated = _conflict_update(target, old, incoming, clause)
    return pa.concat_tables([full.filter(pa.array(~clash)), updated]), old


def _conflict_update(target: TableTarget, old: pa.Table, incoming: pa.Table,
                     assigned: tuple[tuple[str, str], ...]) -> pa.Table:
    """ON CONFLICT DO UPDATE SET: the rows replacing ``old``, each computed by DuckDB from the
    old row (``t``) and the row that was to be inserted (``excluded``); ``assigned``: (column,
    its expression in DuckDB's SQL) pairs."""
    expressions = {target.column(name): sql for name, sql in assigned}
    names = [c.name for c in target.entry.columns]
    select = ", ".join(f"({expressions[n]}) AS {_quote(n)}" if n in expressions
                       else f"t.{_quote(n)}" for n in names)
    excluded = incoming.rename_columns(names).append_column(
        "__graphdb_i", pa.array(np.arange(incoming.num_rows), pa.int64()))
    current = old.drop_columns([ROW]).append_column(
        "__graphdb_i", pa.array(np.arange(old.num_rows), pa.int64()))
    result, _ = target.runner.sql.run(
        f"SELECT {select} FROM __graphdb_old AS t JOIN __graphdb_excluded AS excluded "
        "ON t.__graphdb_i = excluded.__graphdb_i ORDER BY t.__graphdb_i",
        {"__graphdb_old": current, "__graphdb_excluded": excluded})
    return _full_rows(target, pa.table(list(result.columns), names=names))


def _keys(table: pa.Table, key: tuple[str, ...]) -> list:
    if len(key) == 1:
        return table.column(key[0]).to_pylist()
    return list(zip(*(table.column(k).to_pylist() for k in key)))


def _shown(key: tuple[str, ...], value) -> str:
    values = value if isinstance(value, tuple) else (value,)
    return ", ".join(f"{k}: {v}" for k, v in zip(key, values))


def check(target: TableTarget, rows: pa.Table, replacing: pa.Table | None = None,
           removed: np.ndarray | None = None) -> None:
    """The table's constraints over ``rows`` about to be added (``replacing`` / ``removed``:
    rows the same statement deletes, whose keys may come back)."""
    entry = target.entry
    for column in entry.columns:
        nullable = column.nullable and column.name not in entry.primary_key
        if not nullable and rows.column(column.name).null_count:
            raise IntegrityError(f"NOT NULL constraint failed: {entry.name}.{column.name}")
    gone = np.zeros(0, dtype=np.int64) if removed is None else np.asarray(removed, np.int64)
    if replacing is not None:
        gone = np.concatenate([gone, np.asarray(replacing.column(ROW).to_numpy(), np.int64)])
    for key in ([entry.primary_key] if entry.primary_key else []) + list(entry.unique):
        if not key:
            continue
        what = "primary key" if key == entry.primary_key else "unique"
        present = rows  # rows with a NULL in the key are never equal to another (UNIQUE)
        for column in key:
            if present.column(column).null_count:
                present = present.filter(pc.is_valid(present.column(column)))
        twice = _twice(present, key)
        if twice is not None:
            raise IntegrityError(f"duplicate key \"{_shown(key, twice)}\" violates "
                                 f"{what} constraint of table {entry.name}")
        if not present.num_rows:
            continue
        if key == entry.key_columns and len(key) == 1:
            found = target.log.find_rows(present.column(key[0]), target.log.version)
            clash = found >= 0
            if gone.size and clash.any():
                clash &= ~np.isin(found, gone)
            clash = [present.column(key[0])[int(i)].as_py() for i in np.flatnonzero(clash)[:1]] \
                if clash.any() else []
        elif key == entry.key_columns:
            live = _keys(present, key)
            found = target.log.rowids_of(live, target.log.version)
            dropped = set(gone.tolist())
            clash = [v for v, r in zip(live, found) if r >= 0 and r not in dropped]
        else:
            clash = _existing_values(target, key, _keys(present, key), set(gone.tolist()))
        if clash:
            raise IntegrityError(f"duplicate key \"{_shown(key, clash[0])}\" violates {what} "
                                 f"constraint of table {entry.name}: the key exists already")
    if entry.checks:
        _check_conditions(target, rows)
    for fk in entry.foreign_keys:
        _check_reference(target, rows, fk)


def _twice(rows: pa.Table, key: tuple[str, ...]):
    """A key value two of ``rows`` (none NULL in it) have, else None."""
    if rows.num_rows < 2:
        return None
    if len(key) == 1:
        column = rows.column(key[0]).combine_chunks()
        if pa.types.is_integer(column.type):
            values = np.sort(np.asarray(column.cast(pa.int64()).to_numpy()))
            same = np.flatnonzero(values[1:] == values[:-1])
            return int(values[same[0]]) if same.size else None
        if pc.count_distinct(column).as_py() == len(column):
            return None
    counts = rows.group_by(list(key)).aggregate([([], "count_all")])
    dup = counts.filter(pc.greater(counts.column("count_all"), 1))
    if not dup.num_rows:
        return None
    value = tuple(dup.column(c)[0].as_py() for c in key)
    return value[0] if len(value) == 1 else value


def _has_null(value) -> bool:
    return value is None or (isinstance(value, tuple) and any(v is None for v in value))


def _existing_values(target: TableTarget, key: tuple[str, ...], values: list, gone: set
                     ) -> list:
    """Values of a UNIQUE key (not the indexed one) that live rows have already."""
    if not values:
        return []
    rows = target.rows()
    if gone:
        keep = ~np.isin(np.asarray(rows.column(ROW)), np.array(sorted(gone), dtype=np.int64))
        rows = rows.filter(pa.array(keep))
    existing = set(_keys(rows, key))
    return [v for v in values if v in existing]


def _check_conditions(target: TableTarget, rows: pa.Table) -> None:
    entry = target.entry
    for condition in entry.checks:  # (kept in DuckDB's SQL)
        result, _ = target.runner.sql.run(
            f"SELECT count(*) FROM {_TARGET} WHERE NOT COALESCE(({condition}), TRUE)",
            {_TARGET: rows})
        if result.column(0)[0].as_py():
            raise IntegrityError(f"CHECK constraint failed: {entry.name} ({condition})")


def _check_reference(target: TableTarget, rows: pa.Table, fk) -> None:
    entry = target.entry
    values = [v for v in _keys(rows, fk.columns) if not _has_null(v)]
    if not values:
        return
    referenced = target.writes.find(fk.table)
    if referenced is None:
        raise IntegrityError(f"foreign key of table {entry.name} references table {fk.table}, "
                             "which does not exist")
    if tuple(c.lower() for c in referenced.key_columns) != tuple(
            c.lower() for c in fk.references):
        return  # a reference to columns that are not its key: not indexed, not enforced
    log = target.catalog.tables.log(referenced)
    found = log.rowids_of(values, referenced.version)
    missing = [v for v, r in zip(values, found) if r < 0]
    if missing:
        shown = _shown(fk.columns, missing[0])
        raise IntegrityError(f"violates foreign key constraint: key \"{shown}\" does not "
                             f"exist in the referenced table {referenced.name}")


# -- DELETE and UPDATE --------------------------------------------------------------------------
def delete_picked(target: TableTarget, rows: pa.Table, check_references: bool = True) -> None:
    """Delete ``rows`` (live rows with their :data:`ROW`)."""
    if check_references:
        _check_referenced(target, rows)
    rowids = pa.array(rows.column(ROW).to_numpy(), pa.int64())
    target.record([Record("delete", pa.table({"row": rowids}))], deleted=rows)


def _check_referenced(target: TableTarget, rows: pa.Table) -> None:
    """Rows another table's FOREIGN KEY references cannot be deleted."""
    entry = target.entry
    if not entry.key_columns:
        return
    for name in target.writes.names():
        other = target.writes.find(name)
        if other is None:
            continue
        for fk in other.foreign_keys:
            if fk.table.lower() != entry.name.lower() or tuple(
                    c.lower() for c in fk.references) != tuple(
                    c.lower() for c in entry.key_columns):
                continue
            keys = set(_keys(rows, entry.key_columns))
            view = target.catalog.tables.view(other)
            used = {v for v in _keys(view.table, fk.columns) if not _has_null(v)}
            hit = keys & used
            if hit:
                shown = _shown(entry.key_columns, next(iter(hit)))
                raise IntegrityError(
                    f"cannot delete from {entry.name}: key \"{shown}\" is still referenced "
                    f"by a foreign key in table {other.name}")


def update_picked(target: TableTarget, picked: pa.Table, assigned: tuple[str, ...]) -> int:
    """UPDATE: ``picked`` holds each row's :data:`ROW` and the new values of every column
    (``assigned``: the columns SET changes); the rows are deleted and appended anew."""
    if not picked.num_rows:
        return 0
    names = [c.name for c in target.entry.columns]
    rowids = np.asarray(picked.column(ROW).to_numpy(), dtype=np.int64)
    first = np.unique(rowids, return_index=True)[1]
    if first.size != rowids.size:  # UPDATE ... FROM joined a row more than once: the first
        picked = picked.take(pa.array(np.sort(first), pa.int64()))
        rowids = rowids[np.sort(first)]
    new = _full_rows(target, picked.select(names))
    old = target.rows_of(rowids)
    key = target.entry.key_columns
    if key and any(k in assigned for k in key):
        _check_referenced(target, old.filter(pa.array(
            [a != b for a, b in zip(_keys(old, key), _keys(new, key))])))
    check(target, new, removed=rowids)
    target.record([Record("delete", pa.table({"row": pa.array(rowids, pa.int64())})),
                   Record("append", new)], appended=new, deleted=old)
    return int(rowids.size)


def check_new_rows(target: TableTarget, rows: pa.Table) -> pa.Table:
    """``rows`` as the table stores them, its constraints checked (CREATE TABLE AS, COPY)."""
    full = _full_rows(target, rows)
    check(target, full)
    return full
