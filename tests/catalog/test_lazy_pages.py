"""The topology stored once: an ingest writes CSR blocks only; slotted pages are built from the
stored blocks by the first page-streamed plan (or ``ingest --pages``), in a write of their own,
the same bytes as pages built from the arrays in memory; EXPLAIN says when a plan builds them."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

import graphdb
from graphdb.catalog import CatalogError
from graphdb.generators import rmat
from graphdb.storage import Environment, write_topology
from graphdb.storage.topology import DIRECTIONS, TEST_PAUSE_ENV, read_page, topology_info
from tests.storage.test_storage_crash import child, wait_for, write_edges

PAGE = 4096
BFS = "SELECT vertex, depth FROM bfs(g, {source}) ORDER BY vertex"


def page_keys(env, graph_id: str) -> int:
    with env.read_txn() as txn:
        pages = sum(1 for k in txn.cursor(db=env.db("pages")).iternext(values=False)
                    if bytes(k).startswith(f"{graph_id}/".encode()))
        meta = sum(1 for k in txn.cursor(db=env.db("meta")).iternext(values=False)
                   if bytes(k).startswith(f"topology/{graph_id}/".encode()))
    return pages + meta


def stored_pages(env, graph_id: str, directions) -> list[bytes]:
    out = []
    with env.read_txn() as txn:
        for d in directions:
            info = topology_info(env, txn, graph_id, d)
            out += [bytes(read_page(env, txn, graph_id, d, p)) for p in range(info["pages"])]
    return out


@pytest.fixture
def graph(tmp_path):
    src, dst = rmat(11, seed=12)
    return write_edges(tmp_path / "e.csv", src, dst), src, dst


def bfs_reference(src, dst, source) -> list[tuple[int, int]]:
    ids = np.unique(np.concatenate([src, dst]))
    s, d = np.searchsorted(ids, src), np.searchsorted(ids, dst)
    matrix = sp.csr_array((np.ones(len(s)), (s, d)), shape=(len(ids), len(ids)))
    hops = shortest_path(matrix, unweighted=True, indices=int(np.searchsorted(ids, source)))
    reached = np.isfinite(hops)
    return sorted(zip(ids[reached].tolist(), hops[reached].astype(int).tolist()))


def streamed(con) -> None:
    """Budgets below the topology: BFS and PageRank stream slotted pages from the store."""
    con.execute("SET memory_limit = '200KB'")
    con.execute("SET host_memory_limit = '50KB'")


def explained(con, sql: str) -> str:
    """EXPLAIN's text, its lines (wrapped to the terminal) joined into one."""
    return " ".join(" ".join(r[0] for r in con.execute("EXPLAIN " + sql).fetchall()).split())


def test_an_ingest_stores_csr_blocks_only(tmp_path, graph):
    edges, src, _ = graph
    with graphdb.connect(tmp_path / "db", page_size=PAGE) as con:
        summary = con.ingest("g", edges)
        entry = con.catalog.get("g")
        assert page_keys(con.catalog.env, entry.graph_id) == 0
        status = con.catalog.page_status(entry)
        assert not status.built and status.pages > 0 and status.build_seconds > 0
        csr = sum(con.catalog.read_array(entry, a).nbytes
                  for a in ("out_offsets", "out_targets", "in_offsets", "in_targets"))
        assert entry.stats["block_bytes"] == csr
        assert summary["bytes_stored"] == csr + entry.stats["vertex_id_bytes"]


def test_the_first_page_streamed_query_builds_the_pages_once_and_explain_says_so(
        tmp_path, graph, monkeypatch):
    edges, src, dst = graph
    source = int(src[0])
    sql = BFS.format(source=source)
    with graphdb.connect(tmp_path / "db", page_size=PAGE, device="cpu") as con:
        con.ingest("g", edges)
        entry = con.catalog.get("g")
        streamed(con)
        plan = explained(con, sql)
        estimate = con.catalog.page_status(entry)
        assert "pages are built first" in plan and f"about {estimate.pages} pages" in plan
        assert page_keys(con.catalog.env, entry.graph_id) == 0  # EXPLAIN builds nothing

        import graphdb.catalog.pages as pages_module

        builds = []
        real = pages_module.build_pages
        monkeypatch.setattr(pages_module, "build_pages",
                            lambda *a, **k: builds.append(a) or real(*a, **k))
        assert con.execute(sql).fetchall() == bfs_reference(src, dst, source)
        built = con.catalog.page_status(entry)
        assert built.built and len(builds) == 1
        # the estimate EXPLAIN showed is close to what was built
        assert 0.7 * built.pages <= estimate.pages <= 1.3 * built.pages
        plan = explained(con, sql)
        assert "built first" not in plan and "streamed from the store" in plan
        con.execute("SELECT * FROM pagerank(g)").fetchall()
        assert con.execute(sql).fetchall() == bfs_reference(src, dst, source)
        assert len(builds) == 1  # built once, then kept


@pytest.mark.parametrize("undirected", [False, True])
def test_pages_built_from_stored_blocks_equal_pages_built_in_memory(tmp_path, graph,
                                                                    undirected):
    edges, _, _ = graph
    with graphdb.connect(tmp_path / "db", page_size=PAGE) as con:
        con.ingest("g", edges, undirected=undirected, pages=True)
        entry = con.catalog.get("g")
        env = con.catalog.env
        directions = DIRECTIONS[: 2 if entry.directed else 1]
        lazily = stored_pages(env, entry.graph_id, directions)
        arrays = {f"{d}_{part}": con.catalog.read_array(entry, f"{d}_{part}")
                  for d in directions for part in ("offsets", "targets")}
        env.write(lambda txn: write_topology(env, txn, "reference", arrays, pages=True))
        assert lazily == stored_pages(env, "reference", directions)
        assert len(lazily) > 2


def test_a_read_only_connection_says_how_to_get_pages(tmp_path, graph):
    edges, src, _ = graph
    with graphdb.connect(tmp_path / "db", page_size=PAGE) as con:
        con.ingest("g", edges)
    with graphdb.connect(tmp_path / "db", read_only=True, device="cpu") as con:
        streamed(con)
        with pytest.raises(graphdb.Error, match="no slotted pages yet.*read-only"):
            con.execute(BFS.format(source=int(src[0]))).fetchall()


def test_a_stale_entry_builds_nothing(tmp_path, graph):
    """A plan made before a --replace: its graph version is gone, so no pages are written for
    it (they would belong to nothing)."""
    edges, _, _ = graph
    with graphdb.connect(tmp_path / "db", page_size=PAGE) as con:
        con.ingest("g", edges)
        old = con.catalog.get("g")
        con.ingest("g", edges, replace=True)
        with pytest.raises(CatalogError, match="dropped or replaced"):
            con.catalog.ensure_pages(old)
        assert page_keys(con.catalog.env, old.graph_id) == 0
        assert page_keys(con.catalog.env, con.catalog.get("g").graph_id) == 0


def test_a_killed_page_build_leaves_no_page_and_the_next_query_builds_them(tmp_path, graph):
    edges, src, dst = graph
    db = tmp_path / "db"
    source = int(src[0])
    with graphdb.connect(db, page_size=PAGE) as con:
        con.ingest("g", edges)
        graph_id = con.catalog.get("g").graph_id
    marker = tmp_path / "paused"
    builder = child(f"""
        import graphdb
        with graphdb.connect({str(db)!r}, device="cpu") as con:
            con.execute("SET memory_limit = '200KB'")
            con.execute("SET host_memory_limit = '50KB'")
            con.execute({BFS.format(source=source)!r}).fetchall()
    """, env={TEST_PAUSE_ENV: str(marker)})
    wait_for(marker, builder)  # the out-direction's pages are in its open write transaction
    os.kill(builder.pid, signal.SIGKILL)
    builder.communicate()
    env = Environment(db, read_only=True)
    try:
        assert page_keys(env, graph_id) == 0
    finally:
        env.close()
    with graphdb.connect(db, device="cpu") as con:
        streamed(con)
        assert con.execute(BFS.format(source=source)).fetchall() == bfs_reference(src, dst,
                                                                                   source)
        assert con.catalog.page_status(con.catalog.get("g")).built
