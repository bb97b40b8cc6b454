"""The records of a slotted page written by one compiled loop (numba), for large graphs.

:func:`graphdb.storage.pages._write_records` places a page's records with numpy (a gather of the
neighbours' page ids, arithmetic for the slots, a boolean-mask or position scatter): about ten
passes over each page's edges, ~11 ns per edge, 0.18 s per direction of RMAT20, which made the
page builder the critical path of an ingest's commit. This loop writes each record id's bytes
where they go in one pass (~3 ns per edge). Same bytes: the numpy path stays for small graphs
(see :mod:`graphdb.storage.compiled`) and is what the tests compare this with.
"""

from __future__ import annotations

import numpy as np

from .compiled import Kernel

__all__ = ["RECORDS"]

_U0, _U1, _U4, _U7, _U8, _BYTE = (np.uint64(x) for x in (0, 1, 4, 7, 8, 0xFF))


def _write_records(page, degree, targets, weights, vertex_pid, page_first_vertex, pid_bytes,
                   slot_bytes, weighted, starts):
    """Write the records of consecutive vertices (``degree`` neighbours each; ``targets`` and
    ``weights`` their neighbours in order) into ``page`` from byte 64, each record at a
    multiple of 4 (8 when ``weighted``); fill ``starts`` with the records' offsets and return
    the end of the last. ``weights`` are the float64 weights' bits (uint64; empty when not
    ``weighted``). ``page`` is zeroed: padding is left as it is. Record ids are the
    neighbour's page (``vertex_pid``) and its slot in that page, little endian.

    A record id of at most 8 bytes is stored as 8 (its high bytes are zero: the plan checked
    that page numbers and slots fit their widths), which LLVM merges into one store; the zeros
    past its width land where the next id, the padding, the weights or the slots are written
    later. Index arithmetic is unsigned (see :mod:`graphdb.executor.algorithms._kernels`: signed indices
    cost a wraparound branch per access, which also defeats the merging)."""
    align = _U8 if weighted else _U4
    pid_shift = np.uint64(8) * np.uint64(pid_bytes)
    rid = np.uint64(pid_bytes + slot_bytes)
    wide = rid <= _U8
    at = np.uint64(64)
    e = _U0
    for i in range(len(degree)):
        at = (at + align - _U1) // align * align
        starts[i] = at
        d = np.uint64(degree[i])
        for b in range(4):
            page[at + np.uint64(b)] = (d >> np.uint64(8 * b)) & _BYTE
        at += _U4
        for j in range(e, e + d):
            t = np.uint64(targets[j])
            pid = np.uint64(vertex_pid[t])
            slot = t - np.uint64(page_first_vertex[pid])
            if wide:
                packed = pid | (slot << pid_shift)
                for b in range(8):
                    page[at + np.uint64(b)] = (packed >> np.uint64(8 * b)) & _BYTE
            else:
                for b in range(pid_bytes):
                    page[at + np.uint64(b)] = (pid >> np.uint64(8 * b)) & _BYTE
                for b in range(slot_bytes):
                    page[at + pid_shift // _U8 + np.uint64(b)] = (slot >> np.uint64(8 * b)) & _BYTE
            at += rid
        if weighted:
            at = (at + _U7) // _U8 * _U8
            for j in range(e, e + d):
                bits = weights[j]
                for b in range(8):
                    page[at + np.uint64(b)] = (bits >> np.uint64(8 * b)) & _BYTE
                at += _U8
        e += d
    return (at + align - _U1) // align * align


def _warm(compiled) -> None:
    """Int32 targets, uint8 and uint16 page ids (up to 65536 pages), weighted or not."""
    page = np.zeros(256, dtype=np.uint8)
    for pid_type in (np.uint8, np.uint16):
        for weights in (np.zeros(0, np.uint64), np.zeros(1, np.uint64)):
            compiled(page, np.ones(1, np.int64), np.zeros(1, np.int32), weights,
                     np.zeros(1, pid_type), np.zeros(1, np.int64), 3, 3, len(weights) > 0,
                     np.zeros(1, np.int64))


#: The compiled :func:`_write_records` (loaded by :func:`graphdb.storage.compiled.preload`).
RECORDS = Kernel(_write_records, _warm)
