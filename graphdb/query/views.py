"""Views: a query that names a view reads the view's query in its place.

``CREATE VIEW v AS query`` keeps the query's text (:mod:`graphdb.query.table_statements`);
a statement whose FROM names ``v`` is rewritten, before it is bound, with ``(query) AS v``
where ``v`` was (``AS v (a, b)`` where the view names its columns), then parsed again, so the
view's query is bound like any subquery (its graph functions, GRAPH_TABLE, stored tables).
Views may name views, up to :data:`MAX_DEPTH` deep (a view that names itself is refused).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from ..errors import BinderError
from .dialect import span

if TYPE_CHECKING:
    from .tables import Context

__all__ = ["expand_views"]

MAX_DEPTH = 16


def _view_of(node: exp.Table, ctx: "Context", ctes: set[str]):
    if not isinstance(node.this, exp.Identifier) or span(node) is None:
        return None
    db = node.args.get("db")
    name = node.name if db is None else f"{db.name}.{node.name}"
    if db is None and (name.lower() in ctes or name.lower() in ctx.tables
                       or name.lower() in ctx.builtins):
        return None
    if db is not None and ctx.is_graph(db.name):
        return None
    tables = ctx.catalog.tables()
    if tables.key_of(name) is not None:
        return None
    return tables.find_view(name)


def expand_views(ast: exp.Expression, text: str, ctx: "Context"
                 ) -> tuple[exp.Expression, str] | None:
    """(ast, text) of the statement with its views expanded; None when it names none."""
    from .parser import parse

    tables = ctx.catalog.tables()
    if not tables.view_names():
        return None
    expanded = False
    for depth in range(MAX_DEPTH + 1):
        ctes = {c.alias.lower() for c in ast.find_all(exp.CTE)}
        found = [(n, v) for n in ast.find_all(exp.Table)
                 if (v := _view_of(n, ctx, ctes)) is not None]
        if not found:
            return (ast, text) if expanded else None
        if depth == MAX_DEPTH:
            names = ", ".join(sorted({v.name for _, v in found}))
            raise BinderError(f"views nest more than {MAX_DEPTH} deep ({names}); does a view "
                              "name itself?")
        for node, view in sorted(found, key=lambda f: -span(f[0])[0]):
            start, end = span(node)
            alias = node.args.get("alias")
            alias_sql = alias.sql(dialect="duckdb") if alias is not None else \
                '"' + node.name.replace('"', '""') + '"'
            if view.columns and (alias is None or not alias.args.get("columns")):
                alias_sql += "(" + ", ".join('"' + c + '"' for c in view.columns) + ")"
            text = text[:start] + f"({view.sql}) AS {alias_sql}" + text[end + 1:]
        statement = parse(text)
        ast, text = statement.ast, statement.text
        expanded = True
    return ast, text
