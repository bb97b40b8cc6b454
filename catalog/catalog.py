"""The catalog: which graphs exist, their metadata, and creating and dropping them."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa

from graphdb.storage import BufferManager, Environment, delete_topology

from .entries import GraphEntry
from .errors import CatalogError, GraphExists, GraphNotFound
from .ingest import IngestOptions, run_ingest

__all__ = ["Catalog", "valid_graph_name"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def valid_graph_name(name: str) -> bool:
    return bool(_NAME.match(name))


class Catalog:
    """Graph entries in the ``catalog`` sub-database; data through ``storage``."""

    def __init__(self, env: Environment, buffers: BufferManager | None = None):
        self.env = env
        #: every read of stored topology goes through this pool (never LMDB directly)
        self.buffers = buffers if buffers is not None else BufferManager(env)

    # -- reading ------------------------------------------------------------------------------
    def entries(self) -> list[GraphEntry]:
        db = self.env.db("catalog")
        if db is None:
            return []
        with self.env.read_txn() as txn:
            return [GraphEntry.from_json(v) for _k, v in txn.cursor(db=db)]

    def names(self) -> list[str]:
        return [e.name for e in self.entries()]

    def get(self, name: str, *, exact: bool = False) -> GraphEntry:
        db = self.env.db("catalog")
        raw = None
        if db is not None:
            with self.env.read_txn() as txn:
                raw = txn.get(name.encode(), db=db)
                raw = None if raw is None else bytes(raw)
        if raw is None and not exact:
            # SQL identifiers are case-insensitive unless quoted: accept a unique case-folded match.
            folded = [n for n in self.names() if n.lower() == name.lower()]
            if len(folded) == 1:
                return self.get(folded[0], exact=True)
        if raw is None:
            raise GraphNotFound(name, self.names())
        return GraphEntry.from_json(raw)

    def read_array(self, entry: GraphEntry, array: str) -> np.ndarray:
        return self.buffers.read_array(entry.graph_id, array)

    def vertex_ids(self, entry: GraphEntry) -> pa.Array:
        """The user's vertex ids, indexed by internal id (memory-mapped Arrow file)."""
        return self.vertex_table(entry).column("id").combine_chunks()

    def vertex_table(self, entry: GraphEntry) -> pa.Table:
        """``g.vertices``: the user's id (column ``id``) and vertex properties, internal order."""
        path = self.env.graph_dir(entry.graph_id) / "vertices.arrow"
        with pa.memory_map(str(path)) as source:
            return pa.ipc.open_file(source).read_all()

    def vertex_schema(self, entry: GraphEntry) -> pa.Schema:
        """The columns of ``g.vertices`` (the file's schema only: no data is read)."""
        path = self.env.graph_dir(entry.graph_id) / "vertices.arrow"
        with pa.memory_map(str(path)) as source:
            return pa.ipc.open_file(source).schema

    def edge_table(self, entry: GraphEntry) -> pa.Table:
        """``g.edges``: ``src``, ``dst`` (user ids), ``weight`` if weighted, edge properties.

        Rows are in stored (out-CSR) order; an undirected edge appears in both directions (with
        the same properties).
        """
        ids = self.vertex_ids(entry)
        offsets = self.read_array(entry, "out_offsets")
        targets = self.read_array(entry, "out_targets")
        sources = np.repeat(np.arange(entry.num_vertices, dtype=np.int64), np.diff(offsets))
        columns = {"src": ids.take(pa.array(sources)),
                   "dst": ids.take(pa.array(targets.astype(np.int64)))}
        if entry.weighted:
            columns["weight"] = pa.array(self.read_array(entry, "out_weights"))
        table = pa.table(columns)
        path = self.env.graph_dir(entry.graph_id) / "edges.arrow"
        if path.exists():
            with pa.memory_map(str(path)) as source:
                props = pa.ipc.open_file(source).read_all()
            for field, column in zip(props.schema, props.columns):
                table = table.append_column(field, column)
        return table

    def edge_schema(self, entry: GraphEntry) -> pa.Schema:
        """The columns of ``g.edges`` without building the table (binding needs only names)."""
        id_type = pa.string() if entry.id_type == "string" else pa.int64()
        fields = [pa.field("src", id_type), pa.field("dst", id_type)]
        if entry.weighted:
            fields.append(pa.field("weight", pa.float64()))
        path = self.env.graph_dir(entry.graph_id) / "edges.arrow"
        if path.exists():
            with pa.memory_map(str(path)) as source:
                fields.extend(pa.ipc.open_file(source).schema)
        return pa.schema(fields)

    # -- writing ------------------------------------------------------------------------------
    def ingest(self, name: str, edges: str, options: IngestOptions = IngestOptions(), *,
               replace: bool = False, progress=None) -> GraphEntry:
        """Load an edge file (or a glob of files) as graph ``name``; visible only once committed.

        ``progress``: a :class:`graphdb.catalog.progress.Progress` to report to (default: silent)."""
        if not valid_graph_name(name):
            raise CatalogError(
                f"invalid graph name '{name}': use letters, digits and underscores, "
                "starting with a letter or underscore"
            )
        with self.env.writer_lock():
            self._remove_orphans()
            old = self._existing(name)
            if old is not None and not replace:
                raise GraphExists(name)
            try:
                entry = run_ingest(self.env, name, str(edges), options, replace_entry=old,
                                   progress=progress)
            except BaseException:
                self._remove_orphans()
                raise
            if old is not None:
                shutil.rmtree(self.env.graph_dir(old.graph_id), ignore_errors=True)
                self.buffers.forget(old.graph_id)
            return entry

    def drop(self, name: str) -> GraphEntry:
        with self.env.writer_lock():
            entry = self.get(name)

            def commit(txn):
                delete_topology(self.env, txn, entry.graph_id)
                txn.delete(entry.name.encode(), db=self.env.db("catalog"))

            self.env.write(commit)
            self.buffers.forget(entry.graph_id)
            shutil.rmtree(self.env.graph_dir(entry.graph_id), ignore_errors=True)
            return entry

    def _existing(self, name: str) -> GraphEntry | None:
        try:
            return self.get(name, exact=True)
        except GraphNotFound:
            return None

    def _remove_orphans(self) -> list[str]:
        return self.env.remove_unreferenced({e.graph_id for e in self.entries()})

    @property
    def path(self) -> Path:
        return self.env.path
