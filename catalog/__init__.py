"""What exists: graphs, their metadata and statistics, and the ingest pipeline creating them."""

from .catalog import Catalog, StoredCSR, valid_graph_name
from .entries import GraphEntry
from .errors import (
    CatalogError,
    CorruptGraph,
    GraphChanged,
    GraphExists,
    GraphNotFound,
    IngestError,
)
from .ingest import IngestOptions
from .progress import Progress
from .readers import FORMATS
from .snapshot import Snapshot

__all__ = [
    "Catalog",
    "GraphEntry",
    "IngestOptions",
    "Progress",
    "FORMATS",
    "CatalogError",
    "CorruptGraph",
    "GraphChanged",
    "GraphExists",
    "GraphNotFound",
    "IngestError",
    "Snapshot",
    "StoredCSR",
    "valid_graph_name",
]
