"""The paths family: ``shortest_path`` (bidirectional BFS, or Dijkstra stopping at the target,
on the CPU; the BFS or near-far SSSP stopped at the target and a read-back of the path on the
GPU), with the path itself; ``k_shortest_paths`` (Yen's algorithm, on the CPU)."""

from ..registry import register
from .spec import K_SHORTEST_PATHS, SHORTEST_PATH

register(SHORTEST_PATH)
register(K_SHORTEST_PATHS)
