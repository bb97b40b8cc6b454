"""A graph's topology: CSR blocks written by the ingest commit, slotted pages built on first need.

For each direction present in the arrays (``out``, and ``in`` for a directed graph)::

    blocks  <gid>/<dir>_offsets|_targets|_weights/...   the CSR, cut into page-size blocks
            <gid>/<dir>_page_first_vertex/...           the page table (GTS's RVT): int64
            <gid>/<dir>_page_kind/...                   1 small / 2 large, per page
    pages   <gid>/<dir>/<%010d>                          the slotted pages (see storage.pages)
    meta    topology/<gid>/<dir>                         JSON: page counts, sizes, record-id widths,
                                                         sealed with a block's checksum trailer

The topology is stored once: :func:`write_topology` puts the CSR blocks inside the caller's write
transaction, next to the catalog entry (an ingest that dies before its commit leaves none of
them). Slotted pages are a second form of the same edges that only page streaming reads, so they
are built from the stored blocks when first needed (:func:`build_pages`), in a write transaction
of their own: a build that dies leaves no page, and a finished one is visible whole. Arrays may
be ``np.memmap`` (or, for a page build, read block by block from the store): blocks and pages are
produced one at a time, and only O(V) bookkeeping is held in memory.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from .blocks import (
    TRAILER_BYTES,
    ArrayInfo,
    array_info,
    delete_arrays,
    delete_prefix,
    get_range,
    put_array,
    seal,
    unpack_block,
)
from .errors import CorruptData, MapTooSmall
from .mapped import release_file
from .pages import (
    HEADER_BYTES,
    LARGE,
    SLOT_BYTES,
    PageLayout,
    PagePlan,
    iter_pages,
    plan_pages,
    verify_page,
)

__all__ = [
    "DIRECTIONS",
    "PAGE_BUILD_BYTES_PER_SECOND",
    "TEST_PAUSE_ENV",
    "build_pages",
    "csr_from_edges",
    "delete_topology",
    "estimate_pages",
    "page_key",
    "pages_built",
    "read_page",
    "topology_info",
    "write_topology",
]

DIRECTIONS = ("out", "in")
#: Threads building pages while the transaction is written: one per direction (2), one that
#: builds the directions in turn (1), or none (0: pages are built between the puts). RMAT20's
#: commit on the shared two-core machine (best of 5, ingest processes alternating): 0.91 s
#: with 0, 0.83 s with 1, 1.24 s with 2, which also took the most CPU (1.04 s against 0.65 s):
#: three busy threads on two cores lose more to contention than they overlap.
PAGE_THREADS = 1
#: Bytes put between two unmappings of the written file pages (Environment.release_resident):
#: what a commit holds resident of the graph it writes.
RELEASE_EVERY = 64 << 20
#: LMDB's header on a run of overflow pages (a value larger than half an LMDB page).
LMDB_PAGE_HEADER = 16
#: Added to a write's estimate: its catalog entry, B-tree branch pages, the free list.
ESTIMATE_MARGIN = 1 << 20
#: Bytes put between two starts of the data file's writeback (Environment.start_writeback): the
#: disk writes what a long transaction put while it puts the rest, not all of it at the commit.
WRITEBACK_EVERY = 32 << 20
#: Bytes of pages a page build writes per second (read the blocks, build, put, commit), the
#: rate EXPLAIN's estimate of a first build uses: RMAT20 (108 pages of 2 MiB) built in 0.72 s
#: in a fresh process, numba's kernel loaded first (315 MB/s).
PAGE_BUILD_BYTES_PER_SECOND = 300e6
#: Test hook: when set to a path, a writer creates that file once the CSR blocks (or a direction's
#: pages) are in its uncommitted transaction, then sleeps, so a test can kill it at a known point.
TEST_PAUSE_ENV = "GRAPHDB_TEST_PAUSE_IN_TOPOLOGY_WRITE"


def page_key(graph_id: str, direction: str, pid: int) -> bytes:
    return f"{graph_id}/{direction}/{pid:010d}".encode()


def _meta_key(graph_id: str, direction: str) -> bytes:
    return f"topology/{graph_id}/{direction}".encode()


def csr_from_edges(keys: np.ndarray, values: np.ndarray, n: int,
                   weights: np.ndarray | None = None):
    """(offsets int64, targets, weights) of the CSR keyed by ``keys``, stable within a key.

    A counting sort in C: the edge list is viewed as an (E x n) matrix with one entry per row
    (row i holds edge i in column ``keys[i]``), and scipy's CSR-to-CSC transpose is exactly a
    stable bucket sort of the rows by column. That is O(E + n) where ``argsort`` is O(E log E).
    """
    import scipy.sparse as sp

    m = len(keys)
    index = np.int32 if max(m, n) < 2**31 else np.int64
    target_type = np.int32 if n < 2**31 else np.int64
    rows = sp.csr_array((np.asarray(values, dtype=target_type), np.asarray(keys, dtype=index),
                         np.arange(m + 1, dtype=index)), shape=(m, n), copy=False)
    cols = rows.tocsc()
    offsets = cols.indptr.astype(np.int64)
    w = None if weights is None else np.asarray(weights)[cols.indices]
    return offsets, cols.data, w


def _directions(arrays) -> list[str]:
    return [d for d in DIRECTIONS if arrays.get(f"{d}_offsets") is not None]


class _Release:
    """Unmaps what a long write put (and what it read of spooled arrays) every ``every`` bytes.

    With writemap, what was put sits in the file mapping, and what was read of arrays spooled to
    disk (an external sort's output) sits in theirs: resident until unmapped. Unmapping both
    every ``every`` bytes keeps a write's memory bounded by that and not by the size of the
    graph (storage.mapped says why no data is lost)."""

    def __init__(self, env, every: int, spooled=()):
        self.env, self.every, self.spooled, self.written = env, every, set(spooled), 0
        self.unsynced = 0

    def __call__(self, nbytes: int, force: bool = False) -> None:
        self.written += nbytes
        self.unsynced += nbytes
        if self.unsynced >= WRITEBACK_EVERY:
            self.unsynced = 0
            self.env.start_writeback()
        if self.written >= self.every or (force and self.written):
            self.written = 0
            self.env.release_resident()
            for path in self.spooled:
                release_file(path)

    @contextlib.contextmanager
    def bulk(self) -> Iterator[None]:
        """Advise the map for a bulk write while it lasts, when what is written must not stay
        resident (a write unmapped at least every RELEASE_EVERY bytes): the commit then maps
        little of it again (see storage.mapped.advise_file). With more room, no advice: puts
        and commit run faster without it (RMAT20's 150 MB of blocks: 0.14 against 0.22 s), and
        what stays mapped is unmapped once the transaction is over."""
        advise = self.every <= RELEASE_EVERY
        if advise:
            self.env.advise_bulk_write(True)
        try:
            yield
        finally:
            if advise:
                self.env.advise_bulk_write(False)


def write_topology(env, txn, graph_id: str, arrays: dict[str, np.ndarray], *,
                   pages: bool = False, release_every: int | None = None) -> dict:
    """Write the CSR blocks of ``graph_id`` in ``txn`` (and, with ``pages``, the slotted pages
    too, as :func:`build_pages` would); returns statistics.

    ``arrays`` holds ``<dir>_offsets``, ``<dir>_targets`` and optionally ``<dir>_weights`` for
    ``dir`` in ``out``/``in``; any other array is stored as blocks too. ``release_every``
    (default :data:`RELEASE_EVERY`) is how many bytes are put between two unmappings of what
    was written: an ingest under a small memory limit passes a share of it.
    """
    layout: PageLayout = env.layout
    needed = _estimated_bytes(arrays, layout, env.lmdb_page_bytes, blocks=True, pages=pages)
    _make_room(env, needed)
    spooled = {a.filename for a in arrays.values() if isinstance(a, np.memmap) and a.filename}
    release = _Release(env, release_every or RELEASE_EVERY, spooled)
    stats = {"page_size": layout.page_size, "block_bytes": 0}
    blocks = env.db("blocks")
    with release.bulk():
        for name, values in arrays.items():
            stats["block_bytes"] += put_array(txn, blocks, graph_id, name, values,
                                              layout.page_size, on_block=release)
        _test_pause()
        if pages:
            stats.update(_write_pages(env, txn, graph_id, arrays, release))
        release(0, force=True)
    return stats


def _write_pages(env, txn, graph_id: str, arrays, release: _Release) -> dict:
    """Page tables, pages and topology metadata of every direction of ``arrays`` into ``txn``.

    Pages are built in builder threads (numpy releases the GIL; see PAGE_THREADS) while this
    thread, the only one that may use the transaction, puts them as they come: building pages
    and copying into the map overlap on the machine's cores."""
    layout: PageLayout = env.layout
    blocks, pages, meta = env.db("blocks"), env.db("pages"), env.db("meta")
    stats = {"page_bytes": 0, "pages": 0, "large_pages": 0}
    builders: dict[str, _PageBuilder | _Pages] = {}
    for d in _directions(arrays):
        if PAGE_THREADS < 1:
            builders[d] = _Pages(arrays, d, layout)
            continue
        after = None if PAGE_THREADS > 1 or not builders else list(builders.values())[-1].done
        builders[d] = _PageBuilder(arrays, d, layout, after)
    try:
        for direction, builder in builders.items():
            plan = builder.plan()
            put_array(txn, blocks, graph_id, f"{direction}_page_first_vertex",
                      plan.page_first_vertex, layout.page_size)
            put_array(txn, blocks, graph_id, f"{direction}_page_kind", plan.page_kind,
                      layout.page_size)
            for pid, page in builder.pages():
                txn.put(page_key(graph_id, direction, pid), page, db=pages)
                release(page.nbytes)
            info = {
                "pages": plan.num_pages,
                "large_pages": int(np.count_nonzero(plan.page_kind == LARGE)),
                "page_size": layout.page_size, "pid_bytes": layout.pid_bytes,
                "slot_bytes": layout.slot_bytes, "weighted": builder.weighted,
                "num_vertices": len(plan.vertex_pid),
            }
            sealed = seal(np.frombuffer(json.dumps(info).encode(), np.uint8))
            txn.put(_meta_key(graph_id, direction), sealed, db=meta)
            stats["pages"] += info["pages"]
            stats["large_pages"] += info["large_pages"]
            stats["page_bytes"] += info["pages"] * layout.page_size
            _test_pause()
    finally:
        for builder in builders.values():
            builder.close()
    return stats


def pages_built(env, txn, graph_id: str) -> bool:
    """Whether ``graph_id``'s slotted pages exist (every direction's, or none: one write)."""
    db = env.db("meta")
    return db is not None and txn.get(_meta_key(graph_id, "out"), db=db) is not None


class _StoredArray:
    """A stored array read block by block on demand (``len``, integer and slice indexing): the
    CSR that a page build plans and packs, one range at a time, never read whole. Every read
    takes its own short read transaction, so builder threads read while the writer writes."""

    def __init__(self, env, graph_id: str, name: str, info: ArrayInfo):
        self.env, self.graph_id, self.name, self.info = env, graph_id, name, info
        self.dtype = info.dtype
        self._block: tuple[int, np.ndarray] | None = None  # the last block read, for scalars

    def __len__(self) -> int:
        return self.info.length

    @property
    def nbytes(self) -> int:
        return self.info.length * self.dtype.itemsize

    def __getitem__(self, index):
        if isinstance(index, slice):
            start, stop, step = index.indices(self.info.length)
            assert step == 1
            with self.env.read_txn() as txn:
                out = get_range(txn, self.env.db("blocks"), self.graph_id, self.name, start,
                                stop, self.info)
            return out
        index = int(index)
        per = self.info.per_block
        n = index // per
        if self._block is None or self._block[0] != n:
            self._block = (n, self[n * per:(n + 1) * per])
        return self._block[1][index - n * per]


def _stored_arrays(env, txn, graph_id: str) -> dict[str, _StoredArray]:
    db = env.db("blocks")
    arrays = {}
    for d in DIRECTIONS:
        for part in ("offsets", "targets", "weights"):
            name = f"{d}_{part}"
            try:
                info = array_info(txn, db, graph_id, name)
            except CorruptData as exc:
                if not exc.missing:
                    raise
                continue
            arrays[name] = _StoredArray(env, graph_id, name, info)
    if "out_offsets" not in arrays:
        raise CorruptData(f"graph {graph_id} has no stored CSR (array 'out_offsets' is missing)")
    return arrays


def build_pages(env, graph_id: str, *, still_wanted: Callable[[object], bool] | None = None,
                release_every: int | None = None) -> dict | None:
    """Build the slotted pages of a stored graph from its CSR blocks, in one write transaction
    of their own; returns their statistics, or None when ``still_wanted(txn)`` says no (the
    graph version was dropped or replaced meanwhile). Pages that exist already are left as they
    are (another connection built them first): their statistics are returned."""
    def commit(txn):
        if pages_built(env, txn, graph_id):
            return page_stats(env, txn, graph_id)
        if still_wanted is not None and not still_wanted(txn):
            return None
        arrays = _stored_arrays(env, txn, graph_id)
        _make_room(env, _estimated_bytes(arrays, env.layout, env.lmdb_page_bytes, blocks=False,
                                         pages=True))
        release = _Release(env, release_every or RELEASE_EVERY)
        with release.bulk():
            stats = _write_pages(env, txn, graph_id, arrays, release)
            release(0, force=True)
        return stats

    return env.write(commit)


def page_stats(env, txn, graph_id: str) -> dict:
    """Statistics of built pages, as :func:`build_pages` returns them."""
    stats = {"page_bytes": 0, "pages": 0, "large_pages": 0}
    for d in DIRECTIONS:
        if txn.get(_meta_key(graph_id, d), db=env.db("meta")) is not None:
            info = topology_info(env, txn, graph_id, d)
            stats["pages"] += info["pages"]
            stats["large_pages"] += info["large_pages"]
            stats["page_bytes"] += info["pages"] * info["page_size"]
    return stats


def estimate_pages(layout: PageLayout, num_vertices: int, num_edges: int, weighted: bool,
                   directions: int) -> tuple[int, int]:
    """(pages, bytes) that a page build of a graph of this size will write, estimated from the
    record sizes (each vertex's count and slot, each edge's record id and weight) with the
    packing slack of real graphs; what EXPLAIN says a first page-streamed plan will build."""
    per_edge = layout.rid_bytes + (8 if weighted else 0)
    per_vertex = 4 + SLOT_BYTES + 2  # count, slot, alignment padding on average
    one = num_edges * per_edge + num_vertices * per_vertex
    pages = -(-int(1.1 * one) // (layout.page_size - HEADER_BYTES)) if num_vertices else 0
    pages *= directions
    return pages, pages * layout.page_size


def _make_room(env, needed: int) -> None:
    """Before writing gigabytes: a map too small is grown first (MapTooSmall, which the write
    retries after), and the disk blocks are allocated now (a full disk refuses, never faults)."""
    if env.map_headroom() < needed:
        raise MapTooSmall(needed)
    env.allocate(needed)


def _estimated_bytes(arrays, layout: PageLayout, lmdb_page: int = 4096, *, blocks: bool = True,
                     pages: bool = False) -> int:
    """Bytes of the LMDB file a write takes: the arrays' blocks (``blocks``) and the pages
    built from them (``pages``: each edge as a record id, and its weight, plus slack) as LMDB
    stores values of their size, and a margin.

    It must not fall short: the disk is allocated for this much before the write (a full disk
    then refuses it), and a write past the allocation on a full disk would fault."""

    def stored(value_bytes: int, count: int) -> int:
        if value_bytes > lmdb_page // 2:  # an overflow run of whole pages, plus its leaf node
            per = -(-(value_bytes + LMDB_PAGE_HEADER) // lmdb_page) * lmdb_page + 64
        else:  # inline in a leaf page; leaves run about half full after splits
            per = 2 * (value_bytes + 64)
        return per * count

    def cut(nbytes: int) -> int:  # an array cut into page-size blocks, plus its record
        full, rest = divmod(int(nbytes), layout.page_size)
        return stored(layout.page_size + TRAILER_BYTES, full) + \
            (stored(rest + TRAILER_BYTES, 1) if rest else 0) + stored(64, 1)

    total = sum(cut(a.nbytes) for a in arrays.values()) if blocks else 0
    for direction in _directions(arrays) if pages else ():
        per_edge = layout.rid_bytes + (8 if f"{direction}_weights" in arrays else 0)
        vertices = len(arrays[f"{direction}_offsets"])
        edges = len(arrays[f"{direction}_targets"])
        page_bytes = int(1.25 * (edges * per_edge + vertices * 20)) + 2 * layout.page_size
        count = -(-page_bytes // layout.page_size)
        total += stored(layout.page_size, count) + cut(9 * count)  # + the page table
    return int(total * 1.1) + ESTIMATE_MARGIN


class _Pages:
    """The pages of one direction built in the calling thread, between the puts."""

    def __init__(self, arrays: dict[str, np.ndarray], direction: str, layout: PageLayout):
        self.offsets = arrays[f"{direction}_offsets"]
        self.targets = arrays[f"{direction}_targets"]
        self.weights = arrays.get(f"{direction}_weights")
        self.weighted = self.weights is not None
        self.layout = layout
        self._plan: PagePlan | None = None

    def plan(self) -> PagePlan:
        if self._plan is None:
            self._plan = plan_pages(self.offsets, self.layout, self.weighted)
        return self._plan

    def pages(self) -> Iterator[tuple[int, np.ndarray]]:
        return iter_pages(self.offsets, self.targets, self.weights, self.plan(), buffers=1)

    def close(self) -> None:
        pass


class _PageBuilder(_Pages):
    """Plans and builds the pages of one direction in a thread of its own (after the builder
    whose ``done`` is ``after``, if given); :meth:`pages` yields them in order. At most
    ``AHEAD`` built pages wait in memory."""

    AHEAD = 1

    def __init__(self, arrays: dict[str, np.ndarray], direction: str, layout: PageLayout,
                 after: threading.Event | None = None):
        super().__init__(arrays, direction, layout)
        self.done, self._after = threading.Event(), after
        self._planned = threading.Event()
        self._queue: queue.Queue = queue.Queue(maxsize=self.AHEAD)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"pages-{direction}",
                                        daemon=True)
        self._thread.start()

    def _hand(self, item) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        try:
            while self._after is not None and not self._after.wait(0.1):
                if self._stop.is_set():
                    return
            self._plan = plan_pages(self.offsets, self.layout, self.weighted)
            self._planned.set()
            # Buffers for the pages waiting in the queue, the one being written into the
            # transaction and the one being built.
            for item in iter_pages(self.offsets, self.targets, self.weights, self._plan,
                                   buffers=self.AHEAD + 2):
                if not self._hand(item):
                    return
            self._hand(None)
        except BaseException as exc:  # handed to the consumer
            self._planned.set()
            self._hand(exc)
        finally:
            self.done.set()

    def plan(self) -> PagePlan:
        self._planned.wait()
        if self._plan is None:  # planning failed: the error waits in the queue
            raise self._queue.get()
        return self._plan

    def pages(self) -> Iterator[tuple[int, np.ndarray]]:
        while True:
            item = self._queue.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


def _test_pause() -> None:
    marker = os.environ.get(TEST_PAUSE_ENV)
    if marker:
        Path(marker).write_text(str(os.getpid()))
        time.sleep(float(os.environ.get(TEST_PAUSE_ENV + "_SECONDS", "60")))


def delete_topology(env, txn, graph_id: str) -> int:
    """Delete blocks, pages, topology metadata and delta records of ``graph_id``; returns keys
    deleted."""
    from .delta import delete_records

    deleted = delete_arrays(txn, env.db("blocks"), graph_id) + delete_records(env, txn, graph_id)
    deleted += delete_prefix(txn, env.db("pages"), f"{graph_id}/".encode())
    deleted += delete_prefix(txn, env.db("meta"), f"topology/{graph_id}/".encode())
    return deleted


def topology_info(env, txn, graph_id: str, direction: str) -> dict:
    db = env.db("meta")
    raw = txn.get(_meta_key(graph_id, direction), db=db) if db is not None else None
    where = f"the {direction!r} page record of graph {graph_id}"
    if raw is None:
        raise CorruptData(f"{where} is missing", missing=True)
    try:
        info = json.loads(bytes(unpack_block(raw, where)))
    except ValueError:
        info = None
    if not isinstance(info, dict) or not all(
            isinstance(info.get(k), int) and not isinstance(info.get(k), bool) and info[k] >= 0
            for k in ("pages", "large_pages", "page_size", "num_vertices")):
        raise CorruptData(f"{where} is unreadable")
    return info


def read_page(env, txn, graph_id: str, direction: str, pid: int) -> memoryview:
    """One verified page straight from LMDB (valid inside ``txn``); for tools and tests."""
    value = txn.get(page_key(graph_id, direction, pid), db=env.db("pages"))
    if value is None:
        raise CorruptData(f"page {pid} ({direction}) of graph {graph_id} is missing", missing=True)
    verify_page(value, pid, env.layout)
    return value
