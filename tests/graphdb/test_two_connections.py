"""Two connections of one process to one database share its environment (LMDB allows one)."""

from __future__ import annotations

import graphdb


def test_two_connections_in_one_process(db_path, tmp_path):
    edges = tmp_path / "e.csv"
    edges.write_text("s,d\n1,2\n2,3\n")
    first = graphdb.connect(db_path)
    second = graphdb.connect(db_path)
    first.ingest("g", edges)
    # The second connection sees what the first committed, and can write too.
    assert second.execute("SELECT vertex FROM bfs(g, 1) WHERE depth = 2").fetchall() == [(3,)]
    second.ingest("h", edges, undirected=True)
    first.close()
    # Closing one leaves the other working; a third opens after the first closed.
    assert [r[0] for r in second.execute("SHOW GRAPHS").fetchall()] == ["g", "h"]
    with graphdb.connect(db_path) as third:
        assert third.execute("SELECT count(*) FROM bfs(h, 3)").fetchone() == (3,)
    second.close()
    with graphdb.connect(db_path, read_only=True) as reader:
        assert reader.execute("SELECT count(*) FROM pagerank(g)").fetchone() == (3,)
