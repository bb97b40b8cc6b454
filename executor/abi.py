"""Constants that compiled kernels and their Python launchers share, defined once.

The CUDA kernels receive every constant of :data:`CUDA_DEFINES` as a ``#define GRAPHDB_<NAME>``
prepended to their source by :mod:`graphdb.executor.gpu.runtime` (so the kernel cache's key
changes with them), and the numba kernels and the Python drivers import them from here: a
threshold or a control-block slot cannot mean one thing on one side and another on the other.
"""

from __future__ import annotations

__all__ = [
    "CTRL_ACTIVATED_EDGES", "CTRL_ACTIVATED_VERTICES", "CTRL_DEEPEST", "CTRL_FIELDS",
    "CTRL_SLOTS", "CTRL_STEPS_RUN", "CTRL_WORDS", "SMALL_FRONTIER", "SMALL_FRONTIER_THREADS",
    "CUDA_DEFINES", "DIRECTION_ALPHA", "DIRECTION_BETA", "PAGERANK_RANGE", "RESULT_ALIGN",
    "RESULT_DROP", "RESULT_TILE", "BFS_UDC_K", "UDC_K", "ctrl_slot",
]

#: Direction-optimizing BFS (Beamer et al.): go bottom-up when the frontier's out-edges times
#: ALPHA exceed the edges of the unvisited vertices (and, on the CPU, the frontier holds more
#: than |V| / BETA vertices); come back top-down when the frontier holds fewer than |V| / BETA.
DIRECTION_ALPHA = 15
DIRECTION_BETA = 24

#: Unified Degree Cut (EtaGraph): a frontier vertex is cut into pieces of at most UDC_K edges,
#: one thread each; a power of two <= 32.
UDC_K = 16
#: BFS's degree cut: 8, from the H200 sweep on R-MAT 24 of 2026-11-24 (K = 4: 2.33 ms, 8: 2.26,
#: 16: 3.23, 32: 2.83; docs/performance/2026-11-24.md). bench_gpu now sweeps every source.
BFS_UDC_K = 8

#: The frontier kernels' control block (``u64 ctrl[CTRL_WORDS]``): CTRL_SLOTS rotating slots of
#: CTRL_FIELDS counters (queue length, vertices, edges, spare), the slot of step s being
#: ``ctrl_slot(s)``; then the vertices and edges activated so far (the direction heuristic), the
#: deepest BFS level that activated a vertex, and the steps the last single-block launch ran.
CTRL_SLOTS = 3
CTRL_FIELDS = 4
CTRL_ACTIVATED_VERTICES = CTRL_SLOTS * CTRL_FIELDS
CTRL_ACTIVATED_EDGES = CTRL_ACTIVATED_VERTICES + 1
CTRL_DEEPEST = CTRL_ACTIVATED_EDGES + 1
CTRL_STEPS_RUN = CTRL_DEEPEST + 1
CTRL_WORDS = 16
assert CTRL_STEPS_RUN < CTRL_WORDS

#: Frontiers of at most this many pieces are expanded by one thread block that runs level after
#: level (or relaxation round after round) without returning to the host: on a grid or a road
#: network each level then costs a few round trips to L2 instead of a launch and a host sync.
SMALL_FRONTIER = 4096
#: Threads of that block.
SMALL_FRONTIER_THREADS = 1024


def ctrl_slot(step: int) -> int:
    """First word of step ``step``'s counters in the control block."""
    return CTRL_FIELDS * (step % CTRL_SLOTS)


#: Vertices per range of the GPU PageRank's merge: one thread block of PAGERANK_RANGE threads
#: adds a range's partial sums in shared memory.
PAGERANK_RANGE = 1024

#: Per-vertex outputs (:class:`graphdb.executor.algorithms.spec.VertexValues`): which entries of
#: the marking column are not rows. ``none``: every vertex is a row; ``negative``: integers below
#: 0 (a BFS depth of -1); ``pos_inf`` / ``neg_inf``: floats equal to +inf (an SSSP distance) or
#: -inf (an SSWP width); ``zero``: counts of 0 (the empty groups of a histogram).
RESULT_DROP = {"none": 0, "negative": 1, "pos_inf": 2, "neg_inf": 3, "zero": 4}
#: Entries one thread block of the result compaction takes (256 threads x 16); the compaction is
#: ordered, so its rows ascend like numpy's flatnonzero.
RESULT_TILE = 4096
#: Byte alignment of each column in a result's one buffer (Arrow's recommended 64).
RESULT_ALIGN = 64

#: Every constant the CUDA sources see, as ``GRAPHDB_<NAME>``.
CUDA_DEFINES = {
    "CTRL_SLOTS": CTRL_SLOTS,
    "CTRL_FIELDS": CTRL_FIELDS,
    "CTRL_ACTIVATED_VERTICES": CTRL_ACTIVATED_VERTICES,
    "CTRL_ACTIVATED_EDGES": CTRL_ACTIVATED_EDGES,
    "CTRL_WORDS": CTRL_WORDS,
    "CTRL_DEEPEST": CTRL_DEEPEST,
    "CTRL_STEPS_RUN": CTRL_STEPS_RUN,
    "SMALL_FRONTIER_THREADS": SMALL_FRONTIER_THREADS,
    "PAGERANK_RANGE": PAGERANK_RANGE,
    "RESULT_TILE": RESULT_TILE,
    **{f"RESULT_DROP_{name.upper()}": code for name, code in RESULT_DROP.items()},
}
