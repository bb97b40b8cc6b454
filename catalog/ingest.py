"""The ingest pipeline: an edge file (and optionally a vertex file) becomes a stored graph.

Steps: read with pyarrow -> map the user's vertex ids to dense internal ids in ascending order
of the user's ids -> build the out-CSR and the in-CSR -> write the Arrow id file into a new graph
directory -> in ONE LMDB write transaction, write the CSR blocks and the catalog entry. Until that
transaction commits nothing refers to the new directory, so a failed or killed ingest leaves no
visible trace (the next writer removes the orphaned directory).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage import Environment, delete_topology, write_topology

from .entries import GraphEntry
from .errors import IngestError
from .readers import read_edges, read_vertices

__all__ = ["IngestOptions", "build_graph_arrays", "csr_from_edges", "write_graph"]


@dataclass(frozen=True)
class IngestOptions:
    vertices: str | None = None
    undirected: bool = False
    format: str = "auto"
    vertex_format: str = "auto"
    src: str | None = None
    dst: str | None = None
    weight: str | None = None


def map_ids(src: pa.ChunkedArray, dst: pa.ChunkedArray, vertices: pa.ChunkedArray | None):
    """Dense internal ids in ascending order of the user's ids.

    Returns (user ids sorted, internal src, internal dst, internal ids of the vertex file).
    """
    parts = [src, dst] + ([vertices] if vertices is not None else [])
    if any(pa.types.is_string(p.type) for p in parts):
        parts = [p.cast(pa.string()) for p in parts]
        everything = pa.chunked_array([c for p in parts for c in p.chunks], type=pa.string())
        ids = pc.unique(everything)
        ids = ids.take(pc.sort_indices(ids))
        mapped = [pc.index_in(p, value_set=ids).to_numpy().astype(np.int64) for p in parts]
    else:
        arrays = [p.to_numpy() for p in parts]
        ids_np = np.unique(np.concatenate(arrays))
        ids = pa.array(ids_np, type=pa.int64())
        mapped = [np.searchsorted(ids_np, a) for a in arrays]
    vert = mapped[2] if vertices is not None else None
    return ids, mapped[0], mapped[1], vert


def csr_from_edges(keys: np.ndarray, values: np.ndarray, n: int, weights: np.ndarray | None):
    """(offsets int64, targets, weights) of the CSR keyed by ``keys`` (stable order)."""
    order = np.argsort(keys, kind="stable")
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=offsets[1:])
    tdtype = np.int32 if n < 2**31 else np.int64
    targets = values[order].astype(tdtype)
    return offsets, targets, (None if weights is None else weights[order])


def build_graph_arrays(src: np.ndarray, dst: np.ndarray, n: int, weights: np.ndarray | None,
                       directed: bool) -> dict[str, np.ndarray]:
    """The arrays stored for a graph: out-CSR, plus the in-CSR of a directed graph."""
    if not directed:
        loop = src == dst
        src, dst = np.concatenate([src, dst[~loop]]), np.concatenate([dst, src[~loop]])
        if weights is not None:
            weights = np.concatenate([weights, weights[~loop]])
    arrays = {}
    off, tgt, w = csr_from_edges(src, dst, n, weights)
    arrays.update(out_offsets=off, out_targets=tgt)
    if w is not None:
        arrays["out_weights"] = w
    if directed:
        off, tgt, w = csr_from_edges(dst, src, n, weights)
        arrays.update(in_offsets=off, in_targets=tgt)
        if w is not None:
            arrays["in_weights"] = w
    return arrays


def _missing_endpoint(edges_file: str, header: bool, internal: np.ndarray, present: np.ndarray):
    bad = np.flatnonzero(~present[internal])
    return None if bad.size == 0 else int(bad[0]) + (2 if header else 1)


def read_input(edges: str, options: IngestOptions):
    """Read and id-map the input; returns (user ids, src, dst, weights)."""
    edge_input = read_edges(edges, options.format, src=options.src, dst=options.dst,
                            weight=options.weight)
    vertex_ids = None
    if options.vertices is not None:
        vertex_ids = read_vertices(options.vertices, options.vertex_format)
        if pc.count_distinct(vertex_ids).as_py() != len(vertex_ids):
            raise IngestError("vertex file lists a vertex id more than once", file=options.vertices)
    ids, src, dst, vert = map_ids(edge_input.src, edge_input.dst, vertex_ids)
    if vert is not None:
        present = np.zeros(len(ids), dtype=bool)
        present[vert] = True
        header = edges.lower().endswith((".csv", ".tsv")) or options.format in ("csv", "tsv")
        for internal, role in ((src, "source"), (dst, "destination")):
            line = _missing_endpoint(edges, header, internal, present)
            if line is not None:
                raise IngestError(f"{role} vertex is not in the vertex file {options.vertices}",
                                  file=edges, line=line)
    return ids, src, dst, edge_input.weight


def write_graph(env: Environment, name: str, ids: pa.Array, src: np.ndarray, dst: np.ndarray,
                weights: np.ndarray | None, *, directed: bool, source: str,
                replace_entry: GraphEntry | None, db_catalog, db_blocks) -> GraphEntry:
    """Store a graph and commit its catalog entry (the commit point of an ingest)."""
    import pyarrow.feather as feather

    n = len(ids)
    arrays = build_graph_arrays(src, dst, n, weights, directed)
    graph_id = uuid.uuid4().hex
    gdir = env.new_graph_dir(graph_id)
    feather.write_feather(pa.table({"id": ids}), gdir / "vertices.arrow", compression="uncompressed")
    out_deg = np.diff(arrays["out_offsets"])
    stats = {
        "max_out_degree": int(out_deg.max()) if n else 0,
        "isolated_vertices": int(np.count_nonzero(out_deg == 0)) if not directed else int(
            np.count_nonzero((out_deg == 0) & (np.diff(arrays["in_offsets"]) == 0))),
        "self_loops": int(np.count_nonzero(src == dst)),
        "csr_bytes": int(sum(a.nbytes for a in arrays.values())),
        "vertex_id_bytes": int((gdir / "vertices.arrow").stat().st_size),
    }
    entry = GraphEntry(
        name=name, graph_id=graph_id, directed=directed, weighted=weights is not None,
        num_vertices=n, num_edges=int(len(arrays["out_targets"])), input_edges=int(len(src)),
        id_type="string" if pa.types.is_string(ids.type) else "int64", created=time.time(),
        source=source, stats=stats,
    )

    def commit(txn):
        # CSR blocks and slotted pages, in the same transaction as the entry that makes them visible
        entry.stats.update(write_topology(env, txn, graph_id, arrays))
        if replace_entry is not None:
            delete_topology(env, txn, replace_entry.graph_id)
        txn.put(name.encode(), entry.to_json(), db=db_catalog)

    env.write(commit)
    return entry
