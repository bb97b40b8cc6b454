"""Conversion to and from networkx graphs and scipy.sparse matrices.

Graphs come in through the ordinary ingest path (a temporary Parquet edge file plus a vertex
file, so isolated vertices survive), which keeps one code path for validation and the atomic
commit; they go out from ``g.vertices``/``g.edges`` and the CSR.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .errors import InvalidInputError

if TYPE_CHECKING:
    from .connection import Connection
    from .graph import GraphHandle

__all__ = ["from_networkx", "from_scipy", "to_networkx", "to_scipy"]


def _id_array(values: list) -> pa.Array:
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        return pa.array([int(v) for v in values], pa.int64())
    return pa.array([str(v) for v in values], pa.string())


def _store(con: "Connection", name: str, ids: pa.Array, src: pa.Array, dst: pa.Array,
           weights: np.ndarray | None, directed: bool, replace: bool) -> "GraphHandle":
    if len(src) == 0:
        raise InvalidInputError(f"graph '{name}' has no edges; graphdb stores graphs with at "
                                "least one edge")
    with tempfile.TemporaryDirectory(prefix="graphdb-import-") as tmp:
        edges, vertices = Path(tmp) / "edges.parquet", Path(tmp) / "vertices.parquet"
        columns = {"src": src, "dst": dst}
        if weights is not None:
            columns["weight"] = pa.array(weights, pa.float64())
        pq.write_table(pa.table(columns), edges)
        pq.write_table(pa.table({"id": ids}), vertices)
        con.ingest(name, edges, vertices=str(vertices), undirected=not directed,
                   format="parquet", src="src", dst="dst",
                   weight="weight" if weights is not None else None, replace=replace)
    return con.graph(name)


def from_networkx(con: "Connection", name: str, graph, *, weight: str | None = "weight",
                  replace: bool = False) -> "GraphHandle":
    """Store ``graph``; integer node labels stay integers, others become strings."""
    nodes = list(graph.nodes)
    ids = _id_array(nodes)
    edges = list(graph.edges(data=True))
    as_ids = (lambda v: int(v)) if pa.types.is_integer(ids.type) else (lambda v: str(v))
    src = pa.array([as_ids(u) for u, _, _ in edges], ids.type)
    dst = pa.array([as_ids(v) for _, v, _ in edges], ids.type)
    weights = None
    if weight is not None and edges and all(weight in d for _, _, d in edges):
        weights = np.array([d[weight] for _, _, d in edges], dtype=np.float64)
    return _store(con, name, ids, src, dst, weights, graph.is_directed(), replace)


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
    ids = pa.array(np.arange(coo.shape[0], dtype=np.int64))
    weights = np.asarray(data, dtype=np.float64) if weighted else None
    return _store(con, name, ids, pa.array(row), pa.array(col), weights, directed, replace)


def to_networkx(handle: "GraphHandle"):
    import networkx as nx

    directed = handle.directed
    graph = nx.DiGraph() if directed else nx.Graph()
    graph.add_nodes_from(handle.vertices().column("id").to_pylist())
    edges = handle.edges()
    src, dst = edges.column("src").to_pylist(), edges.column("dst").to_pylist()
    if "weight" in edges.column_names:
        graph.add_weighted_edges_from(zip(src, dst, edges.column("weight").to_pylist()))
    else:
        graph.add_edges_from(zip(src, dst))
    return graph


def to_scipy(handle: "GraphHandle", *, weighted: bool = True):
    con = handle.connection
    entry = con.catalog.get(handle.name)
    graph = con._runner.graph(entry)
    out = graph.csr("out", weights=weighted)
    return out.to_scipy(weighted=weighted), con._runner.vertex_ids(entry).ids
