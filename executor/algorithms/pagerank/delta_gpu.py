"""PageRank on the GPU over a changed graph version: the base's partition and the delta beside it.

The cache-blocked partition (:func:`.gpu.partition`: the in-CSR relabelled by out-degree and cut
into L2-sized blocks, hot-source tiles) takes a sort of every edge to build: built per version,
it cost the first PageRank after each write several times the PageRank itself. A version read
unmerged (:mod:`graphdb.executor.overlay`) keeps the partition of its *base* (built once per
generation) and adds, at every iteration, what the version changed: each edge it added
contributes, each stored edge it deleted is taken back, into the dense sums the merge reads
beside the blocks' partials (``graphdb_overlay_scatter_add``, float32 as the gathers). The
version's own out-degrees give the contributions and the dangling total; its vertices added
since the base are relabelled to themselves. The relabelling keeps the base's order: it is only
a layout, so any order gives the same ranks.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...abi import PAGERANK_RANGE as RANGE
from ...gpu import runtime as rt

__all__ = ["version_partition"]


def version_partition(graph, base_part):
    """``base_part`` (the base's partition on the current device) as the partition of the
    changed version ``graph``, its delta as ``corrections`` (src, dst, sign) in partition ids."""
    from ...overlay_gpu import base_arrays, device_ops

    cp = rt.cp()
    state = graph.version_delta(rt.device_name())
    n, nb = state.num_vertices, graph.base.num_vertices
    order = base_part.order
    if order is not None:  # partition id of every vertex; those added since keep their own
        order = cp.concatenate([order, cp.arange(nb, n, dtype=order.dtype)])
        new_id = cp.empty(n, dtype=np.int64)
        new_id[order] = cp.arange(n, dtype=np.int64)
    rows = state.out_rows
    src = cp.searchsorted(rows.offsets, cp.arange(rows.targets.size, dtype=np.int64),
                          side="right") - 1
    dst = rows.targets.astype(np.int64)
    sign = cp.ones(int(dst.size), dtype=np.float32)
    if len(state.positions):  # the stored edges deleted: taken back
        offsets, targets = base_arrays(graph.base)[:2]
        gone = state.positions
        src = cp.concatenate([src, device_ops().rows_of(offsets, gone)])
        dst = cp.concatenate([dst, targets[gone].astype(np.int64)])
        sign = cp.concatenate([sign, cp.full(len(gone), -1.0, dtype=np.float32)])
    if order is not None:
        src, dst = new_id[src], new_id[dst]
    degree = state.out_degree if order is None else state.out_degree[order]
    range_ptr = base_part.range_ptr
    extra = -(-n // RANGE) + 1 - int(range_ptr.shape[1])
    if extra > 0:  # the merge's ranges of the vertices added since: no rows in any block
        range_ptr = cp.concatenate([range_ptr, cp.repeat(range_ptr[:, -1:], extra, axis=1)],
                                   axis=1)
    return dataclasses.replace(
        base_part, range_ptr=range_ptr, out_degree=degree.astype(np.int32), order=order,
        dangling=int(cp.count_nonzero(state.out_degree == 0)),
        corrections=(src.astype(np.int64), dst.astype(np.int64), sign))
