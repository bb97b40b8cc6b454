"""What exists: graphs, their metadata and statistics, and the ingest pipeline creating them."""

from .catalog import Catalog, valid_graph_name
from .entries import GraphEntry
from .errors import CatalogError, GraphExists, GraphNotFound, IngestError
from .ingest import IngestOptions
from .progress import Progress
from .readers import FORMATS

__all__ = [
    "Catalog",
    "GraphEntry",
    "IngestOptions",
    "Progress",
    "FORMATS",
    "CatalogError",
    "GraphExists",
    "GraphNotFound",
    "IngestError",
    "valid_graph_name",
]
