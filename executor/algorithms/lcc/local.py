"""The local clustering coefficient of given vertices, from their neighbourhoods only.

``lcc(g, vertices => [7, 42])`` reads, for each vertex v asked for, its in- and out-rows (its
distinct neighbours N(v)) and the out-rows of those neighbours (the edges among them): the work
is the sum of the neighbours' degrees, not the graph's edges. The definition is the whole-graph
one's (:mod:`.spec`, LDBC Graphalytics): the distinct directed edges (a, b), a != b, with a and b
in N(v), over d(d - 1).
"""

from __future__ import annotations

import numpy as np

from graphdb.storage.compiled import KernelSet

from ...graph import Graph
from ..common import kernel_csr
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["KERNELS", "lcc_local"]

KERNELS = KernelSet(__name__)

_ONE = np.uint64(1)


@KERNELS.kernel()
def coefficients(out_off, out_tgt, in_off, in_tgt, vertices, member, visited, seen, result):
    """LCC of each of ``vertices`` into ``result``. ``member``, ``visited`` and ``seen`` are
    int64 scratch of |V| entries, all -1: stamps of N(v), of the neighbours walked already and
    of the b's counted for one (v, a)."""
    pair = 0
    for i in range(vertices.size):
        v = np.uint64(vertices[i])
        d = 0
        for side in range(2):
            off = out_off if side == 0 else in_off
            tgt = out_tgt if side == 0 else in_tgt
            for e in range(off[v], off[v + _ONE]):
                u = tgt[e]
                if u != v and member[u] != i:
                    member[u] = i
                    d += 1
        if d < 2:
            result[i] = 0.0
            continue
        closed = 0
        for side in range(2):
            off = out_off if side == 0 else in_off
            tgt = out_tgt if side == 0 else in_tgt
            for e in range(off[v], off[v + _ONE]):
                a = tgt[e]
                if a == v or visited[a] == i:
                    continue
                visited[a] = i
                for f in range(out_off[a], out_off[a + _ONE]):
                    b = out_tgt[f]
                    if b != a and member[b] == i and seen[b] != pair:
                        seen[b] = pair
                        closed += 1
                pair += 1
        result[i] = closed / (d * (d - 1.0))


def lcc_local(graph: Graph, config: OperatorConfig, vertices: np.ndarray) -> AlgorithmOutput:
    """LCC of ``vertices`` (internal ids; each once) from their neighbourhoods."""
    vertices = np.unique(np.asarray(vertices, dtype=np.int64))
    out_off, out_tgt = kernel_csr(graph, "out")
    in_off, in_tgt = kernel_csr(graph, "in")
    in_tgt = in_tgt.astype(out_tgt.dtype, copy=False)  # one id type for both sides
    n = graph.num_vertices
    member = np.full(n, -1, dtype=np.int64)
    visited = np.full(n, -1, dtype=np.int64)
    seen = np.full(n, -1, dtype=np.int64)
    result = np.zeros(vertices.size, dtype=np.float64)
    degrees = np.diff(graph.csr("out").offsets)[vertices] if vertices.size else vertices
    work = int(vertices.size + degrees.sum() * 4)
    KERNELS.for_work(work).coefficients(out_off, out_tgt, in_off, in_tgt, vertices, member,
                                        visited, seen, result)
    return AlgorithmOutput({"vertex": vertices, "coefficient": result},
                           {"vertices": int(vertices.size)})
