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
from .formats import FORMATS
from .progress import Progress
from .snapshot import Snapshot


def __getattr__(name: str):
    """The ingest pipeline's names, imported at their first use: a process that only queries
    never loads the ingest's modules."""
    if name == "IngestOptions":
        from .ingest import IngestOptions

        return IngestOptions
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

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
