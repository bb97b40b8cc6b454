"""One snapshot of the catalog per statement.

A statement reads the catalog once: :meth:`Catalog.snapshot` reads every entry in one LMDB read
transaction (:meth:`Catalog.committed`), and the statement looks graphs up in that
:class:`Snapshot` (and reads their data through it) until it ends, without holding the read
transaction (a long one would pin every page LMDB frees meanwhile, and block the writes a
statement may later make). What keeps the data of the versions it saw on disk is a lease
(:mod:`.leases`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .entries import MAX_NAME_LENGTH, GraphEntry
from .errors import CorruptGraph, GraphNotFound
from .ledger import Audit, salvage_graph_id

if TYPE_CHECKING:
    from .catalog import Catalog

__all__ = ["Snapshot"]


class Snapshot:
    """The catalog as one statement sees it: ``snap.get(name)`` and the reads of that version.

    Entries are parsed and validated when first looked up (a damaged entry fails the statements
    that use it, not every statement). The reading methods are the catalog's, restricted to
    the versions of this snapshot, whose data the snapshot's lease keeps on disk.
    """

    def __init__(self, catalog: "Catalog", raw: dict[str, bytes], sequence: int,
                 overlay: dict[str, GraphEntry] | None = None, generation=None,
                 tables=None, audit: Audit | None = None):
        self._catalog = catalog
        #: the tables, views and schemas of the same moment (catalog.tables.TableSnapshot)
        self.tables = tables
        self._raw = raw
        self.sequence = sequence
        #: the committed state of the database the entries were read from (storage's
        #: Environment.generation: equal for two reads of the same state); None where not known
        self.generation = generation
        #: entries an open write transaction of the connection changed (seen instead)
        self._parsed: dict[str, GraphEntry] = dict(overlay or {})
        #: what the comparison with the catalog's ledger found damaged (catalog.ledger)
        self._audit = audit or Audit()

    # -- lookups --------------------------------------------------------------------------------
    def names(self) -> list[str]:
        """Every graph, damaged ones included (a missing entry the ledger records too)."""
        return sorted(set(self._raw) | set(self._audit.damaged))

    def entries(self) -> list[GraphEntry]:
        """Every entry (CorruptGraph for the first damaged one, a missing one included)."""
        return [self._entry(name) for name in self.names()]

    def get(self, name: str, *, exact: bool = False) -> GraphEntry:
        """The entry of graph ``name``; SQL identifiers are case-insensitive unless quoted, so a
        unique case-folded match is accepted unless ``exact``."""
        return self._entry(self.key_of(name, exact=exact))

    def key_of(self, name: str, *, exact: bool = False) -> str:
        """The name graph ``name`` is stored under (without parsing its entry)."""
        known = self.names()
        key = name if isinstance(name, str) and name in known else None
        if key is None and not exact and isinstance(name, str) and len(name) <= MAX_NAME_LENGTH:
            folded = [n for n in known if n.lower() == name.lower()]
            if len(folded) == 1:
                key = folded[0]
        if key is None:
            stray = self._stored_elsewhere(name)
            if stray is not None:  # damage, not absence: say so
                raise CorruptGraph(f"its catalog entry is stored under a damaged key "
                                   f"{stray[:60]!r}", graph=str(name)[:80],
                                   file="meta.lmdb/data.mdb")
            raise GraphNotFound(str(name), known)
        return key

    def _stored_elsewhere(self, name) -> str | None:
        """A key (not a graph's name) whose entry names graph ``name``: a damaged key."""
        if not isinstance(name, str) or len(name) > MAX_NAME_LENGTH:
            return None
        for key, raw in self._raw.items():
            if raw[:4096].find(b'"name"') < 0:
                continue
            try:
                owner = json.loads(raw).get("name")
            except (ValueError, AttributeError, UnicodeDecodeError, RecursionError):
                continue
            if isinstance(owner, str) and owner != key and owner.lower() == name.lower():
                return key
        return None

    def raw(self, key: str) -> bytes:
        """The stored JSON of an entry, unparsed."""
        return self._raw[key]

    def graph_id_of(self, key: str) -> str | None:
        """The graph id of ``key``'s version, read from its entry even when the entry fails
        validation, else from the ledger (what dropping a damaged entry frees)."""
        raw = self._raw.get(key)
        if raw is not None:
            return salvage_graph_id(raw)
        return self._audit.graph_ids.get(key)

    def stray_keys(self, graph_id: str) -> list[str]:
        """Keys whose entries name version ``graph_id`` (its own, and any damaged copies)."""
        return [k for k, raw in self._raw.items() if salvage_graph_id(raw) == graph_id]

    def _entry(self, key: str) -> GraphEntry:
        entry = self._parsed.get(key)
        if entry is None:
            problem = self._audit.damaged.get(key)
            if problem is not None:
                if key in self._raw:  # its own checks name the problem best, where they see it
                    self._catalog.parse_entry(self._raw[key], key)
                raise CorruptGraph(problem, graph=key[:80], file="meta.lmdb/data.mdb")
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
