"""Property graphs: several vertex and edge types (labels) in one stored graph.

A property graph (``CREATE PROPERTY GRAPH``, or ``graphdb ingest`` with several vertex and edge
files) is stored as one graph: one CSR over every vertex and edge, whichever its label, so that
every graph operator runs on it, or on the part of it some labels give, unchanged. What makes it
a property graph is its schema, kept in its catalog entry (``stats["property_graph"]``, written
by the ingest that stored it):

- vertex labels in order, each with its key column, the key's type, its properties and its
  range of internal ids: label L's vertices are ids ``start .. start + count - 1``, in ascending
  order of their keys (so a label's ids ascend with its keys, as a graph's do);
- edge labels, each with the labels of its sources and destinations, the columns the edge table
  referenced them by, and its properties;
- whether edges are undirected (the whole graph's direction, as for any graph).

The stored vertex table has ``id`` (the internal id: identity), ``label``, and one column per
(label, property) named ``Label.property``, NULL outside that label's vertices; the stored edge
properties likewise ``label`` and ``label.property``. Property names of different labels never
collide, whatever their types.

The user's ids are the labels' keys: typed by the label's key column where the vertices in
question have one label (``bfs(GRAPH social LABELS (Person, knows), 42)``), ``'Label:key'``
strings where they have several (a whole graph of persons and companies).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np
import pyarrow as pa

from graphdb.storage.lazy import pc

from .arrays import to_arrow
from .errors import InvalidArgument
from .ids import VertexIds

__all__ = ["EdgeLabel", "PROPERTY_GRAPH", "PropertySchema", "ROW", "ROW_LABELS", "VertexLabel", "describe_rows",
           "encode_keys",
           "edge_label_table", "label_column", "label_ids", "label_table_columns",
           "label_weights", "vertex_row_ids",
           "user_id_type", "vertex_label_table", "visible"]

#: The key of a property graph's schema in its catalog entry's stats.
PROPERTY_GRAPH = "property_graph"


#: The hidden property of a row's identity, its row id in its table (``x.rowid``): every edge
#: and every vertex has it, and it is the key of a vertex table that has none.
ROW = "__row"
#: The hidden property of the bits that give a row its labels (``LABEL l IN column (...)``).
ROW_LABELS = "__row_labels"


@dataclass(frozen=True)
class VertexLabel:
    """A vertex element table: its ``name`` (unique in the graph: the stored columns and the
    ``label`` column use it), the table it came from, its key property, the properties, its
    range of internal ids (``start``, ``count``: this version's), its ``labels`` (SQL/PGQ's:
    a table may have several; () means its name) and the table column each property reads
    (``columns``; () means the properties' own names)."""

    name: str
    table: str
    key: str
    key_type: str
    properties: tuple[str, ...]
    start: int
    count: int
    labels: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    #: labels a column's value gives each row (DuckPGQ's ``LABEL Person IN kind (Student,
    #: Teacher)``): a pattern naming one matches the rows with its bit set
    row_labels: tuple[str, ...] = ()
    #: the property holding the bits that give a row its ``row_labels`` (label i: bit i)
    row_label_property: str = ""
    #: (hidden column, expression) of the properties that are expressions over the row
    #: (:mod:`graphdb.executor.property_expressions`)
    computed: tuple = ()

    @property
    def label_names(self) -> tuple[str, ...]:
        return self.labels or (self.name,)

    @property
    def shown(self) -> str:
        """How its vertices' ids name it (``'Person:42'``): its first label."""
        return self.label_names[0]

    def column_of(self, prop: str) -> str:
        """The table column property ``prop`` reads."""
        return dict(zip(self.properties, self.columns or self.properties)).get(prop, prop)


@dataclass(frozen=True)
class EdgeLabel:
    """An edge element table (see :class:`VertexLabel`): the vertex elements of its sources and
    destinations and the table columns holding their keys."""

    name: str
    table: str
    source: str
    destination: str
    source_key: str
    destination_key: str
    properties: tuple[str, ...]
    count: int
    labels: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    computed: tuple = ()

    @property
    def label_names(self) -> tuple[str, ...]:
        return self.labels or (self.name,)

    def column_of(self, prop: str) -> str:
        return dict(zip(self.properties, self.columns or self.properties)).get(prop, prop)


def _find(items, name: str, what: str):
    found = [i for i in items if i.name == name] or [
        i for i in items if i.name.lower() == name.lower()]
    if not found:  # the one element with that label
        found = [i for i in items if name.lower() in (n.lower() for n in i.label_names)]
        found = found if len(found) == 1 else []
    if not found:
        known = ", ".join(i.name for i in items) or "none"
        raise InvalidArgument(f"no {what} label '{name}' (labels: {known})")
    return found[0]


@dataclass(frozen=True)
class PropertySchema:
    vertex_labels: tuple[VertexLabel, ...]
    edge_labels: tuple[EdgeLabel, ...]
    undirected: bool = False
    #: the stored tables the graph is built over, as named when it was created (lower case);
    #: writes to them reach the graph (empty for a graph stored from files or data frames)
    tables: tuple[str, ...] = ()
    #: what a vertex's stored ``id`` is: ``index`` (its internal id; graphs stored before
    #: writes reached property graphs), ``key`` (the key of the graph's one vertex table, an
    #: integer), ``composite`` (:func:`encode_keys`: the element's place and its key, as text
    #: that sorts by element, then by key)
    id_mode: str = "index"
    #: when each of ``tables`` was created (its ``created``, which CREATE OR REPLACE TABLE
    #: renews): a table replaced since is no longer the one the graph was built over. Empty
    #: for graphs stored before this was kept (their tables cannot be replaced)
    table_created: tuple[float, ...] = ()

    def source_tables(self) -> set[str]:
        return {t.lower() for t in self.tables}

    def built_over(self, table: str, created: float) -> bool | None:
        """Whether stored table ``table`` (created at ``created``) is the one the graph was
        built over: False once it was replaced, None where the graph does not know."""
        if len(self.table_created) != len(self.tables):
            return None
        for name, when in zip(self.tables, self.table_created):
            if name.lower() == table.lower():
                return when == created
        return None

    def gone_table(self, find: Callable[[str], Any]) -> tuple[str, Any] | None:
        """(name, its entry now: None when dropped) of the first of the graph's tables that
        was dropped or replaced since the graph was built (``find``: a table's entry by
        name, or None); None while the graph is over the tables it was built over."""
        if len(self.table_created) != len(self.tables):
            return None
        for name, when in zip(self.tables, self.table_created):
            now = find(name)
            if now is None or now.created != when:
                return name, now
        return None

    # -- stored form ----------------------------------------------------------------------------
    def to_json(self) -> dict:
        def plain(item) -> dict:
            return {k: (list(v) if isinstance(v, tuple) else v) for k, v in item.__dict__.items()}

        return {"vertex_labels": [plain(v) for v in self.vertex_labels],
                "edge_labels": [plain(e) for e in self.edge_labels],
                "undirected": self.undirected, "tables": list(self.tables),
                "id_mode": self.id_mode, "table_created": list(self.table_created)}

    @classmethod
    def of(cls, entry: Any) -> "PropertySchema | None":
        """The schema of a graph version (None: a graph of one vertex and one edge type)."""
        data = (getattr(entry, "stats", None) or {}).get(PROPERTY_GRAPH)
        if not isinstance(data, dict):
            return None
        def tuples(item: dict) -> dict:
            return {k: (tuple(v) if isinstance(v, list) else v) for k, v in item.items()}

        return cls(tuple(VertexLabel(**tuples(v)) for v in data["vertex_labels"]),
                   tuple(EdgeLabel(**tuples(e)) for e in data["edge_labels"]),
                   bool(data.get("undirected", False)), tuple(data.get("tables", ())),
                   data.get("id_mode", "index"), tuple(data.get("table_created", ())))

    # -- lookups --------------------------------------------------------------------------------
    def vertex_label(self, name: str) -> VertexLabel:
        return _find(self.vertex_labels, name, "vertex")

    def edge_label(self, name: str) -> EdgeLabel:
        return _find(self.edge_labels, name, "edge")

    def is_label(self, name: str) -> bool:
        lower = name.lower()
        return any(label.name.lower() == lower or lower in (n.lower() for n in label.label_names)
                   for label in self.vertex_labels + self.edge_labels)

    def element_of(self, name: str):
        """The vertex or edge element named ``name``, or the one element with label ``name``
        (None when there is none, or several)."""
        items = self.vertex_labels + self.edge_labels
        found = [i for i in items if i.name == name] or [
            i for i in items if i.name.lower() == name.lower()]
        if found:
            return found[0]
        found = [i for i in items if name.lower() in (n.lower() for n in i.label_names)]
        return found[0] if len(found) == 1 else None

    def with_counts(self, vertex_counts: dict[str, int], edge_counts: dict[str, int]
                    ) -> "PropertySchema":
        """This schema with the elements' counts changed by ``vertex_counts`` / ``edge_counts``
        (deltas by element name) and the vertex ranges moved to fit."""
        vertices, start = [], 0
        for v in self.vertex_labels:
            count = v.count + vertex_counts.get(v.name, 0)
            vertices.append(replace(v, start=start, count=count))
            start += count
        edges = tuple(replace(e, count=e.count + edge_counts.get(e.name, 0))
                      for e in self.edge_labels)
        return replace(self, vertex_labels=tuple(vertices), edge_labels=edges)

    @staticmethod
    def column(label: str, prop: str) -> str:
        """The stored column of property ``prop`` of label ``label``."""
        return f"{label}.{prop}"

    def vertex_columns(self, labels: tuple[str, ...], prop: str) -> tuple[str, ...]:
        """The stored columns of property ``prop`` over the vertex labels ``labels`` (those of
        them that have it)."""
        return tuple(self.column(v.name, p) for v in map(self.vertex_label, labels)
                     for p in v.properties if p.lower() == prop.lower())

    def edge_columns(self, labels: tuple[str, ...], prop: str) -> tuple[str, ...]:
        return tuple(self.column(e.name, p) for e in map(self.edge_label, labels)
                     for p in e.properties if p.lower() == prop.lower())

    def vertex_mask(self, labels: tuple[str, ...], n: int) -> np.ndarray:
        """Which vertices have one of ``labels`` (bool per internal id): their ranges."""
        mask = np.zeros(n, dtype=bool)
        for label in map(self.vertex_label, labels):
            mask[label.start:label.start + label.count] = True
        return mask

    def ids(self, vertices: pa.Table, labels: tuple[str, ...] | None = None,
            graph: str = "graph") -> VertexIds:
        """The user's ids of the vertices with ``labels`` (None: every label), in internal order
        (see :func:`label_ids`), of graph ``graph`` (named in errors)."""
        chosen = tuple(self.vertex_labels) if labels is None else tuple(
            self.vertex_label(name) for name in labels)
        chosen = tuple(sorted(chosen, key=lambda v: v.start))
        return label_ids(vertices, chosen, graph)


#: Integer keys in composite ids: offset to be non-negative, as 20 digits (text order = order).
_OFFSET = 1 << 63


def encode_keys(schema: "PropertySchema", element: int, keys: pa.Array) -> pa.Array:
    """The stored ids of vertices of vertex element ``element`` (its place among the vertex
    elements) with these keys: the keys themselves (``id_mode`` key) or ``'%04d:' % element``
    followed by the key as text that sorts as the keys do (integers as 20 digits after an
    offset), so that a graph's vertices sort by element, then key, and an element's vertices
    are one range of internal ids however many are added later."""
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    if schema.id_mode == "key":
        return keys.cast(pa.int64())
    if pa.types.is_integer(keys.type):
        values = np.asarray(keys.cast(pa.int64()).fill_null(0).to_numpy(), dtype=np.int64)
        shifted = values.view(np.uint64) ^ np.uint64(_OFFSET)  # order kept, all non-negative
        keys = pa.array(np.char.zfill(shifted.astype(str), 20) if len(shifted) else [],
                        pa.string())
    else:
        keys = keys.cast(pa.string())
    prefix = pa.repeat(pa.scalar(f"{element:04d}"), len(keys)).cast(pa.string())
    return pc.binary_join_element_wise(prefix, keys, ":")


def user_id_type(entry: Any) -> str:
    """'int64' or 'string': the type of a graph version's user ids (a property graph's: its one
    vertex label's integer keys, else 'Label:key' strings or string keys)."""
    schema = PropertySchema.of(entry)
    if schema is None:
        return entry.id_type
    if len(schema.vertex_labels) == 1 and schema.vertex_labels[0].key_type.startswith(
            ("int", "uint")):
        return "int64"
    return "string"


def label_ids(vertices: pa.Table, labels: tuple[VertexLabel, ...], graph: str) -> VertexIds:
    """The ids of the vertices of ``labels`` (ascending starts), in internal order: the key of
    the one label, typed, or ``'Label:key'`` strings for several."""
    if len(labels) == 1:
        label = labels[0]
        keys = vertices.column(PropertySchema.column(label.name, label.key)).slice(
            label.start, label.count).combine_chunks()
        typed = "string" if pa.types.is_string(keys.type) or pa.types.is_large_string(
            keys.type) else "int64"
        if typed == "int64" and not pa.types.is_integer(keys.type):
            keys, typed = keys.cast(pa.string()), "string"
        return VertexIds(keys.cast(pa.int64()) if typed == "int64" else keys.cast(pa.string()),
                         graph, typed)
    parts = []
    for label in labels:
        keys = vertices.column(PropertySchema.column(label.name, label.key)).slice(
            label.start, label.count).combine_chunks().cast(pa.string())
        parts.append(pc.binary_join_element_wise(
            pa.repeat(pa.scalar(label.shown), label.count).cast(pa.string()), keys, ":"))
    joined = pa.concat_arrays(parts) if parts else pa.array([], pa.string())
    return VertexIds(joined, graph, "string")


def label_column(vertices: pa.Table, labels: tuple[str, ...], prop: str, schema: PropertySchema,
                 rows: np.ndarray) -> pa.Array:
    """Property ``prop`` of the vertices ``rows`` (internal ids) whose labels are among
    ``labels``: each row's value from its own label's column (NULL where that label has no
    such property)."""
    columns = schema.vertex_columns(labels, prop)
    taken = [vertices.column(c).take(to_arrow(rows, pa.int64())) for c in columns]
    if len(taken) == 1:
        return taken[0]
    types = {t.type for t in taken}
    if len(types) > 1:
        raise InvalidArgument(f"property '{prop}' has different types in labels "
                              f"{', '.join(labels)}: name one label")
    return pc.coalesce(*taken)


def vertex_label_table(schema: PropertySchema, vertices: pa.Table, label: str) -> pa.Table:
    """``g.<Label>`` of a vertex label: its vertices' properties under their own names, in key
    order."""
    v = schema.vertex_label(label)
    part = vertices.slice(v.start, v.count)
    shown = visible(v.properties)
    return pa.table([part.column(schema.column(v.name, p)) for p in shown], names=shown)


def visible(properties: tuple[str, ...]) -> list[str]:
    """The properties a user sees (not the hidden ``__row`` of a table without a key)."""
    return [p for p in properties if not p.startswith("__")]


def edge_label_table(schema: PropertySchema, graph, vertices: pa.Table,
                     properties: pa.Table | None, label: str) -> pa.Table:
    """``g.<label>`` of an edge label: each of its edges once (as ``g.edges`` lists it, turned
    to run from the source label on an undirected graph), its endpoints' keys under the columns
    the edge table had, then its properties."""
    from .graph_tables import select_edges

    e = schema.edge_label(label)
    positions, src, dst = select_edges(graph, "edges", None)
    if positions is None:
        positions = np.arange(len(dst), dtype=np.int64)
    labels = properties.column("label").take(to_arrow(positions, pa.int64()))
    keep = pc.equal(labels, e.name).fill_null(False).combine_chunks().to_numpy(
        zero_copy_only=False)
    positions, src, dst = positions[keep], src[keep].astype(np.int64), dst[keep].astype(np.int64)
    source = schema.vertex_label(e.source)
    if not graph.directed:  # both ends may be listed first: the source label's goes first
        flip = ~((src >= source.start) & (src < source.start + source.count))
        src, dst = np.where(flip, dst, src), np.where(flip, src, dst)
    target = schema.vertex_label(e.destination)
    columns, names = [], []
    for side, key, vertex in ((e.source_key, source.key, source), (e.destination_key, target.key,
                                                                    target)):
        if side not in e.properties:
            ends = src if vertex is source else dst
            columns.append(vertices.column(schema.column(vertex.name, key)).take(
                to_arrow(ends)))
            names.append(side)
    for prop in visible(e.properties):
        columns.append(properties.column(schema.column(e.name, prop)).take(to_arrow(positions)))
        names.append(prop)
    return pa.table(columns, names=names)


def label_table_columns(schema: PropertySchema, label: str) -> list[str]:
    """The columns of ``g.<label>`` (from the schema alone)."""
    element = schema.element_of(label)
    if isinstance(element, VertexLabel):
        return visible(element.properties)
    e = schema.edge_label(label)
    keys = [k for k in (e.source_key, e.destination_key) if k not in e.properties]
    return keys + visible(e.properties)


def describe_rows(schema: PropertySchema, vertex_types: pa.Schema,
                  edge_types: pa.Schema) -> list[tuple[str, str]]:
    """DESCRIBE's rows of a property graph's schema: a row per label."""
    def typed(types: pa.Schema, label: str, props) -> str:
        return ", ".join(f"{p} {types.field(PropertySchema.column(label, p)).type}"
                         for p in props)

    rows = [("property_graph", f"{len(schema.vertex_labels)} vertex labels, "
                               f"{len(schema.edge_labels)} edge labels"
                               + (", undirected" if schema.undirected else ""))]
    def also(item) -> str:
        more = item.label_names[1:]
        return f" (also labelled {', '.join(more)})" if more else ""

    for v in schema.vertex_labels:
        props = typed(vertex_types, v.name, visible(v.properties)) or "none"
        rows.append((f"vertex label {v.name}", f"table {v.table}{also(v)}, key {v.key} "
                     f"({v.key_type}), {v.count} vertices; properties: {props}"))
    for e in schema.edge_labels:
        props = typed(edge_types, e.name, visible(e.properties)) or "none"
        rows.append((f"edge label {e.name}", f"table {e.table}{also(e)}, {e.source} "
                     f"({e.source_key}) -> {e.destination} ({e.destination_key}), {e.count} "
                     f"edges; properties: {props}"))
    return rows


def label_weights(properties: pa.Table, columns: tuple[str, ...]) -> np.ndarray:
    """Weights from a property of several edge labels, aligned with the out-CSR: each edge's
    from its own label's column (float64; NaN where its label has none, or NULL)."""
    if not columns:
        return np.full(properties.num_rows, np.nan)
    values = pc.coalesce(*[properties.column(c).cast(pa.float64()) for c in columns])
    return values.fill_null(float("nan")).combine_chunks().to_numpy(zero_copy_only=False)


def vertex_row_ids(catalog, entry, keys: pa.Array):
    """The rows of a property graph's vertices (their ids ``keys``, as the user sees them) in
    the stored tables they are (as the statement's snapshot has them): what DuckPGQ's
    ``element_id(p)`` lists. None when the graph is no property graph over stored tables, or a
    vertex is not found."""
    import numpy as np
    import pyarrow.compute as pc

    schema = PropertySchema.of(entry)
    if schema is None or not schema.tables or len(keys) == 0:
        return None
    tables = catalog.tables_now()
    composite = pa.types.is_string(keys.type) or pa.types.is_large_string(keys.type)
    if composite:  # 'Label:key'
        parts = pc.split_pattern(keys, ":", max_splits=1)
        labels, values = pc.list_element(parts, 0), pc.list_element(parts, 1)
    else:
        labels, values = None, keys
    out = np.full(len(keys), -1, dtype=np.int64)
    for label in schema.vertex_labels:
        stored = tables.find(label.table)
        if stored is None:
            return None
        mask = np.ones(len(keys), dtype=bool) if labels is None else np.asarray(
            pc.equal(labels, label.name).to_numpy(zero_copy_only=False), dtype=bool)
        if not mask.any():
            continue
        wanted = values.filter(pa.array(mask))
        if label.key == "__row":  # a table without a key: its rows' identities are the keys
            out[mask] = np.asarray(wanted.cast(pa.int64()).to_numpy(zero_copy_only=False))
            continue
        columns = dict(zip(label.properties, label.columns or label.properties))
        view = catalog.tables.view(stored)
        table_keys = view.table.column(columns.get(label.key, label.key)).combine_chunks()
        try:
            found = pc.index_in(wanted.cast(table_keys.type), value_set=table_keys)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
        if found.null_count:
            return None
        out[mask] = np.asarray(view.row_ids())[found.to_numpy(zero_copy_only=False)]
    return out if (out >= 0).all() else None
