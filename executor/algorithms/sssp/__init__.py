"""The shortest-paths family: ``sssp`` (compiled bucket-queue Dijkstra on the CPU, near-far
degree-cut frontier on the GPU, Subway streamed) and ``sswp`` (widest paths: a heap on the CPU,
label-correcting frontier rounds on the GPU)."""

from ..registry import register
from .spec import SSSP, SSWP

register(SSSP)
register(SSWP)
