"""CREATE/DROP VIEW and CREATE/DROP SCHEMA: the operators of the nodes of
:mod:`graphdb.executor.plan_tables`. Views keep their query's text (expanded where a query names
them); schemas are namespaces for tables and views (``s.t``). Each is stored at once in a commit
of its own (:meth:`graphdb.catalog.tables.store.Tables.put_namespace`), so they are refused
inside BEGIN ... COMMIT; DROP SCHEMA ... CASCADE drops the schema's tables as DROP TABLE does,
in one statement of the session's writer."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from graphdb.catalog import CatalogError
from graphdb.catalog.tables import MAIN, ViewEntry, split_name
from graphdb.catalog.tables.entries import seal_json

from ..errors import InvalidArgument
from ..physical.nodes import PhysicalNode
from .definitions import status_table
from .table_definitions import refuse_if_referenced
from .table_graphs import refuse_if_graph

if TYPE_CHECKING:
    from ..runner import Runner

__all__ = ["CreateSchemaOperator", "CreateViewOperator", "DropSchemaOperator",
           "DropViewOperator"]


def _outside_transaction(runner: "Runner") -> None:
    if runner.writer_for().in_transaction:
        raise InvalidArgument("CREATE/DROP VIEW and SCHEMA run outside a transaction: COMMIT "
                              "or ROLLBACK first")


def _store(runner: "Runner", changes: dict) -> None:
    _outside_transaction(runner)
    runner.catalog.tables.put_namespace(changes)


@dataclass(eq=False, kw_only=True)
class CreateViewOperator(PhysicalNode):
    """Runs :class:`graphdb.executor.plan_tables.CreateView`."""

    reads_data: bool = False

    def run(self, runner: "Runner", metrics: dict) -> pa.Table:
        node = self.logical
        tables = runner.catalog.tables_now()
        existing = tables.find_view(node.view)
        if existing is not None and not node.replace:
            if node.if_not_exists:
                return status_table(f"view '{existing.name}' exists; nothing created")
            raise CatalogError(f"view '{existing.name}' already exists: CREATE OR REPLACE VIEW")
        if tables.find(node.view) is not None:
            raise CatalogError(f"'{node.view}' is a table; a view needs another name")
        changes: dict = {}
        if existing is not None:
            changes[("view", existing.name)] = None
        changes[("view", node.view)] = ViewEntry(node.view, node.query, node.columns,
                                                 node.output).to_json()
        _store(runner, changes)
        return status_table(f"created view '{node.view}'")


@dataclass(eq=False, kw_only=True)
class DropViewOperator(PhysicalNode):
    """Runs :class:`graphdb.executor.plan_tables.DropView`."""

    reads_data: bool = False

    def run(self, runner: "Runner", metrics: dict) -> pa.Table:
        node = self.logical
        tables = runner.catalog.tables_now()
        dropped = []
        for name in node.views:
            view = tables.find_view(name)
            if view is None:
                if node.if_exists:
                    continue
                if tables.find(name) is not None:
                    raise CatalogError(f"'{name}' is a table: DROP TABLE {name}")
                raise CatalogError(f"view '{name}' does not exist")
            dropped.append(view.name)
        if dropped:
            _store(runner, {("view", name): None for name in dropped})
            return status_table("dropped view " + ", ".join(dropped))
        return status_table("no view dropped")


@dataclass(eq=False, kw_only=True)
class CreateSchemaOperator(PhysicalNode):
    """Runs :class:`graphdb.executor.plan_tables.CreateSchema`."""

    reads_data: bool = False

    def run(self, runner: "Runner", metrics: dict) -> pa.Table:
        node = self.logical
        name = node.schema
        known = [s for s in runner.catalog.tables_now().schemas() if s.lower() == name.lower()]
        if known or name.lower() in (MAIN, "information_schema"):
            if node.if_not_exists:
                return status_table(f"schema '{name}' exists; nothing created")
            raise CatalogError(f"schema '{name}' already exists")
        _store(runner, {("schema", name): seal_json({"created": time.time()})})
        return status_table(f"created schema '{name}'")


@dataclass(eq=False, kw_only=True)
class DropSchemaOperator(PhysicalNode):
    """Runs :class:`graphdb.executor.plan_tables.DropSchema`."""

    reads_data: bool = False

    def run(self, runner: "Runner", metrics: dict) -> pa.Table:
        node = self.logical
        _outside_transaction(runner)  # before any table goes
        tables = runner.catalog.tables_now()
        dropped = []
        for name in node.schemas:
            known = [s for s in tables.schemas() if s.lower() == name.lower()]
            if not known:
                if node.if_exists:
                    continue
                raise CatalogError(f"schema '{name}' does not exist")
            schema = known[0]
            inside = [t for t in tables.names() if split_name(t)[0].lower() == schema.lower()]
            views = [v for v in tables.view_names()
                     if split_name(v)[0].lower() == schema.lower()]
            if (inside or views) and not node.cascade:
                raise CatalogError(f"schema '{schema}' is not empty ({', '.join(inside + views)})"
                                   f"; DROP SCHEMA {schema} CASCADE drops them too")
            if inside:
                writer = runner.writer_for()
                with writer.statement():
                    for table in inside:
                        entry = writer.tables.entry(table)
                        refuse_if_graph(runner.catalog, entry.name, "drop")
                        refuse_if_referenced(writer.tables, entry, dropping=inside)
                        writer.tables.drop(entry.name)
            changes = {("view", v): None for v in views}
            changes[("schema", schema)] = None
            _store(runner, changes)
            dropped.append(schema)
        if dropped:
            return status_table("dropped schema " + ", ".join(dropped))
        return status_table("no schema dropped")
