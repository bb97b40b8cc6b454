"""The PageRank family: ``pagerank`` (Graphalytics), resident on the CPU (compiled parallel
pull) and the GPU (cache-blocked pull with hot-source tiles), and streamed by edge chunks or
slotted pages; the numeric step is written once per device (``cpu._update_vertex``,
``pagerank.cu``'s ``pagerank_vertex``)."""

from ..registry import register
from .spec import PAGERANK

register(PAGERANK)
