"""Every field of a slotted page checked before anything uses it (storage.pages has the layout).

A page carries a checksum (:func:`graphdb.storage.pages.verify_page`), so damage is caught;
these checks catch a page whose fields were changed and that was sealed again (by someone who
knows the format, or by a bug): a slot vertex id out of range would index the vertex state
with a wrapped or foreign id, ``pid_bytes = 0`` would read record ids shifted, a record count
past the page would read the next record's bytes. Each check ends in a problem string, which
the caller raises as :class:`~graphdb.storage.errors.CorruptData`; never a wrong answer or a
raw ``IndexError``.

Three levels, from what the page alone says to what the graph knows:

- :func:`header_problem`: kind, flags, widths (the database's own when its layout is known),
  counts and bounds of the header fields;
- :func:`records_problem`: slots and records, which the builder writes back to back: slot
  ``i`` holds vertex ``first_vertex + i`` and the offset of its record, records follow one
  another from byte 64 to ``records_end`` and their counts add up to ``num_edges``;
- :class:`PageContext`: the page against the graph's page table (its first vertex, the vertex
  range its run covers, its place in a hub's chain) and every record id against the table (a
  page that exists, a slot inside that page's vertices).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["PageContext", "header_problem", "records_problem"]

HEADER_BYTES = 64
SLOT_BYTES = 12
SMALL, LARGE = 1, 2
#: Vertex ids, edge counts and positions above this cannot be real.
_MAX_ID = 1 << 48
_SLOT = np.dtype([("vid", "<u8"), ("off", "<u4")])


def header_problem(h, length: int, layout=None) -> str | None:
    """What is wrong with the header fields ``h`` (a PageHeader) of a ``length``-byte page."""
    if h.kind not in (SMALL, LARGE):
        return f"has kind {h.kind}"
    if not 1 <= h.pid_bytes <= 8 or not 1 <= h.slot_bytes <= 8 or \
            h.pid_bytes + h.slot_bytes > 16:
        return f"has record-id widths {h.pid_bytes}+{h.slot_bytes}"
    if layout is not None and (h.pid_bytes, h.slot_bytes) != (layout.pid_bytes,
                                                               layout.slot_bytes):
        return (f"has record-id widths {h.pid_bytes}+{h.slot_bytes}; the database's are "
                f"{layout.pid_bytes}+{layout.slot_bytes}")
    if h.weight_bytes != (8 if h.weighted else 0) or h.flags & ~1:
        return f"has flags {h.flags:#x} and weight width {h.weight_bytes}"
    slots_end = length - SLOT_BYTES * h.num_slots
    if h.num_slots < 1 or (h.kind == LARGE and h.num_slots != 1) or slots_end < HEADER_BYTES:
        return f"has {h.num_slots} slots"
    if not HEADER_BYTES <= h.records_end <= slots_end:
        return f"has records ending at byte {h.records_end} (slots start at {slots_end})"
    if h.first_vertex >= _MAX_ID or h.edge_start >= _MAX_ID or h.num_edges > length:
        return (f"has first vertex {h.first_vertex}, first edge {h.edge_start} and "
                f"{h.num_edges} edges")
    if h.kind == SMALL and (h.chain_index, h.chain_length) != (0, 1) or \
            h.kind == LARGE and not h.chain_index < h.chain_length:
        return f"is part {h.chain_index} of a chain of {h.chain_length}"
    return None


def records_problem(page: np.ndarray, h) -> tuple[np.ndarray, np.ndarray] | str:
    """Slots and records of a page whose header passed :func:`header_problem`: (record
    offsets, record counts), one per slot in vertex order, or what is wrong. A handful of
    vectorized steps: it runs on every load of a page into the buffer pool."""
    size, k = len(page), h.num_slots
    slots = page[size - SLOT_BYTES * k:].view(_SLOT)[::-1]
    vids = slots["vid"]
    first = h.first_vertex
    if int(vids[0]) != first or (k > 1 and (int(vids[-1]) != first + k - 1
                                            or (np.diff(vids) != 1).any())):
        return f"has slots for vertices {_few(vids)}, not {first}.."
    offs = slots["off"].astype(np.int64)
    align = 8 if h.weighted else 4
    if int(offs[0]) != HEADER_BYTES or int(offs.max()) > h.records_end - 4 or \
            (offs % align).any():
        return f"has records at bytes {_few(offs)}, outside {HEADER_BYTES}..{h.records_end}"
    counts = page.view("<u4")[offs >> 2].astype(np.int64)
    r = h.pid_bytes + h.slot_bytes
    sizes = (4 + counts * r + align - 1) // align * align
    if h.weighted:
        sizes += 8 * counts
    ends = np.cumsum(sizes)
    ends += HEADER_BYTES
    if int(ends[-1]) != h.records_end or (k > 1 and (offs[1:] != ends[:-1]).any()):
        return (f"has records of {_few(counts)} neighbours at bytes {_few(offs)}, which do not "
                f"follow one another to byte {h.records_end}")
    if int(counts.sum()) != h.num_edges:
        return f"has records of {int(counts.sum())} neighbours in all; its header says {h.num_edges}"
    return offs, counts


def _few(values: np.ndarray) -> str:
    shown = ", ".join(str(int(v)) for v in values[:4])
    return shown + (", ..." if len(values) > 4 else "")


@dataclass
class PageContext:
    """What a graph's pages must agree with: the database's layout, the graph's vertex count
    and the page table of one direction (``page_first_vertex``: first vertex of every page)."""

    layout: object
    num_vertices: int
    page_first_vertex: np.ndarray
    _run_end: np.ndarray | None = field(default=None, repr=False)
    _run_start: np.ndarray | None = field(default=None, repr=False)

    @property
    def run_end(self) -> np.ndarray:
        """int64 per page: the end (exclusive) of the vertex range of the page's run."""
        return self._runs()[1]

    def _runs(self) -> tuple[np.ndarray, np.ndarray]:
        """(first page of, end vertex of) the run of every page: a small page, or a hub's chain
        of large pages (which share their first vertex)."""
        if self._run_end is None:
            pfv = np.asarray(self.page_first_vertex, dtype=np.int64)
            after = np.searchsorted(pfv, pfv, side="right")
            self._run_end = np.append(pfv, self.num_vertices)[after]
            self._run_start = np.searchsorted(pfv, pfv, side="left")
        return self._run_start, self._run_end

    def page_problem(self, h) -> str | None:
        """The page (header ``h``) against the page table."""
        pfv = self.page_first_vertex
        if not h.page_id < len(pfv):
            return f"is page {h.page_id} of a table of {len(pfv)}"
        start, end = self._runs()
        first, pid = int(pfv[h.page_id]), h.page_id
        if h.first_vertex != first or h.first_vertex + h.num_slots != int(end[pid]):
            return (f"holds vertices {h.first_vertex}..{h.first_vertex + h.num_slots - 1}; the "
                    f"page table gives it {first}..{int(end[pid]) - 1}")
        if h.kind == LARGE and (pid - int(start[pid]), h.chain_length) != (
                h.chain_index, self._chain_length(pid)):
            return (f"says it is part {h.chain_index} of a chain of {h.chain_length}; the page "
                    f"table makes it part {pid - int(start[pid])} of {self._chain_length(pid)}")
        return None

    def _chain_length(self, pid: int) -> int:
        pfv = self.page_first_vertex
        value = pfv[pid]
        return int(np.searchsorted(pfv, value, side="right") - np.searchsorted(pfv, value))

    def targets(self, rid_pid: np.ndarray, rid_slot: np.ndarray) -> np.ndarray | str:
        """The vertices the record ids name, or what is wrong: every id names a page of the
        table and a slot among that page's vertices."""
        pfv = self.page_first_vertex
        if rid_pid.size == 0:
            return rid_pid
        if int(rid_pid.min()) < 0 or int(rid_pid.max()) >= len(pfv):
            return f"has record ids of pages outside 0..{len(pfv) - 1}"
        _start, end = self._runs()
        vertex = pfv[rid_pid].astype(np.int64) + rid_slot
        bad = (rid_slot < 0) | (vertex >= end[rid_pid])
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            return (f"has a record id (page {int(rid_pid[i])}, slot {int(rid_slot[i])}) beyond "
                    "that page's vertices")
        return vertex
