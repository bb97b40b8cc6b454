"""Frontier advance on the GPU with Unified Degree Cut (EtaGraph), for the BFS and SSSP families.

The frontier is a queue of pieces (vertex, piece number) of at most ``K`` edges, so a hub's edges
are spread over many threads and every thread does about the same work (``frontier.cu``: the
top-down and bottom-up BFS level, the near-far SSSP relax and bucket split). Two queues are used
alternately; the kernels keep their counters in a control block (:mod:`graphdb.executor.abi`),
which the host reads only when it must decide something.
"""

from __future__ import annotations

import numpy as np

from ..abi import CTRL_WORDS, UDC_K
from ..errors import InvalidArgument
from ..gpu.runtime import CudaModule

__all__ = ["FRONTIER", "PieceQueues", "THREADS", "check_k", "queue_capacity"]

THREADS = 256


def check_k(K: int) -> int:
    if K < 1 or K > 32 or K & (K - 1):
        raise InvalidArgument(f"degree limit K must be a power of two in 1..32, got {K}")
    return K


class PieceQueues:
    """Two piece queues (vertex ids, piece numbers) used alternately, and the counter block."""

    def __init__(self, cp, capacity: int, id_dtype):
        self.vertex = [cp.empty(capacity, dtype=id_dtype) for _ in range(2)]
        self.piece = [cp.empty(capacity, dtype=np.int32) for _ in range(2)]
        self.ctrl = cp.zeros(CTRL_WORDS, dtype=np.uint64)

    def pair(self, step: int):
        """(in vertex, in piece, out vertex, out piece) of step ``step``."""
        a, b = step % 2, (step + 1) % 2
        return self.vertex[a], self.piece[a], self.vertex[b], self.piece[b]


def queue_capacity(n: int, m: int, K: int = UDC_K) -> int:
    """Entries a piece queue needs: each vertex is queued at most once per BFS level set, in
    ceil(deg / K) pieces, so sum of ceil(deg/K) <= V + E/K."""
    return n + m // K + 1


#: ``frontier.cu``: the seed, the BFS level (top-down and bottom-up), the SSSP relax and bucket,
#: the single-block BFS levels for small frontiers, the label-correcting relaxation rounds (SSSP's
#: small queues, widest paths), and the read-back of one shortest path.
FRONTIER = CudaModule("operators/frontier.cu", (
    "graphdb_frontier_seed<{id}>",
    "graphdb_frontier_bfs_level<{id}>",
    "graphdb_frontier_sssp_relax<{id}>",
    "graphdb_frontier_sssp_bucket<{id}>",
    "graphdb_frontier_bfs_small<{id}>",
    "graphdb_frontier_relax_rounds<{id},false>",
    "graphdb_frontier_relax_rounds<{id},true>",
    "graphdb_frontier_path<{id}>",
))
