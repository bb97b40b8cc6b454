"""One connection's writes to its graphs: the writer lock, the open transaction, the commit.

Writers take turns: a write takes the database's writer lock (the one ingests and DROP GRAPH
take; it waits up to ``lock_timeout`` seconds for another writer, then gives up with
:class:`~graphdb.storage.DatabaseLocked`) and only then reads the graph's committed entry, so
what it computes is based on the newest version. Readers never wait: they read committed
versions (catalog.snapshot), and the statements of the connection that writes see its own
uncommitted changes (``Catalog.pending``; the residency key of such a version carries a token,
so nothing built from it is ever taken for a committed version).

A statement outside BEGIN ... COMMIT commits on its own. Inside one, its operations are added
to the open transaction (a statement that fails adds none); COMMIT writes every changed graph's
records and entry in ONE LMDB write transaction (all or nothing, also when the process is
killed), ROLLBACK forgets them. The lock is held from the transaction's first write to its end.
"""

from __future__ import annotations

import contextlib
import dataclasses
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from graphdb.storage.delta import put_record
from graphdb.storage.env import LOCK_TIMEOUT, WRITE_HEADROOM

from .delta import Op, encode_op
from .entries import GraphEntry
from .errors import CatalogError, GraphChanged
from .ledger import put_entry
from .tables.transaction import TableWrites

if TYPE_CHECKING:
    from .catalog import Catalog
    from .delta import DeltaLog

__all__ = ["LOCK_TIMEOUT", "Writer", "base_summary", "count_op", "with_counts"]

#: Seconds a write waits for another writer to finish before giving up.


@dataclass
class _Changed:
    """A graph the open transaction changed."""

    committed: GraphEntry  # its entry as committed when the transaction first wrote to it
    raw: bytes  # the stored bytes of that entry (the commit checks they did not change)
    entry: GraphEntry  # its entry with the transaction's changes (version counts them)
    ops: list[Op] = field(default_factory=list)


class Writer:
    """The writes of one connection (see the module docstring)."""

    def __init__(self, catalog: "Catalog", lock_timeout: float | None = None):
        self.catalog = catalog
        #: seconds a write waits for the writer lock (default: the catalog's, LOCK_TIMEOUT)
        self.lock_timeout = catalog.lock_timeout if lock_timeout is None else lock_timeout
        #: BEGIN was given: statements add to one transaction until COMMIT or ROLLBACK
        self.explicit = False
        self._lock: contextlib.ExitStack | None = None
        self._changed: dict[str, _Changed] = {}
        #: committed entries read since the lock was taken (stay the newest while it is held)
        self._read: dict[str, tuple[GraphEntry, bytes]] = {}
        #: the entries the last commit made
        self.committed: list[GraphEntry] = []
        #: the transaction's changes to tables (committed with the graphs')
        self.tables = TableWrites(catalog, self._acquire)

    # -- the transaction ------------------------------------------------------------------------
    @property
    def in_transaction(self) -> bool:
        return self.explicit

    def begin(self) -> None:
        if self.explicit:
            raise CatalogError("a transaction is already open: COMMIT or ROLLBACK it first")
        self.explicit = True

    def commit(self) -> list[GraphEntry]:
        """Make the transaction's changes durable; returns the committed entries. The writer
        lock goes before the commit is waited durable (the next writer's commit goes on
        meanwhile, and one sync covers both: storage.durability)."""
        wrote = bool(self._changed) or self.tables.changed  # (all it commits waits durable)
        try:
            entries = self._write() if wrote else []
        except BaseException:
            self._forget()
            raise
        self._forget(committed=True)
        self.committed = entries
        if wrote:
            self.catalog.env.wait_durable()
        return entries

    def rollback(self) -> list[GraphEntry]:
        """Forget the transaction's changes; returns the entries it had changed (pending)."""
        entries = [c.entry for c in self._changed.values()]
        self._forget()
        return entries

    @contextlib.contextmanager
    def statement(self) -> Iterator[None]:
        """One write statement: its changes commit at the end unless a transaction is open;
        a statement that fails leaves the transaction as it was before it."""
        saved = {name: (c.entry, len(c.ops)) for name, c in self._changed.items()}
        saved_tables = self.tables.mark()
        try:
            yield
        except BaseException:
            self.tables.restore(saved_tables)
            for name, c in list(self._changed.items()):
                entry, ops = saved.get(name, (None, 0))
                self.log(c.committed).truncate(entry.version if entry else c.committed.version)
                if entry is None:
                    del self._changed[name]
                    self.catalog.pending.pop(name, None)
                else:
                    c.entry = entry
                    del c.ops[ops:]
                    self.catalog.pending[name] = entry
            if not self.explicit:
                self._forget()
            raise
        if not self.explicit:
            self.commit()

    # -- reading and changing a graph -----------------------------------------------------------
    def entry(self, name: str) -> GraphEntry:
        """Graph ``name`` as this transaction sees it (taking the writer lock first, so a
        committed entry read here stays the newest until the transaction ends)."""
        self._acquire()
        changed = self._changed.get(name)
        if changed is not None:
            return changed.entry
        entry, _raw = self._committed(name)
        changed = self._changed.get(entry.name)
        return entry if changed is None else changed.entry

    def log(self, entry: GraphEntry) -> "DeltaLog":
        return self.catalog.versions.log(entry)

    def apply(self, entry: GraphEntry, ops: list[Op], *, deleted_base_edges: int = 0,
              stats: dict | None = None) -> GraphEntry:
        """Add ``ops`` (built against ``entry``, which :meth:`entry` returned) to the
        transaction; returns the graph's entry with them. ``deleted_base_edges``: base edges
        the ops delete, as loaded (an undirected edge's two stored positions count once);
        counted from the ops on a directed graph. ``stats``: the version's stats, where the
        ops change them (a property graph's labels' id ranges)."""
        name = entry.name
        changed = self._changed.get(name)
        if changed is None:
            committed, raw = self._committed(name)
            if (committed.graph_id, committed.version) != (entry.graph_id, entry.version):
                raise GraphChanged(name)
            changed = _Changed(committed, raw, entry)
        elif changed.entry is not entry:
            raise GraphChanged(name)
        log = self.log(entry)
        if log.version > entry.version:  # records of a statement that did not finish
            log.truncate(entry.version)
        summary = dict(entry.delta) if entry.changed else base_summary(entry)
        try:
            for op in ops:
                count_op(summary, op, log, entry)
                log.append(op)
        except BaseException:
            log.truncate(entry.version)
            raise
        changed.ops.extend(ops)
        if entry.directed:
            deleted_base_edges = summary.pop("_tombstoned", 0)
        summary.pop("_tombstoned", None)
        summary["deleted_base_edges"] += deleted_base_edges
        summary["pending"] = uuid.uuid4().hex
        changed.entry = with_counts(entry, log.version, summary)
        if stats is not None:
            changed.entry = dataclasses.replace(changed.entry, stats=stats)
        self._changed[name] = changed
        self.catalog.pending[name] = changed.entry
        return changed.entry

    # -- internals ------------------------------------------------------------------------------
    def _committed(self, name: str) -> tuple[GraphEntry, bytes]:
        found = self._read.get(name)
        if found is not None:
            return found
        snap = self.catalog.committed()
        key = snap.key_of(name)
        found = self._read[name] = self._read[key] = (snap.get(key, exact=True), snap.raw(key))
        return found

    def _acquire(self) -> None:
        if self._lock is not None:
            return
        stack = contextlib.ExitStack()
        stack.enter_context(self.catalog.env.writer_lock(timeout=self.lock_timeout))
        self._lock = stack
        self._read = {}

    def _write(self) -> list[GraphEntry]:
        catalog = self.catalog
        env = catalog.env
        changes = []
        for name, c in self._changed.items():
            records = _coalesce(c.ops)
            if len(records) != len(c.ops):  # the log's versions are the records'
                log = self.log(c.committed)
                log.truncate(c.committed.version)
                for op in records:
                    log.append(op)
            payloads = [encode_op(op) for op in records]
            delta = {k: v for k, v in c.entry.delta.items() if k != "pending"}
            delta["bytes"] = c.committed.delta.get("bytes", 0) + sum(len(p) for p in payloads)
            final = dataclasses.replace(c.entry, version=c.committed.version + len(records),
                                        delta=delta)
            changes.append((name, c, payloads, final))
        total = sum(len(p) for change in changes for p in change[2])
        made = {}

        def commit(txn):
            db = env.db("catalog")  # (in the transaction: a careful reopen renews handles)
            for name, c, payloads, final in changes:
                raw = txn.get(name.encode(), db=db)
                if raw is None or bytes(raw) != c.raw:
                    raise GraphChanged(name)
                for i, payload in enumerate(payloads):
                    put_record(env, txn, c.committed.graph_id, c.committed.version + 1 + i,
                               payload)
                put_entry(env, txn, name, final.to_json())
            made["tables"] = self.tables.store(txn)
            made["generation"] = env.generation(txn)

        env.write(commit, nbytes=2 * (total + self.tables.estimate()) + WRITE_HEADROOM,
                  durable=False)
        if not changes:  # only tables changed: the kept read of the catalog follows them
            catalog.tables_committed(made["generation"], made["tables"])
        return [change[3] for change in changes]

    def _forget(self, committed: bool = False) -> None:
        self.tables.forget(committed)
        for name, c in self._changed.items():
            if not committed:
                self.log(c.committed).truncate(c.committed.version)
            self.catalog.pending.pop(name, None)
        self._changed = {}
        self._read = {}
        self.explicit = False
        if self._lock is not None:
            lock, self._lock = self._lock, None
            lock.close()

    def close(self) -> None:
        """The connection closes: an open transaction is rolled back."""
        self._forget()


def _coalesce(ops: list[Op]) -> list[Op]:
    """The transaction's operations as records: each run of inserts (vertices and edges, in
    any order) as at most two, its vertices first then its edges. Equivalent: new vertices and
    delta edges are numbered in the order they come, and an edge of the run names only
    vertices that exist before it."""
    out: list[Op] = []
    run: dict[str, list[pa.Table]] = {"add_vertices": [], "add_edges": []}

    def flush():
        for kind in ("add_vertices", "add_edges"):
            if run[kind]:
                tables = run[kind]
                out.append(Op(kind, tables[0] if len(tables) == 1 else
                              pa.concat_tables(tables).combine_chunks()))
                run[kind] = []

    for op in ops:
        if op.kind in run:
            run[op.kind].append(op.table)
        else:
            flush()
            out.append(op)
    flush()
    return out


def base_summary(entry: GraphEntry) -> dict:
    """The counts of a version without a delta (what a delta's first operation starts from)."""
    return {"base_vertices": entry.num_vertices, "base_edges": entry.num_edges,
            "base_input_edges": entry.input_edges, "new_vertices": 0, "deleted_vertices": 0,
            "updated_vertices": 0, "inserted_edges": 0, "delta_edges": 0, "stored_delta": 0,
            "tombstones": 0, "deleted_base_edges": 0, "bytes": 0,
            "compacted": entry.delta.get("compacted", entry.created),
            "generation": entry.delta.get("generation", 0)}


def count_op(summary: dict, op: Op, log: "DeltaLog", entry: GraphEntry) -> None:
    """Update the version's counts with one operation (before it is applied to ``log``)."""
    table = op.table
    if op.kind == "add_vertices":
        summary["new_vertices"] += table.num_rows
    elif op.kind == "delete_vertices":
        summary["deleted_vertices"] += table.num_rows
    elif op.kind == "update_vertices":
        summary["updated_vertices"] += table.num_rows
    elif op.kind == "add_edges":
        src = table.column("src").to_numpy()
        dst = table.column("dst").to_numpy()
        loops = int(np.count_nonzero(src == dst))
        summary["inserted_edges"] += len(src)
        summary["delta_edges"] += len(src)
        summary["stored_delta"] += len(src) if entry.directed else 2 * len(src) - loops
    else:  # delete_edges
        edges = table.column("edge").to_numpy()
        base = int(np.count_nonzero(edges >= 0))
        summary["tombstones"] += base
        summary["_tombstoned"] = summary.get("_tombstoned", 0) + base
        delta = -edges[edges < 0] - 1
        if delta.size:
            lengths = log.lengths[-1]
            src, dst = log.edge_ends(lengths.edges)
            src, dst = src[delta], dst[delta]
            loops = int(np.count_nonzero(src == dst))
            summary["delta_edges"] -= len(delta)
            summary["stored_delta"] -= len(delta) if entry.directed else 2 * len(delta) - loops


def with_counts(entry: GraphEntry, version: int, summary: dict) -> GraphEntry:
    """``entry`` at ``version``, its sizes from the delta's counts ``summary``."""
    vertices = summary["base_vertices"] + summary["new_vertices"] - summary["deleted_vertices"]
    edges = summary["base_edges"] - summary["tombstones"] + summary["stored_delta"]
    loaded = summary["base_input_edges"] - summary["deleted_base_edges"] + summary["delta_edges"]
    return dataclasses.replace(entry, version=version, num_vertices=vertices, num_edges=edges,
                               input_edges=max(loaded, 0), delta=summary)


def _committed_form(entry: GraphEntry) -> GraphEntry:
    delta = {k: v for k, v in entry.delta.items() if k != "pending"}
    return dataclasses.replace(entry, delta=delta)
