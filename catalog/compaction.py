"""Compaction: a new base generation built from a graph's version, flipped in by a short commit.

Writes pile up as delta records on a stored base (:mod:`graphdb.catalog.delta`); every version
merges them into its CSR. Compaction writes the merged graph of a version ``n`` as a new base
generation and makes it the graph's base, in four steps:

1. *start* (writer lock, one small transaction): a new generated graph id, its directory (locked
   with ``flock`` while the compaction runs) and a marker ``compaction/<new id>`` in 'meta';
2. *build* (no lock: readers and writers go on): the merged arrays, vertex table and edge
   properties of version ``n`` are written as the new generation's Arrow files and CSR blocks,
   the blocks in transactions of a few MiB, so a writer waits at most one of them; a lease
   keeps version ``n``'s generation on disk meanwhile;
3. *flip* (writer lock, one transaction): the records committed after ``n`` are carried over,
   translated to the new generation's ids and positions; the entry names the new generation;
   the old one is retired (freed once no statement reads it: catalog.snapshot); the marker
   goes. A graph dropped or replaced meanwhile abandons the compaction;
4. the old generation is freed when no lease is left below its retirement.

Killed at any moment, the graph stays as last committed: before the flip nothing references
the new generation, and the next writer (:func:`tidy_compactions`) removes a marker whose
directory nobody holds locked, with the directory, the blocks written and the marker itself.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from graphdb.storage import delete_topology
from graphdb.storage.blocks import iter_prefix, put_array_chunked, seal, unpack_block
from graphdb.storage.delta import put_record, read_records
from graphdb.storage.disk import disk_full
from graphdb.storage.errors import CorruptData, DatabaseLocked

from .delta import DeltaLog, DeltaView, Op, decode_op, encode_op
from .entries import GraphEntry
from .errors import CorruptGraph, GraphNotFound
from .leases import retire_version
from .ledger import put_entry

if TYPE_CHECKING:
    from .catalog import Catalog

__all__ = ["TEST_PAUSE_ENV", "compact", "compaction_markers", "tidy_compactions"]

MARKER_PREFIX = b"compaction/"
#: Bytes of blocks one transaction of a compaction writes (what a writer may wait for).
CHUNK_BYTES = 8 << 20
#: Test hook: a path; the compaction creates it once its blocks are written, then sleeps.
TEST_PAUSE_ENV = "GRAPHDB_TEST_PAUSE_IN_COMPACTION"


def _marker_key(graph_id: str) -> bytes:
    return MARKER_PREFIX + graph_id.encode()


def compaction_markers(env) -> list[tuple[str, dict]]:
    """(new graph id, record) of every compaction started and not finished or cleaned up."""
    db = env.db("meta")
    out = []
    if db is None:
        return out
    with env.read_txn() as txn:
        for key, value in iter_prefix(txn, db, MARKER_PREFIX):
            try:
                record = json.loads(bytes(unpack_block(value, "a compaction marker")))
            except (CorruptData, ValueError):
                record = {}
            out.append((key[len(MARKER_PREFIX):].decode("ascii", "replace"), record))
    return out


def _held(path) -> bool:
    """Whether a live compaction holds the lock on directory ``path``."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def killed_compactions(env) -> bool:
    """Whether a compaction marker has no live compaction behind it (read without the writer
    lock: an open asks for the lock only then)."""
    for graph_id, _record in compaction_markers(env):
        try:
            directory = env.graph_dir(graph_id)
        except CorruptData:
            return True
        if not _held(directory):
            return True
    return False


def tidy_compactions(catalog: "Catalog") -> list[str]:
    """Remove what killed compactions left (the caller holds the writer lock): for a marker
    whose directory no process holds, the directory, the blocks and the marker."""
    env = catalog.env
    dead = []
    for graph_id, _record in compaction_markers(env):
        try:
            directory = env.graph_dir(graph_id)
        except CorruptData:
            directory = None
        if directory is not None and _held(directory):
            continue
        if directory is not None:
            env.remove_graph_dir(graph_id)
        dead.append(graph_id)
    if dead:
        def commit(txn):
            for graph_id in dead:
                delete_topology(env, txn, graph_id)
                txn.delete(_marker_key(graph_id), db=env.db("meta"))

        env.write(commit)
    return dead


def _committed(catalog: "Catalog", name: str) -> GraphEntry | None:
    try:
        return catalog.committed().get(name, exact=True)
    except GraphNotFound:
        return None


def compact(catalog: "Catalog", name: str, *, cancelled: Callable[[], bool] = lambda: False,
            lock_timeout: float | None = None) -> GraphEntry | None:
    """Compact graph ``name`` (see the module docstring); its new entry, or None when there
    was nothing to do (no delta, a compaction of it already running, the graph dropped or
    replaced meanwhile, or ``cancelled()``)."""
    from .writer import LOCK_TIMEOUT  # (the writing modules load when something is written)

    env = catalog.env
    lock_timeout = LOCK_TIMEOUT if lock_timeout is None else lock_timeout
    with contextlib.ExitStack() as stack:
        with env.writer_lock(timeout=lock_timeout):
            tidy_compactions(catalog)
            entry = _committed(catalog, name)
            if entry is None or not entry.changed:
                return None
            if any(r.get("base") == entry.graph_id and _held(env.graph_dir(g))
                   for g, r in compaction_markers(env)):
                return None
            graph_id = uuid.uuid4().hex
            record = json.dumps({"graph": entry.name, "base": entry.graph_id,
                                 "version": entry.version, "started": time.time()}).encode()
            # the marker first: killed before its directory exists, the marker still names
            # what to remove (a directory nothing names would wait for the next ingest)
            env.write(lambda txn: txn.put(_marker_key(graph_id),
                                          seal(np.frombuffer(record, np.uint8)),
                                          db=env.db("meta")))
            directory = env.new_graph_dir(graph_id)
            fd = os.open(directory, os.O_RDONLY)
            stack.callback(os.close, fd)
            fcntl.flock(fd, fcntl.LOCK_EX)
            # the lease that keeps this version's generation on disk while it is read
            stack.enter_context(catalog.snapshot(committed=True))
        done = None
        try:
            try:
                built = _build(catalog, entry, graph_id, cancelled)
            except OSError as exc:  # the new generation's files on a full disk
                full = disk_full(exc, {"database": env.path})
                if full is None:
                    raise
                raise full from None
            if built is not None:
                with env.writer_lock(timeout=lock_timeout):
                    done = _flip(catalog, entry, graph_id, built)
        finally:
            if done is None:
                with env.writer_lock(timeout=lock_timeout):
                    env.remove_graph_dir(graph_id)
                    env.write(lambda txn: (delete_topology(env, txn, graph_id),
                                           txn.delete(_marker_key(graph_id),
                                                      db=env.db("meta"))))
    with contextlib.suppress(DatabaseLocked), env.writer_lock():
        catalog.free_retired()  # the old generation, if no statement reads it any more
    return done


class _Built:
    """A new generation written (not yet referenced), and what the flip needs of version n."""

    def __init__(self, view: DeltaView, origin: np.ndarray, out_offsets: np.ndarray,
                 out_targets: np.ndarray, stats: dict, files: dict, vertex_ids: pa.Array,
                 vertex_schema: pa.Schema, edge_schema: pa.Schema | None):
        self.view, self.origin = view, origin
        self.out_offsets, self.out_targets = out_offsets, out_targets
        self.stats, self.files = stats, files
        self.vertex_ids, self.vertex_schema, self.edge_schema = \
            vertex_ids, vertex_schema, edge_schema


def _build(catalog: "Catalog", entry: GraphEntry, graph_id: str,
           cancelled: Callable[[], bool]) -> _Built | None:
    env = catalog.env
    started = time.perf_counter()
    with catalog.reading(entry):
        view = catalog.versions.view(entry)
        names = ["out_offsets", "out_targets"] + (["out_weights"] if entry.weighted else [])
        if entry.directed:
            names += [n.replace("out_", "in_") for n in names]
        arrays = {name: catalog.read_array(entry, name) for name in names}
        vertices = catalog.vertex_table(entry)
        props = catalog.edge_properties(entry)
        origin = catalog.versions.origin(entry)
    if cancelled():
        return None
    from .generation import write_arrow
    from .ingest import arrow_records

    write_arrow(env, graph_id, "vertices.arrow", vertices)
    if props is not None:
        write_arrow(env, graph_id, "edges.arrow", props)
    files = arrow_records(env, env.graph_dir(graph_id))
    block_bytes = 0
    for name, values in arrays.items():
        if cancelled():
            return None
        block_bytes += put_array_chunked(env, "blocks", graph_id, name, values,
                                         env.layout.page_size, CHUNK_BYTES,
                                         lambda: not cancelled())
    if cancelled():
        return None
    _test_pause()
    out_offsets, out_targets = arrays["out_offsets"], arrays["out_targets"]
    degrees = np.diff(out_offsets)
    lonely = degrees == 0
    if entry.directed:
        lonely &= np.diff(arrays["in_offsets"]) == 0
    rows = np.repeat(np.arange(len(degrees), dtype=np.int64), degrees)
    stats = dict(entry.stats)
    stats.update(max_out_degree=int(degrees.max(initial=0)),
                 isolated_vertices=int(np.count_nonzero(lonely)),
                 self_loops=int(np.count_nonzero(rows == out_targets)),
                 csr_bytes=int(sum(a.nbytes for a in arrays.values())),
                 block_bytes=block_bytes,
                 vertex_id_bytes=files["vertices.arrow"]["bytes"],
                 edge_property_bytes=files.get("edges.arrow", {}).get("bytes", 0),
                 compaction_seconds=round(time.perf_counter() - started, 3))
    stats["bytes_stored"] = block_bytes + stats["vertex_id_bytes"] + stats["edge_property_bytes"]
    for key in ("pages", "page_bytes"):
        stats.pop(key, None)
    return _Built(view, origin, out_offsets, out_targets, stats, files,
                  vertices.column("id").combine_chunks(), vertices.schema,
                  None if props is None else props.schema)


def _test_pause() -> None:
    path = os.environ.get(TEST_PAUSE_ENV)
    if path:
        open(path, "w").close()
        time.sleep(3600)


def _flip(catalog: "Catalog", entry: GraphEntry, graph_id: str, built: _Built
          ) -> GraphEntry | None:
    from .writer import base_summary, count_op, with_counts

    env = catalog.env
    latest = _committed(catalog, entry.name)
    if latest is None or latest.graph_id != entry.graph_id:
        return None  # dropped, replaced or compacted by another process meanwhile
    base = GraphEntry(
        name=entry.name, graph_id=graph_id, directed=entry.directed, weighted=entry.weighted,
        num_vertices=entry.num_vertices, num_edges=entry.num_edges,
        input_edges=entry.input_edges, id_type=entry.id_type, created=entry.created,
        source=entry.source, stats=built.stats, files=built.files,
        delta={"compacted": time.time(), "generation": entry.delta.get("generation", 0) + 1})
    ops: list[Op] = []
    if latest.version > entry.version:
        with env.read_txn() as txn:
            payloads = read_records(env, txn, entry.graph_id, entry.version + 1, latest.version)
        translate = _Translation(built, entry.directed)
        for sequence, payload in enumerate(payloads, start=entry.version + 1):
            ops.append(translate(decode_op(payload, f"delta record {sequence} of graph "
                                                    f"'{entry.name}'")))
    new = base
    if ops:
        log = DeltaLog(base, lambda: built.vertex_ids, built.vertex_schema, built.edge_schema)
        summary = base_summary(base)
        for op in ops:
            count_op(summary, op, log, base)
            log.append(op)
        tombstoned = summary.pop("_tombstoned", 0)
        if entry.directed:
            summary["deleted_base_edges"] = tombstoned
        else:
            summary["deleted_base_edges"] = _undirected_edges(built, log)
        summary["bytes"] = sum(len(encode_op(op)) for op in ops)
        new = with_counts(base, len(ops), summary)
        new = replace(new, delta={**new.delta, "compacted": base.delta["compacted"],
                                  "generation": base.delta["generation"]})
    if "property_graph" in latest.stats:  # the labels' id ranges of the newest version
        new = replace(new, stats={**new.stats, "property_graph": latest.stats["property_graph"]})
    counts = (new.num_vertices, new.num_edges, new.input_edges)
    if counts != (latest.num_vertices, latest.num_edges, latest.input_edges):
        raise CorruptGraph(f"compacting version {entry.version} with the {len(ops)} records "
                           f"after it gives {counts} (vertices, stored and loaded edges), the "
                           f"graph has {(latest.num_vertices, latest.num_edges)}",
                           graph=entry.name)

    def commit(txn):
        for sequence, op in enumerate(ops, start=1):
            put_record(env, txn, graph_id, sequence, encode_op(op))
        put_entry(env, txn, entry.name, new.to_json())
        retire_version(env, txn, latest)
        txn.delete(_marker_key(graph_id), db=env.db("meta"))

    env.write(commit)
    return new


def _undirected_edges(built: _Built, log: DeltaLog) -> int:
    """Base edges the carried records delete, an undirected edge's two positions once."""
    deletes = log.edge_deletes()
    positions = deletes[deletes >= 0]
    rows = np.searchsorted(built.out_offsets, positions, side="right") - 1
    loops = int(np.count_nonzero(rows == built.out_targets[positions]))
    return loops + (len(positions) - loops) // 2


class _Translation:
    """Records of the old generation committed after version n, in the new generation's
    terms: dense ids through n's view order, base positions and delta edges alive at n to
    their places in the new base, later delta edges renumbered from 0."""

    def __init__(self, built: _Built, directed: bool):
        view, origin = built.view, built.origin
        self.view = view
        self.next_n = view.next_vertex
        self.vertices_n = view.num_vertices
        self.added_n = view.edges_added
        self.base_new = np.full(view.base.num_edges, -1, dtype=np.int64)
        from_base = np.flatnonzero(origin >= 0)
        self.base_new[origin[from_base]] = from_base
        from_delta = np.flatnonzero(origin < 0)
        ids = -origin[from_delta] - 1
        order = np.argsort(ids, kind="stable")
        self.delta_ids, self.delta_positions = ids[order], from_delta[order]

    def vertex(self, dense: np.ndarray) -> np.ndarray:
        old = dense < self.next_n
        out = np.empty(len(dense), dtype=np.int64)
        out[old] = self.view.lut[dense[old]]
        out[~old] = self.vertices_n + dense[~old] - self.next_n
        if np.any(out < 0):
            raise CorruptGraph("a record after the compacted version names a vertex deleted "
                               "before it", file="meta.lmdb/data.mdb")
        return out

    def edges(self, edges: np.ndarray) -> np.ndarray:
        out = []
        lost = False
        for value in edges.tolist():
            if value >= 0:
                out.append(int(self.base_new[value]))
                lost |= out[-1] < 0
            elif -value - 1 >= self.added_n:  # added after n: a delta edge, renumbered
                out.append(-(-value - 1 - self.added_n) - 1)
            else:  # alive at n: in the new base (an undirected one at both its positions)
                d = -value - 1
                lo = np.searchsorted(self.delta_ids, d, side="left")
                hi = np.searchsorted(self.delta_ids, d, side="right")
                out.extend(int(p) for p in self.delta_positions[lo:hi])
                lost |= hi == lo
        if lost:
            raise CorruptGraph("a record after the compacted version deletes an edge deleted "
                               "before it", file="meta.lmdb/data.mdb")
        return np.array(out, dtype=np.int64)

    def __call__(self, op: Op) -> Op:
        table = op.table
        if op.kind == "add_edges":
            for name in ("src", "dst"):
                index = table.column_names.index(name)
                table = table.set_column(index, name, pa.array(self.vertex(
                    _ints(table, name)), pa.int64()))
        elif op.kind in ("delete_vertices", "update_vertices"):
            index = table.column_names.index("vertex")
            table = table.set_column(index, "vertex", pa.array(self.vertex(
                _ints(table, "vertex")), pa.int64()))
        elif op.kind == "delete_edges":
            table = pa.table({"edge": pa.array(self.edges(_ints(table, "edge")), pa.int64())})
        return Op(op.kind, table)


def _ints(table: pa.Table, name: str) -> np.ndarray:
    return np.asarray(table.column(name).to_numpy(), dtype=np.int64)

