"""The GPU side of the streamed operators: kernels, page-locked host copies, the Subway backend.

Imported only when a streamed operator runs on a GPU (CuPy is imported inside functions).

Host memory. Copies to the device are DMA only from page-locked memory (54 GB/s on an H100,
7 GB/s from ordinary memory), so the topology a streamed operator reads is held page-locked:
:func:`pinned_csr` makes one page-locked copy of a CSR per process and keeps it (GTS and Subway
both assume the edges sit in pinned host memory). Page streaming instead reads the buffer
manager's frames, which are page-locked already.

Subway on the GPU (:class:`GPUBackend`, the driver is :func:`executor.streaming.subway.subway`):
two slots, each a device buffer and a page-locked staging buffer of one piece and its own
stream. While one slot's piece is copied and relaxed, the host gathers the next piece into the
other slot's staging buffer (``gather='host'``, Subway's CPU step 6, numpy in the staging
buffer). ``gather='device'`` instead copies only the rows and offsets and lets a kernel read the
active edges straight out of the page-locked CSR (UVA maps it into the device's address space):
no host gather, and the bytes cross the bus once either way.
"""

from __future__ import annotations

import functools
from collections import deque

import numpy as np

from ..errors import DeviceOutOfMemory
from ..gpu import runtime as rt
from .subway import MAX_INNER, piece_arrays

__all__ = ["GPUBackend", "pinned_csr", "pinned_empty", "module", "h2d", "slack", "Slot"]

THREADS = 256
#: Device bytes kept free for CuPy's pool rounding, the flag words and the kernels' stacks.
DEVICE_SLACK = 16 << 20
_PINNED: dict[int, tuple] = {}
#: Transient device bytes per vertex of reading the active ids out (scan, int64 and int32 ids).
ACTIVE_IDS_BYTES_PER_VERTEX = 20


@functools.lru_cache(maxsize=None)
def _module(device_id: int):
    mod = rt.cp().RawModule(code=rt._source("streaming"), options=("--std=c++17",))
    mod.compile()
    return mod


def module():
    return _module(rt.cp().cuda.Device().id)


def kernel(name: str):
    return module().get_function(name)


def pinned_empty(n: int, dtype) -> np.ndarray:
    """A page-locked numpy array (its pages are mapped into the device's address space)."""
    dtype = np.dtype(dtype)
    mem = rt.cp().cuda.alloc_pinned_memory(max(1, n * dtype.itemsize))
    return np.frombuffer(mem, dtype=dtype, count=n)


def pinned_csr(csr, weights: bool):
    """(offsets, targets, weights or None) of ``csr`` in page-locked memory, copied once."""
    key = id(csr)
    hit = _PINNED.get(key)
    if hit is not None and hit[0] is csr and (hit[3] is not None or not weights):
        return hit[1], hit[2], hit[3]
    if len(_PINNED) >= 2:  # a streaming query holds one graph's edges; do not hoard several
        _PINNED.pop(next(iter(_PINNED)))
    tgt = pinned_empty(csr.num_edges, np.int32)
    tgt[:] = csr.targets
    w = None
    if weights and csr.weights is not None:
        w = pinned_empty(csr.num_edges, np.float64)
        w[:] = csr.weights
    _PINNED[key] = (csr, csr.offsets, tgt, w)
    return csr.offsets, tgt, w


def slack(budget: int) -> int:
    """Device bytes a streamed operator leaves unplanned: DEVICE_SLACK, less on tiny budgets."""
    return min(DEVICE_SLACK, int(budget) // 8)


def h2d(dst, src: np.ndarray, stream, dst_byte_offset: int = 0) -> int:
    """Asynchronous copy of a page-locked host array into device memory; returns bytes."""
    nbytes = int(src.nbytes)
    if nbytes:
        rt.cp().cuda.runtime.memcpyAsync(dst.data.ptr + dst_byte_offset, src.ctypes.data, nbytes,
                                         1, stream.ptr)  # 1 = cudaMemcpyHostToDevice
    return nbytes


def _align(n: int) -> int:
    return (n + 7) // 8 * 8


class Slot:
    """One piece in flight: a device buffer, its page-locked staging twin, a stream, timers."""

    def __init__(self, nbytes: int):
        cp = rt.cp()
        self.device = cp.empty(nbytes, dtype=np.uint8)
        self.staging = pinned_empty(nbytes, np.uint8)
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.done = None
        self.changed = cp.zeros(1, dtype=np.int32)
        self.timings: list = []

    def wait(self) -> None:
        if self.done is not None:
            self.done.synchronize()

    def record(self):
        ev = rt.cp().cuda.Event()
        ev.record(self.stream)
        return ev


class GPUBackend:
    """Vertex state on the device; pieces of the (Sub)CSR streamed through two slots."""

    name = "gpu"

    def __init__(self, algorithm: str, n: int, source, metrics, gather: str = "host"):
        cp = rt.cp()
        self.cp, self.algorithm, self.metrics, self.gather = cp, algorithm, metrics, gather
        self.relax = kernel(f"graphdb_subway_relax_{algorithm}")
        self.gather_kernel = kernel("graphdb_subway_gather")
        with rt.translate_oom(f"streamed {algorithm}: vertex state"):
            if algorithm == "wcc":
                self.value = cp.arange(n, dtype=np.float64)
                self.label = cp.ones(n, dtype=np.uint8)
            else:
                self.value = cp.full(n, np.inf, dtype=np.float64)
                self.label = cp.zeros(n, dtype=np.uint8)
                self.value[source] = 0.0
                self.label[source] = 1
            self.snap = cp.zeros(n, dtype=np.uint8)
        self.slots: list[Slot] = []
        self.n = n

    def piece_capacity(self, budget: int, state: int, edge_bytes: int) -> int:
        # flatnonzero's scan and the id arrays it returns: transient, but inside the budget
        free = budget - state - ACTIVE_IDS_BYTES_PER_VERTEX * self.n - slack(budget)
        if free < 1 << 12:
            raise DeviceOutOfMemory(f"streamed {self.algorithm}: the budget of {budget} B leaves "
                                    f"{free} B for edges after {state} B of vertex state")
        with rt.translate_oom(f"streamed {self.algorithm}: piece buffers"):
            self.slots = [Slot(free // 2) for _ in range(2)]
        return free // 2 - 64  # alignment padding between the sections of a piece

    def active_ids(self) -> np.ndarray:
        ids = self.cp.flatnonzero(self.label).astype(np.int32)
        self.metrics.bytes_from_device += int(ids.nbytes)
        return ids.get().astype(np.int64)

    def begin_iteration(self, full: bool) -> None:
        if full:
            self.snap, self.label = self.label, self.snap
        self.label.fill(0)

    def run_pieces(self, csr, rows, sub_off, pieces, weighted, full, asynchronous) -> None:
        hoff, htgt, hw = pinned_csr(csr, weighted)
        self._host = (htgt, hw)
        # The label writes of begin_iteration ran on the legacy stream, which the slots'
        # non-blocking streams do not wait for.
        self.cp.cuda.get_current_stream().synchronize()
        pending: deque = deque()
        for k, piece in enumerate(pieces):
            pending.append(self._prepare(self.slots[k % 2], csr, rows, sub_off, piece,
                                         weighted, full))
            if len(pending) == 2:
                self._finish(*pending.popleft(), asynchronous)
        while pending:
            self._finish(*pending.popleft(), asynchronous)
        for slot in self.slots:
            slot.stream.synchronize()
            for start, mid, end in slot.timings:
                self.metrics.transfer_s += self.cp.cuda.get_elapsed_time(start, mid) / 1e3
                self.metrics.kernel_s += self.cp.cuda.get_elapsed_time(mid, end) / 1e3
            slot.timings.clear()

    def _prepare(self, slot: Slot, csr, rows, sub_off, piece, weighted, full):
        """Gather (host) and enqueue the copies and pass 1 of one piece on its slot."""
        import time

        slot.wait()
        cp = self.cp
        htgt, hw = self._host
        n_e, n_r = piece.edges, piece.r1 - piece.r0
        o_t = 0
        o_w = _align(n_e * 4)
        o_off = o_w + (_align(n_e * 8) if weighted else 0)
        o_rows = o_off + _align((n_r + 1) * 8)
        o_end = o_rows + (n_r * 4 if rows is not None else 0)
        st = slot.staging
        t0 = time.perf_counter()
        host_gather = rows is not None and self.gather == "host"
        if host_gather:
            local, _, _, head, tail = self._gather_host(csr, rows, sub_off, piece, weighted,
                                                        st, o_t, o_w)
        else:
            off = sub_off[piece.r0:piece.r1 + 1]
            local = np.clip(off, piece.e0, piece.e1) - piece.e0
            head, tail = bool(off[0] < piece.e0), bool(off[-1] > piece.e1)
        st[o_off:o_off + (n_r + 1) * 8].view(np.int64)[:] = local
        if rows is not None:
            st[o_rows:o_end].view(np.int32)[:] = rows[piece.r0:piece.r1]
        self.metrics.gather_s += time.perf_counter() - t0
        dev = slot.device
        start = slot.record()
        moved = 0
        if host_gather:
            moved += h2d(dev, st[:o_off], slot.stream)
            moved += h2d(dev, st[o_off:o_end], slot.stream, o_off)
        else:
            moved += h2d(dev, st[o_off:o_end], slot.stream, o_off)
            if rows is None:  # whole partition: the edges are one slice of the pinned CSR
                moved += h2d(dev, htgt[piece.e0:piece.e1], slot.stream, o_t)
                if weighted:
                    moved += h2d(dev, hw[piece.e0:piece.e1], slot.stream, o_w)
        d_t = dev[o_t:o_t + n_e * 4].view(np.int32)
        d_w = dev[o_w:o_w + n_e * 8].view(np.float64) if weighted else None
        d_off = dev[o_off:o_off + (n_r + 1) * 8].view(np.int64)
        d_rows = dev[o_rows:o_end].view(np.int32) if rows is not None else None
        if rows is not None and self.gather == "device":
            starts = csr.offsets[rows[piece.r0:piece.r1]] + np.maximum(
                piece.e0 - sub_off[piece.r0:piece.r1], 0)
            moved += int(starts.nbytes) + n_e * (12 if weighted else 4)
            with slot.stream:
                d_start = cp.asarray(starts)  # small: one int64 per row of the piece
                grid = (rt.grid_for(max(n_r, 1) * 32, THREADS),)
                self.gather_kernel(grid, (THREADS,), (
                    d_off, d_start, np.int64(n_r), np.uint64(htgt.ctypes.data),
                    np.uint64(hw.ctypes.data if weighted else 0), d_t,
                    d_w if weighted else np.uint64(0)))
        mid = slot.record()
        args = [d_off, d_t, d_w if weighted else np.uint64(0),
                d_rows if d_rows is not None else np.uint64(0),
                np.int64(piece.r0 if rows is None else 0), np.int64(n_r), np.int32(head),
                np.int32(tail), self.value, self.label, self.snap, np.int32(1 if full else 0),
                slot.changed]
        self._launch(slot, args, n_r)
        self.metrics.bytes_to_device += moved
        return slot, args, n_r, start, mid

    def _gather_host(self, csr, rows, sub_off, piece, weighted, st, o_t, o_w):
        n_e = piece.edges
        return piece_arrays(csr, rows, sub_off, piece, weighted,
                            out_targets=st[o_t:o_t + n_e * 4].view(np.int32),
                            out_weights=st[o_w:o_w + n_e * 8].view(np.float64)
                            if weighted else None)

    def _launch(self, slot: Slot, args, n_r: int) -> None:
        grid = (rt.grid_for(max(n_r, 1) * 32, THREADS),)
        with slot.stream:
            self.relax(grid, (THREADS,), tuple(args))

    def _finish(self, slot: Slot, args, n_r, start, mid, asynchronous) -> None:
        """Inner iterations on the loaded piece until none of its rows is active again."""
        if asynchronous:
            args = list(args)
            args[11] = np.int32(2)
            for _ in range(MAX_INNER):
                with slot.stream:  # the slot's stream orders the flag with its kernels
                    slot.changed.fill(0)
                self._launch(slot, args, n_r)
                self.metrics.inner_iterations += 1
                if not int(slot.changed.get(stream=slot.stream)[0]):
                    break
        end = slot.record()
        slot.timings.append((start, mid, end))
        slot.done = end

    def result(self) -> np.ndarray:
        self.cp.cuda.Device().synchronize()
        self.metrics.bytes_from_device += int(self.value.nbytes)
        return self.value.get()
