"""One snapshot of the catalog per statement, and graph versions freed only when unread.

A statement reads the catalog once: :meth:`Catalog.snapshot` reads every entry in one LMDB read
transaction, and the statement looks graphs up in that :class:`Snapshot` (and reads their data
through it) until it ends, without holding the read transaction (a long one would pin every
page LMDB frees meanwhile, and block the writes a statement may later make).

What keeps the data of the versions it saw on disk is a *lease*. The catalog has a sequence
number, raised by every commit that takes a version out of use (DROP GRAPH, ``--replace``); such
a commit removes or replaces the entry at once and records the old version as *retired* at the
new number, leaving its blocks, pages and Arrow files where they are. A statement holds a lease
on the number it read before its snapshot (a byte-range lock, :mod:`graphdb.storage.locks`, so
the kernel drops it if the process dies). A version retired at R is freed (its directory removed,
then its keys deleted in one write transaction) by the next writer, or a connection closing,
once no live lease is below R: every statement that could have seen it has ended.

Why the order is safe: a reader takes its lease *before* reading the catalog, a writer commits
the retirement *before* it looks at the leases. If the writer finds no lease below R, any reader
that takes one later reads a catalog without the retired version.

::

    meta   catalog/sequence        decimal: the number of the last retirement
           retired/<graph_id>      JSON {"sequence": R, "name": ...}, sealed with a checksum
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from graphdb.storage import delete_topology
from graphdb.storage.blocks import iter_prefix, seal, unpack_block
from graphdb.storage.env import valid_graph_id
from graphdb.storage.errors import CorruptData

from .entries import MAX_NAME_LENGTH, GraphEntry
from .errors import CorruptGraph, GraphNotFound

if TYPE_CHECKING:
    from .catalog import Catalog

__all__ = ["Snapshot", "free_retired", "read_sequence", "retire_version", "retired_versions"]

SEQUENCE_KEY = b"catalog/sequence"
RETIRED_PREFIX = b"retired/"


class Snapshot:
    """The catalog as one statement sees it: ``snap.get(name)`` and the reads of that version.

    Entries are parsed and validated when first looked up (a damaged entry fails the statements
    that use it, not every statement). The reading methods are the catalog's, restricted to
    the versions of this snapshot, whose data the snapshot's lease keeps on disk.
    """

    def __init__(self, catalog: "Catalog", raw: dict[str, bytes], sequence: int,
                 overlay: dict[str, GraphEntry] | None = None):
        self._catalog = catalog
        self._raw = raw
        self.sequence = sequence
        #: entries an open write transaction of the connection changed (seen instead)
        self._parsed: dict[str, GraphEntry] = dict(overlay or {})

    # -- lookups --------------------------------------------------------------------------------
    def names(self) -> list[str]:
        return sorted(self._raw)

    def entries(self) -> list[GraphEntry]:
        return [self._entry(name) for name in sorted(self._raw)]

    def get(self, name: str, *, exact: bool = False) -> GraphEntry:
        """The entry of graph ``name``; SQL identifiers are case-insensitive unless quoted, so a
        unique case-folded match is accepted unless ``exact``."""
        return self._entry(self.key_of(name, exact=exact))

    def key_of(self, name: str, *, exact: bool = False) -> str:
        """The name graph ``name`` is stored under (without parsing its entry)."""
        key = name if isinstance(name, str) and name in self._raw else None
        if key is None and not exact and isinstance(name, str) and len(name) <= MAX_NAME_LENGTH:
            folded = [n for n in self._raw if n.lower() == name.lower()]
            if len(folded) == 1:
                key = folded[0]
        if key is None:
            raise GraphNotFound(str(name), self.names())
        return key

    def raw(self, key: str) -> bytes:
        """The stored JSON of an entry, unparsed (dropping a damaged entry needs no more)."""
        return self._raw[key]

    def _entry(self, key: str) -> GraphEntry:
        entry = self._parsed.get(key)
        if entry is None:
            entry = self._parsed[key] = self._catalog.parse_entry(self._raw[key], key)
        return entry

    def __contains__(self, entry: GraphEntry) -> bool:
        raw = self._raw.get(entry.name)
        if raw is None:
            return False
        mine = self._entry(entry.name)
        return (mine.graph_id, mine.version) == (entry.graph_id, entry.version)

    # -- reading a version ----------------------------------------------------------------------
    def _own(self, entry: GraphEntry) -> GraphEntry:
        if entry not in self:
            raise ValueError(f"graph '{entry.name}' version {entry.graph_id} is not in this "
                             "snapshot; look it up with snapshot.get()")
        return entry

    def read_csr(self, entry: GraphEntry, direction: str = "out", weights: bool = False):
        """See :meth:`Catalog.read_csr`."""
        return self._catalog.read_csr(self._own(entry), direction, weights)

    def vertex_table(self, entry: GraphEntry):
        return self._catalog.vertex_table(self._own(entry))

    def vertex_ids(self, entry: GraphEntry):
        return self._catalog.vertex_ids(self._own(entry))

    def edge_table(self, entry: GraphEntry):
        return self._catalog.edge_table(self._own(entry))

    def edge_schema(self, entry: GraphEntry):
        return self._catalog.edge_schema(self._own(entry))


def read_sequence(txn, meta_db) -> int:
    raw = txn.get(SEQUENCE_KEY, db=meta_db) if meta_db is not None else None
    if raw is None:
        return 0
    text = bytes(raw)
    if not text.isdigit() or len(text) > 18:
        raise CorruptGraph(f"the catalog's sequence number is unreadable: {text[:40]!r}",
                           file="meta.lmdb/data.mdb")
    return int(text)


def retire_version(env, txn, entry: GraphEntry) -> int:
    """In ``txn`` (the commit that drops or replaces ``entry``), take its version out of use:
    raise the sequence number and record the version as retired at it. Returns the number."""
    meta = env.db("meta")
    sequence = read_sequence(txn, meta) + 1
    txn.put(SEQUENCE_KEY, str(sequence).encode(), db=meta)
    record = json.dumps({"sequence": sequence, "name": entry.name}).encode()
    txn.put(RETIRED_PREFIX + entry.graph_id.encode(), seal(np.frombuffer(record, np.uint8)),
            db=meta)
    return sequence


def retired_versions(env) -> list[tuple[bytes, str | None, int]]:
    """(key, graph id or None when the key names none, sequence) of every retired version; a
    record that fails its checksum counts as retired at the latest number (freed last)."""
    meta = env.db("meta")
    if meta is None:
        return []
    out = []
    with env.read_txn() as txn:
        latest = read_sequence(txn, meta)
        for key, value in iter_prefix(txn, meta, RETIRED_PREFIX):
            graph_id = key[len(RETIRED_PREFIX):].decode("ascii", "replace")
            try:
                sequence = int(json.loads(bytes(unpack_block(value, "retired")))["sequence"])
            except (CorruptData, ValueError, KeyError, TypeError):
                sequence = latest
            out.append((key, graph_id if valid_graph_id(graph_id) else None, sequence))
    return out


def _deletion_bytes(env, graph_ids: list[str]) -> int:
    """Disk a transaction deleting these versions may need: deleting a key rewrites its leaf
    page (copy on write), and every freed page goes on LMDB's free list."""
    keys = 0
    with env.read_txn() as txn:
        for name in ("blocks", "pages"):
            db = env.db(name)
            if db is None:
                continue
            for graph_id in graph_ids:
                keys += sum(1 for _ in iter_prefix(txn, db, f"{graph_id}/".encode(),
                                                   values=False))
    return (4 << 20) + 256 * keys


def free_retired(env, leased_below: Callable[[int], bool],
                 forget: Callable[[str], None]) -> list[str]:
    """Free every retired version no live lease can still read; returns their graph ids.

    The caller holds the writer lock. Directories go first, then the keys in one transaction:
    killed in between, the retired records remain and the next call finishes the job."""
    freeable = [(key, graph_id) for key, graph_id, sequence in retired_versions(env)
                if not leased_below(sequence)]
    if not freeable:
        return []
    for i, (_key, graph_id) in enumerate(freeable):
        if graph_id is not None:
            try:
                env.remove_graph_dir(graph_id)
            except CorruptData:  # graphs/ is not a plain directory: free nothing of it
                freeable[i] = (None, None)
    freeable = [(key, graph_id) for key, graph_id in freeable if key is not None]
    if not freeable:
        return []

    def commit(txn):
        for key, graph_id in freeable:
            if graph_id is not None:
                delete_topology(env, txn, graph_id)
            txn.delete(key, db=env.db("meta"))

    env.write(commit, nbytes=_deletion_bytes(env, [g for _k, g in freeable if g is not None]))
    for _key, graph_id in freeable:
        if graph_id is not None:
            forget(graph_id)
    return [graph_id for _key, graph_id in freeable if graph_id is not None]
