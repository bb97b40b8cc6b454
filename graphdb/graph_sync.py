"""Property graphs over tables stay in step with them: a table's write becomes delta records
of every graph built on it, in the same transaction (see :func:`table_changed`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from graphdb.catalog.tables import TableEntry

    from .session import Session

__all__ = ["graphs_over", "table_changed"]


def graphs_over(session: "Session", table: str) -> list[str]:
    """The property graphs built over stored table ``table``."""
    from graphdb.executor.property_graph import PropertySchema

    found = []
    for entry in session.catalog.entries():
        schema = PropertySchema.of(entry)
        if schema is not None and table.lower() in schema.source_tables():
            found.append(entry.name)
    return found


def table_changed(session: "Session", before: "TableEntry", after: "TableEntry",
                  appended: pa.Table | None, deleted: pa.Table | None) -> None:
    """``before`` became ``after`` by appending ``appended`` and deleting ``deleted`` (rows
    with their row ids): the graphs over the table get the same change."""
    graphs = graphs_over(session, after.name)
    if not graphs:
        return
    from .graph_writes import apply_table_change

    apply_table_change(session, after, graphs, appended, deleted)
