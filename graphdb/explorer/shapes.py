"""Which results describe a graph, and the vertices and edges to draw for them.

A result is drawn as a graph when its rows say what the edges are:

- a column of edge lists, ``edges(p)`` (a list of ``{src, dst}``);
- a pair of endpoint columns: ``src``/``dst``, ``source``/``target``, ``source``/
  ``destination`` or ``from``/``to`` (a pattern's ``COLUMNS (a.id AS src, b.id AS dst)``,
  ``g.edges``); the other columns describe the edge;
- a column of vertex lists, ``vertices(p)``: each list a path;
- ``step`` and ``vertex`` columns (``shortest_path``; with ``path``, ``k_shortest_paths``): each
  path's vertices in the order of their steps;

or, for a statement that read a graph, when they list vertices (a ``vertex``, ``neighbor`` or
``id`` column: ``bfs``, ``khop``, ``neighbors``, ``pagerank``, ``wcc``): the vertices with their
columns, and the edges of that graph between them, read from the database by the caller
(:func:`induced_edges_sql`).

A drawing is capped at ``max_vertices`` and ``max_edges``: past them it keeps the first rows'
edges (the result's own order, so ``ORDER BY`` chooses) and says what it left out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from .results import is_numeric, json_value

__all__ = ["Shape", "shape_of", "draw", "induced_edges_sql", "MAX_VERTICES", "MAX_EDGES",
           "vertex_id"]

#: What a drawing shows at most (tools/bench_explorer.py draws this much; see
#: docs/performance/2026-11-28-explorer.md).
MAX_VERTICES = 2000
MAX_EDGES = 10000

_ENDPOINTS = (("src", "dst"), ("source", "target"), ("source", "destination"), ("from", "to"))
_VERTEX_COLUMNS = ("vertex", "neighbor", "id", "node")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class Shape:
    """How a result describes a graph: ``kind`` is 'edge_lists', 'endpoints', 'paths',
    'steps' or 'vertices'; ``columns`` the columns that say it."""

    kind: str
    columns: tuple[str, ...]
    graph: str | None = None  # the graph the statement read, when it read exactly one

    def describe(self) -> str:
        first = self.columns[0]
        if self.kind == "endpoints":
            return f"an edge per row, {first} -> {self.columns[1]}"
        if self.kind == "vertices":
            return f"vertices from column {first} and the edges of {self.graph} between them"
        if self.kind == "steps":
            return "paths from their steps"
        return f"{'edges' if self.kind == 'edge_lists' else 'paths'} from column {first}"


def _named(table: pa.Table) -> dict[str, str]:
    return {name.lower(): name for name in table.column_names}


def _struct_list(t: pa.DataType) -> bool:
    if not (pa.types.is_list(t) or pa.types.is_large_list(t)):
        return False
    value = t.value_type
    return pa.types.is_struct(value) and {"src", "dst"} <= {f.name for f in value}


def _scalar_list(t: pa.DataType) -> bool:
    return (pa.types.is_list(t) or pa.types.is_large_list(t)) and not pa.types.is_nested(
        t.value_type)


def shape_of(table: pa.Table, graphs: list[str]) -> Shape | None:
    """How ``table`` describes a graph, or None; ``graphs``: the graphs the statement read."""
    graph = graphs[0] if len(graphs) == 1 else None
    for f in table.schema:
        if _struct_list(f.type):
            return Shape("edge_lists", (f.name,), graph)
    names = _named(table)
    for a, b in _ENDPOINTS:
        if a in names and b in names:
            return Shape("endpoints", (names[a], names[b]), graph)
    for f in table.schema:
        if _scalar_list(f.type):
            return Shape("paths", (f.name,), graph)
    if "step" in names and "vertex" in names:
        path = (names["path"],) if "path" in names else ()
        return Shape("steps", (names["step"], names["vertex"]) + path, graph)
    if graph is not None:
        for name in _VERTEX_COLUMNS:
            if name in names and not pa.types.is_nested(table.schema.field(names[name]).type):
                return Shape("vertices", (names[name],), graph)
    return None


def vertex_id(value: Any) -> str:
    """The drawing's id of a vertex (its value's JSON: 1 and '1' stay apart)."""
    return json.dumps(json_value(value))


@dataclass
class _Drawing:
    max_vertices: int
    max_edges: int
    nodes: dict[str, dict] = field(default_factory=dict)
    edges: dict[tuple[str, str], dict] = field(default_factory=dict)
    full: bool = False  # a cap was reached: later vertices and edges are left out
    seen_edges: int = 0
    seen_vertices: set = field(default_factory=set)

    def vertex(self, value: Any, attributes: dict | None = None) -> str | None:
        key = vertex_id(value)
        self.seen_vertices.add(key)
        node = self.nodes.get(key)
        if node is None:
            if len(self.nodes) >= self.max_vertices:
                self.full = True
                return None
            node = self.nodes[key] = {"id": key, "value": json_value(value)}
        if attributes:
            for name, v in attributes.items():
                node.setdefault(name, v)
        return key

    def edge(self, a: Any, b: Any, attributes: dict | None = None) -> None:
        self.seen_edges += 1
        if a is None or b is None:
            return
        if self.full or len(self.edges) >= self.max_edges:
            self.full = True
            self.seen_vertices.update((vertex_id(a), vertex_id(b)))
            return
        s, t = self.vertex(a), self.vertex(b)
        if s is None or t is None:
            return
        edge = self.edges.get((s, t))
        if edge is None:
            edge = self.edges[(s, t)] = {"id": f"e{len(self.edges)}", "source": s, "target": t,
                                         "count": 0}
            for name, v in (attributes or {}).items():
                edge[name] = v
        edge["count"] += 1


def _rows(table: pa.Table, skip: tuple[str, ...]) -> list[dict]:
    """Each row's other columns (scalars only), as JSON values."""
    keep = [f.name for f in table.schema if f.name not in skip and not pa.types.is_nested(f.type)]
    columns = {name: table.column(name).to_pylist() for name in keep}
    return [{name: json_value(columns[name][i]) for name in keep} for i in range(table.num_rows)]


def draw(table: pa.Table, shape: Shape, *, max_vertices: int = MAX_VERTICES,
         max_edges: int = MAX_EDGES, induced: pa.Table | None = None) -> dict:
    """The vertices and edges to draw (``induced``: for a 'vertices' shape, the graph's edges
    between them, columns src and dst), what the colour and size may follow, and a note of what
    a cap left out."""
    d = _Drawing(max_vertices, max_edges)
    vertex_attributes: list[str] = []
    edge_attributes: list[str] = []
    if shape.kind == "edge_lists":
        for edges in table.column(shape.columns[0]).to_pylist():
            for e in edges or ():
                if e is not None:
                    d.edge(e.get("src"), e.get("dst"))
    elif shape.kind == "endpoints":
        a, b = shape.columns
        rows = _rows(table.slice(0, max_edges + 1), (a, b))
        edge_attributes = [n for n in table.column_names if n not in (a, b)]
        sources, targets = table.column(a).to_pylist(), table.column(b).to_pylist()
        for i, (s, t) in enumerate(zip(sources, targets)):
            d.edge(s, t, rows[i] if i < len(rows) else None)
    elif shape.kind == "paths":
        for path in table.column(shape.columns[0]).to_pylist():
            path = [v for v in (path or ()) if v is not None]
            if len(path) == 1:
                d.vertex(path[0])
            for s, t in zip(path, path[1:]):
                d.edge(s, t)
    elif shape.kind == "steps":
        step, vertex, *path = shape.columns
        order = table.sort_by([(c, "ascending") for c in (*path, step)])
        rows = _rows(order, (step, vertex, *path))
        vertex_attributes = [n for n in table.column_names if n not in (step, vertex, *path)
                             and is_numeric(table.schema.field(n).type)]
        vertices = order.column(vertex).to_pylist()
        paths = order.column(path[0]).to_pylist() if path else [0] * len(vertices)
        for i, v in enumerate(vertices):
            d.vertex(v, {k: rows[i][k] for k in vertex_attributes})
            if i and paths[i] == paths[i - 1]:
                d.edge(vertices[i - 1], v)
    else:  # vertices, with the graph's edges between them
        column = shape.columns[0]
        rows = _rows(table.slice(0, max_vertices + 1), (column,))
        vertex_attributes = [n for n in table.column_names if n != column
                             and not pa.types.is_nested(table.schema.field(n).type)]
        for i, v in enumerate(table.column(column).to_pylist()):
            if v is not None:
                d.vertex(v, rows[i] if i < len(rows) else None)
        if induced is not None:
            for s, t in zip(induced.column("src").to_pylist(), induced.column("dst").to_pylist()):
                if vertex_id(s) in d.nodes and vertex_id(t) in d.nodes:
                    d.edge(s, t)
    note = None
    if d.full:
        note = (f"Drawn: {len(d.nodes):,} of {len(d.seen_vertices):,} vertices and "
                f"{len(d.edges):,} of {d.seen_edges:,} edges (the drawing shows at most "
                f"{max_vertices:,} vertices and {max_edges:,} edges: the first rows' ones; "
                "a WHERE or LIMIT chooses others)")
    numeric = {n for n in vertex_attributes if is_numeric(table.schema.field(n).type)}
    return {
        "nodes": list(d.nodes.values()),
        "edges": list(d.edges.values()),
        "graph": shape.graph,
        "shape": shape.describe(),
        "vertex_attributes": [{"name": n, "numeric": n in numeric} for n in vertex_attributes],
        "edge_attributes": edge_attributes,
        "note": note,
    }


def induced_edges_sql(graph: str) -> str:
    """The statement reading ``graph``'s edges between a list of vertices (parameters: the
    list twice)."""
    if not _NAME.fullmatch(graph):
        raise ValueError(f"not a graph name: {graph!r}")
    return f"SELECT src, dst FROM {graph}.edges WHERE src IN ? AND dst IN ?"
