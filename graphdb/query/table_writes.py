"""INSERT, UPDATE and DELETE of stored tables (and the rows COPY and ``create_table`` add).

A statement becomes records on the table's generation (:mod:`graphdb.catalog.tables`) in the
connection's write transaction (:mod:`graphdb.catalog.writer`): the rows INSERT adds (VALUES
read directly, a SELECT run by the query engine), converted to the columns' types as DuckDB's
CAST converts them (:mod:`.table_types`), with defaults for the columns it leaves out; the row
ids DELETE picks (its WHERE runs in the query engine over the table's rows, each with its row
id); UPDATE as both (the rows it picks deleted, the changed rows appended).

Constraints are checked before anything is recorded: NOT NULL, the primary key and UNIQUE
columns (against the rows of the newest version, through the key index, and among the new
rows), CHECK conditions (by the query engine), and FOREIGN KEY references (the referenced
table's key index). A violation is an :class:`~graphdb.errors.IntegrityError` naming the
table, the constraint and a value, and the statement changes nothing. ``INSERT ... ON CONFLICT
DO NOTHING`` (``INSERT OR IGNORE``) skips rows whose key exists, ``ON CONFLICT DO UPDATE SET``
and ``INSERT OR REPLACE`` replace them.

Property graphs built over a table change with it, in the same transaction
(:mod:`.graph_sync`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
from sqlglot import exp

from graphdb.catalog.tables import Record, TableEntry
from graphdb.storage.lazy import pc

from ..errors import BinderError, IntegrityError
from ..table_types import conform
from .values import bind, insert_rows_of, rows_table, run_select

if TYPE_CHECKING:
    from ..session import Session
    from .parser import Statement

__all__ = ["ROW", "TableTarget", "delete_rows", "insert_rows", "insert_values", "table_target",
           "write_table"]

#: The hidden column of the rows a WHERE runs over: each row's row id.
ROW = "__graphdb_row"
#: An insert of at least this many rows into an empty table writes them as its base file.
BASE_ROWS = 50_000
_TARGET = "__graphdb_target"


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def table_target(session: "Session", node: exp.Expression) -> str | None:
    """The stored table an INSERT/UPDATE/DELETE target names (a property graph's labelled
    table ``g.Person`` names the table it is built over), else None (a graph's own table)."""
    if not isinstance(node, exp.Table):
        return None
    db = node.args.get("db")
    if db is None:
        return node.name
    graph = next((g for g in session.catalog.names() if g.lower() == db.name.lower()), None)
    if graph is None:
        return f"{db.name}.{node.name}"  # schema.table (an unknown one is reported as a table)
    from graphdb.executor.property_graph import PropertySchema

    schema = PropertySchema.of(session.catalog.get(graph))
    if schema is None or node.name.lower() in ("vertices", "edges", "adjacency"):
        return None
    element = schema.element_of(node.name)
    if element is None:
        return None
    if element.table.lower() not in schema.source_tables():
        raise BinderError(f"{graph}.{node.name} is a copy of the table or file the property "
                          f"graph '{graph}' was made from, not a stored table: write to a table "
                          "made with CREATE TABLE, and create the graph over it")
    return element.table


class TableTarget:
    """A stored table a statement writes, at the transaction's newest version (the writer
    lock is held)."""

    def __init__(self, session: "Session", name: str):
        self.session = session
        self.writer = session.transaction.writer
        self.writes = self.writer.tables
        self.entry: TableEntry = self.writes.entry(name)
        self.name = self.entry.name

    @property
    def log(self):
        return self.session.catalog.tables.log(self.entry)

    def column(self, name: str) -> str:
        try:
            return self.entry.column(name).name
        except KeyError:
            raise BinderError(f"table {self.name} has no column '{name}' (columns: "
                              f"{', '.join(c.name for c in self.entry.columns)})") from None

    def rows(self) -> pa.Table:
        """The live rows of the newest version, each with its row id (:data:`ROW`)."""
        view = self.session.catalog.tables.view(self.entry)
        return view.table.append_column(ROW, pa.array(view.row_ids(), pa.int64()))

    def rebase(self, rows: pa.Table) -> None:
        """The table (it has no rows) becomes ``rows``, written as a new base generation at
        once (a COPY into an empty table is written once, not as a record and again when
        compacted); they take the next row ids."""
        from graphdb.catalog.tables import new_generation

        from ..graph_sync import table_changed

        before = self.entry
        first = self.log.next_rowid
        rowids = first + np.arange(rows.num_rows, dtype=np.int64)
        table_id, files = new_generation(self.session.catalog, rows, rowids if first else None)
        self.entry = self.writes.create(before.with_changes(
            table_id=table_id, files=files, base_rows=rows.num_rows, rows=rows.num_rows,
            version=0, delta={}, appended_from=first + rows.num_rows,
            base_rowids=bool(first)), replace=True)
        table_changed(self.session, before, self.entry,
                      rows.append_column(ROW, pa.array(rowids, pa.int64())), None)

    def record(self, records: list[Record], appended: pa.Table | None = None,
               deleted: pa.Table | None = None) -> None:
        """Add ``records`` to the transaction; the graphs over the table follow."""
        from ..graph_sync import table_changed

        before = self.entry
        first = self.log.next_rowid  # the row ids the appended rows get
        self.entry = self.writes.write(self.entry, records)
        if appended is not None and ROW not in appended.column_names:
            appended = appended.append_column(ROW, pa.array(
                np.arange(first, first + appended.num_rows), pa.int64()))
        table_changed(self.session, before, self.entry, appended, deleted)


# -- the statements -----------------------------------------------------------------------------
def write_table(session: "Session", statement: "Statement", parameters: Any) -> int:
    """INSERT, UPDATE or DELETE of a stored table; returns the rows it changed."""
    ast = statement.ast
    node = ast.this.this if isinstance(ast.this, exp.Schema) else ast.this
    writer = session.transaction.writer
    with writer.statement():
        target = TableTarget(session, table_target(session, node))
        with session.catalog.snapshot():
            if statement.kind == "insert":
                count = _insert(target, ast, parameters)
            elif statement.kind == "delete":
                count = _delete(target, ast, parameters)
            else:
                count = _update(target, ast, parameters)
    _after(session, writer)
    return count


def insert_rows(session: "Session", name: str, rows: pa.Table) -> int:
    """Insert ``rows`` (columns named as the table's, any subset) into table ``name``."""
    writer = session.transaction.writer
    with writer.statement():
        target = TableTarget(session, name)
        named = {target.column(n): rows.column(n) for n in rows.column_names}
        count = _insert_table(target, pa.table(named) if named else rows)
    _after(session, writer)
    return count


def insert_values(session: "Session", name: str, columns: list[str] | None,
                  data: list[list[Any]]) -> int:
    """Insert Python rows (``executemany``'s) into table ``name``: values for ``columns``
    (None: every column, in order)."""
    writer = session.transaction.writer
    with writer.statement():
        target = TableTarget(session, name)
        entry = target.entry
        names = [target.column(c) for c in columns] if columns is not None else \
            [c.name for c in entry.columns]
        if data and len(data[0]) != len(names):
            raise BinderError(f"the VALUES row has {len(data[0])} values for the {len(names)} "
                              f"columns of table {entry.name}")
        types = [entry.schema.field(c).type for c in names]
        count = _insert_table(target, rows_table(data, names, types)) if data else 0
    _after(session, writer)
    return count


def delete_rows(session: "Session", name: str) -> int:
    """Delete every row of table ``name`` (TRUNCATE)."""
    writer = session.transaction.writer
    with writer.statement():
        target = TableTarget(session, name)
        rows = target.rows()
        count = rows.num_rows
        if count:
            _delete_picked(target, rows)
    _after(session, writer)
    return count


def _after(session: "Session", writer) -> None:
    if not writer.in_transaction:
        from .table_statements import maybe_compact_tables

        maybe_compact_tables(session, writer.tables.committed)


# -- INSERT -------------------------------------------------------------------------------------
def _insert(target: TableTarget, ast: exp.Insert, parameters: Any) -> int:
    entry = target.entry
    if isinstance(ast.this, exp.Schema):
        columns = [target.column(c.name) for c in ast.this.expressions]
    else:
        columns = [c.name for c in entry.columns]
    rows = insert_rows_of(target.session, ast, parameters, columns,
                          [entry.schema.field(c).type for c in columns])
    conflict = _conflict(ast)
    return _insert_table(target, rows, conflict, parameters)


def _conflict(ast: exp.Insert) -> tuple[str, Any] | None:
    """('nothing' | 'replace' | 'update', SET items) of an INSERT's conflict clause."""
    alternative = (ast.args.get("alternative") or "").upper()
    if alternative in ("IGNORE", "REPLACE"):
        return ("nothing" if alternative == "IGNORE" else "replace", None)
    clause = ast.args.get("conflict")
    if clause is None:
        return None
    if clause.args.get("action") is not None and "NOTHING" in clause.args["action"].sql().upper():
        return "nothing", None
    if clause.args.get("expressions"):
        return "update", clause
    if clause.args.get("duplicate"):
        return "update", clause
    return "nothing", None


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
        else:
            columns[column.name] = _default(target, column, n)
    full = pa.table(columns)
    return conform(target.session, full, entry.schema, [c.type for c in entry.columns], entry.name)


def _default(target: TableTarget, column, n: int) -> pa.Array:
    if column.default is None:
        return pa.nulls(n, target.entry.schema.field(column.name).type)
    result, _ = target.session.runner.sql.run(
        f"SELECT CAST({column.default} AS {column.type}) AS v FROM range({n})", {})
    return result.column(0).combine_chunks()


def _insert_table(target: TableTarget, rows: pa.Table, conflict=None,
                  parameters: Any = None) -> int:
    if rows.num_rows == 0:
        return 0
    full = _full_rows(target, rows)
    replaced = None
    if conflict is not None and target.entry.key_columns:
        full, replaced = _resolve_conflicts(target, full, conflict, parameters)
    _check(target, full, replacing=replaced)
    if replaced is not None and replaced.num_rows:
        _delete_picked(target, replaced, check_references=False)
    if full.num_rows >= BASE_ROWS and target.entry.rows == 0:
        target.rebase(full)  # a load into an empty table: its rows are the new base
    elif full.num_rows:
        target.record([Record("append", full)], appended=full)
    return full.num_rows


def _resolve_conflicts(target: TableTarget, full: pa.Table, conflict, parameters
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
    rows = target.rows()
    rowids = np.array([r for r in existing if r >= 0], dtype=np.int64)
    view = target.session.catalog.tables.view(target.entry)
    old = rows.take(pa.array(view.positions_of(rowids), pa.int64()))
    if kind == "replace":
        return full, old
    # ON CONFLICT DO UPDATE SET col = expr (excluded.col: the row that was to be inserted)
    incoming = full.filter(pa.array(clash))
    updated = _conflict_update(target, old, incoming, clause, parameters)
    return pa.concat_tables([full.filter(pa.array(~clash)), updated]), old


def _conflict_update(target: TableTarget, old: pa.Table, incoming: pa.Table, clause,
                     parameters) -> pa.Table:
    bound = bind(clause, parameters)
    assigned = {}
    for item in bound.args.get("expressions") or []:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
            raise BinderError(f"ON CONFLICT DO UPDATE SET takes column = value, got "
                              f"{item.sql()}")
        assigned[target.column(item.this.name)] = item.expression
    names = [c.name for c in target.entry.columns]
    select = [exp.alias_(assigned[n], n) if n in assigned else exp.column(n, table="t")
              for n in names]
    excluded = incoming.rename_columns(names).append_column(
        "__graphdb_i", pa.array(np.arange(incoming.num_rows), pa.int64()))
    current = old.drop_columns([ROW]).append_column(
        "__graphdb_i", pa.array(np.arange(old.num_rows), pa.int64()))
    query = exp.select(*select).from_(exp.Table(this=exp.to_identifier("__graphdb_old"),
                                                 alias=exp.TableAlias(this=exp.to_identifier(
                                                     "t")))).join(
        exp.Table(this=exp.to_identifier("__graphdb_excluded"),
                  alias=exp.TableAlias(this=exp.to_identifier("excluded"))),
        on="t.__graphdb_i = excluded.__graphdb_i")
    query = _unqualify_to(query, target.name, "t")
    result = run_select(target.session, query, {"__graphdb_old": current,
                                            "__graphdb_excluded": excluded})
    return _full_rows(target, pa.table(list(result.columns), names=names))


def _unqualify_to(query: exp.Expression, table: str, alias: str) -> exp.Expression:
    """Columns qualified by the table's own name refer to its row: ``alias``."""
    def fix(node):
        if isinstance(node, exp.Column) and node.table and node.table.lower() == table.lower():
            return exp.column(node.name, table=alias)
        return node

    return query.transform(fix)


def _keys(table: pa.Table, key: tuple[str, ...]) -> list:
    if len(key) == 1:
        return table.column(key[0]).to_pylist()
    return list(zip(*(table.column(k).to_pylist() for k in key)))


def _shown(key: tuple[str, ...], value) -> str:
    values = value if isinstance(value, tuple) else (value,)
    return ", ".join(f"{k}: {v}" for k, v in zip(key, values))


def _check(target: TableTarget, rows: pa.Table, replacing: pa.Table | None = None,
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
            clash = (found >= 0) & ~np.isin(found, gone)
            clash = [present.column(key[0])[int(i)].as_py() for i in np.flatnonzero(clash)[:1]]
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
    for condition in entry.checks:
        result = run_select(target.session, exp.select("count(*)").from_(
            exp.Table(this=exp.to_identifier(_TARGET))).where(
                f"NOT COALESCE(({condition}), TRUE)"), {_TARGET: rows})
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
    log = target.session.catalog.tables.log(referenced)
    found = log.rowids_of(values, referenced.version)
    missing = [v for v, r in zip(values, found) if r < 0]
    if missing:
        shown = _shown(fk.columns, missing[0])
        raise IntegrityError(f"violates foreign key constraint: key \"{shown}\" does not "
                             f"exist in the referenced table {referenced.name}")


# -- DELETE and UPDATE --------------------------------------------------------------------------
def _picked(target: TableTarget, node: exp.Table, where: exp.Expression | None,
            select: list[exp.Expression], joined: list[exp.Expression] | None = None
            ) -> pa.Table:
    """``select`` over the table's rows that ``where`` picks (the query engine runs it)."""
    alias = node.alias or node.name
    query = exp.select(*select).from_(exp.Table(this=exp.to_identifier(_TARGET),
                                                alias=exp.TableAlias(
                                                    this=exp.to_identifier(alias))))
    for item in joined or []:
        query = query.join(item)
    if where is not None:
        query = query.where(where.this)
    return run_select(target.session, query, {_TARGET: target.rows()})


def _delete(target: TableTarget, ast: exp.Delete, parameters: Any) -> int:
    bound = bind(ast, parameters)
    using = bound.args.get("using") or []
    picked = _picked(target, bound.this, bound.args.get("where"), [exp.column(ROW)],
                     [u for u in using] if isinstance(using, list) else [])
    rowids = np.unique(np.asarray(picked.column(ROW).to_numpy(), dtype=np.int64))
    if not rowids.size:
        return 0
    rows = target.rows()
    view = target.session.catalog.tables.view(target.entry)
    _delete_picked(target, rows.take(pa.array(view.positions_of(rowids), pa.int64())))
    return int(rowids.size)


def _delete_picked(target: TableTarget, rows: pa.Table, check_references: bool = True) -> None:
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
            view = target.session.catalog.tables.view(other)
            used = {v for v in _keys(view.table, fk.columns) if not _has_null(v)}
            hit = keys & used
            if hit:
                shown = _shown(entry.key_columns, next(iter(hit)))
                raise IntegrityError(
                    f"cannot delete from {entry.name}: key \"{shown}\" is still referenced "
                    f"by a foreign key in table {other.name}")


def _update(target: TableTarget, ast: exp.Update, parameters: Any) -> int:
    bound = bind(ast, parameters)
    assigned: dict[str, exp.Expression] = {}
    for item in bound.expressions:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
            raise BinderError(f"UPDATE ... SET takes column = value, got {item.sql()}")
        name = target.column(item.this.name)
        if name in assigned:
            raise BinderError(f"UPDATE sets column {name} twice")
        assigned[name] = item.expression
    names = [c.name for c in target.entry.columns]
    select = [exp.column(ROW)] + [
        exp.alias_(assigned[n], n) if n in assigned else exp.column(n) for n in names]
    source = bound.args.get("from_") or bound.args.get("from")
    joined = [source.this] if source is not None else []
    picked = _picked(target, bound.this, bound.args.get("where"), select, joined)
    if not picked.num_rows:
        return 0
    rowids = np.asarray(picked.column(ROW).to_numpy(), dtype=np.int64)
    first = np.unique(rowids, return_index=True)[1]
    if first.size != rowids.size:  # UPDATE ... FROM joined a row more than once: the first
        picked = picked.take(pa.array(np.sort(first), pa.int64()))
        rowids = rowids[np.sort(first)]
    new = _full_rows(target, picked.select(names))
    old_rows = target.rows()
    view = target.session.catalog.tables.view(target.entry)
    old = old_rows.take(pa.array(view.positions_of(rowids), pa.int64()))
    key = target.entry.key_columns
    if key and any(k in assigned for k in key):
        _check_referenced(target, old.filter(pa.array(
            [a != b for a, b in zip(_keys(old, key), _keys(new, key))])))
    _check(target, new, removed=rowids)
    target.record([Record("delete", pa.table({"row": pa.array(rowids, pa.int64())})),
                   Record("append", new)], appended=new, deleted=old)
    return int(rowids.size)


def check_new_rows(target: TableTarget, rows: pa.Table) -> pa.Table:
    """``rows`` as the table stores them, its constraints checked (CREATE TABLE AS, COPY)."""
    full = _full_rows(target, rows)
    _check(target, full)
    return full
