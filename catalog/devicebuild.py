"""An ingest's sort on a GPU: the edges' keys go to the device as the input is read, and the CSRs
are built there; parsing stays on the host's cores (pyarrow), the commit too.

The functions take the array module ``xp`` (CuPy on the device, numpy in the tests, which is
how their logic is tested without a GPU) and build exactly what :mod:`graphdb.catalog.csrbuild`
builds, byte for byte: within a vertex, edges in input order (a stable sort), an undirected
graph's forward edges before its reversed ones, raw ids renumbered by presence.

* :class:`DeviceSpool`: the reader's spool, on the device: each batch's key columns copied up
  while the parser threads go on with the next (the read overlaps the transfers).
* :func:`device_topology`: degrees by ``bincount``, presence and the lookup table by a running
  sum, each direction ordered by a stable ``argsort`` of its keys, targets renumbered by one
  gather; the results come back to the host for the commit.

Not here (the CPU path takes them): duplicate merging, ids that need mapping other than through
a lookup table (spread-out integers), graphs whose edges do not fit the device's free memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .renumber import Renumber, internal_dtype

__all__ = ["DEVICE_BYTES_PER_EDGE", "DeviceSpool", "DeviceTopology", "device_topology",
           "device_xp"]

#: Device bytes per input edge while sorting (keys, order, outputs, payloads, both directions),
#: on the high side: an ingest takes the device path only when its edges fit this way.
DEVICE_BYTES_PER_EDGE = 96


def device_xp(preference: str = "auto"):
    """CuPy when a GPU can take an ingest's sort (``preference`` 'auto' or 'gpu'), else None;
    'gpu' without one is an error the caller reports."""
    if preference == "cpu":
        return None
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            return cupy
    except Exception:  # no CuPy, no driver, no device: the CPU sorts
        pass
    return None


def free_device_bytes(xp) -> int:
    if xp is np:
        return 1 << 62
    free, _total = xp.cuda.Device().mem_info
    return int(free) + int(xp.get_default_memory_pool().free_bytes())


class DeviceSpool:
    """Spooled edges on the device, one list of batches per input part (read back part after
    part, as :class:`graphdb.catalog.spool.SpoolSet` does: the input's order)."""

    spilled = False

    def __init__(self, xp, dtypes: dict[str, np.dtype], parts: int):
        self.xp = xp
        self.dtypes = {k: np.dtype(v) for k, v in dtypes.items()}
        self.parts: list[list[dict]] = [[] for _ in range(parts)]
        self.rows = 0

    @property
    def row_bytes(self) -> int:
        return sum(d.itemsize for d in self.dtypes.values())

    def append(self, columns: dict[str, np.ndarray], part: int = 0) -> None:
        length = len(next(iter(columns.values())))
        if length:
            self.parts[part].append({k: self.xp.asarray(np.asarray(columns[k], dtype=d))
                                     for k, d in self.dtypes.items()})
            self.rows += length

    def chunks(self, max_rows: int = 0) -> Iterator[dict]:
        for part in self.parts:
            yield from part

    def host_chunks(self, max_rows: int = 0) -> Iterator[dict[str, np.ndarray]]:
        """The batches back on the host (the CPU path's input, when the device cannot sort)."""
        for chunk in self.chunks():
            yield {k: _to_host(self.xp, v) for k, v in chunk.items()}

    def discard(self) -> None:
        self.parts = [[] for _ in self.parts]


def _to_host(xp, array) -> np.ndarray:
    return array if xp is np else xp.asnumpy(array)


@dataclass
class DeviceTopology:
    """Host arrays: per direction (``out``, and ``in`` when directed) offsets, targets and the
    payloads (``weight``, ``row``); and the renumbering of keys."""

    arrays: dict[str, dict[str, np.ndarray]]
    renumber: Renumber


def _joined(xp, chunks: list[dict], dtypes: dict) -> dict:
    """Each column of the spooled batches in one device array."""
    out = {}
    for column in dtypes:
        parts = [c[column] for c in chunks]
        out[column] = parts[0] if len(parts) == 1 else xp.concatenate(parts)
    return out


def device_topology(xp, spool: DeviceSpool, span: int, *, undirected: bool,
                    renumber: bool, lut=None, extra_keys=()) -> DeviceTopology:
    """The CSR(s) of the spooled edges, built with ``xp`` (keys in ``0..span-1``).

    ``renumber``: keys are raw ids, those that occur (or are in ``extra_keys``, host arrays)
    become the vertices; else every key is a vertex. ``lut`` (host array): keys are mapped
    through it first (string ids' ranks), its length being the vertex count (``span``)."""
    columns = _joined(xp, list(spool.chunks()), spool.dtypes)
    spool.discard()
    src, dst = columns.pop("src"), columns.pop("dst")
    payloads = columns
    if lut is not None:
        table = xp.asarray(lut)
        src, dst = table[src], table[dst]
        del table
    key_type = np.int32 if span < 2**31 else np.int64
    src, dst = src.astype(key_type, copy=False), dst.astype(key_type, copy=False)
    if undirected:
        back = src != dst
        keys = {"out": (xp.concatenate([src, dst[back]]), xp.concatenate([dst, src[back]]))}
        payloads = {c: xp.concatenate([v, v[back]]) for c, v in payloads.items()}
        del back
    else:
        keys = {"out": (src, dst), "in": (dst, src)}
    del src, dst
    degrees = {d: xp.bincount(k, minlength=span) for d, (k, _o) in keys.items()}

    if renumber:
        present = degrees["out"] > 0
        if "in" in degrees:
            present |= degrees["in"] > 0
        for extra in extra_keys:
            present[xp.asarray(extra)] = True
        host_present = _to_host(xp, present)
        numbering = Renumber.from_present(host_present)
    else:
        present = None
        numbering = Renumber.everything(span)
    table = None if numbering.lut is None else xp.asarray(numbering.lut)
    out: dict[str, dict[str, np.ndarray]] = {}
    target_type = internal_dtype(numbering.n)
    for direction, (key, other) in keys.items():
        order = xp.argsort(key, kind="stable")
        placed = other[order]
        if table is not None:
            placed = table[placed]
        degree = degrees[direction] if present is None else degrees[direction][present]
        offsets = xp.zeros(numbering.n + 1, dtype=np.int64)
        xp.cumsum(degree, out=offsets[1:])
        result = {"offsets": offsets, "targets": placed.astype(target_type, copy=False)}
        # (input rows align edge properties with the out-CSR only, as on the CPU)
        result.update((c, v[order]) for c, v in payloads.items()
                      if c != "row" or direction == "out")
        out[direction] = {k: _to_host(xp, v) for k, v in result.items()}
        del order, placed, result
    return DeviceTopology(out, numbering)
