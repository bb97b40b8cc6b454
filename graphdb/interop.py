"""Data from Python objects in, and graphs out to networkx and scipy.sparse.

In: ``con.ingest`` and ``con.register`` take pandas and polars DataFrames, Arrow tables, record
batches and record-batch readers (anything with the Arrow PyCapsule stream interface), and
networkx graphs. Tables come in through the ordinary ingest path: they are written to a
temporary Arrow IPC file (a reader batch by batch, never whole in memory) and ingested from
there, which keeps one code path for validation, the options and the atomic commit. A networkx
graph becomes an edge table (``src``, ``dst`` and every edge attribute) and a vertex table
(``id`` and every node attribute), so isolated vertices and all attributes survive.

Out: ``g.vertices``/``g.edges`` give networkx its nodes, edges and attributes back; the CSR
gives scipy its matrix.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from graphdb.catalog import IngestError as LoadError
from graphdb.executor.writes.files import plain_schema, write_arrow_file

from .errors import IngestError, InvalidInputError

if TYPE_CHECKING:
    from .connection import Connection
    from .graph import GraphHandle
    from .session import Session

__all__ = ["arrow_data", "describe_object", "ingest_objects", "is_path", "from_networkx",
           "from_scipy", "to_networkx", "to_scipy"]


def is_path(obj: Any) -> bool:
    return isinstance(obj, (str, os.PathLike))


def is_networkx(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "networkx" and hasattr(obj, "is_directed")


def describe_object(obj: Any) -> str:
    """A short name for a Python object in messages (never its contents)."""
    kind = type(obj)
    return f"the {kind.__module__.split('.')[0]} {kind.__name__}"


def arrow_data(obj: Any, what: str) -> pa.Table | pa.RecordBatchReader:
    """``obj`` as Arrow: a table, or a reader (read once, batch by batch).

    Takes a ``pyarrow.Table``, ``RecordBatch`` or ``RecordBatchReader``, a pandas DataFrame (its
    index is not read: ``reset_index()`` first to keep it), a polars DataFrame or LazyFrame, a
    dict of columns, or any object with ``__arrow_c_stream__``."""
    if isinstance(obj, (pa.Table, pa.RecordBatchReader)):
        return obj
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    module = type(obj).__module__.split(".")[0]
    try:
        if module == "pandas" and hasattr(obj, "columns"):
            return pa.Table.from_pandas(obj, preserve_index=False)
        if module == "polars":
            if hasattr(obj, "collect") and not hasattr(obj, "to_arrow"):  # a LazyFrame
                obj = obj.collect()
            return obj.to_arrow()
        if hasattr(obj, "__arrow_c_stream__"):
            return pa.RecordBatchReader.from_stream(obj)
        if isinstance(obj, dict):
            return pa.table(obj)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError,
            ValueError) as exc:
        raise InvalidInputError(f"{what}: {describe_object(obj)} cannot be read as Arrow "
                                f"columns ({str(exc).splitlines()[0]})") from None
    raise InvalidInputError(
        f"{what}: cannot read {describe_object(obj)}; give a file path, a pandas or polars "
        "DataFrame, a pyarrow Table or RecordBatchReader, or a networkx graph")


def plain_table(obj: Any, what: str) -> pa.Table:
    """``obj`` as one ``pyarrow.Table`` with the ingest's plain types (``con.register``)."""
    data = arrow_data(obj, what)
    if isinstance(data, pa.RecordBatchReader):
        data = data.read_all()
    schema = plain_schema(data.schema)
    return data if schema == data.schema else data.cast(schema)


def ingest_objects(session: "Session", graph: str, edges: Any, vertices: Any,
                   options: dict[str, Any]) -> dict:
    """``con.ingest`` of Python objects: each written to a temporary Arrow file, then ingested
    as files; an error names the object, not the temporary file."""
    if is_networkx(edges):
        if vertices is not None:
            raise InvalidInputError("a networkx graph brings its own vertices: leave vertices "
                                    "out (node attributes become vertex properties)")
        weight = options.get("weight", "auto")  # auto: the attribute named weight
        edges, vertices, directed, weight = _networkx_tables(
            edges, "weight" if weight == "auto" else weight)
        options = dict(options, undirected=not directed, weight=weight, src="src", dst="dst")
    with tempfile.TemporaryDirectory(prefix="graphdb-import-",
                                     dir=options.get("temp_dir")) as tmp:
        labels: dict[str, str] = {}
        inputs = {"edges": edges, "vertices": vertices}
        for role, obj in inputs.items():
            if obj is None or is_path(obj):
                continue
            path = Path(tmp) / f"{role}.arrow"
            write_arrow_file(arrow_data(obj, role), path)
            labels[str(path)] = f"{describe_object(obj)} of {role}"
            inputs[role] = str(path)
            options = dict(options, **{"format" if role == "edges" else "vertex_format":
                                       "arrow"})
        from .loading import ingest

        try:
            return ingest(session, graph, inputs["edges"], vertices=inputs["vertices"],
                          **options)
        except (IngestError, LoadError) as exc:  # (the catalog's, or translated already)
            label = labels.get(exc.file or "")
            if label is None:
                raise
            problem = str(exc).split(": ", 1)[1] if exc.file and str(exc).startswith(
                exc.file) else str(exc)
            raise IngestError(f"{label}: {problem}", file=label, line=exc.line) from None


# -- networkx -----------------------------------------------------------------------------------
def _id_array(values: list) -> pa.Array:
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        return pa.array([int(v) for v in values], pa.int64())
    return pa.array([str(v) for v in values], pa.string())


def _attribute_column(name: str, values: list, owner: str) -> pa.Array:
    """One attribute's values (None where an item lacks it) as an Arrow array; values Arrow
    cannot type together are kept as their text, with a warning."""
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        warnings.warn(f"{owner} attribute '{name}' mixes values Arrow cannot store in one "
                      "column; it is stored as text", stacklevel=4)
        return pa.array([None if v is None else str(v) for v in values], pa.string())


def _attribute_columns(items: list[dict], reserved: tuple[str, ...], owner: str) -> dict:
    names: dict[str, None] = {}
    for data in items:
        names.update(dict.fromkeys(data))
    columns = {}
    for name in names:
        key = str(name)
        if key in reserved:
            raise InvalidInputError(f"{owner} attribute '{key}' clashes with graphdb's own "
                                    f"column '{key}'; rename it")
        columns[key] = _attribute_column(key, [d.get(name) for d in items], owner)
    return columns


def _networkx_tables(graph, weight: str | None) -> tuple[pa.Table, pa.Table, bool, str]:
    """(edges, vertices, directed, weight column or '' for none) of a networkx graph, with
    every attribute."""
    nodes = list(graph.nodes(data=True))
    ids = _id_array([n for n, _ in nodes])
    as_id = int if pa.types.is_integer(ids.type) else str
    vertex_columns = {"id": ids}
    vertex_columns.update(_attribute_columns([d for _, d in nodes], ("id",), "node"))
    edges = list(graph.edges(data=True))
    edge_columns = {"src": pa.array([as_id(u) for u, _, _ in edges], ids.type),
                    "dst": pa.array([as_id(v) for _, v, _ in edges], ids.type)}
    edge_columns.update(_attribute_columns([d for _, _, d in edges], ("src", "dst"), "edge"))
    chosen = ""  # no weight unless asked: an attribute is never taken as one silently
    if weight is not None and weight in edge_columns:
        column = edge_columns[weight]
        numeric = pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
        if numeric and column.null_count == 0:
            chosen = weight
    return (pa.table(edge_columns), pa.table(vertex_columns), graph.is_directed(), chosen)


def from_networkx(con: "Connection", name: str, graph, *, weight: str | None = "weight",
                  replace: bool = False) -> "GraphHandle":
    """Store ``graph`` with all node and edge attributes; integer node labels stay integers,
    others become strings. ``weight`` names the edge attribute stored as the weight (when every
    edge has a number there)."""
    con.ingest(name, graph, weight=weight, replace=replace)
    return con.graph(name)


def from_scipy(con: "Connection", name: str, matrix, *, directed: bool = True,
               weighted: bool = True, replace: bool = False) -> "GraphHandle":
    """Store a square sparse adjacency matrix; entry (i, j) is an edge i -> j.

    For ``directed=False`` only the upper triangle (i <= j) is read, as networkx does.
    """
    import scipy.sparse as sp

    coo = sp.coo_array(matrix)
    if coo.shape[0] != coo.shape[1]:
        raise InvalidInputError(f"an adjacency matrix must be square, got shape {coo.shape}")
    row, col, data = coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data
    if not directed:
        keep = row <= col
        row, col, data = row[keep], col[keep], data[keep]
    edges = {"src": row, "dst": col}
    if weighted:
        edges["weight"] = np.asarray(data, dtype=np.float64)
    vertices = {"id": np.arange(coo.shape[0], dtype=np.int64)}
    con.ingest(name, pa.table(edges), vertices=pa.table(vertices), undirected=not directed,
               src="src", dst="dst", weight="weight" if weighted else None, replace=replace)
    return con.graph(name)


def to_networkx(handle: "GraphHandle"):
    """A ``networkx.DiGraph`` (``Graph`` if undirected) with the vertex properties as node
    attributes and the weight and edge properties as edge attributes."""
    import networkx as nx

    graph = nx.DiGraph() if handle.directed else nx.Graph()
    vertices = handle.vertices()
    ids = vertices.column("id").to_pylist()
    names = [n for n in vertices.column_names if n != "id"]
    if names:
        rows = vertices.select(names).to_pylist()
        graph.add_nodes_from((v, {k: x for k, x in row.items() if x is not None})
                             for v, row in zip(ids, rows))
    else:
        graph.add_nodes_from(ids)
    edges = handle.edges()
    src, dst = edges.column("src").to_pylist(), edges.column("dst").to_pylist()
    names = [n for n in edges.column_names if n not in ("src", "dst")]
    if names:
        rows = edges.select(names).to_pylist()
        graph.add_edges_from((u, v, {k: x for k, x in row.items() if x is not None})
                             for u, v, row in zip(src, dst, rows))
    else:
        graph.add_edges_from(zip(src, dst))
    return graph


def to_scipy(handle: "GraphHandle", *, weighted: bool = True):
    session = handle.connection.session
    runner = session.runner
    with session.catalog.snapshot() as snap:  # the version stays on disk while it is read
        entry = snap.get(handle.name)
        graph = runner.graph(entry)
        out = graph.csr("out", weights=weighted)
        return out.to_scipy(weighted=weighted), runner.vertex_ids(entry).ids
