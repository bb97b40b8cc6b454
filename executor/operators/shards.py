"""Shards: a rank's rows as a CSR of their own, which the one-device kernels take unchanged.

A rank of a partitioned operator owns the vertex range ``lo..hi-1`` (a segment of
:mod:`graphdb.executor.partition`). Its *shard* of a direction is that range's rows: offsets over
**all** |V| rows, those outside the range empty, and the range's targets with their global ids
(the row base is where its edges start: ``offsets[lo]`` is 0). A traversal or union-find kernel
written for a whole graph therefore runs on a shard as it is: the frontier's and the labels'
ids are global, a vertex of another rank simply has no edges here. The |V| + 1 offsets cost 8
bytes a vertex on each rank, beside state the ranks replicate anyway.

Where a shard comes from, in this order:

- one rank holding the whole range on the device that holds the graph: the resident device CSR
  itself (:func:`graphdb.executor.gpu.runtime.device_csr`; no copy, so one partitioned rank
  costs what the one-device operator does);
- a GPU holding the graph (its resident device CSR): cut there and copied device to device
  (NVLink where there is one), the targets a view where the rank's GPU is that GPU;
- otherwise the host: the range's rows read through the buffer manager (only its blocks) and
  uploaded, so a graph that does not fit one GPU is never uploaded whole.

Shards are held by the residency owner on the rank's device, under the graph version's key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..partition import Segments, read_rows

__all__ = ["Shard", "ShardRows", "load_shard", "out_degrees", "peer_copy", "resident_device"]


@dataclass
class ShardRows:
    """One direction of a shard: ``offsets`` (|V| + 1, int64, rows outside the range empty),
    ``targets`` (global ids), ``weights`` aligned (or None)."""

    offsets: Any
    targets: Any
    weights: Any | None = None

    @property
    def num_vertices(self) -> int:
        return int(self.offsets.shape[0]) - 1

    @property
    def num_edges(self) -> int:
        return int(self.targets.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.offsets.nbytes + self.targets.nbytes
                   + (0 if self.weights is None else self.weights.nbytes))


@dataclass
class Shard:
    """Rank ``rank``'s vertices ``lo..hi-1``: its out- and in-rows (those asked for, else
    None) and the out-degree of every vertex of the graph (int32, replicated: the rows a
    rank owns are not the degrees its frontier counts and its contributions divide by)."""

    rank: int
    lo: int
    hi: int
    out: ShardRows | None
    inn: ShardRows | None
    out_degree: Any

    @property
    def size(self) -> int:
        return self.hi - self.lo

    @property
    def nbytes(self) -> int:
        return int(sum(r.nbytes for r in (self.out, self.inn) if r is not None))


def resident_device(graph, devices) -> int | None:
    """A GPU among ``devices`` whose residency holds the graph's device CSR, or None."""
    for d in devices:
        if graph.residency.peek(graph.key, f"gpu:{d}", "device:out_targets") is not None:
            return int(d)
    return None


def peer_copy(cp, array, source: int):
    """``array`` (on GPU ``source``) copied to the current device (as it is, if it is there)."""
    if cp.cuda.Device().id == source:
        return array
    out = cp.empty(array.shape, dtype=array.dtype)
    if array.size:
        stream = cp.cuda.get_current_stream()
        cp.cuda.runtime.memcpyPeerAsync(out.data.ptr, cp.cuda.Device().id, array.data.ptr,
                                        source, array.nbytes, stream.ptr)
    return out


def _full_offsets(xp, n: int, lo: int, hi: int, local) -> Any:
    """Offsets over all n rows from the range's rebased offsets (``hi - lo + 1``)."""
    full = xp.empty(n + 1, dtype=np.int64)
    full[:lo + 1] = 0
    full[lo + 1:hi + 1] = local[1:]
    full[hi + 1:] = local[-1]
    return full


def _rows(graph, direction: str, lo: int, hi: int, weights: bool, xp, source) -> ShardRows:
    """One direction of the range's rows in ``xp``'s memory (see the module docstring)."""
    n = graph.num_vertices
    if xp is np or source is None:
        rows = read_rows(graph, lo, hi, direction, weights)
        w = rows.weights if weights else None
        if xp is not np:
            return ShardRows(_full_offsets(xp, n, lo, hi, xp.asarray(rows.offsets)),
                             xp.asarray(rows.targets), None if w is None else xp.asarray(w))
        return ShardRows(_full_offsets(np, n, lo, hi, rows.offsets), rows.targets, w)
    from ..gpu import runtime as rt

    cp = xp
    with cp.cuda.Device(source):
        whole = rt.device_csr(graph, direction, weights=weights)
        e_lo, e_hi = (int(x) for x in whole.offsets[[lo, hi]].get())
    here = cp.cuda.Device().id == source
    if here and (lo, hi) == (0, n):
        return ShardRows(whole.offsets, whole.targets, whole.weights)
    offsets = peer_copy(cp, whole.offsets, source)
    offsets = cp.clip(offsets, e_lo, e_hi) - e_lo  # a new array (the resident one is shared)
    targets = peer_copy(cp, whole.targets[e_lo:e_hi], source)
    w = None if whole.weights is None else peer_copy(cp, whole.weights[e_lo:e_hi], source)
    return ShardRows(offsets, targets, w)


def out_degrees(graph, xp, device: str = "cpu", source: int | None = None):
    """Every vertex's out-degree (int32) on ``device``, held by the residency owner."""

    def build():
        if xp is np:
            return graph.out_degrees().astype(np.int32)
        if source is not None:
            from ..gpu import runtime as rt

            with xp.cuda.Device(source):
                offsets = rt.device_csr(graph, "out").offsets
            offsets = peer_copy(xp, offsets, source)
            return (offsets[1:] - offsets[:-1]).astype(np.int32)
        return xp.asarray(graph.out_degrees().astype(np.int32))

    return graph.derived("shard:out_degree", build, device=device)


def load_shard(graph, segs: Segments, rank: int, forms: tuple[str, ...], xp, *,
               device: str = "cpu", devices: tuple[int, ...] = (), slot: str = "") -> Shard:
    """Rank ``rank``'s shard of ``segs`` with the rows ``forms`` reads (``out``, ``in``;
    ``weights``: the out-rows' weights), on ``device`` (``"cpu"`` for numpy, else the current
    GPU), cut from the GPU among ``devices`` that holds the graph, else read from the host.
    ``slot`` tells apart ranks simulated on one device."""
    lo, hi = segs.range(rank)
    source = None if xp is np else resident_device(graph, devices or (xp.cuda.Device().id,))
    weighted = "weights" in forms and graph.weighted
    directions = [d for d in ("out", "in") if d in forms]

    def build(direction: str):
        def make() -> ShardRows:
            if direction == "in" and not graph.directed:
                return load_shard(graph, segs, rank, ("out",), xp, device=device,
                                  devices=devices, slot=slot).out
            return _rows(graph, direction, lo, hi, weighted and direction == "out", xp, source)

        cut = "-".join(str(int(b)) for b in segs.bounds)
        name = f"shard:{cut}:{rank}:{direction}{':w' if weighted and direction == 'out' else ''}"
        return graph.derived(name + slot, make, device=device)

    rows = {d: build(d) for d in directions}
    return Shard(rank, lo, hi, rows.get("out"), rows.get("in"),
                 out_degrees(graph, xp, device, source))
