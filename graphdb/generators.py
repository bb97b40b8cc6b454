"""Deterministic synthetic graphs: R-MAT (Kronecker) and 2-D grids.

Used by ``graphdb demo``, the tests and the benchmarks in ``tools/``. Both return edge lists as
numpy arrays of vertex ids ``0..V-1`` and are a pure function of their arguments (seeded).

Examples
--------
>>> src, dst = rmat(scale=4, edge_factor=2, seed=1)
>>> len(src), int(max(src.max(), dst.max())) < 16
(32, True)
>>> src, dst = grid(2, 3)
>>> sorted(zip(src.tolist(), dst.tolist()))
[(0, 1), (0, 3), (1, 2), (1, 4), (2, 5), (3, 4), (4, 5)]
"""

from __future__ import annotations

import numpy as np

__all__ = ["rmat", "grid", "random_weights"]

_CHUNK_EDGES = 1 << 22

#: Graph500 R-MAT quadrant probabilities (a, b, c; d = 1 - a - b - c).
GRAPH500_ABC = (0.57, 0.19, 0.19)


def rmat(
    scale: int,
    edge_factor: int = 16,
    *,
    seed: int = 0,
    abc: tuple[float, float, float] = GRAPH500_ABC,
    scramble: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """An R-MAT edge list with ``2**scale`` vertices and ``edge_factor * 2**scale`` edges.

    Each edge picks one quadrant of the adjacency matrix per bit of the vertex id with
    probabilities ``a, b, c, d``. With ``scramble`` the vertex ids are permuted (seeded) so that
    high-degree vertices are spread over the id range, as in Graph500. Duplicate edges and self
    loops are kept, as the generator produces them. Memory stays at two int64 arrays of the
    output plus one chunk of work (the chunk size is fixed, so the graph depends only on the
    arguments).
    """
    chunk_edges = _CHUNK_EDGES
    if not 1 <= scale <= 40:
        raise ValueError("scale must be between 1 and 40")
    n = 1 << scale
    m = edge_factor * n
    a, b, c = abc
    rng = np.random.default_rng(seed)
    src = np.empty(m, dtype=np.int64)
    dst = np.empty(m, dtype=np.int64)
    # Cumulative thresholds: quadrant 0 (a): no bits; 1 (b): dst bit; 2 (c): src bit; 3 (d): both.
    t_b, t_c = a + b, a + b + c
    for start in range(0, m, chunk_edges):
        k = min(chunk_edges, m - start)
        s = np.zeros(k, dtype=np.int64)
        d = np.zeros(k, dtype=np.int64)
        for bit in range(scale):
            r = rng.random(k)
            src_bit = r >= t_b
            dst_bit = ((r >= a) & (r < t_b)) | (r >= t_c)
            s |= src_bit.astype(np.int64) << bit
            d |= dst_bit.astype(np.int64) << bit
        src[start : start + k] = s
        dst[start : start + k] = d
    if scramble:
        perm = np.random.default_rng(seed + 0x5EED).permutation(n)
        src = perm[src]
        dst = perm[dst]
    return src, dst


def grid(rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """A ``rows x cols`` 4-neighbour grid; vertex ``r * cols + c``; each edge listed once.

    Load it as an undirected graph (or add the reverse edges) for the usual lattice.
    """
    if rows < 1 or cols < 1:
        raise ValueError("rows and cols must be positive")
    ids = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    right = (ids[:, :-1].ravel(), ids[:, 1:].ravel())
    down = (ids[:-1, :].ravel(), ids[1:, :].ravel())
    src = np.concatenate([right[0], down[0]])
    dst = np.concatenate([right[1], down[1]])
    order = np.lexsort((dst, src))
    return src[order], dst[order]


def random_weights(num_edges: int, *, low: int = 1, high: int = 100, seed: int = 0) -> np.ndarray:
    """Integer-valued float64 weights uniform in ``[low, high]`` (seeded)."""
    rng = np.random.default_rng(seed)
    return rng.integers(low, high + 1, size=num_edges).astype(np.float64)
