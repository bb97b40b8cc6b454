"""The catalog's ledger: its own count and checksums of entries, kept beside it in 'meta'.

LMDB has no page checksums. Each catalog entry is sealed (catalog.entries), so a damaged entry
is caught when it is read; but damage to an LMDB page can also make entries *disappear* (a
zeroed byte in a leaf's header reads as "no keys"), and then the catalog reads as smaller, or
empty, with nothing to say so. So every change to the 'catalog' sub-database goes through
:func:`put_entry` and :func:`delete_entry`, which keep, in the same transaction::

    meta  catalog/ledger/<key>  sealed: "<algorithm>:<checksum of the entry's bytes>:<graph id>"
          catalog/ledger        sealed: "<count of keys>:<algorithm>:<xor of the keys' checksums>"

and every snapshot of the catalog (:func:`audit`) compares what it read with them, in the same
read transaction:

- a key the ledger lists and the catalog lacks, or whose bytes differ from what was committed,
  is a *damaged* graph: statements naming it fail with CorruptGraph (never "does not exist"),
  and DROP GRAPH can still remove it (the ledger records its graph id, so its data is freed);
- a key in the catalog the ledger does not list is damaged too (a changed key: its entry, read
  by its graph id, names the graph it belongs to);
- a ledger whose count or checksum does not match its own records means the 'meta' tree is
  damaged: the whole database is refused.

Databases created before the ledger carry none (their marker file lacks the ``catalog ledger``
feature); the first read-write open builds it from the entries as they are (see
:func:`build`), and until then a snapshot checks what it can without it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from graphdb.storage.blocks import iter_prefix, seal, unpack_block
from graphdb.storage.checksum import ALGORITHMS, checksum, default_algorithm
from graphdb.storage.env import LEDGER_FEATURE, valid_graph_id
from graphdb.storage.errors import CorruptData

__all__ = ["FEATURE", "LEDGER_KEY", "LEDGER_PREFIX", "Audit", "audit", "build", "delete_entry",
           "put_entry", "salvage_graph_id"]

#: The marker-file feature of a database whose catalog has a ledger.
FEATURE = LEDGER_FEATURE
LEDGER_KEY = b"catalog/ledger"
LEDGER_PREFIX = b"catalog/ledger/"
_FILE = "meta.lmdb/data.mdb"


def salvage_graph_id(raw: bytes) -> str | None:
    """The generated graph id an entry's JSON names, even when the entry fails validation."""
    try:
        graph_id = json.loads(raw).get("graph_id")
    except (ValueError, AttributeError, UnicodeDecodeError, RecursionError):
        return None
    return graph_id if valid_graph_id(graph_id) else None


def _salvage_name(raw: bytes) -> str | None:
    try:
        name = json.loads(raw).get("name")
    except (ValueError, AttributeError, UnicodeDecodeError, RecursionError):
        return None
    return name if isinstance(name, str) else None


# -- writing --------------------------------------------------------------------------------------
def put_entry(env, txn, key: str, raw: bytes) -> None:
    """Store catalog entry ``raw`` under ``key`` and record it in the ledger (in ``txn``)."""
    txn.put(key.encode(), raw, db=env.db("catalog"))
    meta = env.db("meta")
    algorithm = default_algorithm()
    record = f"{algorithm}:{checksum(raw, algorithm)}:{salvage_graph_id(raw) or ''}".encode()
    new = txn.get(LEDGER_PREFIX + key.encode(), db=meta) is None
    txn.put(LEDGER_PREFIX + key.encode(), _sealed(record), db=meta)
    if new:
        _count(env, txn, key, +1)


def delete_entry(env, txn, key: str) -> None:
    """Remove catalog entry ``key`` and its ledger record (in ``txn``)."""
    txn.delete(key.encode(), db=env.db("catalog"))
    if txn.delete(LEDGER_PREFIX + key.encode(), db=env.db("meta")):
        _count(env, txn, key, -1)


def _count(env, txn, key: str, step: int) -> None:
    meta = env.db("meta")
    count, algorithm, digest = _read_count(txn.get(LEDGER_KEY, db=meta))
    count += step
    digest ^= _key_checksum(key, algorithm)
    txn.put(LEDGER_KEY, _sealed(f"{count}:{algorithm}:{digest}".encode()), db=meta)


def _read_count(raw) -> tuple[int, int, int]:
    if raw is None:
        return 0, default_algorithm(), 0
    try:
        count, algorithm, digest = bytes(unpack_block(raw, "the catalog's ledger")).split(b":")
        count, algorithm, digest = int(count), int(algorithm), int(digest)
        if algorithm not in ALGORITHMS:
            raise ValueError(f"unknown checksum algorithm {algorithm}")
        return count, algorithm, digest
    except (CorruptData, ValueError) as exc:
        raise CorruptData(f"the catalog's ledger record is damaged ({exc}); the catalog cannot "
                          "be trusted to be complete", file=_FILE) from None


def _key_checksum(key: str, algorithm: int) -> int:
    return checksum(key.encode(), algorithm)


def _sealed(text: bytes) -> np.ndarray:
    return seal(np.frombuffer(text, np.uint8))


def build(env) -> int:
    """Record every entry the catalog holds now in a new ledger (a database made before it);
    the caller holds the writer lock. Returns the number of entries."""
    def commit(txn):
        meta = env.db("meta")
        for key in list(iter_prefix(txn, meta, LEDGER_PREFIX, values=False)):
            txn.delete(key, db=meta)
        txn.delete(LEDGER_KEY, db=meta)
        entries = [(bytes(k), bytes(v)) for k, v in txn.cursor(db=env.db("catalog"))]
        for key, raw in entries:
            put_entry(env, txn, key.decode("utf-8", "replace"), raw)
        return len(entries)

    return env.write(commit)


# -- reading ---------------------------------------------------------------------------------------
@dataclass
class Audit:
    """What a snapshot's comparison with the ledger found: ``damaged`` maps a key (the graph's
    name) to what is wrong with it; ``graph_ids`` maps a key the ledger lists and the catalog
    lacks to the graph id it recorded (what DROP GRAPH frees)."""

    damaged: dict[str, str] = field(default_factory=dict)
    graph_ids: dict[str, str] = field(default_factory=dict)


def audit(txn, env, raw_entries: dict[str, bytes], checked: dict | None = None) -> Audit:
    """Compare the catalog entries read in ``txn`` with the ledger (see the module docstring).
    Raises CorruptData when the ledger itself is damaged. ``checked``: a memo of entry bytes
    whose checksum matched before (entries are the same bytes statement after statement)."""
    meta = env.db("meta")
    result = Audit()
    if meta is None:
        return result
    records = {}
    for key, value in iter_prefix(txn, meta, LEDGER_PREFIX):
        records[key[len(LEDGER_PREFIX):].decode("utf-8", "replace")] = bytes(value)
    count, algorithm, digest = _read_count(txn.get(LEDGER_KEY, db=meta))
    mine = 0
    for key in records:
        mine ^= _key_checksum(key, algorithm)
    if count != len(records) or mine != digest:
        raise CorruptData(f"the catalog's ledger records {count} entries and holds "
                          f"{len(records)}{' with other names' if count == len(records) else ''}"
                          "; the 'meta' tree of the file is damaged and the catalog cannot be "
                          "trusted to be complete", file=_FILE)
    for key, value in records.items():
        raw = raw_entries.get(key)
        try:
            algo, expected, graph_id = bytes(unpack_block(value, "ledger")).split(b":")
            algo, expected, graph_id = int(algo), int(expected), graph_id.decode("ascii")
            if algo not in ALGORITHMS:
                raise ValueError(f"unknown checksum algorithm {algo}")
        except (CorruptData, ValueError, UnicodeDecodeError):
            if raw is None:
                result.damaged[key] = ("its catalog entry is missing (and the ledger's "
                                             "record of it is damaged)")
            continue  # the entry carries its own seal; the ledger cannot say more of it
        if raw is None:
            result.damaged[key] = "its catalog entry is missing (the ledger records it)"
            if valid_graph_id(graph_id):
                result.graph_ids[key] = graph_id
            continue
        memo = (key, algo, expected)
        if checked is not None and checked.get(memo) == raw:
            continue
        if checksum(raw, algo) != expected:
            result.damaged[key] = ("its catalog entry differs from the one committed (the "
                                         "ledger's checksum)")
        elif checked is not None:
            if len(checked) > 4096:
                checked.clear()
            checked[memo] = raw
    for key, raw in raw_entries.items():
        if key in records:
            continue
        owner = _salvage_name(raw)
        if owner in result.damaged and owner not in raw_entries:
            result.damaged[owner] = (f"its catalog entry is stored under a damaged key "
                                           f"{key[:60]!r}")
        result.damaged[key] = "is a catalog key the ledger does not record (a damaged key)"
    return result
