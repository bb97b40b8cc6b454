"""Errors raised by the catalog and the ingest pipeline."""

from __future__ import annotations

__all__ = ["CatalogError", "CorruptGraph", "GraphChanged", "GraphNotFound", "GraphExists",
           "IngestError", "IngestWarning", "excerpt"]

#: Characters of a user's value an error message quotes at most.
EXCERPT_CHARS = 60


def excerpt(value, limit: int = EXCERPT_CHARS) -> str:
    """``repr(value)`` cut to about ``limit`` characters: messages quote a value, never echo a
    20 MB field whole."""
    if isinstance(value, (str, bytes)) and len(value) > limit:
        return f"{value[:limit]!r}... ({len(value):,} characters)"
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


class CatalogError(Exception):
    """A catalog operation failed because of what exists (or does not)."""


class GraphNotFound(CatalogError):
    def __init__(self, name: str, known: list[str]):
        self.name, self.known = name, known
        import difflib

        shown = name if len(name) <= 80 else name[:77] + "..."
        close = difflib.get_close_matches(name, known, n=1) if len(name) <= 255 else []
        hint = f"; did you mean '{close[0]}'?" if close else (
            f"; graphs: {', '.join(known)}" if known else "; the database has no graphs yet")
        super().__init__(f"graph '{shown}' does not exist{hint}")


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


class CorruptGraph(Exception):
    """Something read from the database failed validation: a catalog entry, an array record, a
    block, a CSR invariant, an Arrow file. It is never used as data.

    ``graph``: the graph's name where known; ``file``: the database file (relative to its
    directory) that holds the bad bytes; ``problem``: what is wrong."""

    def __init__(self, problem: str, *, graph: str | None = None, file: str | None = None):
        self.graph, self.file, self.problem = graph, file, problem
        where = [f"graph '{graph}'"] if graph is not None else []
        if file is not None:
            where.append(file)
        super().__init__(": ".join(where + [problem]))


class GraphChanged(Exception):
    """A graph version went away under a statement that could not lease it (another process
    dropped or replaced the graph): the statement may simply run again."""

    def __init__(self, name: str):
        self.name = name
        super().__init__(f"graph '{name}' was dropped or replaced by another process while this "
                         "statement read it; run the statement again")
