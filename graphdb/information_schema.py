"""``information_schema``: the SQL standard's views of what the database holds, computed from
the statement's catalog (stored tables, views and schemas; the tables the program registered,
as local temporary tables; property graphs' names in ``property_graphs``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from graphdb.catalog.tables import MAIN, split_name

from .errors import BinderError

if TYPE_CHECKING:
    from graphdb.executor.snapshot import StatementCatalog

__all__ = ["VIEWS", "information_schema"]

VIEWS = ("tables", "columns", "schemata", "views", "property_graphs")
_CATALOG = "graphdb"


def _strings(values) -> pa.Array:
    return pa.array(list(values), pa.string())


def information_schema(catalog: "StatementCatalog", registered: dict[str, pa.Table],
                       view: str) -> pa.Table:
    """The rows of ``information_schema.<view>``."""
    name = view.lower()
    tables = catalog.tables()
    entries = tables.entries()
    if name == "tables":
        rows = [(split_name(e.name)[0], split_name(e.name)[1], "BASE TABLE") for e in entries]
        rows += [(split_name(v)[0], split_name(v)[1], "VIEW") for v in tables.view_names()]
        rows += [(MAIN, t, "LOCAL TEMPORARY") for t in sorted(registered)]
        return pa.table({"table_catalog": _strings(_CATALOG for _ in rows),
                         "table_schema": _strings(r[0] for r in rows),
                         "table_name": _strings(r[1] for r in rows),
                         "table_type": _strings(r[2] for r in rows)})
    if name == "columns":
        rows = []
        for e in entries:
            schema, table = split_name(e.name)
            for i, c in enumerate(e.columns, start=1):
                rows.append((schema, table, c.name, i, c.default,
                             "YES" if c.nullable else "NO", c.type,
                             None if c.identity is None else
                             "ALWAYS" if c.identity[0] else "BY DEFAULT"))
        for v in tables.view_names():
            schema, table = split_name(v)
            for i, (column, kind) in enumerate(tables.find_view(v).output, start=1):
                rows.append((schema, table, column, i, None, "YES", kind, None))
        for t, data in sorted(registered.items()):
            for i, f in enumerate(data.schema, start=1):
                rows.append((MAIN, t, f.name, i, None, "YES", str(f.type).upper(), None))
        return pa.table({"table_catalog": _strings(_CATALOG for _ in rows),
                         "table_schema": _strings(r[0] for r in rows),
                         "table_name": _strings(r[1] for r in rows),
                         "column_name": _strings(r[2] for r in rows),
                         "ordinal_position": pa.array([r[3] for r in rows], pa.int64()),
                         "column_default": _strings(r[4] for r in rows),
                         "is_nullable": _strings(r[5] for r in rows),
                         "data_type": _strings(r[6] for r in rows),
                         "is_identity": _strings("NO" if r[7] is None else "YES" for r in rows),
                         "identity_generation": _strings(r[7] for r in rows)})
    if name == "schemata":
        names = [MAIN, "information_schema"] + tables.schemas()
        return pa.table({"catalog_name": _strings(_CATALOG for _ in names),
                         "schema_name": _strings(names)})
    if name == "views":
        views = [tables.find_view(v) for v in tables.view_names()]
        return pa.table({"table_catalog": _strings(_CATALOG for _ in views),
                         "table_schema": _strings(split_name(v.name)[0] for v in views),
                         "table_name": _strings(split_name(v.name)[1] for v in views),
                         "view_definition": _strings(v.sql for v in views)})
    if name == "property_graphs":
        from graphdb.executor.property_graph import PropertySchema

        graphs = [g for g in catalog.names() if PropertySchema.of(catalog.get(g)) is not None]
        return pa.table({"property_graph_catalog": _strings(_CATALOG for _ in graphs),
                         "property_graph_schema": _strings(MAIN for _ in graphs),
                         "property_graph_name": _strings(graphs)})
    raise BinderError(f"information_schema has no view '{view}' (views: {', '.join(VIEWS)})")
