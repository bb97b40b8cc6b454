"""How the ingest pipeline reports progress: a small interface the front end implements.

The catalog knows nothing about terminals; ``graphdb`` passes an object that draws a progress bar
(or nothing). Phases: 'read' (total = input bytes; advance = bytes and rows read so far), then
'sort', 'properties' and 'commit' (no total).
"""

from __future__ import annotations

__all__ = ["Progress"]


class Progress:
    """Does nothing; subclasses draw."""

    def phase(self, name: str, total: int | None = None) -> None:
        pass

    def advance(self, done: int, rows: int | None = None) -> None:
        pass

    def close(self) -> None:
        pass
