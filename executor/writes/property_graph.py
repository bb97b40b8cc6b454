"""CREATE PROPERTY GRAPH: vertex and edge tables with labels become one stored graph.

Each vertex table (a label, its key column, its properties) is sorted by key and given a range of
internal ids; each edge table's source and destination keys are looked up in the vertex tables
they reference; then one graph is ingested with the schema in its catalog entry (see
:mod:`graphdb.executor.property_graph` for how it is stored and read).
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from graphdb.storage.lazy import pc

from ..errors import InvalidArgument
from ..physical.nodes import PhysicalNode
from ..property_graph import EdgeLabel, PropertySchema, VertexLabel
from .definitions import load
from .files import write_arrow_file

if TYPE_CHECKING:
    from ..runner import Runner

__all__ = ["CreatePropertyGraphOperator", "EdgeTable", "VertexTable", "build"]

_LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class VertexTable:
    """A vertex table: its rows, the name it is referenced by, its label, its key column and
    the columns that are properties (None: all)."""

    name: str
    table: pa.Table
    label: str | None = None
    key: str | None = None
    properties: list[str] | None = None


@dataclass
class EdgeTable:
    """An edge table: its rows, name, label, the columns holding its endpoints' keys and the
    vertex tables (names or labels) they reference, and its properties (None: every column but
    the endpoints')."""

    name: str
    table: pa.Table
    source: str
    destination: str
    source_key: str | None = None
    destination_key: str | None = None
    label: str | None = None
    properties: list[str] | None = field(default=None)


def _column(table: pa.Table, name: str | None, what: str, default: int) -> str:
    names = table.column_names
    if name is None:
        if len(names) <= default:
            raise InvalidArgument(f"{what}: the table has no column {default + 1}")
        return names[default]
    found = [c for c in names if c == name] or [c for c in names if c.lower() == name.lower()]
    if not found:
        raise InvalidArgument(f"{what}: no column '{name}' (columns: {', '.join(names)})")
    return found[0]


def _properties(table: pa.Table, chosen: list[str] | None, leave: tuple[str, ...],
                what: str) -> list[str]:
    if chosen is None:
        return [c for c in table.column_names if c not in leave]
    return [_column(table, c, what, 0) for c in chosen]


def _spread(values: pa.Array, before: int, after: int) -> pa.Array:
    """``values`` with ``before`` NULLs ahead and ``after`` behind."""
    parts = [pa.nulls(before, values.type), values, pa.nulls(after, values.type)]
    return pa.concat_arrays([p for p in parts if len(p) or p is values])


def build(vertex_tables: list[VertexTable], edge_tables: list[EdgeTable], undirected: bool
          ) -> tuple[pa.Table, pa.Table, PropertySchema]:
    """(the stored vertex table, the stored edge table, the schema) of a property graph."""
    if not vertex_tables:
        raise InvalidArgument("a property graph needs at least one vertex table")
    labels: dict[str, str] = {}
    for item in [*vertex_tables, *edge_tables]:
        item.label = item.label or item.name
        if not _LABEL.fullmatch(item.label):
            raise InvalidArgument(f"label '{item.label}': use letters, digits and underscores")
        if item.label.lower() in labels:
            raise InvalidArgument(f"label '{item.label}' is given twice")
        labels[item.label.lower()] = item.label
    by_name = {}
    for item in vertex_tables:
        by_name.setdefault(item.name.lower(), item)
        by_name.setdefault(item.label.lower(), item)
    sorted_tables, starts, start = [], [], 0
    for item in vertex_tables:
        what = f"vertex table {item.name}"
        key = item.key = _column(item.table, item.key, what, 0)
        table = item.table.combine_chunks()
        if table.column(key).null_count:
            raise InvalidArgument(f"{what}: key column '{key}' holds NULL")
        table = table.sort_by(key)
        keys = table.column(key)
        if len(keys) > 1 and pc.any(pc.equal(keys.slice(1), keys.slice(0, len(keys) - 1))
                                    ).as_py():
            raise InvalidArgument(f"{what}: key '{key}' is not unique")
        item.properties = _properties(table, item.properties, (), what)
        if key not in item.properties:
            item.properties.insert(0, key)
        sorted_tables.append(table)
        starts.append(start)
        start += table.num_rows
    n = start
    columns = {"id": pa.array(np.arange(n, dtype=np.int64)),
               "label": pa.concat_arrays([pa.repeat(pa.scalar(v.label), t.num_rows).cast(
                   pa.string()) for v, t in zip(vertex_tables, sorted_tables)])}
    for item, table, first in zip(vertex_tables, sorted_tables, starts):
        for prop in item.properties:
            columns[PropertySchema.column(item.label, prop)] = _spread(
                table.column(prop).combine_chunks(), first, n - first - table.num_rows)
    vertices = pa.table(columns)

    parts, edge_labels = [], []
    for item in edge_tables:
        what = f"edge table {item.name}"
        table = item.table.combine_chunks()
        item.source_key = _column(table, item.source_key, what, 0)
        item.destination_key = _column(table, item.destination_key, what, 1)
        ends = []
        for side, referenced in ((item.source_key, item.source),
                                 (item.destination_key, item.destination)):
            target = by_name.get(referenced.lower())
            if target is None:
                raise InvalidArgument(f"{what}: it references '{referenced}', which is no "
                                        "vertex table of the graph")
            index = vertex_tables.index(target)
            keys = sorted_tables[index].column(target.key).combine_chunks()
            values = table.column(side).combine_chunks()
            try:
                values = values.cast(keys.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                raise InvalidArgument(f"{what}: column '{side}' ({values.type}) cannot hold "
                                        f"keys of {target.name} ({keys.type})") from None
            found = pc.index_in(values, value_set=keys)
            if found.null_count:
                missing = values.filter(pc.is_null(found))[0].as_py()
                raise InvalidArgument(f"{what}: {side} {missing!r} is no key of vertex table "
                                        f"{target.name}")
            ends.append((target, pc.add(found.cast(pa.int64()), starts[index])))
        item.properties = _properties(table, item.properties,
                                      (item.source_key, item.destination_key), what)
        parts.append((item, table, ends))
        edge_labels.append(EdgeLabel(item.label, item.name, ends[0][0].label, ends[1][0].label,
                                     item.source_key, item.destination_key,
                                     tuple(item.properties), table.num_rows))
    m = sum(t.num_rows for _, t, _ in parts)
    src = [e[0][1] for _, _, e in parts]
    dst = [e[1][1] for _, _, e in parts]
    edges = {"src": pa.concat_arrays(src) if src else pa.array([], pa.int64()),
             "dst": pa.concat_arrays(dst) if dst else pa.array([], pa.int64()),
             "label": pa.concat_arrays([pa.repeat(pa.scalar(i.label), t.num_rows).cast(
                 pa.string()) for i, t, _ in parts]) if parts else pa.array([], pa.string())}
    first = 0
    for item, table, _ in parts:
        for prop in item.properties:
            edges[PropertySchema.column(item.label, prop)] = _spread(
                table.column(prop).combine_chunks(), first, m - first - table.num_rows)
        first += table.num_rows
    schema = PropertySchema(
        tuple(VertexLabel(v.label, v.name, v.key, str(t.column(v.key).type), tuple(v.properties),
                          s, t.num_rows)
              for v, t, s in zip(vertex_tables, sorted_tables, starts)),
        tuple(edge_labels), undirected)
    return vertices, pa.table(edges), schema


@dataclass(eq=False, kw_only=True)
class CreatePropertyGraphOperator(PhysicalNode):
    """Runs :class:`graphdb.executor.plan.CreatePropertyGraph`: its tables' rows (its inputs,
    vertex tables first) built into the stored vertex and edge tables, then ingested."""

    reads_data: bool = False

    def run(self, runner: "Runner", metrics: dict) -> pa.Table:
        node = self.logical
        rows = [runner.input(self, i) for i in range(len(self.inputs))]
        vertex_tables = [VertexTable(s.name, t, s.label, s.key, _listed(s.properties))
                         for s, t in zip(node.vertex_tables, rows)]
        edge_tables = [EdgeTable(s.name, t, s.source, s.destination, s.source_key,
                                 s.destination_key, s.label, _listed(s.properties))
                       for s, t in zip(node.edge_tables, rows[len(vertex_tables):])]
        vertices, edges, schema = build(vertex_tables, edge_tables, node.undirected)
        from graphdb.catalog import IngestOptions  # (the ingest loads at the first load)

        options = IngestOptions(undirected=node.undirected, weight="none", format="arrow",
                                vertex_format="arrow", src="src", dst="dst",
                                schema=json.dumps(schema.to_json()))
        with tempfile.TemporaryDirectory(prefix="graphdb-property-graph-") as tmp:
            paths = {}
            for role, table in (("edges", edges), ("vertices", vertices)):
                paths[role] = Path(tmp) / f"{role}.arrow"
                write_arrow_file(table, paths[role])
            return load(runner, node.graph, str(paths["edges"]), str(paths["vertices"]),
                        options, replace=node.replace, progress=node.progress)


def _listed(properties: tuple[str, ...] | None) -> list[str] | None:
    return None if properties is None else list(properties)
