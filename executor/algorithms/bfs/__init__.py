"""The BFS family: ``bfs`` and ``khop`` (a BFS that stops after k levels).

``spec`` declares them; ``cpu`` (compiled direction-optimizing BFS), ``gpu`` (degree-cut
frontier BFS) and ``streamed`` (Subway, pages) implement them.
"""

from ..registry import register
from .spec import BFS, KHOP

register(BFS)
register(KHOP)
