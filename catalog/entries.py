"""Catalog entries: what is known about a stored graph, persisted as JSON in LMDB."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

__all__ = ["GraphEntry"]


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

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> "GraphEntry":
        data = json.loads(bytes(raw).decode())
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})
