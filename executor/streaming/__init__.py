"""Graph operators for graphs larger than the device budget (issue 8).

Three ways to run when the topology does not fit, chosen by :mod:`graphdb.executor.streaming.planner`
from the catalog's sizes and the device budget:

- :mod:`.subway` -- subgraph streaming for traversals (BFS, SSSP, WCC): only the active
  vertices' edges (a SubCSR) move, in pieces that fit; asynchronous inner iterations on each
  loaded piece; whole partitions stream when most edges are active.
- :mod:`.edge_centric` -- edge-chunk streaming for all-active algorithms (PageRank, CDLP):
  every edge moves every iteration, in chunks, copies overlapped with compute (WolfGraph).
- :mod:`.pages` -- topology streaming from storage (GTS): slotted pages come from the store
  through the buffer manager's page-locked frames; BFS sends only the pages of the next frontier,
  PageRank every page; a device page cache keeps what fits.

Each runs on the CPU (numpy, against a host-memory budget) and on the GPU (CuPy and
``executor/gpu/cuda/streaming.cu``, imported lazily by :mod:`.gpu`) with the same structure,
and reports its metrics (:mod:`.metrics`) in ``AlgorithmOutput.metrics``.
"""

from __future__ import annotations

__all__ = ["subway", "edge_centric", "pages", "planner", "metrics"]
