"""One statement's view of the catalog: every graph's entry read once, and held for the
statement, so the binder, the physical planner and the runner agree on the version they use.

The catalog is read through this object only while a statement is planned and run: the entry
of a graph named twice in a query (a join of ``bfs(g, 1)`` with ``g.vertices``) is one entry,
of one version, whatever another connection commits meanwhile. Inside the statement's
:meth:`Catalog.snapshot` (the connection holds one around planning and running) the lookups
read that snapshot, whose lease keeps the versions' data on disk until the statement ends.
"""

from __future__ import annotations

from graphdb.catalog import Catalog, CatalogError, GraphEntry

from .property_graph import PropertySchema

__all__ = ["StatementCatalog"]


class StatementCatalog:
    """The catalog as one statement sees it (``get`` and ``names`` as the catalog's own)."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self._entries: dict[str, GraphEntry] = {}
        self._names: list[str] | None = None
        self._tables: dict[str, object] = {}

    def get(self, name: str) -> GraphEntry:
        entry = self._entries.get(name) or self._entries.get(name.lower())
        if entry is None:
            entry = self.catalog.get(name)
            self._check_tables(entry)
            self._entries[name] = self._entries[entry.name] = entry
            self._entries.setdefault(name.lower(), entry)
        return entry

    def _check_tables(self, entry: GraphEntry) -> None:
        """A property graph whose stored table was replaced (CREATE OR REPLACE TABLE) since it
        was built is not read: it would answer for the old table's rows."""
        schema = PropertySchema.of(entry)
        gone = schema.gone_table(self.find_table) if schema is not None else None
        if gone is not None:
            table, now = gone
            raise CatalogError(
                f"property graph '{entry.name}' was built over table '{table}', which "
                + ("has been dropped since" if now is None else
                   "has been replaced since (CREATE OR REPLACE TABLE)")
                + f": make the graph again over the tables as they are now (CREATE OR REPLACE "
                f"PROPERTY GRAPH {entry.name} ...), or DROP PROPERTY GRAPH {entry.name}")

    def names(self) -> list[str]:
        if self._names is None:
            self._names = self.catalog.names()
        return list(self._names)

    def table(self, name: str):
        """The entry of stored table ``name`` (a :class:`TableEntry`; TableNotFound if none)."""
        entry = self._tables.get(name.lower())
        if entry is None:
            entry = self._tables[name.lower()] = self.catalog.table(name)
        return entry

    def find_table(self, name: str):
        """The entry of stored table ``name``, or None."""
        entry = self._tables.get(name.lower())
        if entry is None:
            entry = self.catalog.tables_now().find(name)
            if entry is not None:
                self._tables[name.lower()] = entry
        return entry

    def tables(self):
        """The statement's view of the tables, views and schemas (a TableSnapshot)."""
        return self.catalog.tables_now()

    @property
    def entries(self) -> list[GraphEntry]:
        """The entries this statement has looked up."""
        return list({id(e): e for e in self._entries.values()}.values())
