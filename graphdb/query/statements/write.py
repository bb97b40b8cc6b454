"""INSERT, DELETE and UPDATE of a graph's ``g.edges`` and ``g.vertices``, bound into write plans.

::

    INSERT INTO g.edges [(src, dst[, weight][, prop ...])] VALUES (...), ... | SELECT ...
    INSERT INTO g.vertices [(id[, prop ...])] VALUES (...), ... | SELECT ...
    DELETE FROM g.edges [WHERE ...]
    [DETACH] DELETE FROM g.vertices [WHERE ...]    -- a vertex with edges needs DETACH
    UPDATE g.edges SET col = expr, ... [WHERE ...]
    UPDATE g.vertices SET prop = expr, ... [WHERE ...]

An INSERT becomes :class:`~graphdb.executor.plan.InsertRows` over its rows: VALUES of constants
and parameters read here (the common case, fast: no query runs), any other VALUES or a SELECT
bound as a query. A DELETE or UPDATE becomes :class:`~graphdb.executor.plan.DeleteRows` /
:class:`~graphdb.executor.plan.UpdateRows` over the query of the rows its WHERE picks from the
graph's rows as its newest version has them (:class:`~graphdb.executor.plan.TargetRows`, each
row with its identity), and for UPDATE their new values. The operators
(:mod:`graphdb.executor.writes`) apply them as delta records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import pyarrow as pa
from sqlglot import exp

from graphdb.executor.cancel import import_first
from graphdb.executor.plan import (
    CANONICAL,
    ROW,
    DeleteRows,
    InsertRows,
    PlanNode,
    TargetRows,
    UpdateRows,
    ValuesScan,
)
from graphdb.executor.writes.target import property_graph_refusal, table_columns

from ...errors import BinderError, InvalidInputError, ParseError
from ..dialect import GraphSQL, GraphTable
from ..fast_values import FastValues, fill
from ..grammar import DetachDelete
from ..parameters import Parameters, placeholders
from ..values import NotConstant, bind_parameters, constant_value, is_simple, rows_table
from . import Handler

if TYPE_CHECKING:
    from graphdb.executor.snapshot import StatementCatalog

    from ...session import Session
    from ..parser import Statement

__all__ = ["HANDLERS", "TARGET", "bind_parameters", "insert_values", "query_plan",
           "values_plan"]

#: The name the rows a DELETE or UPDATE picks from have in its query.
TARGET = "__graphdb_target"


class Write(Handler):
    """What INSERT, DELETE and UPDATE share: a writable database; after an autocommit, the
    background compaction of what it made due. A write to a stored table (CREATE TABLE, or a
    property graph's ``g.Label`` of one) is bound by :mod:`graphdb.query.table_writes` into
    a table write plan, the graphs over that table following in the same transaction."""

    parameters = True
    explainable = True

    def check(self, session: "Session", statement: "Statement") -> None:
        session.writable()

    def finish(self, session: "Session", statement: "Statement", table: pa.Table
               ) -> tuple[pa.Table, str | None]:
        if not session.transaction.open:
            session.after_commit(session.transaction.writer.committed)
        return table, None


class Insert(Write):
    kind = "insert"

    def execute(self, session: "Session", statement: "Statement", parameters: Any
                ) -> tuple[pa.Table, str | None]:
        """An INSERT of literal rows into a stored table runs the plan kept for its text and
        the table's shape (:mod:`graphdb.query.write_plans`); any other is planned as every
        statement is."""
        from ..write_plans import kept_insert

        self.check(session, statement)
        physical = kept_insert(session, statement, parameters, lambda snapshot: self.plan(
            session, statement, parameters, snapshot))
        if physical is None:
            return super().execute(session, statement, parameters)
        return self.finish(session, statement, session.runner.run(physical))

    def uses_lease(self, statement: "Statement") -> bool:
        return not isinstance(statement.ast.expression, (exp.Values, FastValues))  # (no query)

    def plan(self, session: "Session", statement: "Statement", parameters: Any,
             snapshot: "StatementCatalog") -> PlanNode:
        ast = statement.ast
        stored = stored_table(session, ast)
        if stored is not None:
            from ..table_writes import insert_plan

            return insert_plan(session, stored, ast, parameters, snapshot)
        graph, table = _written_target(ast, "insert")
        written = [c.name for c in ast.this.expressions] if isinstance(ast.this, exp.Schema) \
            else None
        if written is not None and len({c.lower() for c in written}) != len(written):
            raise BinderError("a column is named twice in the INSERT's column list")

        def columns() -> list[str]:
            """The columns written, as the table spells them (read from the catalog only
            where a SELECT or an error message needs them: a VALUES insert reads nothing
            before its operator holds the writer lock)."""
            name, _table, every = _target(ast, "insert", snapshot)
            return [_column(c, name, table, every) for c in written] if written else every

        source = ast.expression
        if isinstance(source, FastValues):  # literal rows read without the general parser
            if written is not None and source.args["width"] != len(written):
                raise BinderError(f"a VALUES row has {source.args['width']} values for the "
                                  f"{len(written)} columns ({', '.join(written)})")
            names = written or [f"c{i}" for i in range(source.args["width"])]
            return InsertRows(graph, table, None if written is None else tuple(written),
                              ValuesScan("values", rows_table(source.rows(parameters), names)),
                              values=True)
        if isinstance(source, exp.Values):
            rows = values_plan(session, source, parameters, written, columns, snapshot)
            return InsertRows(graph, table, None if written is None else tuple(written), rows,
                              values=True)
        if isinstance(source, exp.Query):
            names = columns()
            query = query_plan(session, bind_parameters(ast, parameters).expression, snapshot)
            return InsertRows(snapshot.get(graph).name, table, tuple(names), query)
        raise BinderError("INSERT takes VALUES (...) or a SELECT")


class Picking(Write):
    """DELETE and UPDATE: a query of the rows the WHERE picks from the target's rows."""

    def plan(self, session: "Session", statement: "Statement", parameters: Any,
             snapshot: "StatementCatalog") -> PlanNode:
        stored = stored_table(session, statement.ast)
        if stored is not None:
            from .. import table_writes

            bind = table_writes.delete_plan if self.kind == "delete" else \
                table_writes.update_plan
            return bind(session, stored, statement.ast, parameters, snapshot)
        graph, table, columns = _target(statement.ast, self.kind, snapshot)
        bound = bind_parameters(statement.ast, parameters)
        return self.picking(session, statement, graph, table, columns, bound, snapshot)

    def picking(self, session: "Session", statement: "Statement", graph: str, table: str,
                columns: list[str], bound: exp.Expression, snapshot: "StatementCatalog"
                ) -> PlanNode:
        raise NotImplementedError


class Delete(Picking):
    kind = "delete"

    def picking(self, session: "Session", statement: "Statement", graph: str, table: str,
                columns: list[str], bound: exp.Expression, snapshot: "StatementCatalog"
                ) -> PlanNode:
        picked = [exp.column(ROW)] + ([exp.column(CANONICAL)] if table == "edges" else [])
        query = _picking(session, graph, table, bound, picked, snapshot)
        return DeleteRows(graph, table, query, detach=isinstance(statement.ast, DetachDelete))


class Update(Picking):
    kind = "update"

    def picking(self, session: "Session", statement: "Statement", graph: str, table: str,
                columns: list[str], bound: exp.Expression, snapshot: "StatementCatalog"
                ) -> PlanNode:
        assigned: dict[str, exp.Expression] = {}
        for item in bound.expressions:
            if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
                raise BinderError(f"UPDATE ... SET takes column = value, got {item.sql()}")
            name = _column(item.this.name, graph, table, columns)
            if name in assigned:
                raise BinderError(f"UPDATE sets column {name} twice")
            assigned[name] = item.expression
        if table == "vertices":
            if "id" in assigned:
                raise InvalidInputError(f"{graph}: a vertex's id cannot change; insert a new "
                                        "vertex (and move its edges) instead")
            changed = list(assigned)
            values = [exp.column(ROW)] + [exp.alias_(e, n) for n, e in assigned.items()]
        else:
            changed = columns
            values = [exp.column(ROW), exp.column(CANONICAL)] + [
                exp.alias_(assigned[n], n) if n in assigned else exp.column(n) for n in columns]
        query = _picking(session, graph, table, bound, values, snapshot)
        return UpdateRows(graph, table, tuple(changed), query)


# -- binding ------------------------------------------------------------------------------------
def stored_table(session: "Session", ast: exp.Expression) -> str | None:
    """The stored table a write statement writes to (``g.Person`` of a property graph: the
    table it is built over), or None for a graph's own ``g.edges`` / ``g.vertices``."""
    from ..table_writes import table_target

    node = ast.this.this if isinstance(ast.this, exp.Schema) else ast.this
    return table_target(session, node)


def _written_target(ast: exp.Expression, kind: str) -> tuple[str, str]:
    """(graph as written, 'edges' | 'vertices') a write statement writes to."""
    node = ast.this.this if isinstance(ast.this, exp.Schema) else ast.this
    if isinstance(node, GraphTable):
        raise BinderError(f"GRAPH_TABLE is read-only (as in SQL/PGQ): {kind.upper()} writes "
                          "to a graph's g.edges or g.vertices")
    if not isinstance(node, exp.Expression):  # sqlglot reads 'DELETE FRO' as a table list
        raise ParseError(f"{kind.upper()} names no table: write "
                         + {"delete": "DELETE FROM g.edges [WHERE ...]",
                            "update": "UPDATE g.edges SET column = value [WHERE ...]"}.get(
                                kind, "INSERT INTO g.edges VALUES (...)"))
    if kind == "update" and not ast.expressions:
        raise ParseError("UPDATE sets nothing: write UPDATE g.edges SET column = value "
                         "[WHERE ...]")
    if not isinstance(node, exp.Table) or not node.args.get("db"):
        raise BinderError(f"{kind.upper()} writes to a graph's table: g.edges or g.vertices, "
                          f"not {node.sql()}")
    name, table = node.args["db"].name, node.name.lower()
    if table not in ("edges", "vertices"):
        raise BinderError(f"cannot write to {name}.{table}: a graph's writable tables are "
                          f"{name}.edges and {name}.vertices")
    return name, table


def _target(ast: exp.Expression, kind: str, snapshot: "StatementCatalog"
            ) -> tuple[str, str, list[str]]:
    """(graph, 'edges' | 'vertices', the table's columns) a write statement writes to."""
    name, table = _written_target(ast, kind)
    entry = snapshot.get(name)
    refusal = property_graph_refusal(entry)
    if refusal is not None:
        raise BinderError(refusal)
    return entry.name, table, table_columns(snapshot.catalog, entry, table)


def _column(name: str, graph: str, table: str, columns: list[str]) -> str:
    """The table's spelling of column ``name`` (SQL names are case-insensitive)."""
    for column in columns:
        if column.lower() == name.lower():
            return column
    raise BinderError(f"{graph}.{table} has no column '{name}' (columns: {', '.join(columns)})")


def query_plan(session: "Session", query: exp.Expression, snapshot: "StatementCatalog",
               tables: dict[str, PlanNode] | None = None) -> PlanNode:
    """The plan of a query (an AST without parameters) a write reads, ``tables`` its relations
    by name. The query is bound from its text, as any statement is."""
    from ..binder import bind_query
    from ..parser import parse

    statement = parse(query.sql(dialect=GraphSQL))
    context = session.context(snapshot)
    context.tables.update(tables or {})
    return bind_query(statement.ast, statement.text, None, context)


def _picking(session: "Session", graph: str, table: str, bound: exp.Expression,
             select: list[exp.Expression], snapshot: "StatementCatalog") -> PlanNode:
    """The query of ``select`` over the target's rows its WHERE picks."""
    node = bound.this
    alias = node.alias or node.name
    query = exp.select(*select).from_(exp.Table(this=exp.to_identifier(TARGET),
                                                alias=exp.TableAlias(
                                                    this=exp.to_identifier(alias))))
    where = bound.args.get("where")
    if where is not None:
        query = query.where(where.this)
    return query_plan(session, query, snapshot, {TARGET: TargetRows(graph, table)})


# -- VALUES -------------------------------------------------------------------------------------
def values_plan(session: "Session", values: exp.Values, parameters: Any,
                written: list[str] | None, columns: Callable[[], list[str]],
                snapshot: "StatementCatalog", types: list | None = None) -> PlanNode:
    """The rows of VALUES: constants and parameters read here (the common case, fast), any
    other expression computed by the query engine. ``written``: the INSERT's column list (None:
    every column of the table, whose number the operator checks); ``columns()``: the columns
    as the table spells them, for messages; ``types``: the columns' types, which strings take
    where values of several kinds meet."""
    rows = values.expressions
    width = len(written) if written is not None else len(rows[0].expressions) if rows else 0
    for row in rows:
        if len(row.expressions) != width:
            names = columns()
            wrong = next(r for r in rows if len(r.expressions) != len(names))
            raise BinderError(f"a VALUES row has {len(wrong.expressions)} values for the "
                              f"{len(names)} columns ({', '.join(names)})")
    names = written if written is not None else [f"c{i}" for i in range(width)]
    params = Parameters(values, parameters)
    try:
        data = [[constant_value(node, params) for node in row.expressions] for row in rows]
    except NotConstant:
        bound = bind_parameters(values, parameters)
        aliases = [f"c{i}" for i in range(width)]
        bound.set("alias", exp.TableAlias(this=exp.to_identifier("__graphdb_values"),
                                          columns=[exp.to_identifier(n) for n in aliases]))
        return query_plan(session, exp.select("*").from_(bound), snapshot)
    import_first()  # pyarrow imports pandas at its first array of Python values
    try:
        return ValuesScan("values", rows_table(data, names, types))
    except InvalidInputError:
        every = columns()
        if len(every) == len(names):  # the message names the table's columns
            rows_table(data, every)
        raise


def insert_values(session: "Session", statement: "Statement", seq_of_parameters
                  ) -> PlanNode | None:
    """``executemany`` of an INSERT of one VALUES row of constants and parameters: the plan
    inserting every parameter set's row in one statement; None for any other statement."""
    ast = statement.ast
    if not isinstance(ast, exp.Insert):
        return None
    source = ast.expression
    if isinstance(source, FastValues) and source.args["rows"] == 1:
        row = source.template()
        data = [fill(row, parameters) for parameters in seq_of_parameters]
    elif not isinstance(source, exp.Values) or len(source.expressions) != 1 or \
            not all(is_simple(n) for n in source.expressions[0].expressions):
        return None
    else:
        row = source.expressions[0].expressions
        nodes = tuple(placeholders(source))
        data = [[constant_value(node, Parameters(source, parameters, nodes)) for node in row]
                for parameters in seq_of_parameters]
    stored = stored_table(session, ast)
    if stored is not None:  # a stored table's rows
        from ..table_writes import insert_values_plan

        given = [c.name for c in ast.this.expressions] if isinstance(ast.this, exp.Schema) \
            else None
        return insert_values_plan(session, stored, given, data)
    graph, table, columns = _target(ast, "insert", session.snapshot())
    if isinstance(ast.this, exp.Schema):
        columns = [_column(c.name, graph, table, columns) for c in ast.this.expressions]
    if len(row) != len(columns):
        raise BinderError(f"the VALUES row has {len(row)} values for the {len(columns)} "
                          f"columns ({', '.join(columns)})")
    return InsertRows(graph, table, tuple(columns),
                      ValuesScan("values", rows_table(data, columns)))


HANDLERS = {exp.Insert: Insert(), exp.Delete: Delete(), exp.Update: Update()}
