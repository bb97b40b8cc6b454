"""A structural check of an LMDB data file, by our own bounds-checked reading of its pages.

LMDB trusts its file: it has no page checksums, and it follows node offsets, key sizes and
child page numbers as it finds them. One flipped bit in a leaf's node-offset array makes it read
outside the page (a segfault), and two zeroed bytes in a page header can make a tree look empty
(a catalog that reads as "no graphs"). So before LMDB reads a database in a process, this module
reads the same pages itself, as bytes, and checks everything LMDB would follow:

- the two meta pages (magic, version, page size, the last page, the roots of the free-page tree
  and the main tree), choosing the one LMDB would choose (the higher transaction id);
- every tree reachable from it (the main tree, each named sub-database it records, the free-page
  tree): page numbers inside the file, each page's header naming its own number and kind, the
  node-offset array inside the page, every node (header, key, inline value) inside the page,
  child page numbers, leaves at one depth, overflow runs whose first page says so and whose
  length fits the value, and the page, entry and depth counts each database records;
- the free-page lists (what a writer will overwrite next) name pages inside the file.

Keys are checked to be in order (and inside their parent's range) in the small trees every
statement reads (the main tree, 'catalog', 'meta', the free-page tree); a full check
(:func:`verify_file` with ``full=True``, ``graphdb check``) does so in every tree and adds
LMDB's own invariant that every page up to the last is used exactly once: by one tree, or
listed free.

The page format is LMDB 0.9's on a 64-bit little-endian machine (``mdb.c``)::

    page     [pgno u64 | pad u16 | flags u16 | lower u16 | upper u16 | node offsets u16 ...]
             an overflow page keeps its page count (u32) where lower and upper are
    node     [lo u16 | hi u16 | flags u16 | ksize u16 | key | value]   (2-byte aligned)
             leaf: value size lo | hi << 16; F_BIGDATA: the value is an overflow page number;
             F_SUBDATA: the value is a database record; branch: child page lo | hi << 16 |
             flags << 32
    meta     page 0 and 1: a page header, then magic u32, version u32, address u64,
             mapsize u64, two database records (free pages, main), last page u64, txnid u64
    database [pad u32 (page size, in the free-page record) | flags u16 | depth u16 |
              branch u64 | leaf u64 | overflow u64 | entries u64 | root u64]

Reading is pure Python and numpy over a read-only map of the file: a damaged file raises
:class:`~graphdb.storage.errors.CorruptData` naming the page, never faults. The file may be
written meanwhile by another process (LMDB reuses pages freed two commits ago), so a check
that fails is repeated while the file's transaction id moves.
"""

from __future__ import annotations

import mmap
import os
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import CorruptData

__all__ = ["LmdbReport", "verify_file"]

MAGIC = 0xBEEFC0DE
DATA_VERSION = 1
PAGE_HEADER = struct.Struct("<QHHHH")
HEADER_BYTES = PAGE_HEADER.size  # 16
NODE_BYTES = 8
DB_RECORD = struct.Struct("<IHHQQQQQ")  # 48 bytes
META = struct.Struct("<IIQQ48s48sQQ")
P_BRANCH, P_LEAF, P_OVERFLOW, P_META = 0x01, 0x02, 0x04, 0x08
P_DIRTY, P_LEAF2, P_SUBP, P_LOOSE, P_KEEP = 0x10, 0x20, 0x40, 0x4000, 0x8000
F_BIGDATA, F_SUBDATA, F_DUPDATA = 0x01, 0x02, 0x04
P_INVALID = (1 << 64) - 1
FREE_DBI, MAIN_DBI = "free pages", "main"
#: Trees whose keys are checked to be in order at every first open (every statement reads them).
ORDERED_ALWAYS = frozenset({FREE_DBI, MAIN_DBI, "catalog", "meta"})
#: Times a failing check is repeated while another process commits (see the module docstring).
RETRIES = 5
_FILE = "meta.lmdb/data.mdb"


@dataclass
class TreeCount:
    """What a walk of one tree found (compared with what its database record says)."""

    branch: int = 0
    leaf: int = 0
    overflow: int = 0
    entries: int = 0


@dataclass
class LmdbReport:
    """What :func:`verify_file` read: the snapshot's transaction id, page size, last page, the
    named databases and the pages each tree uses; ``unused`` (full check only): pages neither
    in a tree nor free (LMDB's invariant says there are none; a leak, not damage)."""

    txnid: int
    page_size: int
    last_page: int
    databases: dict[str, TreeCount] = field(default_factory=dict)
    free_pages: int = 0
    unused: int = 0
    #: the branch and leaf pages of each database's tree, root first
    tree_pages: dict[str, list[int]] = field(default_factory=dict)


class _Damage(Exception):
    """One problem found (turned into CorruptData naming the file)."""


def verify_file(path: str | os.PathLike, *, full: bool = False) -> LmdbReport:
    """Check the LMDB data file at ``path`` (see the module docstring); CorruptData if damaged.

    ``full``: also check key order in every tree and that every page is used exactly once."""
    path = Path(path)
    last_txnid = None
    for _attempt in range(RETRIES):
        try:
            with _Mapped(path) as data:
                walker = _Walker(data, full)
                try:
                    return walker.run()
                except _Damage as exc:
                    problem = str(exc)
                    txnid = walker.txnid
                # a writer of another process may have reused pages meanwhile (those of the
                # older meta page's snapshot once one more commit lands): look again while the
                # file's latest commit moves on
                now = _Meta.latest_txnid(data)
                if now is None or now <= (txnid or 0) or now == last_txnid:
                    break
                last_txnid = now
        except OSError as exc:
            raise CorruptData(f"{_FILE} cannot be read: {exc.strerror or exc}", file=_FILE) \
                from None
    raise CorruptData(f"{_FILE}: {problem}", file=_FILE)


class _Mapped:
    """A read-only map of a whole file as a numpy byte array (empty files map to nothing)."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self) -> np.ndarray:
        fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC)
        try:
            size = os.fstat(fd).st_size
            self._map = mmap.mmap(fd, size, access=mmap.ACCESS_READ) if size else None
        finally:
            os.close(fd)
        return np.frombuffer(self._map, np.uint8) if self._map is not None else \
            np.zeros(0, np.uint8)

    def __exit__(self, *exc) -> None:
        if self._map is not None:
            try:
                self._map.close()
            except BufferError:  # a view is still alive somewhere; the map goes with it
                pass


@dataclass
class _Meta:
    magic: int
    version: int
    psize: int
    free: tuple
    main: tuple
    last_pg: int
    txnid: int
    flags: int

    @classmethod
    def read(cls, data: np.ndarray, offset: int) -> "_Meta":
        end = offset + HEADER_BYTES + META.size
        if end > len(data):
            raise _Damage(f"the meta page at byte {offset} lies beyond the end of the file "
                          f"({len(data)} bytes)")
        raw = data[offset:end].tobytes()
        _pgno, _pad, flags, _lo, _up = PAGE_HEADER.unpack_from(raw, 0)
        magic, version, _addr, _mapsize, free, main, last_pg, txnid = META.unpack_from(
            raw, HEADER_BYTES)
        free_db, main_db = DB_RECORD.unpack(free), DB_RECORD.unpack(main)
        return cls(magic, version, free_db[0], free_db, main_db, last_pg, txnid, flags)

    def problem(self) -> str | None:
        if not self.flags & P_META:
            return "is not marked as a meta page"
        if self.magic != MAGIC:
            return f"has magic {self.magic:#x}, not LMDB's"
        if self.version != DATA_VERSION:
            return f"has LMDB data version {self.version}"
        return None

    @staticmethod
    def latest_txnid(data: np.ndarray) -> int | None:
        """The transaction id LMDB would open the file at now (None if unreadable)."""
        try:
            first = _Meta.read(data, 0)
            if first.problem() or not _valid_page_size(first.psize):
                return None
            second = _Meta.read(data, first.psize)
            return max(first.txnid, second.txnid)
        except _Damage:
            return None


def _valid_page_size(psize: int) -> bool:
    return 512 <= psize <= 0x8000 and psize & (psize - 1) == 0


class _Walker:
    def __init__(self, data: np.ndarray, full: bool):
        self.data = data
        self.full = full
        self.txnid: int | None = None
        #: (first page, pages) of every tree page and overflow run seen (the exactly-once check)
        self.used: list[tuple[int, int]] = []
        self.seen: set[int] = set()

    # -- the meta pages ---------------------------------------------------------------------
    def run(self) -> LmdbReport:
        data = self.data
        first = _Meta.read(data, 0)
        problem = first.problem()
        if problem:
            raise _Damage(f"meta page 0 {problem}")
        if not _valid_page_size(first.psize):
            raise _Damage(f"meta page 0 records page size {first.psize}")
        second = _Meta.read(data, first.psize)
        problem = second.problem()
        if problem:
            raise _Damage(f"meta page 1 {problem}")
        meta = second if second.txnid > first.txnid else first  # as LMDB picks it
        which = 1 if meta is second else 0
        self.txnid = meta.txnid
        if meta.psize != first.psize:
            raise _Damage(f"meta page {which} records page size {meta.psize}, page 0 "
                          f"{first.psize}")
        self.psize = psize = meta.psize
        pages_in_file = len(data) // psize
        if not 1 <= meta.last_pg < pages_in_file:
            raise _Damage(f"meta page {which} (transaction {meta.txnid}) records last page "
                          f"{meta.last_pg}; the file holds {pages_in_file} pages")
        self.last_pg = meta.last_pg
        self.page_ints = data[: pages_in_file * psize].reshape(pages_in_file, psize)
        self._meta_pair(first, second)
        report = LmdbReport(meta.txnid, psize, meta.last_pg)
        main = self._tree(MAIN_DBI, meta.main, report)
        report.databases[MAIN_DBI] = main
        free_pages = self._tree(FREE_DBI, meta.free, report)
        report.databases[FREE_DBI] = free_pages
        if self.full:
            report.unused = self._unused(report)
        return report

    def _meta_pair(self, first: _Meta, second: _Meta) -> None:
        """The two meta pages as LMDB writes them: commit ``t`` writes page ``t & 1``, so their
        transaction ids differ by one, each of its page's parity (0 and 0 before the first
        commit), and no snapshot's free-page tree holds a record of a later transaction. A
        flipped bit in a transaction id otherwise makes LMDB open the previous snapshot: a
        database silently one commit older."""
        t0, t1 = first.txnid, second.txnid
        if (t0, t1) != (0, 0) and (t0 % 2 != 0 or t1 % 2 != 1 or abs(t0 - t1) != 1):
            raise _Damage(f"the meta pages record transactions {t0} and {t1} (page 0 holds "
                          "even ones, page 1 odd ones, one apart)")
        for which, meta in ((0, first), (1, second)):
            latest = self._latest_free_record(meta)
            if latest is not None and latest > meta.txnid:
                raise _Damage(f"meta page {which} records transaction {meta.txnid}, but its "
                              f"free-page tree holds a record of transaction {latest}")

    def _latest_free_record(self, meta: _Meta) -> int | None:
        """The largest key of ``meta``'s free-page tree (its rightmost path), bounds-checked."""
        root, depth = meta.free[7], meta.free[2]
        if root == P_INVALID:
            return None
        pgno = root
        for level in range(1, min(depth, 32) + 1):
            if not 2 <= pgno <= self.last_pg:
                raise _Damage(f"the free-page tree refers to page {pgno}")
            page = self.page_ints[pgno]
            _own, _pad, _flags, lower, upper = PAGE_HEADER.unpack_from(page, 0)
            n = (lower - HEADER_BYTES) // 2
            if not (HEADER_BYTES < lower <= upper <= self.psize):
                raise _Damage(f"free-page tree page {pgno} has free space bounds "
                              f"{lower}..{upper}")
            ptr = int(page[lower - 2:lower].view("<u2")[0])
            if not upper <= ptr <= self.psize - NODE_BYTES - 8:
                raise _Damage(f"free-page tree page {pgno}: node {n - 1} is at byte {ptr}")
            lo, hi, nflags, _ksize = (int(v) for v in page[ptr:ptr + 8].view("<u2"))
            if level == depth:
                return int(page[ptr + 8:ptr + 16].view("<u8")[0])
            pgno = lo | hi << 16 | nflags << 32
        return None

    # -- trees ----------------------------------------------------------------------------------
    def _tree(self, name: str, record: tuple, report: LmdbReport) -> TreeCount:
        _pad, flags, depth, branch, leaf, overflow, entries, root = record
        count = TreeCount()
        if root == P_INVALID:
            if depth or branch or leaf or overflow or entries:
                raise _Damage(f"database '{name}' has no root page but records {entries} "
                              f"entries in {branch + leaf + overflow} pages")
            return count
        if flags & 0x04 or flags & 0x10:  # DUPSORT / DUPFIXED: never made by graphdb
            raise _Damage(f"database '{name}' records flags {flags:#x} (duplicate keys), "
                          "which graphdb never creates")
        if not 1 <= depth <= 32:
            raise _Damage(f"database '{name}' records depth {depth}")
        ordered = self.full or name in ORDERED_ALWAYS
        integer_keys = name == FREE_DBI
        report.tree_pages[name] = pages = []
        # (page number, level, lowest key, key bound above) of the pages of one level
        level = [(root, 1, None, None)]
        while level:
            children = []
            for pgno, at, low, high in level:
                pages.append(pgno)
                children.extend(self._page(name, pgno, at, depth, low, high, ordered,
                                           integer_keys, count, report))
            level = children
        recorded = (branch, leaf, overflow, entries)
        found = (count.branch, count.leaf, count.overflow, count.entries)
        if recorded != found:
            raise _Damage(f"database '{name}' records {branch} branch, {leaf} leaf and "
                          f"{overflow} overflow pages and {entries} entries; its tree has "
                          f"{found[0]}, {found[1]}, {found[2]} and {found[3]}")
        return count

    def _claim(self, name: str, pgno: int, pages: int = 1) -> None:
        if not 2 <= pgno or pgno + pages - 1 > self.last_pg:
            raise _Damage(f"database '{name}' refers to page {pgno}"
                          f"{f' (+{pages - 1} overflow)' if pages > 1 else ''}, outside pages "
                          f"2..{self.last_pg}")
        if pages == 1:
            if pgno in self.seen:
                raise _Damage(f"page {pgno} is reached twice (database '{name}')")
            self.seen.add(pgno)
        self.used.append((pgno, pages))

    def _page(self, name, pgno, at, depth, low, high, ordered, integer_keys, count, report):
        self._claim(name, pgno)
        page = self.page_ints[pgno]
        where = f"page {pgno} (database '{name}', level {at})"
        own, _pad, flags, lower, upper = PAGE_HEADER.unpack_from(page, 0)
        if own != pgno:
            raise _Damage(f"{where} says it is page {own}")
        kind = flags & ~(P_DIRTY | P_KEEP)
        is_leaf = at == depth
        if kind != (P_LEAF if is_leaf else P_BRANCH):
            raise _Damage(f"{where} has flags {flags:#x}; a {'leaf' if is_leaf else 'branch'} "
                          "page was expected")
        psize = self.psize
        if not (HEADER_BYTES <= lower <= upper <= psize) or (lower - HEADER_BYTES) % 2:
            raise _Damage(f"{where} has free space bounds {lower}..{upper} in a {psize}-byte "
                          "page")
        n = (lower - HEADER_BYTES) // 2
        if n < 1:
            raise _Damage(f"{where} holds no keys")
        ptrs = page[HEADER_BYTES:lower].view("<u2").astype(np.int64)
        bad = (ptrs < upper) | (ptrs > psize - NODE_BYTES) | (ptrs % 2 != 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise _Damage(f"{where}: node {i} is at byte {int(ptrs[i])}, outside the page's "
                          f"node area {upper}..{psize - NODE_BYTES}")
        heads = page[ptrs[:, None] + np.arange(NODE_BYTES)].view("<u2").astype(np.int64)
        lo, hi, nflags, ksize = heads[:, 0], heads[:, 1], heads[:, 2], heads[:, 3]
        key_end = ptrs + NODE_BYTES + ksize
        if is_leaf:
            return self._leaf(name, where, page, ptrs, lo | hi << 16, nflags, ksize, key_end,
                              low, high, ordered, integer_keys, count, report)
        count.branch += 1
        if (key_end > psize).any():
            i = int(np.flatnonzero(key_end > psize)[0])
            raise _Damage(f"{where}: the key of node {i} ends at byte {int(key_end[i])}, beyond "
                          "the page")
        child = (lo | hi << 16 | nflags << 32).tolist()
        if not ordered:
            return [(c, at + 1, None, None) for c in child]
        # node 0's key is never compared (it stands for the parent's lower bound)
        keys = [low] + self._keys(page, ptrs[1:], ksize[1:], integer_keys)
        self._check_order(where, keys[1:], low, high, strict=True)
        bounds = keys[1:] + [high]
        return [(c, at + 1, keys[i], bounds[i]) for i, c in enumerate(child)]

    def _leaf(self, name, where, page, ptrs, dsize, nflags, ksize, key_end, low, high,
              ordered, integer_keys, count, report):
        count.leaf += 1
        count.entries += len(ptrs)
        psize = self.psize
        odd = ((nflags & ~(F_BIGDATA | F_SUBDATA)) != 0) | (nflags == F_BIGDATA | F_SUBDATA)
        if odd.any():
            i = int(np.flatnonzero(odd)[0])
            raise _Damage(f"{where}: node {i} has flags {int(nflags[i]):#x}")
        big = (nflags & F_BIGDATA) != 0
        sub = (nflags & F_SUBDATA) != 0
        if sub.any() and name != MAIN_DBI:
            raise _Damage(f"{where}: node {int(np.flatnonzero(sub)[0])} names a sub-database "
                          "outside the main tree")
        stored = np.where(big, 8, np.where(sub, DB_RECORD.size, dsize))
        end = key_end + stored
        if (end > psize).any():
            i = int(np.flatnonzero(end > psize)[0])
            raise _Damage(f"{where}: node {i} (key {int(ksize[i])} bytes, value "
                          f"{int(stored[i])} bytes) ends at byte {int(end[i])}, beyond the page")
        if sub.any() and (dsize[sub] != DB_RECORD.size).any():
            raise _Damage(f"{where}: a sub-database record of {int(dsize[sub][0])} bytes")
        if ordered or sub.any():
            keys = self._keys(page, ptrs, ksize, integer_keys)
            if ordered:
                self._check_order(where, keys, low, high, strict=True)
        if big.any():
            self._overflow(name, where, page, key_end[big], dsize[big], count)
        if integer_keys:
            self._free_lists(where, page, key_end, dsize, big, report)
        if sub.any():
            for i in np.flatnonzero(sub):
                sub_name = keys[i].decode("utf-8", "replace")
                record = DB_RECORD.unpack(page[key_end[i]:key_end[i] + DB_RECORD.size]
                                          .tobytes())
                report.databases[sub_name] = self._tree(sub_name, record, report)
        return []

    def _overflow(self, name, where, page, value_at, dsize, count) -> None:
        psize = self.psize
        first = page[value_at[:, None] + np.arange(8)].view("<i8").ravel()
        pages = (HEADER_BYTES - 1 + dsize) // psize + 1
        bad = (first < 2) | (first > self.last_pg) | (first + pages - 1 > self.last_pg)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise _Damage(f"{where}: a value of {int(dsize[i])} bytes is on overflow page "
                          f"{int(first[i])}, outside pages 2..{self.last_pg}")
        heads = self.page_ints[first, :HEADER_BYTES]
        own = heads[:, 0:8].copy().view("<i8").ravel()
        oflags = heads[:, 10:12].copy().view("<u2").ravel().astype(np.int64)
        opages = heads[:, 12:16].copy().view("<u4").ravel().astype(np.int64)
        bad = (own != first) | ((oflags & ~(P_DIRTY | P_KEEP)) != P_OVERFLOW) | (
            opages != pages)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise _Damage(f"overflow page {int(first[i])} (database '{name}', from {where}) has "
                          f"number {int(own[i])}, flags {int(oflags[i]):#x} and length "
                          f"{int(opages[i])} pages; its value needs {int(pages[i])}")
        count.overflow += int(pages.sum())
        for start, length in zip(first.tolist(), pages.tolist()):
            self.used.append((start, length))

    def _free_lists(self, where, page, key_end, dsize, big, report) -> None:
        """The page numbers a free-page record lists: [count u64, pgno u64 ...]."""
        for i in range(len(key_end)):
            size = int(dsize[i])
            if size % 8 or size < 8:
                raise _Damage(f"{where}: free-page list {i} has {size} bytes")
            if big[i]:
                start = int(page[key_end[i]:key_end[i] + 8].view("<u8")[0]) * self.psize
                raw = self.data[start + HEADER_BYTES:start + HEADER_BYTES + size]
            else:
                raw = page[key_end[i]:key_end[i] + size]
            ids = raw.view("<u8")
            if int(ids[0]) != len(ids) - 1:
                raise _Damage(f"{where}: free-page list {i} says {int(ids[0])} pages and holds "
                              f"{len(ids) - 1}")
            pages = ids[1:]
            if pages.size and (int(pages.min()) < 2 or int(pages.max()) > self.last_pg):
                raise _Damage(f"{where}: free-page list {i} names a page outside "
                              f"2..{self.last_pg}")
            report.free_pages += int(pages.size)
            if self.full:
                self.used.extend((int(p), 1) for p in pages.tolist())

    # -- keys -----------------------------------------------------------------------------------
    @staticmethod
    def _keys(page, ptrs, ksize, integer_keys):
        start = ptrs + NODE_BYTES
        if integer_keys:
            if (ksize != 8).any():
                raise _Damage(f"a free-page record has a key of {int(ksize[ksize != 8][0])} "
                              "bytes, not a transaction id")
            return page[start[:, None] + np.arange(8)].view("<u8").ravel().tolist()
        raw = page.tobytes() if len(start) > 8 else None
        if raw is None:
            return [page[s:s + k].tobytes() for s, k in zip(start.tolist(), ksize.tolist())]
        return [raw[s:s + k] for s, k in zip(start.tolist(), ksize.tolist())]

    @staticmethod
    def _check_order(where, keys, low, high, strict) -> None:
        previous = low
        for i, key in enumerate(keys):
            if previous is not None and (key < previous or (strict and i and key == previous)):
                raise _Damage(f"{where}: keys out of order at node {i}")
            if high is not None and key >= high:
                raise _Damage(f"{where}: key of node {i} lies beyond its parent's range")
            previous = key

    # -- the exactly-once invariant -------------------------------------------------------------
    def _unused(self, report: LmdbReport) -> int:
        marks = np.zeros(self.last_pg + 1, dtype=np.uint16)
        marks[:2] = 1
        runs = np.asarray(self.used, dtype=np.int64).reshape(-1, 2)
        starts, lengths = runs[:, 0], runs[:, 1]
        single = lengths == 1
        np.add.at(marks, starts[single], 1)
        for start, length in runs[~single].tolist():
            marks[start:start + length] += 1
        twice = np.flatnonzero(marks > 1)
        if twice.size:
            raise _Damage(f"page {int(twice[0])} is used twice (by a tree and the free list, or "
                          f"two trees); {twice.size} such pages")
        return int((marks == 0).sum())


if sys.byteorder != "little":  # pragma: no cover - LMDB's files are native-endian
    raise ImportError("graphdb's LMDB check reads little-endian files")
