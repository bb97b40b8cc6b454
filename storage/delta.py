"""Delta records: the writes committed to a graph after its base generation was stored.

A graph version is a stored *base generation* (its CSR blocks, pages and Arrow files, under a
generated graph id, immutable) plus the *delta records* committed since: one record per
operation of a write (inserted vertices or edges, deleted ones, changed properties), numbered
1, 2, 3, ... within the generation::

    deltas   <graph id>/<sequence %016d>     one operation, sealed with a block's checksum trailer

Records are appended in the same LMDB write transaction that raises the graph's version in its
catalog entry, so a version is visible exactly when its records are, and a write killed before
its commit leaves none. They are never changed: a reader of version ``n`` reads records
``1..n`` whatever is appended after. They go with their generation: :func:`delete_records`,
called by :func:`graphdb.storage.topology.delete_topology` when a retired generation is freed.
What a record holds is the catalog's business (``graphdb.catalog.delta``): here it is bytes.
"""

from __future__ import annotations

import numpy as np

from .blocks import delete_prefix, seal, unpack_block
from .errors import CorruptData

__all__ = ["DELTA_DB", "delete_records", "put_record", "read_records", "record_key"]

#: The sub-database of delta records.
DELTA_DB = "deltas"


def record_key(graph_id: str, sequence: int) -> bytes:
    return f"{graph_id}/{sequence:016d}".encode()


def put_record(env, txn, graph_id: str, sequence: int, payload: bytes) -> int:
    """Put record ``sequence`` of generation ``graph_id`` in ``txn``; returns its bytes."""
    value = seal(np.frombuffer(payload, dtype=np.uint8))
    if not txn.put(record_key(graph_id, sequence), value, db=env.db(DELTA_DB), overwrite=False):
        raise CorruptData(f"delta record {sequence} of graph {graph_id} exists already")
    return int(value.nbytes)


def read_records(env, txn, graph_id: str, first: int, last: int) -> list[bytes]:
    """The payloads of records ``first..last`` (inclusive) of ``graph_id``, each checked; a
    missing one is :class:`CorruptData` (a version's records are all there or it is not)."""
    db = env.db(DELTA_DB)
    out = []
    if last < first:
        return out
    cursor = txn.cursor(db=db) if db is not None else None
    found = cursor is not None and cursor.set_key(record_key(graph_id, first))
    for sequence in range(first, last + 1):
        where = f"delta record {sequence} of graph {graph_id}"
        if not found or bytes(cursor.key()) != record_key(graph_id, sequence):
            raise CorruptData(f"{where} is missing", missing=True)
        out.append(bytes(unpack_block(cursor.value(), where)))
        found = cursor.next()
    return out


def delete_records(env, txn, graph_id: str) -> int:
    """Delete every delta record of ``graph_id``; returns how many."""
    db = env.db(DELTA_DB)
    return 0 if db is None else delete_prefix(txn, db, f"{graph_id}/".encode())
