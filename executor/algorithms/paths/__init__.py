"""The paths family: ``shortest_path`` (bidirectional BFS, or Dijkstra stopping at the target),
with the path itself."""

from ..registry import register
from .spec import SHORTEST_PATH

register(SHORTEST_PATH)
