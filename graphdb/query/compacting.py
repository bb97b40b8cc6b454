"""CHECKPOINT, compaction in the background, and ``graph_changes()``.

A graph's writes accumulate as a delta that every version merges (:mod:`graphdb.catalog.delta`).
When a commit leaves a graph's delta above ``compaction_threshold`` of its stored edges (``SET
compaction_threshold = 0.05``, the default; 0 turns it off), and at least
:data:`MIN_DELTA_EDGES` stored edges, the committing connection compacts it in a background
thread (:func:`graphdb.catalog.compaction.compact`): readers and writers go on, waiting at most
for a short flip. ``CHECKPOINT g`` compacts now and returns when done (``CHECKPOINT`` alone:
every changed graph). A connection closing stops its compactions (what they wrote is removed).

``SELECT * FROM graph_changes('g')`` (or ``graph_changes()`` for every graph): the version,
what the delta holds, its share of the stored edges, when the graph was last compacted, and
whether a compaction is running.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import TYPE_CHECKING

import pyarrow as pa

from graphdb.catalog import Catalog, GraphEntry, GraphNotFound
from graphdb.catalog.compaction import compact, compaction_markers
from graphdb.executor.cancel import check_cancelled, is_cancelled
from graphdb.storage import BufferManager

from ..errors import translate

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["MIN_DELTA_EDGES", "changes_table", "checkpoint", "maybe_compact",
           "stop_compactions", "wait_for_compaction"]

#: Stored edges a delta must reach before it is compacted automatically (a few thousand edges
#: merge in well under a millisecond; a new base of a small graph is not worth writing).
MIN_DELTA_EDGES = 4096
#: Host frames of the catalog a background compaction reads through.
COMPACTION_POOL_BYTES = 64 << 20


class _Compactions:
    """The background compactions of one session."""

    def __init__(self) -> None:
        self.threads: dict[str, threading.Thread] = {}
        self.cancel = threading.Event()
        self.errors: dict[str, str] = {}
        self.lock = threading.Lock()


_STATE: "weakref.WeakKeyDictionary[Session, _Compactions]" = weakref.WeakKeyDictionary()


def _state(session: "Session") -> _Compactions:
    state = _STATE.get(session)
    if state is None:
        state = _STATE[session] = _Compactions()
    return state


def delta_edges(entry: GraphEntry) -> int:
    """Stored edge entries an operator merges into ``entry``'s base (deleted plus added)."""
    return entry.delta.get("tombstones", 0) + entry.delta.get("stored_delta", 0) \
        if entry.changed else 0


def due(entry: GraphEntry, threshold: float) -> bool:
    """Whether ``entry``'s delta is past the automatic compaction threshold."""
    changed = delta_edges(entry)
    base = entry.delta.get("base_edges", 0) if entry.changed else entry.num_edges
    return bool(threshold) and changed >= MIN_DELTA_EDGES and changed > threshold * base


def maybe_compact(session: "Session", committed: list[GraphEntry]) -> None:
    """After a commit (of the entries ``committed``): compact in the background every graph
    whose delta is due."""
    threshold = session.settings.compaction_threshold
    if not threshold or session.env.read_only:
        return
    for entry in committed:
        if due(entry, threshold):
            _start(session, entry.name)


def _start(session: "Session", name: str) -> None:
    state = _state(session)
    with state.lock:
        running = state.threads.get(name)
        if running is not None and running.is_alive():
            return
        env = session.env
        cancel = state.cancel

        def run() -> None:
            catalog = Catalog(env, BufferManager(env, COMPACTION_POOL_BYTES), cleanup=False)
            try:
                compact(catalog, name, cancelled=cancel.is_set)
                state.errors.pop(name, None)
            except Exception as exc:  # reported by graph_changes(); the graph is unchanged
                state.errors[name] = str(translate(exc))
            finally:
                catalog.buffers.close()

        thread = threading.Thread(target=run, name=f"graphdb-compact-{name}", daemon=True)
        state.threads[name] = thread
        thread.start()


def wait_for_compaction(session: "Session", name: str) -> bool:
    """Wait for the session's background compaction of graph ``name`` to end; whether one
    was started."""
    state = _STATE.get(session)
    thread = None if state is None else state.threads.get(name)
    while thread is not None and thread.is_alive():
        thread.join(0.02)
        check_cancelled()
    return thread is not None


def checkpoint(session: "Session", name: str) -> str:
    """CHECKPOINT [g]: compact now (see the module docstring); the status line."""
    if name:
        names = [session.catalog.get(name).name]
    else:
        names = [e.name for e in session.catalog.entries() if e.changed]
    done = []
    for graph in names:
        wait_for_compaction(session, graph)
        start = time.perf_counter()
        entry = session.catalog.get(graph)
        # an interrupt stops it between chunks (what it wrote is removed), then says so here
        new = compact(session.catalog, graph, cancelled=is_cancelled)
        check_cancelled()
        if new is not None:
            session.runner.forget(entry)
            done.append(f"'{graph}' ({delta_edges(entry)} changed edges, "
                        f"{time.perf_counter() - start:.3f} s)")
    if not done:
        return "nothing to compact" if not name else f"graph '{names[0]}' has no delta to compact"
    return "compacted " + ", ".join(done)


def stop_compactions(session: "Session") -> None:
    """The connection closes: cancel its background compactions and wait for them."""
    state = _STATE.pop(session, None)
    if state is None:
        return
    state.cancel.set()
    for thread in list(state.threads.values()):
        thread.join()


def changes_table(session: "Session", graph: str | None = None) -> pa.Table:
    """``graph_changes(['g'])``: one row per graph (see the module docstring)."""
    if graph is not None:
        try:
            entries = [session.catalog.get(str(graph))]
        except GraphNotFound as exc:
            raise translate(exc) from None
    else:
        entries = sorted(session.catalog.entries(), key=lambda e: e.name)
    markers = {record.get("base") for _gid, record in compaction_markers(session.env)}
    state = _STATE.get(session)
    rows = []
    for e in entries:
        d = e.delta
        base = d.get("base_edges", e.num_edges) if e.changed else e.num_edges
        last = d.get("compacted")
        rows.append({
            "graph": e.name, "version": e.version, "generation": d.get("generation", 0),
            "vertices": e.num_vertices, "edges": e.input_edges,
            "base_edges": base, "inserted_edges": d.get("inserted_edges", 0),
            "deleted_base_edges": d.get("tombstones", 0),
            "delta_edges": d.get("delta_edges", 0),
            "delta_size": delta_edges(e),
            "delta_share": delta_edges(e) / base if base else float(delta_edges(e) > 0),
            "new_vertices": d.get("new_vertices", 0),
            "deleted_vertices": d.get("deleted_vertices", 0),
            "delta_bytes": d.get("bytes", 0),
            "last_compaction": None if last is None else float(last),
            "compacting": e.graph_id in markers,
            "compaction_error": None if state is None else state.errors.get(e.name)})
    schema = pa.schema([
        ("graph", pa.string()), ("version", pa.int64()), ("generation", pa.int64()),
        ("vertices", pa.int64()), ("edges", pa.int64()), ("base_edges", pa.int64()),
        ("inserted_edges", pa.int64()), ("deleted_base_edges", pa.int64()),
        ("delta_edges", pa.int64()), ("delta_size", pa.int64()), ("delta_share", pa.float64()),
        ("new_vertices", pa.int64()), ("deleted_vertices", pa.int64()),
        ("delta_bytes", pa.int64()), ("last_compaction", pa.timestamp("s", "UTC")),
        ("compacting", pa.bool_()), ("compaction_error", pa.string())])
    columns = {f.name: [r[f.name] for r in rows] for f in schema}
    columns["last_compaction"] = [None if v is None else int(v) for v in
                                  columns["last_compaction"]]
    return pa.table(columns, schema=schema)
