"""The paths family: ``shortest_path`` (bidirectional BFS, or Dijkstra stopping at the target,
on the CPU; the BFS or near-far SSSP stopped at the target and a read-back of the path on the
GPU), with the path itself."""

from ..registry import register
from .spec import SHORTEST_PATH

register(SHORTEST_PATH)
