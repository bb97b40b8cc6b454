"""Leases and retirement: graph versions freed only when no statement can read them.

A statement reads the catalog once (:mod:`.snapshot`); what keeps the data of the versions it
saw on disk is a *lease*. The catalog has a sequence number, raised by every commit that takes
a version out of use (DROP GRAPH, ``--replace``, a compaction's flip); such a commit removes or
replaces the entry at once and records the old version as *retired* at the new number, leaving its blocks, pages and Arrow files where they are. A statement holds a lease
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

import numpy as np

from graphdb.storage import delete_topology
from graphdb.storage.blocks import iter_prefix, seal, unpack_block
from graphdb.storage.env import valid_graph_id
from graphdb.storage.errors import CorruptData

from .entries import GraphEntry
from .errors import CorruptGraph

__all__ = ["free_retired", "read_sequence", "retire_version", "retired_versions"]

SEQUENCE_KEY = b"catalog/sequence"
RETIRED_PREFIX = b"retired/"


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
