

def test_streamed_sssp_checks_the_weight_argument_like_the_resident_one(tmp_path):
    import pytest

    import graphdb
    from graphdb.generators import random_weights, rmat

    src, dst = rmat(10, 8, seed=4)
    weights = random_weights(len(src), seed=4)
    path = tmp_path / "w.csv"
    path.write_text("s,d,weight\n" + "\n".join(f"{a},{b},{w:g}" for a, b, w in zip(src, dst, weights)))
    with graphdb.connect(tmp_path / "db") as con:
        con.ingest("g", path)
        source = int(src[0])
        resident = con.execute("SELECT vertex, distance FROM sssp(g, ?) ORDER BY vertex", [source]).fetchall()
        con.execute("SET memory_limit = '60KB'")
        plan = "\n".join(r[0] for r in con.execute("EXPLAIN SELECT * FROM sssp(g, 1)").fetchall())
        assert "subgraph streaming" in plan
        streamed = con.execute("SELECT vertex, distance FROM sssp(g, ?, weight => 'weight') "
                               "ORDER BY vertex", [source]).fetchall()
        assert dict(streamed) == pytest.approx(dict(resident))
        with pytest.raises(graphdb.InvalidInputError, match="no edge column 'nope'"):
            con.execute("SELECT * FROM sssp(g, ?, weight => 'nope')", [source])
