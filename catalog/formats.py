"""The input formats the ingest reads, named where the command line needs them without loading
the ingest's readers (:mod:`.readers` reads them)."""

from __future__ import annotations

__all__ = ["FORMATS", "TEXT_FORMATS"]

#: What ``--format`` takes: ``auto`` (from the file's extension) and each format.
FORMATS = ("auto", "csv", "tsv", "txt", "graphalytics", "parquet", "arrow")
#: The formats read as delimited text.
TEXT_FORMATS = ("csv", "tsv", "txt", "graphalytics")
