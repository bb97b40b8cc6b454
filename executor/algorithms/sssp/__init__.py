"""The shortest-paths family: ``sssp`` (compiled bucket-queue Dijkstra on the CPU, near-far
degree-cut frontier on the GPU, Subway streamed) and ``sswp`` (widest paths, CPU)."""

from ..registry import register
from .spec import SSSP, SSWP

register(SSSP)
register(SSWP)
