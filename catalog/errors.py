"""Errors raised by the catalog and the ingest pipeline."""

from __future__ import annotations

__all__ = ["CatalogError", "GraphNotFound", "GraphExists", "IngestError", "IngestWarning"]


class CatalogError(Exception):
    """A catalog operation failed because of what exists (or does not)."""


class GraphNotFound(CatalogError):
    def __init__(self, name: str, known: list[str]):
        self.name, self.known = name, known
        import difflib

        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else (
            f"; graphs: {', '.join(known)}" if known else "; the database has no graphs yet")
        super().__init__(f"graph '{name}' does not exist{hint}")


class GraphExists(CatalogError):
    def __init__(self, name: str):
        self.name = name
        super().__init__(f"graph '{name}' already exists (use --replace / replace=True to overwrite)")


class IngestError(Exception):
    """Bad input to an ingest; carries the file and, where known, the line."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None):
        self.file, self.line, self.problem = file, line, message
        where = ""
        if file is not None:
            where = f"{file}:{line}: " if line is not None else f"{file}: "
        super().__init__(f"{where}{message}")


class IngestWarning(UserWarning):
    """Input an ingest reads, but maybe not as meant (a CSV whose first line is numbers)."""
