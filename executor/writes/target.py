"""The graph a write statement changes, at its newest version, and the rows it picks from.

On an undirected graph each edge is stored in both directions; its rows (:meth:`Target.edge_rows`)
show both copies, and a WHERE that matches either deletes (or changes) the edge once: both stored
copies go (:mod:`.delete`).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from graphdb.catalog import CatalogError, GraphEntry
from graphdb.catalog.delta import Op
from graphdb.storage.lazy import pc

from ..cancel import check_cancelled, import_first
from ..delta import DeltaGraph
from ..errors import InvalidArgument, StatementMismatch
from ..physical.nodes import PhysicalNode
from ..plan import CANONICAL, ROW

if TYPE_CHECKING:
    from graphdb.catalog.writer import Writer

    from ..runner import Runner

__all__ = ["Target", "TargetRowsScan", "WriteRowsScan", "cast_column", "property_graph_refusal",
           "reading", "table_columns"]


def property_graph_refusal(entry: GraphEntry) -> str | None:
    """Why writes to ``entry``'s tables are refused (None: they are not)."""
    if "property_graph" in entry.stats:  # (its labels, keys and tables are not kept)
        return (f"'{entry.name}' is a property graph: writes to its labelled tables are not "
                "supported yet; CREATE OR REPLACE PROPERTY GRAPH stores it anew")
    return None


def _weight_name(entry: GraphEntry) -> str | None:
    return entry.stats.get("weight_column") or "weight" if entry.weighted else None


def table_columns(catalog, entry: GraphEntry, table: str) -> list[str]:
    """The columns of ``g.edges`` (src, dst, the weight, the properties) or ``g.vertices`` (id,
    the properties) a write names, from the graph's delta log (kept per generation: no file is
    read per statement)."""
    log = catalog.versions.log(entry)
    if table == "vertices":
        return list(log.vertex_schema.names)
    weight = _weight_name(entry)
    return ["src", "dst"] + ([weight] if weight else []) + \
        list((log.edge_schema or pa.schema([])).names)


class Target:
    """The graph a statement writes to, at its newest version (the writer lock is held)."""

    def __init__(self, runner: "Runner", writer: "Writer", name: str, table: str):
        import_first()  # what a process's first write imports, where an interrupt reaches it
        self.runner = runner
        self.catalog = runner.catalog
        self.writer = writer
        self.entry = writer.entry(name)
        refusal = property_graph_refusal(self.entry)
        if refusal is not None:
            raise StatementMismatch(refusal)
        self.name = self.entry.name
        self.table = table
        self.log = writer.log(self.entry)
        self.weight_name = _weight_name(self.entry)
        self.edge_props = self.log.edge_schema or pa.schema([])
        self.vertex_schema = self.log.vertex_schema
        self.id_type = pa.string() if self.entry.id_type == "string" else pa.int64()

    @property
    def graph(self):
        return self.runner.graph(self.entry)

    def columns(self) -> list[str]:
        return table_columns(self.catalog, self.entry, self.table)

    def column(self, name: str) -> str:
        """The table's spelling of column ``name`` (SQL names are case-insensitive)."""
        for column in self.columns():
            if column.lower() == name.lower():
                return column
        raise StatementMismatch(f"{self.name}.{self.table} has no column '{name}' (columns: "
                                f"{', '.join(self.columns())})")

    def apply(self, ops: list[Op], deleted_base_edges: int = 0) -> None:
        if ops:
            self.entry = self.writer.apply(self.entry, ops,
                                           deleted_base_edges=deleted_base_edges)

    # -- rows with their identity ---------------------------------------------------------------
    def rows(self) -> pa.Table:
        """The rows a WHERE picks from (:class:`graphdb.executor.plan.TargetRows`)."""
        return self.edge_rows() if self.table == "edges" else self.vertex_rows()

    def edge_rows(self) -> pa.Table:
        """The graph's stored edges (both directions of an undirected one), each with its
        origin (:data:`ROW`) and whether it is the copy from the smaller endpoint."""
        graph = self.graph
        entry = self.entry
        csr = graph.csr("out", weights=entry.weighted)
        ids = self.runner.vertex_ids(entry)
        sources = csr.sources()
        columns = {"src": ids.user(sources), "dst": ids.user(csr.targets)}
        if entry.weighted:
            columns[self.weight_name] = pa.array(csr.weights, pa.float64())
        table = pa.table(columns)
        if isinstance(graph, DeltaGraph):
            props, origin = graph.edge_properties(), graph.origin()
        else:
            props = self.catalog.edge_properties(entry)
            origin = np.arange(entry.num_edges, dtype=np.int64)
        if props is not None:
            for field, column in zip(props.schema, props.columns):
                table = table.append_column(field, column)
        table = table.append_column(ROW, pa.array(origin, pa.int64()))
        return table.append_column(CANONICAL, pa.array(sources <= csr.targets))

    def vertex_rows(self) -> pa.Table:
        table = self.runner.graph_table(self.entry, "vertices")
        if self.entry.changed:
            dense = self.catalog.versions.view(self.entry).inv
        else:
            dense = np.arange(self.entry.num_vertices, dtype=np.int64)
        return table.append_column(ROW, pa.array(dense, pa.int64()))

    def dense_of(self, ids: pa.Array, *, create: bool, ops: list[Op]) -> np.ndarray:
        """Dense ids of the user's ids; with ``create``, ids that are no vertex yet are added
        as new vertices (an operation appended to ``ops``), else -1 for them."""
        dense = self.log.resolve(ids)
        check_cancelled()  # (reads only so far: a million ids take a second or two)
        missing = dense < 0
        if create and missing.any():
            absent = ids.filter(pa.array(missing))
            if isinstance(absent, pa.ChunkedArray):  # one dictionary for all of them
                absent = absent.combine_chunks()
            # one hashing pass (not unique, then index_in): the new ids and each absent id's
            # index among them (a million ids: ~0.3 s less, uncancellable); then in id order: a
            # version whose new ids follow the older ones in the order they were added is read
            # without a merge (graphdb.executor.overlay)
            encoded = pc.dictionary_encode(absent)
            order = np.asarray(pc.sort_indices(encoded.dictionary), dtype=np.int64)
            new = encoded.dictionary.take(pa.array(order))
            rank = np.empty(order.size, dtype=np.int64)
            rank[order] = np.arange(order.size, dtype=np.int64)
            check_cancelled()
            props = [pa.nulls(len(new), f.type) for f in self.vertex_schema if f.name != "id"]
            names = [f.name for f in self.vertex_schema if f.name != "id"]
            ops.append(Op("add_vertices", pa.table([new] + props, names=["id"] + names)))
            start = self.log.next_vertex
            dense[missing] = start + rank[np.asarray(encoded.indices, dtype=np.int64)]
        return dense

    # -- values ---------------------------------------------------------------------------------
    def ids(self, rows: pa.Table, name: str) -> pa.Array:
        """Column ``name`` of ``rows`` as vertex ids of the graph's type (never NULL)."""
        column = rows.column(name)
        if self.id_type == pa.int64() and (pa.types.is_floating(column.type)
                                           or pa.types.is_string(column.type)):
            raise InvalidArgument(f"{self.name}: vertex ids are integers; {name} holds "
                                  f"{column.slice(0, 3).to_pylist()!r}")
        ids = cast_column(column, self.id_type, name, self.name)
        if ids.null_count:
            raise InvalidArgument(f"{self.name}: {name} is NULL in a row; every edge and vertex "
                                  "needs an id")
        return ids

    def properties(self, rows: pa.Table, schema: pa.Schema) -> list[pa.Array]:
        """The columns of ``schema`` from ``rows`` (cast to their types; NULL where absent)."""
        n = rows.num_rows
        return [cast_column(rows.column(f.name), f.type, f.name, self.name) if f.name in
                rows.column_names else pa.nulls(n, f.type) for f in schema]


def cast_column(column, type_: pa.DataType, name: str, graph: str) -> pa.Array:
    """``column`` as ``type_``: InvalidArgument naming the column when it cannot be."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if column.type == type_:
        return column
    try:
        return column.cast(type_)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        sample = column.slice(0, 3).to_pylist()
        if pa.types.is_decimal(column.type):  # integers past 64 bits, read exactly
            sample = [None if v is None else int(v) for v in sample]
        raise InvalidArgument(f"{graph}: column {name} is {type_}; cannot store {sample!r} "
                              "in it") from None


@dataclass(eq=False, kw_only=True)
class WriteRowsScan(PhysicalNode):
    """The rows a DELETE or UPDATE picks from, read from ``target`` (which the write sets once
    it holds the writer lock: :func:`reading`). ``schema`` is their columns as planned
    (EXPLAIN's empty input)."""

    schema: pa.Schema
    target: Any = None

    def output_schema(self) -> pa.Schema:
        return self.schema

    def run(self, runner: "Runner", metrics: dict) -> pa.Table:
        if self.target is None:
            raise CatalogError("the rows of a write are read only inside it")
        return self.target.rows()


@contextlib.contextmanager
def reading(node: PhysicalNode, target):
    """The :class:`WriteRowsScan` below ``node`` read ``target``'s rows (its ``rows()``)
    while the write's input is computed."""
    scans = [n for n in node.walk() if isinstance(n, WriteRowsScan)]
    for scan in scans:
        scan.target = target
    try:
        yield target
    finally:
        for scan in scans:
            scan.target = None


@dataclass(eq=False, kw_only=True)
class TargetRowsScan(WriteRowsScan):
    """The rows of a graph's ``g.edges`` or ``g.vertices`` a write picks from."""

    entry: GraphEntry
