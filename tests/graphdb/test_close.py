"""close() releases a connection's memory at once.

A closed connection used to stay alive through reference cycles (the runner held the
connection's bound methods, the table-function registry its own), with its loaded graphs and
buffer pool, until a garbage collection: a reconnect-per-query reader grew to gigabytes. These
tests run with the cyclic collector off, so only reference counting frees anything.
"""

from __future__ import annotations

import gc
import os
import weakref

import networkx as nx
import pytest

import graphdb


@pytest.fixture
def no_gc():
    gc.collect()
    gc.disable()
    yield
    gc.enable()


@pytest.fixture
def db(tmp_path):
    db = tmp_path / "db"
    with graphdb.connect(db) as con:
        con.from_networkx("g", nx.gnm_random_graph(200, 800, seed=3, directed=True))
    return db


STATEMENTS = [
    "SELECT * FROM bfs(g, 0)",
    "SELECT * FROM pagerank(g)",
    "SELECT count(*) FROM g.edges",
    "SELECT * FROM GRAPH_TABLE (g MATCH (a)-[e]->(b) WHERE a.id < 5 COLUMNS (b.id AS x))",
    "SELECT * FROM settings()",
    "SELECT * FROM functions()",
    "SELECT * FROM buffer_stats()",
    "SHOW GRAPHS",
    "DESCRIBE g",
    "EXPLAIN ANALYZE SELECT * FROM wcc(g)",
]


def test_a_closed_connection_is_freed_without_a_garbage_collection(db, no_gc):
    refs = []
    for _ in range(4):  # a reader that reconnects for every query (one kept alive fails it)
        con = graphdb.connect(db)
        for sql in STATEMENTS:
            con.execute(sql).fetchall()
        con.graph("g").bfs(0)
        refs.append((weakref.ref(con), weakref.ref(con.session.runner), weakref.ref(con.catalog),
                     weakref.ref(con.catalog.buffers)))
        con.close()
        del con
    alive = [r for group in refs for r in group if r() is not None]
    assert not alive, [gc.get_referrers(r()) for r in alive[:1]]


def _held(db) -> int:
    """Bytes the process's residency owner holds of graphs of database ``db``."""
    from graphdb.executor.residency import RESIDENCY

    return sum(nbytes for graph, _device, _name, nbytes in RESIDENCY.entries()
               if isinstance(graph, tuple) and graph[0] == str(db))


def test_close_releases_the_graphs_and_frames_even_while_the_object_is_kept(db):
    first, second = graphdb.connect(db), graphdb.connect(db)
    first.execute("SELECT * FROM pagerank(g)").fetchall()
    first.execute("SELECT * FROM g.edges").fetchall()
    first.catalog.ensure_pages(first.catalog.get("g"))  # pages are built on first need
    list(first.catalog.buffers.scan(first.catalog.buffers.page_keys(
        first.catalog.get("g").graph_id, "out")))
    assert _held(db) > 0 and first.catalog.buffers._frames
    first.close()
    assert not first.catalog.buffers._frames
    assert _held(db) > 0  # the other connection of this process shares the loaded graph
    second.close()
    assert _held(db) == 0  # the last one out releases it
    with pytest.raises(graphdb.InterfaceError, match="closed"):
        first.execute("SHOW GRAPHS")


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd")
def test_a_connection_dropped_unclosed_releases_its_files_and_its_transaction(db):
    # A forgotten connection kept its database's files and locks (5 handles) and, in memory,
    # its temporary folder until the process ended. Dropped, it is closed as close() closes it.
    import pyarrow as pa

    def handles():
        gc.collect()
        return len(os.listdir("/proc/self/fd"))

    keeper = graphdb.connect(db)
    keeper.ingest("w", pa.table({"src": [0, 1], "dst": [1, 2]}))
    before = handles()
    for _ in range(4):  # a dropped connection kept 5 handles: 4 rounds hold 20, the bound 1
        con = graphdb.connect()
        con.ingest("g", pa.table({"src": [0, 1], "dst": [1, 2]}))
        con.execute("SELECT * FROM bfs(g, 0)").fetchall()
        temporary = con.path
        del con
        assert not temporary.exists()
        other = graphdb.connect(db)
        other.execute("BEGIN")
        other.execute("INSERT INTO w.edges VALUES (7, 8)")
        del other  # its open transaction is rolled back, its writer lock let go
        gc.collect()  # (a transaction's objects refer to each other: a collection frees them)
    assert handles() <= before + 1
    keeper.execute("INSERT INTO w.edges VALUES (9, 10)")
    assert keeper.execute("SELECT count(*) FROM w.edges").fetchone() == (3,)
    keeper.close()
