"""COPY (query) TO 'file', COPY g FROM / CREATE GRAPH: files in and out in SQL. Files written
are read back by pyarrow, DuckDB and the json module; graphs loaded are checked with
networkx."""

from __future__ import annotations

import gzip
import json

import networkx as nx
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import graphdb


@pytest.fixture
def g(con):
    graph = nx.DiGraph()
    graph.add_weighted_edges_from([(1, 2, 0.5), (2, 3, 1.5), (3, 1, 2.0), (3, 4, 4.0)])
    graph.add_node(5)
    con.from_networkx("g", graph)
    return graph


def test_copy_query_to_parquet_csv_and_json(con, g, tmp_path):
    query = "SELECT vertex, distance FROM sssp(g, 1) ORDER BY vertex"
    expected = con.execute(query).arrow()
    result = con.execute(f"COPY ({query}) TO '{tmp_path / 'd.parquet'}' (FORMAT parquet)")
    assert result.fetchall() == [(4,)] and result.columns == ["Count"]  # as DuckDB
    assert pq.read_table(tmp_path / "d.parquet").equals(expected)
    con.execute(f"COPY ({query}) TO '{tmp_path / 'd.csv'}'")  # the format from the extension
    assert pacsv.read_csv(tmp_path / "d.csv").to_pylist() == expected.to_pylist()
    con.execute(f"COPY ({query}) TO '{tmp_path / 'd.json'}' (FORMAT json)")
    lines = (tmp_path / "d.json").read_text().splitlines()
    assert [json.loads(line) for line in lines] == expected.to_pylist()
    duckdb = pytest.importorskip("duckdb")
    theirs = duckdb.sql(f"SELECT * FROM '{tmp_path / 'd.parquet'}' ORDER BY vertex").fetchall()
    assert theirs == con.execute(query).fetchall()


def test_copy_options(con, g, tmp_path):
    con.execute(f"COPY g.edges TO '{tmp_path / 'e.tsv'}' (HEADER false)")
    rows = (tmp_path / "e.tsv").read_text().splitlines()
    assert sorted(rows) == ["1\t2\t0.5", "2\t3\t1.5", "3\t1\t2", "3\t4\t4"]
    con.execute(f"COPY (SELECT 1 AS a, 'x,y' AS b) TO '{tmp_path / 'q.csv.gz'}' "
                "(DELIMITER ';')")
    text = gzip.open(tmp_path / "q.csv.gz", "rt").read()
    assert text in ("a;b\n1;x,y\n", 'a;b\n1;"x,y"\n')  # pyarrow may quote a comma anyway
    con.execute(f"COPY (SELECT vertex FROM bfs(g, 1) ORDER BY vertex) TO "
                f"'{tmp_path / 'a.json'}' (FORMAT json, ARRAY true)")
    assert json.loads((tmp_path / "a.json").read_text()) == [{"vertex": v} for v in (1, 2, 3, 4)]
    con.execute(f"COPY (SELECT 1 AS a) TO '{tmp_path / 'z.parquet'}' (COMPRESSION zstd)")
    assert pq.ParquetFile(tmp_path / "z.parquet").metadata.row_group(0).column(
        0).compression == "ZSTD"


def test_json_has_no_infinity(con, g, tmp_path):
    # sswp's width at the source is +inf: JSON gets null, not the invalid Infinity
    con.execute(f"COPY (SELECT vertex, width FROM sswp(g, 1) ORDER BY vertex) TO "
                f"'{tmp_path / 'w.json'}'")
    first = json.loads((tmp_path / "w.json").read_text().splitlines()[0])
    assert first == {"vertex": 1, "width": None}


@pytest.mark.parametrize("sql,error,message", [
    ("COPY (SELECT 1) TO 'x.csv' (FORMAT xml)", graphdb.InvalidInputError, "FORMAT must be"),
    ("COPY (SELECT 1) TO 'x.csv' (ARRAY true)", graphdb.InvalidInputError, "does not apply"),
    ("COPY (SELECT 1) TO 'x.csv' (HEADR false)", graphdb.ParseError, "did you mean HEADER"),
    ("COPY (SELECT 1) TO x.csv", graphdb.ParseError, "quoted string"),
    ("COPY (SHOW GRAPHS) TO 'x.csv'", graphdb.ParseError, "takes a query"),
    ("COPY (SELECT 1) TO '/nonexistent/dir/x.csv'", graphdb.OperationalError, "cannot write"),
    ("EXPLAIN COPY (SELECT 1) TO 'x.csv'", graphdb.BinderError, "not a query"),
])
def test_copy_mistakes(con, sql, error, message):
    with pytest.raises(error, match=message):
        con.execute(sql)


def test_create_graph_and_copy_from_load_with_the_ingest_options(con, tmp_path):
    edges = tmp_path / "roads.csv"
    edges.write_text("from,to,minutes\n1,2,5\n2,3,7\n3,4,1\n")
    message = con.execute(f"CREATE GRAPH roads FROM '{edges}' (UNDIRECTED, WEIGHT 'minutes')"
                          ).message
    assert message.startswith("Loaded graph 'roads': 4 vertices, 3 edges (undirected, weighted)")
    reference = nx.Graph()
    reference.add_weighted_edges_from([(1, 2, 5), (2, 3, 7), (3, 4, 1)])
    assert dict(con.execute("SELECT vertex, distance FROM sssp(roads, 4)").fetchall()) == \
        nx.single_source_dijkstra_path_length(reference, 4)
    with pytest.raises(graphdb.CatalogError, match="already exists: CREATE OR REPLACE"):
        con.execute(f"COPY roads FROM '{edges}'")
    assert "nothing loaded" in con.execute(
        f"CREATE GRAPH IF NOT EXISTS roads FROM '{edges}'").message
    headerless = tmp_path / "plain.csv"
    headerless.write_text("1,2\n2,3\n")
    con.execute(f"COPY roads FROM '{headerless}' (HEADER false, REPLACE true)")
    assert con.execute("SHOW GRAPHS").fetchall() == [("roads", True, False, 3, 2)]
    con.execute(f"CREATE OR REPLACE GRAPH roads FROM '{edges}' (FORMAT csv, SELF_LOOPS 'drop')")
    assert con.catalog.get("roads").num_edges == 3


@pytest.mark.parametrize("sql,message", [
    ("CREATE GRAPH g FROM 'e.csv' (UNDIRECTED 'yes')", "UNDIRECTED is TRUE or FALSE"),
    ("CREATE GRAPH g FROM 'e.csv' (VERTEXES 'v.csv')", "unknown option VERTEXES; did you"),
    ("CREATE GRAPH g 'e.csv'", "missing FROM"),
    ("CREATE GRAPH select FROM 'e.csv'", "SQL keyword"),
])
def test_create_graph_mistakes(con, tmp_path, sql, message):
    (tmp_path / "e.csv").write_text("a,b\n1,2\n")
    with pytest.raises(graphdb.Error, match=message):
        con.execute(sql.replace("'e.csv'", f"'{tmp_path / 'e.csv'}'"))


def test_a_graph_from_an_empty_edge_file_and_a_vertex_file(con, tmp_path):
    (tmp_path / "e.csv").write_text("src,dst\n")
    pq.write_table(pa.table({"id": [10, 20, 30]}), tmp_path / "v.parquet")
    con.execute(f"CREATE GRAPH lonely FROM '{tmp_path / 'e.csv'}' "
                f"(VERTICES '{tmp_path / 'v.parquet'}')")
    assert con.execute("SELECT count(*) FROM lonely.vertices").fetchone() == (3,)
    assert con.execute("SELECT count(*) FROM lonely.edges").fetchone() == (0,)
    with pytest.raises(graphdb.IngestError, match="header but no rows"):  # no vertex file
        con.execute(f"CREATE GRAPH nothing FROM '{tmp_path / 'e.csv'}'")
