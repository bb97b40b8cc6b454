"""Binding writes of stored tables (CREATE TABLE): which table a statement names, and the plans
of the rows the program's API and the table statements write (``executemany``, COPY,
TRUNCATE). The plans' operators (:mod:`graphdb.executor.writes.tables`) check and record them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
import sqlglot
from sqlglot import exp

from graphdb.executor.plan import ROW, PlanNode, ValuesScan
from graphdb.executor.plan_tables import TableDelete, TableInsert, TableRows, TableUpdate

from ..errors import BinderError
from .fast_values import FastValues
from .values import bind_parameters, rows_table

if TYPE_CHECKING:
    from graphdb.catalog.tables import TableEntry
    from graphdb.executor.snapshot import StatementCatalog

    from ..session import Session

__all__ = ["column_types", "delete_plan", "insert_plan", "insert_values_plan",
           "table_target", "update_plan"]


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


def insert_values_plan(session: "Session", name: str, columns: list[str] | None,
                       data: list[list[Any]]) -> PlanNode:
    """The plan inserting Python rows (``executemany``'s) into table ``name``: values for
    ``columns`` (None: every column, in order)."""
    entry = session.catalog.tables_now().get(name)
    names = list(columns) if columns is not None else [c.name for c in entry.columns]
    _refuse_generated(entry, names)
    if data and len(data[0]) != len(names):
        raise BinderError(f"the VALUES row has {len(data[0])} values for the {len(names)} "
                          f"columns of table {entry.name}")
    types = column_types(entry, names)
    rows = rows_table(data, names, types) if data else pa.table(
        [pa.array([], t or pa.null()) for t in types], names=names)
    return TableInsert(entry.name, None if columns is None else tuple(columns),
                       ValuesScan("values", rows))


def _is_default(node: exp.Expression) -> bool:
    return isinstance(node, exp.Var) and node.name.upper() == "DEFAULT"


def _defaults_filled(entry: "TableEntry", values: exp.Values, names: list[str]
                     ) -> tuple[exp.Values, list[str]]:
    """VALUES rows with the keyword DEFAULT in them: each such value becomes its column's
    default (or NULL), and an identity column given DEFAULT is left out of the INSERT (so it
    takes its next value) - in every row alike."""
    rows = [list(row.expressions) if isinstance(row, exp.Tuple) else [row]
            for row in values.expressions]
    if not any(_is_default(v) for row in rows for v in row):
        return values, names
    dropped = []
    for i, name in enumerate(names):
        column = entry.column(name) if name.lower() in (c.name.lower() for c in entry.columns) \
            else None
        given = [_is_default(row[i]) for row in rows if i < len(row)]
        if column is not None and column.identity is not None and any(given):
            if not all(given):
                raise BinderError(f"identity column {column.name}: DEFAULT in some VALUES rows "
                                  "and a value in others; give it in every row or in none")
            dropped.append(i)
            continue
        for row in rows:
            if i < len(row) and _is_default(row[i]):
                default = None if column is None else column.default
                row[i] = exp.null() if default is None else exp.cast(
                    sqlglot.parse_one(default, read="duckdb"), column.type, dialect="duckdb")
    if len(dropped) == len(names):
        raise BinderError(f"INSERT into table {entry.name} gives every column its default: name "
                          "a column that is no identity, or insert a value")
    keep = [i for i in range(len(names)) if i not in dropped]
    return exp.Values(expressions=[exp.Tuple(expressions=[row[i] for i in keep if i < len(row)])
                                   for row in rows]), [names[i] for i in keep]


def _refuse_generated(entry: "TableEntry", names: list[str]) -> None:
    """An INSERT cannot give a GENERATED ALWAYS identity column a value (as PostgreSQL: leave
    the column out, or declare it GENERATED BY DEFAULT)."""
    for name in names:
        try:
            identity = entry.column(name).identity
        except KeyError:
            continue  # (the unknown column is named by the check that follows)
        if identity is not None and identity[0]:
            raise BinderError(f"cannot insert a value into column {name} of table {entry.name}: "
                              "it is GENERATED ALWAYS AS IDENTITY (leave it out of the column "
                              "list, and the table gives it its next value)")


def _type_of(entry, column: str) -> pa.DataType | None:
    try:
        return entry.schema.field(entry.column(column).name).type
    except KeyError:
        return None  # (the operator names the column that is none)


def column_types(entry, columns: list[str]) -> list[pa.DataType | None]:
    """The types of ``columns`` of ``entry`` (None for a column it has not)."""
    if columns == [c.name for c in entry.columns]:
        return list(entry.schema.types)
    return [_type_of(entry, c) for c in columns]


def _column(entry: "TableEntry", name: str) -> str:
    try:
        return entry.column(name).name
    except KeyError:
        raise BinderError(f"table {entry.name} has no column '{name}' (columns: "
                          f"{', '.join(c.name for c in entry.columns)})") from None


# -- the statements -----------------------------------------------------------------------------
def insert_plan(session: "Session", name: str, ast: exp.Insert, parameters: Any,
                snapshot: "StatementCatalog") -> PlanNode:
    """``INSERT INTO t [(columns)] VALUES ... | SELECT ... [ON CONFLICT ...]``."""
    from .statements.write import query_plan, values_plan

    entry = snapshot.table(name)
    written = [c.name for c in ast.this.expressions] if isinstance(ast.this, exp.Schema) \
        else None
    names = written or [c.name for c in entry.columns]
    source = ast.expression
    if source is None and ast.args.get("default"):  # INSERT INTO t DEFAULT VALUES
        source = exp.Values(expressions=[exp.Tuple(expressions=[
            exp.Var(this="DEFAULT") for _ in names])])
    if isinstance(source, exp.Values):
        source, names = _defaults_filled(entry, source, names)
    _refuse_generated(entry, names)
    types = column_types(entry, names)
    if isinstance(source, FastValues):  # literal rows read without the general parser
        if source.args["width"] != len(names):
            raise BinderError(f"a VALUES row has {source.args['width']} values for the "
                              f"{len(names)} columns ({', '.join(names)})")
        rows = ValuesScan("values", rows_table(source.rows(parameters), names, types))
        kind = "VALUES"
    elif isinstance(source, exp.Values):
        for row in source.expressions:
            if len(row.expressions) != len(names):
                raise BinderError(f"a VALUES row has {len(row.expressions)} values for the "
                                  f"{len(names)} columns ({', '.join(names)})")
        rows = values_plan(session, source, parameters, names, lambda: names, snapshot, types)
        kind = "VALUES"
    elif isinstance(source, exp.Query):
        rows = query_plan(session, bind_parameters(ast, parameters).expression, snapshot)
        kind = "SELECT"
    else:
        raise BinderError("INSERT takes VALUES (...) or a query")
    every = [c.name for c in entry.columns]
    return TableInsert(entry.name, None if written is None and names == every else tuple(names),
                       rows, _conflict(ast, parameters, entry), kind)


def _conflict(ast: exp.Insert, parameters: Any, entry: "TableEntry") -> tuple | None:
    """('nothing' | 'replace', None) or ('update', ((column, DuckDB SQL), ...)) of an
    INSERT's conflict clause; None without one."""
    alternative = (ast.args.get("alternative") or "").upper()
    if alternative in ("IGNORE", "REPLACE"):
        return ("nothing" if alternative == "IGNORE" else "replace", None)
    clause = ast.args.get("conflict")
    if clause is None:
        return None
    if clause.args.get("action") is not None and "NOTHING" in clause.args["action"].sql().upper():
        return "nothing", None
    if not clause.args.get("expressions") and not clause.args.get("duplicate"):
        return "nothing", None
    assigned = []
    for item in bind_parameters(clause, parameters).args.get("expressions") or []:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
            raise BinderError(f"ON CONFLICT DO UPDATE SET takes column = value, got "
                              f"{item.sql()}")
        value = _unqualify_to(item.expression, entry.name, "t")
        assigned.append((_column(entry, item.this.name), value.sql(dialect="duckdb")))
    return "update", tuple(assigned)


def _unqualify_to(node: exp.Expression, table: str, alias: str) -> exp.Expression:
    """Columns qualified by the table's own name refer to its row: ``alias``."""
    def fix(node):
        if isinstance(node, exp.Column) and node.table and node.table.lower() == table.lower():
            return exp.column(node.name, table=alias)
        return node

    return node.transform(fix)


def delete_plan(session: "Session", name: str, ast: exp.Delete, parameters: Any,
                snapshot: "StatementCatalog") -> PlanNode:
    """``DELETE FROM t [USING ...] [WHERE ...]``."""
    entry = snapshot.table(name)
    bound = bind_parameters(ast, parameters)
    using = bound.args.get("using") or []
    picked = _picking(session, entry, bound, [exp.column(ROW)],
                      list(using) if isinstance(using, list) else [], snapshot)
    return TableDelete(entry.name, picked)


def update_plan(session: "Session", name: str, ast: exp.Update, parameters: Any,
                snapshot: "StatementCatalog") -> PlanNode:
    """``UPDATE t SET col = expr, ... [FROM ...] [WHERE ...]``."""
    entry = snapshot.table(name)
    bound = bind_parameters(ast, parameters)
    assigned: dict[str, exp.Expression] = {}
    for item in bound.expressions:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
            raise BinderError(f"UPDATE ... SET takes column = value, got {item.sql()}")
        column = _column(entry, item.this.name)
        if column in assigned:
            raise BinderError(f"UPDATE sets column {column} twice")
        identity = entry.column(column).identity
        if identity is not None and identity[0]:
            raise BinderError(f"column {column} of table {entry.name} is GENERATED ALWAYS AS "
                              "IDENTITY: UPDATE cannot set it")
        assigned[column] = item.expression
    names = [c.name for c in entry.columns]
    select = [exp.column(ROW)] + [
        exp.alias_(assigned[n], n) if n in assigned else exp.column(n) for n in names]
    source = bound.args.get("from_") or bound.args.get("from")
    picked = _picking(session, entry, bound, select, [source.this] if source is not None
                      else [], snapshot)
    return TableUpdate(entry.name, tuple(assigned), picked)


def _picking(session: "Session", entry: "TableEntry", bound: exp.Expression,
             select: list[exp.Expression], joined: list[exp.Expression],
             snapshot: "StatementCatalog") -> PlanNode:
    """The query of ``select`` over the table's rows (:class:`TableRows`) its WHERE picks,
    joined with ``joined`` (UPDATE ... FROM, DELETE ... USING)."""
    from .statements.write import TARGET, query_plan

    node = bound.this
    alias = node.alias or node.name
    query = exp.select(*select).from_(exp.Table(this=exp.to_identifier(TARGET),
                                                alias=exp.TableAlias(
                                                    this=exp.to_identifier(alias))))
    for item in joined:
        query = query.join(item)
    where = bound.args.get("where")
    if where is not None:
        query = query.where(where.this)
    return query_plan(session, query, snapshot, {TARGET: TableRows(entry.name)})
