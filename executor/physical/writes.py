"""Planning statements that change the database: one ``plan_<node>`` per write and definition
node of :mod:`graphdb.executor.plan`, each giving the operator that runs it
(:mod:`graphdb.executor.writes`) and the lines EXPLAIN shows for it. Mixed into
:class:`~.planner.PhysicalPlanner`."""

from __future__ import annotations

import pyarrow as pa

from ..plan import (
    CANONICAL,
    ROW,
    CreateGraph,
    CreatePropertyGraph,
    DeleteRows,
    DropGraph,
    InsertRows,
    LoadGraph,
    TargetRows,
    UpdateRows,
)
from ..plan_tables import (
    AlterTable,
    CreateSchema,
    CreateTable,
    CreateView,
    DropSchema,
    DropTable,
    DropView,
    FileRows,
    RenameTable,
    TableDelete,
    TableInsert,
    TableRows,
    TableUpdate,
    TruncateTables,
)
from ..writes.alter_table import AlterTableOperator
from ..writes.definitions import CreateGraphOperator, DropGraphOperator, LoadGraphOperator
from ..writes.delete import DeleteOperator
from ..writes.insert import InsertOperator
from ..writes.namespaces import (
    CreateSchemaOperator,
    CreateViewOperator,
    DropSchemaOperator,
    DropViewOperator,
)
from ..writes.property_graph import CreatePropertyGraphOperator
from ..writes.table_definitions import CreateTableOperator, DropTableOperator
from ..writes.table_graphs import graphs_over
from ..writes.tables import (
    FileRowsScan,
    TableDeleteOperator,
    TableInsertOperator,
    TableRowsScan,
    TableUpdateOperator,
    TruncateOperator,
)
from ..writes.target import TargetRowsScan
from ..writes.update import UpdateOperator

__all__ = ["WritePlanning"]

_COMMITS = "commits at the statement's end, or with the open transaction (BEGIN ... COMMIT)"
_NAMESPACE = "stored at once in a commit of its own (refused inside BEGIN ... COMMIT)"


class WritePlanning:
    """The ``plan_<node>`` methods of writes and definitions (see the module docstring)."""

    def plan_InsertRows(self, node: InsertRows) -> InsertOperator:
        return InsertOperator(
            logical=node, inputs=self._inputs(node),
            label=f"INSERT INTO {node.graph}.{node.table}"
                  + (f" ({', '.join(node.columns)})" if node.columns is not None else ""),
            details=("delta records on the graph's newest version (the writer lock held); ids "
                     "that are no vertex yet become vertices" if node.table == "edges" else
                     "delta records on the graph's newest version (the writer lock held)",
                     _COMMITS))

    def plan_TargetRows(self, node: TargetRows) -> TargetRowsScan:
        entry = self.snapshot.get(node.graph)
        catalog = self.snapshot.catalog
        if node.table == "edges":
            fields = list(catalog.edge_schema(entry)) + [pa.field(ROW, pa.int64()),
                                                        pa.field(CANONICAL, pa.bool_())]
        else:
            fields = list(catalog.vertex_schema(entry)) + [pa.field(ROW, pa.int64())]
        return TargetRowsScan(
            logical=node, entry=entry, schema=pa.schema(fields),
            label=f"SCAN {entry.name}.{node.table} (newest version)",
            details=("every row with its identity, read once the writer lock is held"
                     + ("; an undirected edge's two stored copies both" if node.table == "edges"
                        and not entry.directed else ""),))

    def plan_DeleteRows(self, node: DeleteRows) -> DeleteOperator:
        name = node.graph
        what = ("each edge the rows picked stand for, once (both stored copies of an undirected "
                "one)" if node.table == "edges" else
                "the vertices picked" + (" and their edges" if node.detach else
                                         "; one with edges is refused (DETACH deletes them)"))
        return DeleteOperator(logical=node, inputs=self._inputs(node),
                              label=f"{'DETACH ' if node.detach else ''}DELETE FROM "
                                    f"{name}.{node.table}",
                              details=(f"tombstones: {what}", _COMMITS))

    def plan_UpdateRows(self, node: UpdateRows) -> UpdateOperator:
        name = node.graph
        how = ("an edge changed is deleted and inserted again with its new values"
               if node.table == "edges" else "the vertices' properties change in place")
        return UpdateOperator(logical=node, inputs=self._inputs(node),
                              label=f"UPDATE {name}.{node.table}", details=(how, _COMMITS))

    def plan_CreateGraph(self, node: CreateGraph) -> CreateGraphOperator:
        return CreateGraphOperator(logical=node, label=f"CREATE GRAPH {node.graph}")

    def plan_DropGraph(self, node: DropGraph) -> DropGraphOperator:
        return DropGraphOperator(logical=node, label=f"DROP GRAPH {node.graph}")

    def plan_LoadGraph(self, node: LoadGraph) -> LoadGraphOperator:
        sources = [f"{role} {value!r}" if isinstance(value, str) else f"{role} from the query "
                   "below" for role, value in (("edges", node.edges), ("vertices", node.vertices))
                   if value is not None]
        return LoadGraphOperator(
            logical=node, inputs=self._inputs(node),
            label=f"LOAD GRAPH {node.graph}" + (" (replacing it)" if node.replace else ""),
            details=("bulk ingest: " + ", ".join(sources),
                     "visible once its commit lands; a failed load leaves nothing"))

    def plan_CreatePropertyGraph(self, node: CreatePropertyGraph) -> CreatePropertyGraphOperator:
        tables = [f"{t.label or t.name} from {t.name}" for t in node.vertex_tables]
        edges = [f"{t.label or t.name} ({t.source} -> {t.destination})" for t in node.edge_tables]
        return CreatePropertyGraphOperator(
            logical=node, inputs=self._inputs(node),
            label=f"CREATE PROPERTY GRAPH {node.graph}",
            details=("vertex tables: " + ", ".join(tables),
                     "edge tables: " + (", ".join(edges) or "(none)"),
                     "stored as one graph by the bulk ingest, the tables read now"))

    # -- stored tables --------------------------------------------------------------------------
    def _table_details(self, table: str, *checks: str) -> tuple[str, ...]:
        """EXPLAIN's lines of a table write: what it checks, the graphs it reaches, its
        commit."""
        entry = self.snapshot.table(table)
        graphs = graphs_over(self.snapshot.catalog, entry.name)
        return (*checks,
                "records on the table's newest version (the writer lock held)",
                ("property graphs over it, as delta records in the same transaction: "
                 + ", ".join(graphs)) if graphs else "no property graph over it", _COMMITS)

    def _key_check(self, table: str) -> str:
        return self._declared_checks(self.snapshot.table(table))

    @staticmethod
    def _declared_checks(entry) -> str:
        checks = []
        if entry.primary_key:
            checks.append(f"primary key ({', '.join(entry.primary_key)}) through the key index")
        if entry.unique:
            checks.append("UNIQUE " + ", ".join(f"({', '.join(u)})" for u in entry.unique))
        not_null = [c.name for c in entry.columns if not c.nullable
                    and c.name not in entry.primary_key]
        if not_null:
            checks.append(f"NOT NULL {', '.join(not_null)}")
        if entry.checks:
            checks.append("CHECK " + "; ".join(entry.checks))
        if entry.foreign_keys:
            checks.append("FOREIGN KEY " + ", ".join(
                f"({', '.join(fk.columns)}) -> {fk.table}" for fk in entry.foreign_keys))
        return "checks: " + ("; ".join(checks) if checks else "none declared")

    def plan_TableInsert(self, node: TableInsert) -> TableInsertOperator:
        entry = self.snapshot.table(node.table)
        conflict = {None: (), "nothing": ("ON CONFLICT DO NOTHING: rows whose key exists are "
                                          "skipped",),
                    "replace": ("INSERT OR REPLACE: rows whose key exists replace it",),
                    "update": ("ON CONFLICT DO UPDATE SET "
                               + ", ".join(c for c, _ in node.conflict[1]) if node.conflict
                               and node.conflict[0] == "update" else "",)}[
            node.conflict[0] if node.conflict else None]
        return TableInsertOperator(
            logical=node, inputs=self._inputs(node),
            label=f"INSERT INTO TABLE {entry.name}"
                  + (f" ({', '.join(node.columns)})" if node.columns is not None else ""),
            details=self._table_details(node.table, self._key_check(node.table), *conflict))

    def plan_TableDelete(self, node: TableDelete) -> TableDeleteOperator:
        entry = self.snapshot.table(node.table)
        referenced = [other for other in self.snapshot.tables().names()
                      if any(fk.table.lower() == entry.name.lower() for fk in
                             (self.snapshot.tables().find(other) or entry).foreign_keys)
                      and other.lower() != entry.name.lower()]
        return TableDeleteOperator(
            logical=node, inputs=self._inputs(node), label=f"DELETE FROM TABLE {entry.name}",
            details=self._table_details(
                node.table, "the rows picked, by row id" + (
                    "; rows a FOREIGN KEY of " + ", ".join(referenced) + " references are "
                    "refused" if referenced else "")))

    def plan_TruncateTables(self, node: TruncateTables) -> TruncateOperator:
        return TruncateOperator(
            logical=node, label=f"TRUNCATE {', '.join(node.tables)}"
                                f"{' RESTART IDENTITY' if node.restart else ''}",
            details=("every row deleted, the tables that reference others first; rows a FOREIGN "
                     "KEY of a table not truncated references are refused",
                     "the property graphs over them follow in the same transaction", _COMMITS))

    def plan_TableUpdate(self, node: TableUpdate) -> TableUpdateOperator:
        entry = self.snapshot.table(node.table)
        return TableUpdateOperator(
            logical=node, inputs=self._inputs(node),
            label=f"UPDATE TABLE {entry.name} SET {', '.join(node.columns)}",
            details=self._table_details(
                node.table, "a changed row is deleted and appended with its new values",
                self._key_check(node.table)))

    def plan_TableRows(self, node: TableRows) -> TableRowsScan:
        entry = self.snapshot.table(node.table)
        schema = pa.schema(list(entry.schema) + [pa.field(ROW, pa.int64())])
        return TableRowsScan(logical=node, schema=schema,
                             label=f"SCAN {entry.name} (newest version)",
                             details=("every live row with its row id, read once the writer "
                                      "lock is held",))

    def plan_FileRows(self, node: FileRows) -> FileRowsScan:
        return FileRowsScan(logical=node, label=f"READ FILE {node.path}",
                            details=("read by DuckDB: " + node.sql,))

    def plan_CreateTable(self, node: CreateTable) -> CreateTableOperator:
        if node.rows is not None:
            details = ("its columns and types those of the query below, its rows stored as the "
                       "table's first generation",)
        else:
            entry = node.entry
            details = (", ".join(f"{c.name} {c.type}" for c in entry.columns),
                       self._declared_checks(entry))
        return CreateTableOperator(
            logical=node, inputs=self._inputs(node),
            label=f"CREATE {'OR REPLACE ' if node.replace else ''}TABLE "
                  f"{'IF NOT EXISTS ' if node.if_not_exists else ''}{node.table}",
            details=(*details, _COMMITS))

    def plan_DropTable(self, node: DropTable) -> DropTableOperator:
        return DropTableOperator(
            logical=node, label=f"DROP TABLE {'IF EXISTS ' if node.if_exists else ''}"
                                f"{', '.join(node.tables)}",
            details=("refused for a table a property graph is built over or a FOREIGN KEY "
                     "references; its files are freed once no statement reads them", _COMMITS))

    def plan_AlterTable(self, node: AlterTable) -> AlterTableOperator:
        rewrites = any(not isinstance(a, RenameTable) for a in node.actions)
        return AlterTableOperator(
            logical=node, label=f"ALTER TABLE {'IF EXISTS ' if node.if_exists else ''}"
                                f"{node.table}",
            details=(*(str(a) for a in node.actions),
                     "refused for a table a property graph is built over",
                     *(("the live rows rewritten as a new generation, their row ids kept",)
                       if rewrites else ()), _COMMITS))

    def plan_CreateView(self, node: CreateView) -> CreateViewOperator:
        columns = ", ".join(f"{name} {type_}" for name, type_ in node.output)
        return CreateViewOperator(
            logical=node, label=f"CREATE {'OR REPLACE ' if node.replace else ''}VIEW "
                                f"{'IF NOT EXISTS ' if node.if_not_exists else ''}{node.view}",
            details=(columns, "AS " + node.query, _NAMESPACE))

    def plan_DropView(self, node: DropView) -> DropViewOperator:
        return DropViewOperator(
            logical=node, label=f"DROP VIEW {'IF EXISTS ' if node.if_exists else ''}"
                                f"{', '.join(node.views)}", details=(_NAMESPACE,))

    def plan_CreateSchema(self, node: CreateSchema) -> CreateSchemaOperator:
        return CreateSchemaOperator(
            logical=node, label=f"CREATE SCHEMA {'IF NOT EXISTS ' if node.if_not_exists else ''}"
                                f"{node.schema}", details=(_NAMESPACE,))

    def plan_DropSchema(self, node: DropSchema) -> DropSchemaOperator:
        details = ("its tables dropped as DROP TABLE drops them (refused for a table a property "
                   "graph is built over), then its views",) if node.cascade else (
            "refused for a schema with tables or views (CASCADE drops them)",)
        return DropSchemaOperator(
            logical=node, label=f"DROP SCHEMA {'IF EXISTS ' if node.if_exists else ''}"
                                f"{', '.join(node.schemas)}{' CASCADE' if node.cascade else ''}",
            details=(*details, _NAMESPACE))
