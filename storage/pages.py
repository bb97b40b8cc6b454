"""Slotted topology pages after GTS (Kim et al., SIGMOD '16), built from a CSR with numpy.

A graph's adjacency (one direction: out-edges, or in-edges) is cut into fixed-size pages that a
GPU can stream. Vertices are packed in id order, so every page covers a contiguous vertex range
and the page-to-first-vertex table (GTS's RVT) maps a record id back to a vertex id.

Page layout (``page_size`` bytes, little endian)::

    byte 0        64                                         free                page_size
    +-----------+---------+---------+-----+---------------> <-----+--------+--------+
    |  HEADER   |  REC_0  |  REC_1  | ... |     (zeros)           | SLOT_1 | SLOT_0 |
    +-----------+---------+---------+-----+---------------> <-----+--------+--------+
                records grow forward from byte 64; slot i sits at page_size - 12 * (i + 1)

    HEADER (64 bytes)
      0  magic        4s  b"GDBP"
      4  version      u16 FORMAT_VERSION
      6  kind         u8  1 = small page (many vertices), 2 = large page (part of one vertex)
      7  flags        u8  bit 0: records carry weights
      8  checksum     u32 of bytes [12, page_size): everything after this field
     12  page_size    u32
     16  page_id      u64 this page's id (also its position in the page table)
     24  first_vertex u64 the vertex of slot 0
     32  num_slots    u32 vertices in the page (1 on a large page)
     36  records_end  u32 first free byte after the last record
     40  num_edges    u32 neighbour entries in the page
     44  pid_bytes    u8  p: width of a record id's page number
     45  slot_bytes   u8  q: width of a record id's slot number
     46  weight_bytes u8  0, or 8 (float64 weights)
     47  checksum_alg u8  1 = zlib crc32, 2 = xxh3 (low 32 bits); see storage.checksum
     48  chain_index  u32 large page: position in its vertex's chain (0 on a small page)
     52  chain_length u32 large page: pages in the chain (1 on a small page)
     56  edge_start   u64 CSR position of the page's first edge (edge properties line up)

    REC  = [ N: u32 | RID_0 ... RID_{N-1} (N * (p+q) bytes) | pad | W_0 ... W_{N-1} (N * f8) ]
           a record starts at a multiple of 4 (8 when weighted); pad aligns the weights to 8
    RID  = [ page id: p bytes | slot: q bytes ]   the neighbour's record id (physical id)
    SLOT = [ vertex id: u64 | record offset: u32 ]

A vertex whose record (plus its slot) does not fit in an empty page gets a chain of *large pages*:
each holds one slot and a part of the adjacency list. The vertex's record id is (first page of
the chain, 0). Physical ids let a kernel see on which page a neighbour lives without a lookup
(GTS marks "page needed at the next level" from them); the page table turns them back into
vertex ids: ``vertex = page_first_vertex[pid] + slot``.

Construction is vectorized: packing is one ``searchsorted`` per page over the prefix sums of
record sizes, and a page's bytes are placed with boolean masks (no Python loop over edges).
Pages are produced one at a time so that a CSR held in ``np.memmap`` is never read whole.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from . import page_kernel
from .checksum import ALGORITHMS, checksum, default_algorithm
from .errors import CorruptData, StorageError
from .page_checks import PageContext, header_problem, records_problem

__all__ = [
    "FORMAT_VERSION",
    "HEADER_BYTES",
    "LARGE",
    "SLOT_BYTES",
    "SMALL",
    "PageContext",
    "PageLayout",
    "PagePlan",
    "decode_page",
    "iter_pages",
    "pages_of_vertices",
    "plan_pages",
    "read_header",
    "rid_to_vertex",
    "verify_page",
]

MAGIC = b"GDBP"
FORMAT_VERSION = 1
HEADER = struct.Struct("<4sHBBIIQQIIIBBBBIIQ")
HEADER_BYTES = HEADER.size
assert HEADER_BYTES == 64
SLOT_DTYPE = np.dtype([("vid", "<u8"), ("off", "<u4")])
SLOT_BYTES = SLOT_DTYPE.itemsize
SMALL, LARGE = 1, 2
_CRC_START = 12  # the checksum covers the page from the byte after its own field


@dataclass(frozen=True)
class PageLayout:
    """Page size and record-id widths of a database (GTS's (p, q); default (3, 3))."""

    page_size: int = 2 << 20
    pid_bytes: int = 3
    slot_bytes: int = 3

    def __post_init__(self):
        if not 1 <= self.pid_bytes <= 8 or not 1 <= self.slot_bytes <= 8:
            raise StorageError("record-id widths must be between 1 and 8 bytes")
        if self.page_size % 8 or self.page_size < 256 or self.page_size >= 1 << 32:
            raise StorageError(f"page size must be a multiple of 8 between 256 B and 4 GiB, "
                               f"got {self.page_size}")

    @property
    def rid_bytes(self) -> int:
        return self.pid_bytes + self.slot_bytes

    def record_bytes(self, degree: np.ndarray, weighted: bool) -> np.ndarray:
        """Bytes of each vertex's record (count, record ids, padding, weights)."""
        align = 8 if weighted else 4
        head = 4 + degree.astype(np.int64) * self.rid_bytes
        head = (head + align - 1) // align * align
        return head + 8 * degree if weighted else head

    def edges_per_large_page(self, weighted: bool) -> int:
        usable = self.page_size - HEADER_BYTES - SLOT_BYTES - 4 - 7
        return max(1, usable // (self.rid_bytes + (8 if weighted else 0)))


@dataclass(frozen=True)
class PagePlan:
    """Where every vertex goes: page runs in vertex order and each vertex's record id.

    ``page_first_vertex`` and ``page_kind`` form the page table (one entry per page); a run of
    large pages with the same first vertex is that vertex's chain.
    """

    layout: PageLayout
    weighted: bool
    page_first_vertex: np.ndarray  # int64, one per page
    page_kind: np.ndarray  # uint8 SMALL / LARGE
    page_last_vertex: np.ndarray  # int64, exclusive end of each page's vertex range
    #: page of every vertex's record (the first of a hub's chain), in the narrowest unsigned
    #: type that holds the page count: the one per-vertex array of a plan. The slot follows
    #: from it (vertex - the page's first vertex; 0 on a chain), so record ids cost 2-4 bytes
    #: per vertex to look up instead of 24.
    vertex_pid: np.ndarray
    checksum: int  # algorithm sealing the pages (storage.checksum)

    @property
    def num_pages(self) -> int:
        return len(self.page_first_vertex)

    def record_ids(self, vertices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(page, slot) of each vertex's record, as uint64."""
        pid = np.take(self.vertex_pid, vertices)
        slot = np.asarray(vertices).astype(np.uint64)
        slot -= np.take(self.page_first_vertex.view(np.uint64), pid)
        return pid.astype(np.uint64), slot

    def packed_record_ids(self, vertices: np.ndarray) -> np.ndarray:
        """Record ids packed as page | slot << 8p (uint64; p + q must be at most 8 bytes)."""
        pid, slot = self.record_ids(vertices)
        slot <<= np.uint64(8 * self.layout.pid_bytes)
        slot |= pid
        return slot


#: Vertices whose record sizes are computed at a time while planning (bounds the temporaries).
PLAN_CHUNK = 1 << 20


def plan_pages(offsets: np.ndarray, layout: PageLayout, weighted: bool) -> PagePlan:
    """Pack vertices into pages in id order; one loop iteration per page, none per edge.

    The vertices are taken :data:`PLAN_CHUNK` at a time (a running sum of their records' bytes
    per chunk; a page still open at a chunk's end continues into the next), so planning holds
    no array of 8 bytes per vertex: only the page table and the narrow page id per vertex."""
    n = len(offsets) - 1
    capacity = layout.page_size - HEADER_BYTES
    max_slots = min(1 << (8 * layout.slot_bytes), capacity // (4 + SLOT_BYTES))
    per_large = layout.edges_per_large_page(weighted)
    firsts, kinds, lasts = [], [], []
    v = 0  # first vertex of the page being filled
    carried = 0  # bytes of its vertices in earlier chunks (it is open at a chunk's start)
    for a in range(0, n, PLAN_CHUNK):
        b = min(n, a + PLAN_CHUNK)
        degree = np.diff(np.asarray(offsets[a:b + 1], dtype=np.int64))
        # cum[j]: bytes of vertices a..a+j (record plus slot), counted from the chunk's start
        cum = layout.record_bytes(degree, weighted) + SLOT_BYTES
        np.cumsum(cum, out=cum)
        while v < b:
            if v >= a:  # an empty page starting at v
                start = int(cum[v - a - 1]) if v > a else 0
                if int(cum[v - a]) - start > capacity:
                    # a hub: a chain of large pages holds its adjacency
                    chain = -(-int(degree[v - a]) // per_large)
                    firsts.extend([v] * chain)
                    kinds.extend([LARGE] * chain)
                    lasts.extend([v + 1] * chain)
                    v += 1
                    continue
            else:  # the page open since an earlier chunk
                start = -carried
            # Every vertex whose running sum still fits; a hub's record alone exceeds the
            # capacity, so the search stops before it.
            stop = a + int(np.searchsorted(cum, start + capacity, side="right"))
            if stop >= b and b < n and v + max_slots > b:
                carried = int(cum[-1]) - start  # room left: the next chunk may add to it
                break
            stop = min(stop, v + max_slots)
            firsts.append(v)
            kinds.append(SMALL)
            lasts.append(stop)
            v = stop
    page_first = np.asarray(firsts, dtype=np.int64)
    page_kind = np.asarray(kinds, dtype=np.uint8)
    page_last = np.asarray(lasts, dtype=np.int64)
    if len(page_first) > 1 << (8 * layout.pid_bytes):
        raise StorageError(
            f"{len(page_first)} pages do not fit {layout.pid_bytes}-byte page ids; "
            "use a larger page size or wider record ids")
    # A run is a small page or a whole chain: its first page id names every vertex in it.
    run_start = np.ones(len(page_first), dtype=bool)
    run_start[1:] = (page_kind[1:] == SMALL) | (page_first[1:] != page_first[:-1])
    run_pid = np.flatnonzero(run_start)
    run_len = page_last[run_pid] - page_first[run_pid]
    narrow = np.min_scalar_type(max(len(page_first) - 1, 0))
    vertex_pid = np.repeat(run_pid.astype(narrow), run_len)
    return PagePlan(layout, weighted, page_first, page_kind, page_last, vertex_pid,
                    default_algorithm())


def _little_endian_bytes(values: np.ndarray, width: int) -> np.ndarray:
    """(len, width) uint8: the low ``width`` bytes of each value, little endian."""
    wide = np.ascontiguousarray(values, dtype="<u8").view(np.uint8).reshape(-1, 8)
    return wide[:, :width]


def _unit_view(page: np.ndarray, dtype, unit: int) -> np.ndarray:
    """``page`` as (overlapping, possibly unaligned) ``dtype`` values starting every ``unit``
    bytes: element ``i`` is the value at byte ``unit * i``."""
    dtype = np.dtype(dtype)
    return np.ndarray(buffer=page, dtype=dtype, shape=((len(page) - dtype.itemsize) // unit + 1,),
                      strides=(unit,))


def _write_records(page: np.ndarray, plan: PagePlan, degree: np.ndarray, targets: np.ndarray,
                   weights: np.ndarray | None, compiled=None) -> tuple[int, np.ndarray]:
    """Write the records of consecutive vertices (or one part of a hub) after the header.

    Returns the end of the records and each record's offset in the page. ``compiled``: the
    kernel of :mod:`graphdb.storage.page_kernel`, which writes the same bytes in one loop.

    Values go straight to their place (the page is zeroed: padding stays zero), in *units*:
    the largest of 1, 2 or 4 bytes that divides the record-id width. Unweighted records take
    their ids by one mask assignment (:func:`_place_by_mask`), weighted ones (and ids wider
    than 8 bytes) by positions (:func:`_place_by_position`).
    """
    layout = plan.layout
    degree = degree.astype(np.int64, copy=False)
    if compiled is not None:
        starts = np.empty(len(degree), dtype=np.int64)
        bits = (np.zeros(0, np.uint64) if weights is None
                else np.ascontiguousarray(weights, dtype="<f8").view(np.uint64))
        end = compiled(page, degree, targets, bits, plan.vertex_pid, plan.page_first_vertex,
                       layout.pid_bytes, layout.slot_bytes, plan.weighted, starts)
        return int(end), starts
    r = layout.rid_bytes
    unit = int(np.gcd(4, r))
    sizes = layout.record_bytes(degree, plan.weighted)
    starts = np.empty(len(degree), dtype=np.int64)
    starts[0] = HEADER_BYTES
    np.cumsum(sizes[:-1], out=starts[1:])
    starts[1:] += HEADER_BYTES
    end = int(starts[-1] + sizes[-1])
    m = len(targets)
    if m:
        packed = rid = None
        if r <= 8:  # packed record ids (low r bytes used)
            packed = plan.packed_record_ids(targets).astype("<u8", copy=False)
        else:
            pid, slot = plan.record_ids(targets)
            rid = np.empty((m, r), dtype=np.uint8)
            rid[:, : layout.pid_bytes] = _little_endian_bytes(pid, layout.pid_bytes)
            rid[:, layout.pid_bytes:] = _little_endian_bytes(slot, layout.slot_bytes)
        if packed is not None and not plan.weighted:
            _place_by_mask(page, starts, sizes, end, degree, packed, r, unit)
        else:
            _place_by_position(page, starts, degree, packed, rid, weights, plan, unit)
    page.view("<u4")[starts // 4] = degree
    return end, starts


def _place_by_mask(page: np.ndarray, starts: np.ndarray, sizes: np.ndarray, end: int,
                   degree: np.ndarray, packed: np.ndarray, r: int, unit: int) -> None:
    """Unweighted records, [count | record ids | padding] back to back: every unit of the
    region except counts and padding is a record-id unit, in order, so one boolean-mask
    assignment places all ids, cut from 8 to ``r`` bytes by one structured copy (~7 ns per
    edge where scattering each id to its position costs ~12)."""
    utype = np.dtype(f"<u{unit}")
    region = page[HEADER_BYTES:end].view(utype)
    mask = np.ones(len(region), dtype=bool)
    rel = (starts - HEADER_BYTES) // unit
    for j in range(4 // unit):
        mask[rel + j] = False
    ids_end = rel + (4 + r * degree) // unit
    pad = rel + sizes // unit - ids_end  # 0 to 3 units
    for j in range(int(pad.max())):
        mask[ids_end[pad > j] + j] = False
    cut = np.dtype({"names": ["rid"], "formats": [f"V{r}"], "offsets": [0], "itemsize": 8})
    region[mask] = packed.view(cut)["rid"].copy().view(utype)


def _place_by_position(page: np.ndarray, starts: np.ndarray, degree: np.ndarray,
                       packed: np.ndarray | None, rid: np.ndarray | None,
                       weights: np.ndarray | None, plan: PagePlan, unit: int) -> None:
    """Record ids (and weights) scattered to positions from one cumulative sum of per-edge
    steps (the width within a record, the gap to the next record at its first edge)."""
    r = plan.layout.rid_bytes
    ru = r // unit
    m = len(packed) if packed is not None else len(rid)
    has = degree > 0
    first_edge = np.cumsum(degree) - degree
    at, rec, deg = first_edge[has], (starts[has] + 4) // unit, degree[has]
    pos = np.full(m, ru, dtype=np.int64)
    pos[0] = rec[0]
    pos[at[1:]] = rec[1:] - (rec[:-1] + ru * (deg[:-1] - 1))
    np.cumsum(pos, out=pos)
    if packed is not None and r == 6:
        _unit_view(page, "<u4", 2)[pos] = packed.view("<u4")[::2]
        pos += 2
        _unit_view(page, "<u2", 2)[pos] = packed.view("<u2")[2::4]
    else:
        utype = np.dtype(f"<u{unit}")
        units = (packed.view(utype).reshape(-1, 8 // unit) if packed is not None
                 else rid.view(utype))
        region = page.view(utype)
        for k in range(ru):
            region[pos] = units[:, k]
            pos += 1
    del pos
    if plan.weighted:
        wat = (starts[has] + 4 + deg * r + 7) // 8  # in 8-byte words
        wpos = np.ones(m, dtype=np.int64)
        wpos[0] = wat[0]
        wpos[at[1:]] = wat[1:] - (wat[:-1] + deg[:-1] - 1)
        np.cumsum(wpos, out=wpos)
        page.view("<f8")[wpos] = np.asarray(weights, dtype="<f8")


def _finish(page: np.ndarray, kind: int, pid: int, first_vertex: int, num_slots: int,
            records_end: int, num_edges: int, plan: PagePlan, chain: tuple[int, int],
            edge_start: int) -> bytes:
    layout = plan.layout
    HEADER.pack_into(page, 0, MAGIC, FORMAT_VERSION, kind, 1 if plan.weighted else 0, 0,
                     layout.page_size, pid, first_vertex, num_slots, records_end, num_edges,
                     layout.pid_bytes, layout.slot_bytes, 8 if plan.weighted else 0,
                     plan.checksum, chain[0], chain[1], edge_start)
    struct.pack_into("<I", page, 8, checksum(page[_CRC_START:], plan.checksum))
    return page


def iter_pages(offsets: np.ndarray, targets: np.ndarray, weights: np.ndarray | None,
               plan: PagePlan, buffers: int = 0) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(page id, page bytes as uint8 array)`` in page order (one page in memory).

    With ``buffers`` > 0 the pages are built in that many buffers, reused in turn: a yielded
    page stays intact only until ``buffers - 1`` more pages have been yielded. Reusing buffers
    spares an allocation (and a zero-filled mapping, and its unmapping) per page. Records are
    written by the compiled kernel (:mod:`graphdb.storage.page_kernel`) once it is loaded."""
    compiled = page_kernel.RECORDS.get()
    layout = plan.layout
    size = layout.page_size
    pool = [np.zeros(size, dtype=np.uint8) for _ in range(min(buffers, plan.num_pages))]
    used = [False] * len(pool)

    def blank(pid: int) -> np.ndarray:
        if not pool:
            return np.zeros(size, dtype=np.uint8)
        i = pid % len(pool)
        if used[i]:
            pool[i].fill(0)
        used[i] = True
        return pool[i]

    pid = 0
    while pid < plan.num_pages:
        v0, v1 = int(plan.page_first_vertex[pid]), int(plan.page_last_vertex[pid])
        e0, e1 = int(offsets[v0]), int(offsets[v1])
        if plan.page_kind[pid] == SMALL:
            degree = np.diff(np.asarray(offsets[v0 : v1 + 1], dtype=np.int64))
            w = None if weights is None else weights[e0:e1]
            page = blank(pid)
            end, starts = _write_records(page, plan, degree, np.asarray(targets[e0:e1]), w,
                                          compiled)
            slots = np.empty(v1 - v0, dtype=SLOT_DTYPE)  # stored last slot first
            slots["vid"] = np.arange(v1 - 1, v0 - 1, -1)
            slots["off"] = starts[::-1]
            page[size - SLOT_BYTES * len(slots):] = slots.view(np.uint8)
            yield pid, _finish(page, SMALL, pid, v0, v1 - v0, end,
                               e1 - e0, plan, (0, 1), e0)
            pid += 1
            continue
        per = layout.edges_per_large_page(plan.weighted)
        chain = -(-(e1 - e0) // per)
        for part in range(chain):
            a, b = e0 + part * per, min(e1, e0 + (part + 1) * per)
            w = None if weights is None else weights[a:b]
            page = blank(pid)
            end, _ = _write_records(page, plan, np.array([b - a]), np.asarray(targets[a:b]),
                                    w, compiled)
            slot = np.array([(v0, HEADER_BYTES)], dtype=SLOT_DTYPE)
            page[size - SLOT_BYTES:] = slot.view(np.uint8)
            yield pid, _finish(page, LARGE, pid, v0, 1, end, b - a,
                               plan, (part, chain), a)
            pid += 1


# -- reading --------------------------------------------------------------------------------


@dataclass(frozen=True)
class PageHeader:
    kind: int
    weighted: bool
    checksum_value: int
    checksum_algorithm: int
    page_size: int
    page_id: int
    first_vertex: int
    num_slots: int
    records_end: int
    num_edges: int
    pid_bytes: int
    slot_bytes: int
    chain_index: int
    chain_length: int
    edge_start: int
    flags: int = 0
    weight_bytes: int = 0


def read_header(buf) -> PageHeader:
    (magic, version, kind, flags, crc, page_size, page_id, first, slots, end, edges, p, q, wb,
     algorithm, chain_index, chain_length, edge_start) = HEADER.unpack_from(buf, 0)
    if magic != MAGIC:
        raise CorruptData(f"not a topology page (magic {magic!r})")
    if version != FORMAT_VERSION:
        raise CorruptData(f"page format version {version} is not supported "
                          f"(this build reads version {FORMAT_VERSION})")
    return PageHeader(kind, bool(flags & 1), crc, algorithm, page_size, page_id, first, slots,
                      end, edges, p, q, chain_index, chain_length, edge_start, flags, wb)


def verify_page(buf, expected_pid: int | None = None, layout: PageLayout | None = None
                ) -> PageHeader:
    """Check magic, version, size and checksum, then every header field, slot and record
    bound (storage.page_checks; against ``layout``, the database's, when given); raise
    :class:`CorruptData` on any mismatch."""
    return _checked(buf, expected_pid, layout)[0]


def _checked(buf, expected_pid, layout):
    """(header, page bytes, record offsets, record counts) of a page that passed every check
    of the page alone."""
    view = memoryview(buf).cast("B")
    if len(view) < HEADER_BYTES:
        raise CorruptData(f"page of {len(view)} bytes is shorter than its header")
    header = read_header(view)
    if header.page_size != len(view):
        raise CorruptData(f"page {header.page_id} claims {header.page_size} bytes, has {len(view)}")
    if header.checksum_algorithm not in ALGORITHMS:
        raise CorruptData(f"page {header.page_id} names an unknown checksum algorithm "
                          f"({header.checksum_algorithm})")
    if checksum(view[_CRC_START:], header.checksum_algorithm) != header.checksum_value:
        raise CorruptData(f"page {header.page_id} fails its checksum")
    if expected_pid is not None and header.page_id != expected_pid:
        raise CorruptData(f"page stored as {expected_pid} says it is page {header.page_id}")
    problem = header_problem(header, len(view), layout)
    if problem is None:
        page = np.frombuffer(view, dtype=np.uint8)
        found = records_problem(page, header)
        if not isinstance(found, str):
            return (header, page) + found
        problem = found
    raise CorruptData(f"page {header.page_id} {problem} (its fields contradict each other: "
                      "it was changed and sealed again)")


@dataclass(frozen=True)
class DecodedPage:
    header: PageHeader
    vertices: np.ndarray  # int64, the vertex of every slot
    degrees: np.ndarray  # int64, neighbour entries of every slot's record in this page
    rid_pid: np.ndarray  # int64 per edge, in record order
    rid_slot: np.ndarray  # int64 per edge
    weights: np.ndarray | None  # float64 per edge
    #: int64 per edge: the neighbour's vertex, checked against the page table (decoded with a
    #: PageContext only)
    targets: np.ndarray | None = None

    def sources(self) -> np.ndarray:
        return np.repeat(self.vertices, self.degrees)


def decode_page(buf, context: PageContext | None = None) -> DecodedPage:
    """Verify a page and unpack every record (vectorized); the inverse of :func:`iter_pages`.
    With ``context`` (the graph's layout, vertex count and page table) the page is checked
    against the table and every record id resolved to a checked vertex (``targets``)."""
    header, page, offs, degrees = _checked(buf, None,
                                           context.layout if context is not None else None)
    if context is not None:
        problem = context.page_problem(header)
        if problem is not None:
            raise CorruptData(f"page {header.page_id} {problem}")
    r = header.pid_bytes + header.slot_bytes
    nbrs = np.repeat(offs + 4, degrees) + r * _ranks(degrees)
    rid = page[nbrs[:, None] + np.arange(r)]
    rid_pid = _from_little_endian(rid[:, : header.pid_bytes])
    rid_slot = _from_little_endian(rid[:, header.pid_bytes:])
    weights = None
    if header.weighted:
        wstart = (offs + 4 + degrees * r + 7) // 8 * 8
        pos = np.repeat(wstart, degrees) + 8 * _ranks(degrees)
        weights = page[(pos[:, None] + np.arange(8)).ravel()].view("<f8").copy()
    targets = None
    if context is not None:
        targets = context.targets(rid_pid, rid_slot)
        if isinstance(targets, str):
            raise CorruptData(f"page {header.page_id} {targets}")
    vertices = np.arange(header.first_vertex, header.first_vertex + header.num_slots,
                         dtype=np.int64)
    return DecodedPage(header, vertices, degrees, rid_pid, rid_slot, weights, targets)


def _ranks(counts: np.ndarray) -> np.ndarray:
    """0..c-1 for every count c, concatenated."""
    total = int(counts.sum())
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    return np.arange(total, dtype=np.int64) - starts


def _from_little_endian(cols: np.ndarray) -> np.ndarray:
    wide = np.zeros((len(cols), 8), dtype=np.uint8)
    wide[:, : cols.shape[1]] = cols
    return wide.view("<u8").ravel().astype(np.int64)


def rid_to_vertex(page_first_vertex: np.ndarray, pid: np.ndarray, slot: np.ndarray) -> np.ndarray:
    """GTS's RVT lookup: ``vertex = page_first_vertex[pid] + slot``."""
    return page_first_vertex[pid] + slot


def pages_of_vertices(page_first_vertex: np.ndarray, vertices: np.ndarray) -> np.ndarray:
    """Sorted ids of every page holding one of ``vertices``, whole large-page chains included.

    What a BFS-like operator streams next (GTS's nextPIDSet): pages partition the vertex range,
    so a vertex lives in the pages that start at it (a small page, or its chain of large pages,
    which all share it as first vertex), else in the one small page that starts before it.
    """
    vertices = np.unique(np.asarray(vertices, dtype=np.int64))
    lo = np.searchsorted(page_first_vertex, vertices, side="left")
    hi = np.searchsorted(page_first_vertex, vertices, side="right")
    starts_here = hi > lo
    first = np.where(starts_here, lo, lo - 1)
    count = np.where(starts_here, hi - lo, 1)
    return np.unique(np.repeat(first, count) + _ranks(count))
