"""A graph's slotted pages: built from its CSR blocks on first need, and what that costs.

An ingest stores the topology once, as CSR blocks. Page streaming (GTS) reads a second form of
the same edges, slotted pages; they are built when a page-streamed plan first runs on the graph
(or by ``graphdb ingest --pages``), in a write transaction of their own
(:func:`graphdb.storage.build_pages`). :func:`page_status` tells a planner whether they exist and,
if not, what building them will write and take, so EXPLAIN can say so before anything runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from graphdb.storage import build_pages, estimate_pages, page_kernel, pages_built
from graphdb.storage.compiled import preload
from graphdb.storage.topology import PAGE_BUILD_BYTES_PER_SECOND, page_stats

from .entries import GraphEntry
from .errors import CatalogError

__all__ = ["PageStatus", "ensure_pages", "page_status"]


@dataclass(frozen=True)
class PageStatus:
    """Whether a graph version's pages exist; their count and bytes (estimated when not built)
    and the seconds a build is expected to take (0 when built)."""

    built: bool
    pages: int
    page_bytes: int
    build_seconds: float

    def describe(self) -> str:
        mib = self.page_bytes / 2**20
        if self.built:
            return f"slotted pages stored ({self.pages} pages, {mib:,.1f} MiB)"
        return (f"slotted pages are built first from the CSR blocks (once, then kept): about "
                f"{self.pages} pages, {mib:,.1f} MiB written, ~{self.build_seconds:.2g} s")


def page_status(env, entry: GraphEntry) -> PageStatus:
    with env.read_txn() as txn:
        if pages_built(env, txn, entry.graph_id):
            stats = page_stats(env, txn, entry.graph_id)
            return PageStatus(True, stats["pages"], stats["page_bytes"], 0.0)
    pages, nbytes = estimate_pages(env.layout, entry.num_vertices, entry.num_edges,
                                   entry.weighted, 2 if entry.directed else 1)
    return PageStatus(False, pages, nbytes, nbytes / PAGE_BUILD_BYTES_PER_SECOND)


def _memory_limit() -> int:
    from .ingest import default_memory_limit

    return default_memory_limit()


def ensure_pages(env, entry: GraphEntry) -> PageStatus:
    """Build ``entry``'s pages unless they exist; the status afterwards. A read-only database
    cannot build them: :class:`CatalogError` says how to."""
    status = page_status(env, entry)
    if status.built:
        return status
    if env.read_only:
        raise CatalogError(
            f"graph '{entry.name}' has no slotted pages yet and the database is open read-only; "
            "a page-streamed query on a read-write connection builds them once (or load the "
            "graph with 'graphdb ingest --pages')")
    def still_wanted(txn) -> bool:  # not dropped or replaced since the plan was made
        raw = txn.get(entry.name.encode(), db=env.db("catalog"))
        try:
            return raw is not None and json.loads(bytes(raw))["graph_id"] == entry.graph_id
        except (ValueError, KeyError, TypeError):  # a damaged entry: not this version
            return False

    # A large graph's pages are written by the compiled kernel (storage.page_kernel).
    loading = preload(entry.num_edges, _memory_limit(), page_kernel.RECORDS)
    if loading is not None:
        loading.join()
    stats = build_pages(env, entry.graph_id, still_wanted=still_wanted)
    if stats is None:
        raise CatalogError(f"graph '{entry.name}' was dropped or replaced while its pages were "
                           "being built; run the query again")
    return PageStatus(True, stats["pages"], stats["page_bytes"], 0.0)
