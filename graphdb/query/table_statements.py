"""Statements on tables, views and schemas (parsed by :mod:`graphdb.query.table_sql`).

Tables are stored in the database (:mod:`graphdb.catalog.tables`): CREATE TABLE declares the
columns (any type DuckDB knows, resolved by it, :mod:`.table_types`) and constraints (PRIMARY
KEY, NOT NULL, UNIQUE, DEFAULT, CHECK, FOREIGN KEY ... REFERENCES); CREATE TABLE AS stores a
query's rows; DROP, ALTER (ADD, DROP, RENAME COLUMN, RENAME TO) and TRUNCATE change them. Each
is part of the connection's write transaction, like INSERT (BEGIN ... ROLLBACK undoes a CREATE
TABLE too). A table a property graph is built over cannot be dropped, renamed or altered
while the graph exists (the error names the graph).

ALTER TABLE is bound by :mod:`.alter_table`, views and schemas by :mod:`.view_statements`.
Every one of these statements is bound into a plan (:mod:`graphdb.executor.plan_tables`) which
EXPLAIN shows and the executor's operators run. SHOW TABLES, DESCRIBE t and
``information_schema`` list them.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from graphdb.catalog.tables import (
    MAIN,
    Column,
    ForeignKey,
    TableEntry,
    new_generation,
    rebased,
    split_name,
    valid_table_name,
)
from graphdb.catalog.tables.entries import schema_bytes
from graphdb.executor.plan import PlanNode
from graphdb.executor.plan_tables import (
    CreateTable,
    DropTable,
    FileRows,
    TableInsert,
    TruncateTables,
)
from graphdb.executor.table_types import entry_of_rows
from graphdb.executor.writes.table_graphs import refuse_if_graph

from ..errors import CatalogError, InvalidInputError
from ..table_types import resolve_types

if TYPE_CHECKING:
    from graphdb.executor.snapshot import StatementCatalog

    from ..session import Session
    from .table_sql import TableCommand as Statement

__all__ = ["after_write", "check_schema", "copy_plan", "create_table_from", "definition_plan",
           "describe_table", "file_query", "maybe_compact_tables",
           "read_file", "resolve_default", "show_tables", "table_name", "table_writes",
           "valid_name", "write_statement"]

#: A table is rewritten as a new base generation when its delta records hold more rows than
#: this share of its base (and at least MIN_COMPACT rows): what a scan merges stays small.
COMPACT_SHARE = 0.5
MIN_COMPACT = 50_000


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def table_writes(session: "Session"):
    return session.transaction.writer.tables


def write_statement(session: "Session"):
    """The write transaction's statement scope (commits unless BEGIN was given)."""
    return session.transaction.writer.statement()


def after_write(session: "Session") -> None:
    writer = session.transaction.writer
    if not writer.in_transaction:
        maybe_compact_tables(session, writer.tables.committed)


def check_schema(session: "Session", name: str) -> None:
    schema, _ = split_name(name)
    if schema.lower() != MAIN and schema.lower() not in (
            s.lower() for s in session.catalog.tables_now().schemas()):
        raise CatalogError(f"schema '{schema}' does not exist; CREATE SCHEMA {schema} first")


def valid_name(name: str) -> str:
    if not valid_table_name(name):
        raise InvalidInputError(f"invalid table name '{name[:80]}': letters, digits and "
                                "underscores, starting with a letter or underscore, optionally "
                                "after a schema (s.t)")
    schema, table = split_name(name)
    return table if schema.lower() == MAIN else name


# -- CREATE TABLE -------------------------------------------------------------------------------
def definition_plan(session: "Session", statement: "Statement", parameters: Any,
                    snapshot: "StatementCatalog") -> PlanNode:
    """The plan of a table, view or schema definition, or TRUNCATE
    (:mod:`graphdb.executor.plan_tables`)."""
    kind = statement.kind
    if parameters and kind != "create_table":  # CREATE TABLE t AS SELECT ... WHERE x = ?
        raise InvalidInputError(f"{kind.replace('_', ' ').upper()} takes no parameters")
    if kind == "drop_table":
        return DropTable(tuple(statement.options["names"]), bool(statement.if_exists))
    if kind == "truncate":
        return TruncateTables(tuple(statement.options["names"]), statement.options["restart"])
    if kind == "alter_table":
        from .alter_table import alter_plan

        return alter_plan(session, statement)
    if kind != "create_table":
        from .view_statements import namespace_plan

        return namespace_plan(session, statement)
    options = statement.options
    name = valid_name(statement.name)
    path = session.catalog.search_path
    if "." not in name and path and path[0].lower() != MAIN:  # SET search_path's first schema
        if session.catalog.tables_now().exact_key(name) is not None:
            raise CatalogError(f"table '{name}' exists in schema main, which comes first for "
                               f"an unqualified name: write {path[0]}.{name} (or main.{name})")
        name = f"{path[0]}.{name}"
    check_schema(session, name)
    if "query" in options:
        from .parser import parse
        from .statements import handler_for

        query = parse(options["query"])
        rows = handler_for(query.ast).plan(session, query, parameters, snapshot)
        return CreateTable(name, rows=rows, replace=options["replace"],
                           if_not_exists=options["if_not_exists"],
                           columns=tuple(options.get("columns") or ()))
    return CreateTable(name, entry=_declared(session, name, statement.ast),
                       replace=options["replace"], if_not_exists=options["if_not_exists"])


def _entry_of_rows(session: "Session", name: str, rows: pa.Table, source: str,
                   primary_key: tuple[str, ...] = ()) -> TableEntry:
    """The entry of a new table holding ``rows`` (its columns and types as they are)."""
    return entry_of_rows(session.runner.sql, name, rows, source, primary_key)


def _names(node) -> tuple[str, ...]:
    if isinstance(node, exp.Schema):
        return tuple(i.name for i in node.expressions)
    return tuple(i.name for i in node)


def _declared(session: "Session", name: str, ast: exp.Create) -> TableEntry:
    """The entry of ``CREATE TABLE name (columns, constraints)``."""
    defs, primary, unique, foreign, checks = [], (), [], [], []
    nullable: dict[str, bool] = {}
    defaults: dict[str, str] = {}
    identities: dict[str, tuple] = {}
    for item in ast.this.expressions:
        if isinstance(item, exp.ColumnDef):
            column = item.name
            kind = item.args.get("kind")
            if kind is None:
                raise InvalidInputError(f"column {column} of table {name} needs a type")
            serial = _SERIAL.get(kind.sql(dialect="duckdb").upper())
            if serial is not None:  # PostgreSQL's SERIAL: an integer that is an identity
                defs.append((column, serial))
                identities[column] = (False, 1, 1)
                nullable[column] = False
            else:
                defs.append((column, kind.sql(dialect="duckdb")))
                nullable[column] = True
            for constraint in item.args.get("constraints") or []:
                kind = constraint.args.get("kind")
                if isinstance(kind, exp.NotNullColumnConstraint):
                    nullable[column] = bool(kind.args.get("allow_null"))
                elif isinstance(kind, exp.PrimaryKeyColumnConstraint):
                    if primary:
                        raise InvalidInputError(f"table {name} has two primary keys")
                    primary = (column,)
                elif isinstance(kind, exp.UniqueColumnConstraint):
                    unique.append((column,))
                elif isinstance(kind, exp.DefaultColumnConstraint):
                    defaults[column] = kind.this.sql(dialect="duckdb")
                elif isinstance(kind, exp.CheckColumnConstraint):
                    checks.append(kind.this.sql(dialect="duckdb"))
                elif isinstance(kind, exp.Reference):
                    target = kind.this
                    table = target.this if isinstance(target, exp.Schema) else target
                    refs = _names(target) if isinstance(target, exp.Schema) else ()
                    foreign.append(ForeignKey((column,), table_name(table), refs))
                elif isinstance(kind, (exp.GeneratedAsIdentityColumnConstraint,
                                       exp.AutoIncrementColumnConstraint)):
                    identities[column] = _identity(name, column, kind)
                    nullable[column] = False
                elif not isinstance(kind, exp.CommentColumnConstraint):
                    raise InvalidInputError(f"CREATE TABLE {name}: column {column}'s "
                                            f"{constraint.sql(dialect='duckdb')[:60]} is not "
                                            "supported")
        elif isinstance(item, exp.PrimaryKey):
            if primary:
                raise InvalidInputError(f"table {name} has two primary keys")
            primary = tuple(e.name for e in item.expressions)
        elif isinstance(item, exp.UniqueColumnConstraint):
            unique.append(_names(item.this))
        elif isinstance(item, exp.ForeignKey):
            foreign.append(_foreign_key(item))
        elif isinstance(item, exp.CheckColumnConstraint):
            checks.append(item.this.sql(dialect="duckdb"))
        elif isinstance(item, exp.Constraint):  # CONSTRAINT name <table constraint>
            for inner in item.expressions:
                if isinstance(inner, exp.CheckColumnConstraint):
                    checks.append(inner.this.sql(dialect="duckdb"))
                elif isinstance(inner, exp.PrimaryKey):
                    if primary:
                        raise InvalidInputError(f"table {name} has two primary keys")
                    primary = tuple(e.name for e in inner.expressions)
                elif isinstance(inner, exp.UniqueColumnConstraint):
                    unique.append(_names(inner.this))
                elif isinstance(inner, exp.ForeignKey):
                    foreign.append(_foreign_key(inner))
                else:
                    raise InvalidInputError(f"CREATE TABLE {name}: the constraint "
                                            f"{item.sql(dialect='duckdb')[:60]} is not "
                                            "supported")
        else:
            raise InvalidInputError(f"CREATE TABLE {name}: unsupported item {item.sql()[:60]}")
    if not defs:
        raise InvalidInputError(f"table {name} needs at least one column")
    names = [c for c, _ in defs]
    if len({n.lower() for n in names}) != len(names):
        raise InvalidInputError(f"table {name}: a column is declared twice")
    lookup = {n.lower(): n for n in names}

    def known(columns: tuple[str, ...], what: str) -> tuple[str, ...]:
        out = []
        for c in columns:
            if c.lower() not in lookup:
                raise InvalidInputError(f"table {name}: {what} names column '{c}', which it "
                                        "does not have")
            out.append(lookup[c.lower()])
        return tuple(out)

    primary = known(primary, "the primary key")
    unique = [known(u, "a UNIQUE constraint") for u in unique]
    unique = [u for u in dict.fromkeys(unique) if u != primary]
    foreign = [ForeignKey(known(f.columns, "a foreign key"), f.table, f.references)
               for f in foreign]
    for fk in foreign:
        _resolve_reference(session, name, fk)
    foreign = [_with_references(session, name, fk) for fk in foreign]
    arrow, canonical = resolve_types(session, [t for _, t in defs])
    for column, text in defaults.items():  # checked now: a bad default fails the CREATE
        resolve_default(session, text, dict(zip(names, canonical))[column], name, column)
    schema = pa.schema([pa.field(n, t) for n, t in zip(names, arrow)])
    for column, text in zip(names, canonical):
        if column in identities and text not in _INTEGERS:
            raise InvalidInputError(f"identity column {column} of table {name} is {text}; an "
                                    "identity is an integer (SMALLINT, INTEGER or BIGINT)")
        if column in identities and column in defaults:
            raise InvalidInputError(f"column {column} of table {name} has both an identity "
                                    "and a DEFAULT")
    columns = tuple(Column(n, t, nullable[n] and n not in primary, defaults.get(n),
                           identities.get(n)) for n, t in zip(names, canonical))
    return TableEntry(name=name, table_id="0" * 32,  # (its generation is made when it runs)
                      arrow_schema=schema_bytes(schema), columns=columns, created=time.time(),
                      primary_key=primary, unique=tuple(unique), foreign_keys=tuple(foreign),
                      checks=tuple(checks), source="CREATE TABLE")


#: PostgreSQL's serial types: the integer each is, as an identity column
_SERIAL = {"SERIAL": "INTEGER", "SERIAL4": "INTEGER", "BIGSERIAL": "BIGINT", "SERIAL8": "BIGINT",
           "SMALLSERIAL": "SMALLINT", "SERIAL2": "SMALLINT"}
_INTEGERS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
             "UINTEGER", "UBIGINT")


def _identity(table: str, column: str, kind: exp.Expression) -> tuple:
    """(always, start, increment) of ``GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY [(START
    WITH s INCREMENT BY i)]`` or ``AUTOINCREMENT``."""
    if isinstance(kind, exp.AutoIncrementColumnConstraint):
        return False, 1, 1
    if kind.args.get("expression") is not None:
        raise InvalidInputError(f"CREATE TABLE {table}: generated column {column} (GENERATED "
                                "ALWAYS AS (expression)) is not supported; an identity is")

    def number(key: str, default: int) -> int:
        value = kind.args.get(key)
        if value is None:
            return default
        try:
            return int(value.sql(dialect="duckdb"))
        except ValueError:
            raise InvalidInputError(f"CREATE TABLE {table}: the identity of column {column} "
                                    f"takes an integer {key.upper()}, not {value.sql()}") from None

    increment = number("increment", 1)
    if increment == 0:
        raise InvalidInputError(f"CREATE TABLE {table}: the identity of column {column} "
                                "cannot increment by 0")
    for unsupported in ("minvalue", "maxvalue", "cycle"):
        if kind.args.get(unsupported) not in (None, False):
            raise InvalidInputError(f"CREATE TABLE {table}: the identity of column {column} "
                                    f"takes START WITH and INCREMENT BY, not "
                                    f"{unsupported.upper()}")
    return bool(kind.this), number("start", 1 if increment > 0 else -1), increment


def _foreign_key(item: exp.ForeignKey) -> ForeignKey:
    target = item.args["reference"].this
    table = target.this if isinstance(target, exp.Schema) else target
    refs = _names(target) if isinstance(target, exp.Schema) else ()
    return ForeignKey(tuple(e.name for e in item.expressions), table_name(table), refs)


def resolve_default(session: "Session", text: str, type_: str, table: str, column: str) -> None:
    try:
        session.runner.sql.run(f"SELECT CAST({text} AS {type_}) AS v", {})
    except Exception as exc:
        from ..errors import translate

        raise InvalidInputError(f"table {table}: the default of column {column} ({text}) is "
                                f"not a {type_}: {translate(exc)}") from None


def table_name(table: exp.Table) -> str:
    db = table.args.get("db")
    return f"{db.name}.{table.name}" if db is not None else table.name


def _resolve_reference(session: "Session", name: str, fk: ForeignKey) -> None:
    if fk.table.lower() == name.lower():
        return
    if table_writes(session).find(fk.table) is None:
        raise CatalogError(f"table {name}: its foreign key references table '{fk.table}', "
                           "which does not exist")


def _with_references(session: "Session", name: str, fk: ForeignKey) -> ForeignKey:
    """A foreign key without its referenced columns references the primary key; the columns
    it references are the referenced table's primary key or UNIQUE."""
    if fk.references:
        if fk.table.lower() == name.lower():
            return fk
        referenced = table_writes(session).entry(fk.table)
        keys = [tuple(c.lower() for c in k) for k in (referenced.primary_key, *referenced.unique)
                if k]
        if tuple(c.lower() for c in fk.references) not in keys:
            raise InvalidInputError(f"table {name}: its foreign key references "
                                    f"{referenced.name} ({', '.join(fk.references)}), which is "
                                    "no primary key or UNIQUE column set of it")
        return fk
    if fk.table.lower() == name.lower():
        raise InvalidInputError(f"table {name}: name the referenced columns of its foreign key")
    referenced = table_writes(session).entry(fk.table)
    if not referenced.primary_key:
        raise InvalidInputError(f"table {name}: table {referenced.name} has no primary key for "
                                "its foreign key to reference; name the columns")
    return ForeignKey(fk.columns, fk.table, referenced.primary_key)


def create_table_from(session: "Session", name: str, rows: pa.Table, *, replace: bool = False,
                      primary_key: tuple[str, ...] = ()) -> TableEntry:
    """Store ``rows`` as table ``name`` (``Connection.create_table``)."""
    name = valid_name(name)
    check_schema(session, name)
    session.writable()
    with write_statement(session):
        writes = table_writes(session)
        existing = writes.find(name)
        if existing is not None and not replace:
            raise CatalogError(f"table '{existing.name}' already exists (replace=True replaces "
                               "it)")
        if existing is not None:
            refuse_if_graph(session.catalog, existing.name, "replace")
        if primary_key:
            missing = [k for k in primary_key if k not in rows.column_names]
            if missing:
                raise InvalidInputError(f"table {name}: no column {missing[0]} for the primary "
                                        "key")
        entry = _entry_of_rows(session, name, rows, "create_table()", tuple(primary_key))
        if primary_key:
            _check_key(name, rows, tuple(primary_key))
        table_id, files = new_generation(session.catalog, rows)
        created = entry.created if existing is None else max(entry.created,
                                                             existing.created + 1e-3)
        entry = writes.create(entry.with_changes(table_id=table_id, files=files,
                                                 base_rows=rows.num_rows, rows=rows.num_rows,
                                                 created=created),
                              replace=True)
    after_write(session)
    return entry


def _check_key(name: str, rows: pa.Table, key: tuple[str, ...]) -> None:
    """The rows of a new table keep its primary key: no NULL, no value twice."""
    from ..errors import IntegrityError

    for column in key:
        if rows.column(column).null_count:
            raise IntegrityError(f"NOT NULL constraint failed: {name}.{column}")
    if rows.num_rows and rows.group_by(list(key)).aggregate([]).num_rows != rows.num_rows:
        raise IntegrityError(f"duplicate key in the primary key ({', '.join(key)}) of table "
                             f"{name}")


# -- COPY t FROM --------------------------------------------------------------------------------
def copy_plan(session: "Session", statement: "Statement") -> PlanNode:
    """``COPY t [(columns)] FROM 'file' [(options)]`` of a stored table: the plan inserting
    the file's rows (its columns positionally the table's, or the list's)."""
    entry = session.catalog.tables_now().get(statement.name)
    options = statement.options["options"]
    if options is None:
        raise InvalidInputError(f"COPY {statement.name} FROM: unknown options for a table")
    path = "'" + statement.path.replace("'", "''") + "'"
    columns = statement.options["columns"]
    return TableInsert(entry.name, tuple(columns) if columns else None,
                       FileRows(statement.path, file_query(path, options)), source="COPY")


def read_file(session: "Session", path: str, options: dict) -> pa.Table:
    """A file's rows as DuckDB reads them (CSV, Parquet, JSON, by FORMAT or the extension)."""
    rows, _ = session.runner.sql.run(file_query(path, options), {})
    return rows


def file_query(path: str, options: dict) -> str:
    """DuckDB's query of a file's rows (``path`` quoted as SQL text), by FORMAT or the
    extension: read_csv, read_parquet or read_json with the options."""
    kind = str(options.get("format", "")).lower()
    lower = path.lower()
    if not kind:
        kind = "parquet" if ".parquet" in lower else "json" if ".json" in lower else "csv"
    args = []
    for key, value in options.items():
        if key == "format":
            continue
        if key in ("delimiter", "delim", "sep"):
            key = "delim"
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, (int, float)):
            text = str(value)
        else:
            text = "'" + str(value).replace("'", "''") + "'"
        args.append(f"{key} = {text}")
    reader = {"csv": "read_csv", "parquet": "read_parquet", "json": "read_json"}.get(kind)
    if reader is None:
        raise InvalidInputError(f"COPY FROM: FORMAT must be csv, parquet or json, not {kind!r}")
    if kind == "csv" and not any(a.startswith("header") for a in args):
        args.append("header = false")
    return f"SELECT * FROM {reader}({', '.join([path] + args)})"


# -- SHOW TABLES, DESCRIBE ----------------------------------------------------------------------
def show_tables(session: "Session") -> pa.Table:
    """``SHOW TABLES``: the stored tables and views (and the tables the program registered)."""
    tables = session.catalog.tables_now()
    names = sorted(set(tables.names()) | set(tables.view_names()) | set(session.tables))
    return pa.table({"name": pa.array(names, pa.string())})


def describe_table(session: "Session", name: str) -> pa.Table | None:
    """``DESCRIBE t`` of a stored table (DuckDB's columns); None when ``name`` is none."""
    entry = session.catalog.tables_now().find(name)
    if entry is None:
        return None
    keys = set(entry.primary_key)
    unique = {c for u in entry.unique for c in u}
    return pa.table({
        "column_name": [c.name for c in entry.columns],
        "column_type": [c.type for c in entry.columns],
        "null": ["YES" if c.nullable else "NO" for c in entry.columns],
        "key": ["PRI" if c.name in keys else "UNI" if c.name in unique else None
                for c in entry.columns],
        "default": [c.default for c in entry.columns],
        "extra": pa.array([None if c.identity is None else
                           f"GENERATED {'ALWAYS' if c.identity[0] else 'BY DEFAULT'} AS IDENTITY"
                           for c in entry.columns], pa.string()),
    })


# -- compaction ---------------------------------------------------------------------------------
def maybe_compact_tables(session: "Session", committed: dict) -> None:
    """Tables whose delta outgrew their base get a new base generation (the live rows)."""
    for name, entry in committed.items():
        if entry is None or not entry.changed:
            continue
        delta_rows = entry.delta.get("appended", 0) + entry.delta.get("deleted", 0)
        if delta_rows < max(MIN_COMPACT, COMPACT_SHARE * entry.base_rows):
            continue
        with session.transaction.writer.statement():
            current = table_writes(session).find(name)
            if current is None or current.table_id != entry.table_id:
                continue
            table_writes(session).create(rebased(session.catalog, current), replace=True)
