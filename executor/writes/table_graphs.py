"""A write to a table reaches the property graphs built over it, in the same transaction.

The table's statement hands over the rows it deleted and appended (each with its row id,
:mod:`.table_rows`); for every graph over the table they become delta records
of the graph (:mod:`graphdb.catalog.delta`) on its writer, committed together with the
table's:

- a vertex table's rows: a key that goes is a vertex deleted, a key that comes a vertex added
  (its id :func:`~graphdb.executor.property_graph.encode_keys` of the key), a key that is
  deleted and appended by one statement (an UPDATE) a vertex whose properties change;
- an edge table's rows: a row deleted is its edge deleted (found by its row id, stored with
  the edge), a row appended an edge added between the vertices its key columns name.

The graph keeps its tables' references whole, as foreign keys would: an edge row naming a key
no row of the referenced vertex table has, a vertex row deleted (or its key changed) while
edge rows still reference it, and a vertex key that is in the vertex table twice are refused
with a :class:`~graphdb.executor.errors.ConstraintViolation` (IntegrityError) naming the graph, and the statement changes
nothing. The counts of the graph's element tables (their id ranges) move with the records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from graphdb.catalog import CatalogError
from graphdb.catalog.delta import Op
from graphdb.storage.lazy import pc

from ..delta import DeltaGraph
from ..errors import ConstraintViolation as IntegrityError
from ..property_expressions import with_computed
from ..property_graph import PROPERTY_GRAPH, PropertySchema, encode_keys
from .property_graph import ROW

if TYPE_CHECKING:
    from graphdb.catalog.tables import TableEntry
    from graphdb.catalog.writer import Writer

    from ..runner import Runner

__all__ = ["ROW_ID", "apply_table_change", "graphs_over", "refuse_if_graph", "table_changed"]

#: The hidden column of a stored table's rows that holds each row's row id.
ROW_ID = "__graphdb_row"


def graphs_over(catalog, table: str) -> list[str]:
    """The property graphs built over stored table ``table``, as they are now (a graph one of
    whose tables was replaced or dropped since it was built is over none: it is not read or
    changed again, only made anew or dropped)."""
    table = table.lower()
    found = []
    for entry in catalog.entries():
        if table in _source_tables(entry):
            schema = PropertySchema.of(entry)
            if schema is None or schema.gone_table(catalog.tables_now().find) is None:
                found.append(entry.name)
    return found


#: The stored tables of a property graph, by its entry's schema (the same dict object as long
#: as the entry is: entries are parsed once per stored version), the dict kept alive with them.
_SOURCES: dict[int, tuple[dict, frozenset]] = {}


def _source_tables(entry) -> frozenset:
    data = (entry.stats or {}).get(PROPERTY_GRAPH)
    if not isinstance(data, dict):
        return frozenset()
    known = _SOURCES.get(id(data))
    if known is None or known[0] is not data:
        schema = PropertySchema.of(entry)
        known = (data, frozenset(schema.source_tables()) if schema is not None else frozenset())
        if len(_SOURCES) >= 256:
            _SOURCES.clear()
        _SOURCES[id(data)] = known
    return known[1]


def refuse_if_graph(catalog, table: str, what: str) -> None:
    """A table a property graph is built over cannot be dropped or altered. It may be
    replaced (CREATE OR REPLACE TABLE): the graph is then over a table that is no more, and
    refuses to be read until it is made again over the new one (a graph stored before graphs
    knew when their tables were made refuses the replace instead)."""
    graphs = graphs_over(catalog, table)
    if what == "replace":
        graphs = [g for g in graphs if not PropertySchema.of(catalog.get(g)).table_created]
    if graphs:
        raise CatalogError(f"cannot {what} table '{table}': property graph "
                           f"{', '.join(repr(g) for g in graphs)} is built over it; DROP "
                           f"PROPERTY GRAPH {graphs[0]} first")


def table_changed(runner: "Runner", writer: "Writer", before: "TableEntry", after: "TableEntry",
                  appended: pa.Table | None, deleted: pa.Table | None) -> None:
    """``before`` became ``after`` by appending ``appended`` and deleting ``deleted`` (rows
    with their row ids): the graphs over the table get the same change."""
    graphs = graphs_over(runner.catalog, after.name)
    if graphs:
        apply_table_change(runner, writer, after, graphs, appended, deleted)


def apply_table_change(runner: "Runner", writer: "Writer", table: "TableEntry",
                       graphs: list[str], appended: pa.Table | None,
                       deleted: pa.Table | None) -> None:
    """The change of ``table`` (``deleted`` then ``appended`` rows, each with its row id in
    the column ``__graphdb_row``) made to each of ``graphs`` in the open transaction."""
    for name in graphs:
        _Change(runner, writer, name, table.name).apply(deleted, appended)


def _keys(rows: pa.Table, column: str) -> pa.Array:
    """A column of table rows (the key of a table without one: the rows' ids)."""
    values = rows.column(ROW_ID if column == ROW else column)
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


class _Change:
    def __init__(self, runner: "Runner", writer: "Writer", graph: str, table: str):
        self.runner = runner
        self.writer = writer
        self.entry = self.writer.entry(graph)
        self.schema = PropertySchema.of(self.entry)
        self.table = table.lower()
        self.log = self.writer.log(self.entry)
        self.vertex_counts: dict[str, int] = {}
        self.edge_counts: dict[str, int] = {}

    def apply(self, deleted: pa.Table | None, appended: pa.Table | None) -> None:
        schema = self.schema
        computed = {name: sql for item in (*schema.vertex_labels, *schema.edge_labels)
                    if item.table.lower() == self.table for name, sql in item.computed}
        if computed and appended is not None and appended.num_rows:
            appended = with_computed(self.runner.sql, appended, tuple(computed.items()))
        for e in schema.edge_labels:
            if e.table.lower() == self.table and deleted is not None and deleted.num_rows:
                self._delete_edges(e, deleted)
        for index, v in enumerate(schema.vertex_labels):
            if v.table.lower() == self.table:
                self._vertices(index, v, deleted, appended)
        for e in schema.edge_labels:
            if e.table.lower() == self.table and appended is not None and appended.num_rows:
                self._add_edges(e, appended)

    # -- vertices -------------------------------------------------------------------------------
    def _ids(self, index: int, keys: pa.Array) -> pa.Array:
        return encode_keys(self.schema, index, keys)

    def _vertices(self, index: int, v, deleted: pa.Table | None,
                  appended: pa.Table | None) -> None:
        key_column = v.column_of(v.key)
        gone = _keys(deleted, key_column) if deleted is not None and deleted.num_rows else None
        come = _keys(appended, key_column) if appended is not None and appended.num_rows \
            else None
        if come is not None and come.null_count:
            raise IntegrityError(f"property graph '{self.entry.name}': a row of {v.table} has "
                                 f"no key ({key_column} is NULL)")
        kept = set()
        if gone is not None and come is not None:  # an UPDATE: the keys in both stay
            kept = set(gone.to_pylist()) & set(come.to_pylist())
        if gone is not None:
            leaving = gone.filter(pa.array([k not in kept for k in gone.to_pylist()])) \
                if kept else gone
            if len(leaving):
                self._delete_vertices(index, v, leaving)
        if come is not None:
            if kept:
                mask = np.array([k in kept for k in come.to_pylist()], dtype=bool)
                self._update_vertices(index, v, appended.filter(pa.array(mask)))
                appended = appended.filter(pa.array(~mask))
            if appended.num_rows:
                self._add_vertices(index, v, appended)

    def _dense(self, index: int, keys: pa.Array) -> np.ndarray:
        return self.log.resolve(self._ids(index, keys))

    def _delete_vertices(self, index: int, v, keys: pa.Array) -> None:
        dense = self._dense(index, keys)
        dense = dense[dense >= 0]
        if not dense.size:
            return
        degrees = self._degrees(dense)
        if degrees.any():
            at = int(np.flatnonzero(degrees)[0])
            key = keys[at].as_py() if at < len(keys) else None
            raise IntegrityError(
                f"property graph '{self.entry.name}': vertex {v.shown} {key!r} still has "
                f"{int(degrees[at])} edge(s); delete the rows of its edge tables that reference "
                f"it first (the graph keeps its edges' ends)")
        self.vertex_counts[v.name] = self.vertex_counts.get(v.name, 0) - int(dense.size)
        self._op("delete_vertices", pa.table({"vertex": pa.array(dense, pa.int64())}))

    def _degrees(self, dense: np.ndarray) -> np.ndarray:
        """Edges at each of these vertices (dense ids) in the transaction's version."""
        entry = self.entry
        graph = self.runner.graph(entry)
        view = dense if not entry.changed else self.runner.catalog.versions.view(entry).lut[dense]
        out = graph.csr("out").offsets
        degrees = out[view + 1] - out[view]
        if entry.directed:
            inward = graph.csr("in").offsets
            degrees = degrees + inward[view + 1] - inward[view]
        return np.asarray(degrees)

    def _properties(self, v, rows: pa.Table) -> dict[str, pa.Array]:
        """The stored vertex columns of ``v``'s properties from table rows."""
        return {PropertySchema.column(v.name, prop): _keys(rows, v.column_of(prop))
                for prop in v.properties}

    def _add_vertices(self, index: int, v, rows: pa.Table) -> None:
        keys = _keys(rows, v.column_of(v.key))
        ids = self._ids(index, keys)
        if pc.count_distinct(ids).as_py() != len(ids) or (self.log.resolve(ids) >= 0).any():
            raise IntegrityError(f"property graph '{self.entry.name}': key {v.key} of "
                                 f"{v.table} would name two vertices (its values must be "
                                 "unique)")
        schema = self.log.vertex_schema
        given = self._properties(v, rows)
        given["label"] = pa.repeat(pa.scalar(v.name), len(ids)).cast(pa.string())
        columns = [ids.cast(schema.field("id").type)]
        for field in schema:
            if field.name == "id":
                continue
            value = given.get(field.name)
            columns.append(pa.nulls(len(ids), field.type) if value is None
                           else value.cast(field.type))
        self.vertex_counts[v.name] = self.vertex_counts.get(v.name, 0) + len(ids)
        self._op("add_vertices", pa.table(columns, schema=schema))

    def _update_vertices(self, index: int, v, rows: pa.Table) -> None:
        dense = self._dense(index, _keys(rows, v.column_of(v.key)))
        keep = dense >= 0
        if not keep.any():
            return
        rows = rows.filter(pa.array(keep))
        schema = self.log.vertex_schema
        given = self._properties(v, rows)
        columns = {"vertex": pa.array(dense[keep], pa.int64())}
        for name, values in given.items():
            columns[name] = values.cast(schema.field(name).type)
        self._op("update_vertices", pa.table(columns))

    # -- edges ----------------------------------------------------------------------------------
    def _edge_rows(self) -> tuple[pa.Table, np.ndarray]:
        """(stored edge properties, the origin of each) of the transaction's version."""
        entry = self.entry
        graph = self.runner.graph(entry)
        if isinstance(graph, DeltaGraph):
            return graph.edge_properties(), graph.origin()
        return self.runner.catalog.edge_properties(entry), np.arange(entry.num_edges,
                                                                   dtype=np.int64)

    def _delete_edges(self, e, rows: pa.Table) -> None:
        props, origin = self._edge_rows()
        if props is None or not props.num_rows:
            return
        mask = pc.and_(pc.equal(props.column("label"), e.name),
                       pc.is_in(props.column(ROW), value_set=_keys(rows, ROW)))
        hit = np.asarray(mask.fill_null(False).combine_chunks().to_numpy(zero_copy_only=False))
        positions = np.unique(origin[hit])
        if not positions.size:
            return
        row_ids = props.column(ROW).combine_chunks().to_numpy(zero_copy_only=False)
        # an undirected edge's two stored copies both go, and count once
        deleted_base = int(np.unique(row_ids[hit & (origin >= 0)]).size)
        self.edge_counts[e.name] = self.edge_counts.get(e.name, 0) - int(
            np.unique(row_ids[hit]).size)
        self._op("delete_edges", pa.table({"edge": pa.array(positions, pa.int64())}),
                 deleted_base)

    def _add_edges(self, e, rows: pa.Table) -> None:
        schema = self.schema
        ends = []
        for column, element in ((e.source_key, e.source), (e.destination_key, e.destination)):
            index = next(i for i, v in enumerate(schema.vertex_labels) if v.name == element)
            vertex = schema.vertex_labels[index]
            keys = _keys(rows, column)
            dense = self._dense(index, keys) if not keys.null_count else None
            if dense is None or (dense < 0).any():
                missing = keys.filter(pc.is_null(keys))[0].as_py() if dense is None else \
                    keys[int(np.flatnonzero(dense < 0)[0])].as_py()
                raise IntegrityError(
                    f"property graph '{self.entry.name}': edge table {e.table} names "
                    f"{column} {missing!r}, which is no key of vertex table {vertex.table} "
                    "(the graph keeps its edges' ends: insert that vertex first)")
            ends.append(dense)
        edge_schema = self.log.edge_schema
        given = {PropertySchema.column(e.name, prop): _keys(rows, e.column_of(prop))
                 for prop in e.properties}
        given["label"] = pa.repeat(pa.scalar(e.name), rows.num_rows).cast(pa.string())
        given[ROW] = _keys(rows, ROW)
        columns = {"src": pa.array(ends[0], pa.int64()), "dst": pa.array(ends[1], pa.int64())}
        for field in edge_schema:
            value = given.get(field.name)
            columns[field.name] = pa.nulls(rows.num_rows, field.type) if value is None \
                else value.cast(field.type)
        self.edge_counts[e.name] = self.edge_counts.get(e.name, 0) + rows.num_rows
        self._op("add_edges", pa.table(columns))

    def _op(self, kind: str, table: pa.Table, deleted_base: int = 0) -> None:
        """Apply one operation now (the next ones resolve ids against it), with the element
        tables' counts as they stand after it."""
        stats = dict(self.entry.stats)
        stats["property_graph"] = self.schema.with_counts(self.vertex_counts,
                                                          self.edge_counts).to_json()
        self.entry = self.writer.apply(self.entry, [Op(kind, table)],
                                       deleted_base_edges=deleted_base, stats=stats)
