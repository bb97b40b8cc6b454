"""Constants that compiled kernels and their Python launchers share, defined once.

The CUDA kernels receive every constant of :data:`CUDA_DEFINES` as a ``#define GRAPHDB_<NAME>``
prepended to their source by :mod:`graphdb.executor.gpu.runtime` (so the kernel cache's key
changes with them), and the numba kernels and the Python drivers import them from here: a
threshold or a control-block slot cannot mean one thing on one side and another on the other.
"""

from __future__ import annotations

__all__ = [
    "CTRL_ACTIVATED_EDGES", "CTRL_ACTIVATED_VERTICES", "CTRL_FIELDS", "CTRL_SLOTS", "CTRL_WORDS",
    "CUDA_DEFINES", "DIRECTION_ALPHA", "DIRECTION_BETA", "PAGERANK_RANGE", "UDC_K", "ctrl_slot",
]

#: Direction-optimizing BFS (Beamer et al.): go bottom-up when the frontier's out-edges times
#: ALPHA exceed the edges of the unvisited vertices (and, on the CPU, the frontier holds more
#: than |V| / BETA vertices); come back top-down when the frontier holds fewer than |V| / BETA.
DIRECTION_ALPHA = 15
DIRECTION_BETA = 24

#: Unified Degree Cut (EtaGraph): a frontier vertex is cut into pieces of at most UDC_K edges,
#: one thread each; a power of two <= 32.
UDC_K = 16

#: The frontier kernels' control block (``u64 ctrl[CTRL_WORDS]``): CTRL_SLOTS rotating slots of
#: CTRL_FIELDS counters (queue length, vertices, edges, spare), the slot of step s being
#: ``ctrl_slot(s)``; then the vertices and edges activated so far (the direction heuristic).
CTRL_SLOTS = 3
CTRL_FIELDS = 4
CTRL_ACTIVATED_VERTICES = CTRL_SLOTS * CTRL_FIELDS
CTRL_ACTIVATED_EDGES = CTRL_ACTIVATED_VERTICES + 1
CTRL_WORDS = 16


def ctrl_slot(step: int) -> int:
    """First word of step ``step``'s counters in the control block."""
    return CTRL_FIELDS * (step % CTRL_SLOTS)


#: Vertices per range of the GPU PageRank's merge: one thread block of PAGERANK_RANGE threads
#: adds a range's partial sums in shared memory.
PAGERANK_RANGE = 1024

#: Every constant the CUDA sources see, as ``GRAPHDB_<NAME>``.
CUDA_DEFINES = {
    "CTRL_SLOTS": CTRL_SLOTS,
    "CTRL_FIELDS": CTRL_FIELDS,
    "CTRL_ACTIVATED_VERTICES": CTRL_ACTIVATED_VERTICES,
    "CTRL_ACTIVATED_EDGES": CTRL_ACTIVATED_EDGES,
    "CTRL_WORDS": CTRL_WORDS,
    "PAGERANK_RANGE": PAGERANK_RANGE,
}
