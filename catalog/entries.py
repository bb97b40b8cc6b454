"""Catalog entries: what is known about a stored graph, persisted as sealed JSON in LMDB.

An entry is written once, by the commit that makes its graph version visible, and read by every
statement. Read back, it is *parsed*, not trusted: :meth:`GraphEntry.from_json` checks the seal
(a checksum over the canonical JSON of every other field), then every field's type and range,
and that the graph id is a generated id (so no path derived from it can leave the database
directory). Anything else is :class:`CorruptGraph`, naming the graph and what is wrong.

``files`` records the Arrow files of the version with their sizes and checksums::

    {"vertices.arrow": {"bytes": 1234, "checksum": 305419896, "algorithm": 2}, ...}

(algorithm as in :mod:`graphdb.storage.checksum`), checked before a file is first opened.

A graph changed by writes after its load has ``version`` > 0: the number of delta records
(:mod:`graphdb.catalog.delta`) on top of the stored base generation ``graph_id``. The counts
(``num_vertices``, ``num_edges``, ``input_edges``) are then the graph's as of that version, and
``delta`` records the base's own counts and what the records add up to; :attr:`GraphEntry.base`
is the entry of the stored base alone, which is what stored arrays and files are checked
against. Entries written before writes existed have neither field (read as version 0).
"""

from __future__ import annotations

import math
import re
from dataclasses import MISSING, dataclass, field, fields, replace
from functools import cached_property

from graphdb.storage.env import valid_graph_id

from .errors import CorruptGraph
from .records import open_json, seal_json

__all__ = ["ARROW_FILES", "GraphEntry", "MAX_NAME_LENGTH", "valid_graph_name"]

#: Longest graph name: LMDB keys are at most 511 bytes, and a name is a key.
MAX_NAME_LENGTH = 255
#: The Arrow files a graph version may have; ``vertices.arrow`` always.
ARROW_FILES = ("vertices.arrow", "edges.arrow")
ID_TYPES = ("int64", "string")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Vertex and edge counts above this cannot be real (and would overflow int64 arithmetic).
_MAX_COUNT = 1 << 48


def valid_graph_name(name: object) -> bool:
    return isinstance(name, str) and len(name) <= MAX_NAME_LENGTH and \
        _NAME.fullmatch(name) is not None


@dataclass(frozen=True)
class GraphEntry:
    name: str
    graph_id: str  # names the blocks and the Arrow directory of this version
    directed: bool
    weighted: bool
    num_vertices: int
    num_edges: int  # stored directed edges (an undirected edge counts twice)
    input_edges: int  # edges as loaded from the input
    id_type: str  # Arrow type of the user's vertex ids: 'int64' or 'string'
    created: float  # unix time of the commit
    source: str = ""  # the input file(s)
    stats: dict = field(default_factory=dict)  # degrees, bytes of each stored form
    files: dict = field(default_factory=dict)  # Arrow file -> bytes, checksum, algorithm
    version: int = 0  # delta records on top of the stored base (catalog.delta)
    delta: dict = field(default_factory=dict)  # base counts and delta totals, when version > 0

    def to_json(self) -> bytes:
        # A shallow dict: the fields hold JSON values only, and asdict's deep copy was a fifth
        # of a single-row write's time.
        return seal_json({f.name: getattr(self, f.name) for f in fields(self)})

    @classmethod
    def from_json(cls, raw: bytes, key: str | None = None) -> "GraphEntry":
        """The entry stored under ``key`` (its graph's name), validated; CorruptGraph if not."""
        graph = key if key is not None and valid_graph_name(key) else None

        def bad(problem: str) -> CorruptGraph:
            return CorruptGraph(f"catalog entry {problem}", graph=graph,
                                file="meta.lmdb/data.mdb")

        data = open_json(raw, bad)
        missing = [f for f, spec in cls.__dataclass_fields__.items() if f not in data
                   and spec.default is MISSING and spec.default_factory is MISSING]
        if missing:
            raise bad(f"lacks {', '.join(missing)}")
        entry = cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})
        problem = entry.problem(key)
        if problem is not None:
            raise bad(problem)
        return entry

    def problem(self, key: str | None = None) -> str | None:
        """What is wrong with this entry's fields, or None."""
        if not valid_graph_name(self.name):
            return f"has an invalid name {str(self.name)[:80]!r}"
        if key is not None and key != self.name:
            return f"names graph {self.name!r} but is stored under {key[:80]!r}"
        if not valid_graph_id(self.graph_id):
            return (f"has graph id {str(self.graph_id)[:80]!r}, not a generated id (files are "
                    "only read and removed under generated ids)")
        for name in ("directed", "weighted"):
            if not isinstance(getattr(self, name), bool):
                return f"field {name} is not true/false"
        for name in ("num_vertices", "num_edges", "input_edges"):
            value = getattr(self, name)
            if not _count(value):
                return f"field {name} is not a count: {value!r}"
        if self.num_vertices == 0 and self.num_edges:
            return "has edges but no vertices"
        if self.id_type not in ID_TYPES:
            return f"field id_type is {self.id_type!r}, not one of {', '.join(ID_TYPES)}"
        if not isinstance(self.created, (int, float)) or isinstance(self.created, bool) or \
                not math.isfinite(self.created):
            return "field created is not a time"
        if not isinstance(self.source, str) or not isinstance(self.stats, dict):
            return "fields source/stats have the wrong type"
        return _files_problem(self.files) or self._delta_problem()

    def _delta_problem(self) -> str | None:
        if not _count(self.version) or not isinstance(self.delta, dict):
            return "fields version/delta have the wrong type"
        if self.version == 0:
            return None
        for name in ("base_vertices", "base_edges", "base_input_edges"):
            if not _count(self.delta.get(name)):
                return f"delta field {name} is not a count: {self.delta.get(name)!r}"
        if self.delta["base_vertices"] == 0 and self.delta["base_edges"]:
            return "has base edges but no base vertices"
        return None

    @property
    def changed(self) -> bool:
        """Whether writes were committed on top of the stored base (a delta to merge)."""
        return self.version > 0

    @cached_property
    def base(self) -> "GraphEntry":
        """The entry of the stored base generation alone (what its arrays and files hold)."""
        if not self.version:
            return self
        return replace(self, num_vertices=self.delta["base_vertices"],
                       num_edges=self.delta["base_edges"],
                       input_edges=self.delta["base_input_edges"], version=0, delta={})


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _MAX_COUNT


def _files_problem(files) -> str | None:
    if not isinstance(files, dict) or "vertices.arrow" not in files:
        return "records no vertices.arrow"
    for name, record in files.items():
        if name not in ARROW_FILES:
            return f"records an unknown file {str(name)[:80]!r}"
        if not isinstance(record, dict) or not all(
                _count(record.get(k)) for k in ("bytes", "checksum", "algorithm")):
            return f"has an unreadable record of {name}"
    return None
