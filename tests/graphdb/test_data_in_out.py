"""Data in and out from Python: DataFrames, Arrow, networkx in; DataFrames, numpy, Arrow,
record batches and PEP 249 descriptions out. References: networkx, pandas, polars, DuckDB."""

from __future__ import annotations

import inspect
import math

import networkx as nx
import numpy as np
import pyarrow as pa
import pytest

import graphdb

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")


def _edges_of(con, graph: str) -> list[tuple]:
    return sorted(con.execute(f"SELECT * FROM {graph}.edges").fetchall())


EDGES = {"src": [1, 2, 3, 3], "dst": [2, 3, 1, 4], "weight": [0.5, 1.5, 2.0, 4.0],
         "label": ["a", "b", None, "d"]}


@pytest.mark.parametrize("make", [
    lambda: pd.DataFrame(EDGES),
    lambda: pl.DataFrame(EDGES),
    lambda: pa.table(EDGES),
    lambda: pa.RecordBatchReader.from_batches(
        pa.table(EDGES).schema, pa.table(EDGES).to_batches(max_chunksize=1)),
], ids=["pandas", "polars", "arrow", "reader"])
def test_ingest_tables(con, make):
    summary = con.ingest("g", make())
    assert (summary["vertices"], summary["edges"], summary["weighted"]) == (4, 4, True)
    expected = sorted(zip(EDGES["src"], EDGES["dst"], EDGES["weight"], EDGES["label"]))
    assert _edges_of(con, "g") == expected
    reference = nx.DiGraph()
    reference.add_weighted_edges_from(zip(EDGES["src"], EDGES["dst"], EDGES["weight"]))
    distances = dict(con.execute("SELECT vertex, distance FROM sssp(g, 1)").fetchall())
    assert distances == nx.single_source_dijkstra_path_length(reference, 1)


def test_ingest_vertices_from_a_dataframe(con):
    vertices = pd.DataFrame({"id": [1, 2, 3, 4, 5], "name": list("abcde")})
    con.ingest("g", pa.table(EDGES), vertices=vertices, undirected=True)
    assert con.execute("SELECT id, name FROM g.vertices ORDER BY id").fetchall() == list(
        zip(range(1, 6), "abcde"))
    assert con.execute("SELECT count(*) FROM wcc(g)").fetchone() == (5,)  # 5 is isolated


def test_a_bad_table_is_named_not_printed(con):
    frame = pd.DataFrame({"src": [1, None, 3], "dst": [2, 3, 4], "secret": ["x" * 50] * 3})
    with pytest.raises(graphdb.IngestError) as info:
        con.ingest("g", frame)
    message = str(info.value)
    assert message.startswith("the pandas DataFrame of edges: row 2:")
    assert "xxxx" not in message and "graphdb-import" not in message
    with pytest.raises(graphdb.InvalidInputError, match="cannot read the builtins object"):
        con.ingest("g", object())


def test_networkx_with_every_attribute_round_trips(con):
    graph = nx.DiGraph()
    graph.add_node(1, name="ada", age=36)
    graph.add_node(2, name="bob")
    graph.add_node(9, name="lonely", age=50)  # no edges
    graph.add_edge(1, 2, weight=2.5, kind="follows", since=2020)
    graph.add_edge(2, 1, weight=1.0, kind="blocks")
    g = con.from_networkx("g", graph)
    back = g.to_networkx()
    assert dict(back.nodes(data=True)) == dict(graph.nodes(data=True))
    assert sorted(back.edges(data=True)) == sorted(graph.edges(data=True))
    assert con.catalog.get("g").weighted
    assert con.execute("SELECT name FROM g.vertices WHERE age IS NULL").fetchall() == [("bob",)]


def test_a_lone_numeric_attribute_is_not_taken_as_the_weight(con):
    graph = nx.DiGraph()
    graph.add_edge(1, 2, capacity=7)
    g = con.from_networkx("g", graph)
    assert not con.catalog.get("g").weighted
    assert list(g.to_networkx().edges(data=True)) == [(1, 2, {"capacity": 7})]
    g = con.from_networkx("h", graph, weight="capacity")
    assert con.catalog.get("h").weighted


def test_networkx_strings_and_undirected(con):
    graph = nx.karate_club_graph()
    graph = nx.relabel_nodes(graph, {n: f"m{n}" for n in graph})
    con.ingest("karate", graph)
    assert not con.catalog.get("karate").directed
    clubs = dict(con.execute("SELECT id, club FROM karate.vertices").fetchall())
    assert clubs == dict(graph.nodes(data="club"))
    ours = dict(con.execute("SELECT vertex, coefficient FROM lcc(karate)").fetchall())
    assert ours == pytest.approx(nx.clustering(graph))


@pytest.mark.parametrize("graph", [nx.empty_graph(5, create_using=nx.DiGraph),
                                   nx.empty_graph(3)])
def test_a_graph_without_edges(con, graph):
    summary = con.ingest("g", graph)
    assert (summary["vertices"], summary["edges"]) == (len(graph), 0)
    assert con.execute("SELECT * FROM bfs(g, 1)").fetchall() == [(1, 0)]
    ranks = dict(con.execute("SELECT vertex, rank FROM pagerank(g)").fetchall())
    assert ranks == pytest.approx(nx.pagerank(graph))
    components = con.execute("SELECT count(DISTINCT component) FROM wcc(g)").fetchone()[0]
    assert components == nx.number_weakly_connected_components(nx.DiGraph(graph))


def test_register_tables_and_join_them_with_graph_results(con):
    con.from_networkx("g", nx.DiGraph([(1, 2), (2, 3)]))
    con.register("names", pd.DataFrame({"id": [1, 2, 3], "name": ["ada", "bob", "cy"]}))
    con.register("extra", pl.DataFrame({"k": [1]}))
    rows = con.execute("SELECT b.vertex, n.name FROM bfs(g, 1) b JOIN names n "
                       "ON n.id = b.vertex WHERE b.depth = 2").fetchall()
    assert rows == [(3, "cy")]
    assert con.execute("SELECT k FROM extra").fetchall() == [(1,)]
    con.register("names", pa.table({"id": [7]}))  # again: replaced
    assert con.execute("SELECT * FROM names").fetchall() == [(7,)]
    con.unregister("names")
    with pytest.raises(graphdb.BinderError, match="unknown table 'names'"):
        con.execute("SELECT * FROM names")
    with pytest.raises(graphdb.InvalidInputError, match="SQL keyword"):
        con.register("select", pa.table({"x": [1]}))
    with pytest.raises(graphdb.CatalogError, match="no table 'names'"):
        con.unregister("names")


def test_results_as_dataframes_numpy_and_batches(con):
    query = ("SELECT * FROM (VALUES (1::BIGINT, 'a', 0.5::DOUBLE), (2, NULL, 1.5), (3, 'c', NULL)) "
             "t(i, s, f)")
    reference = pd.DataFrame({"i": [1, 2, 3], "s": ["a", None, "c"], "f": [0.5, 1.5, None]})
    pd.testing.assert_frame_equal(con.execute(query).df(), reference, check_dtype=False)
    pd.testing.assert_frame_equal(con.execute(query).fetchdf(), reference, check_dtype=False)
    assert con.execute(query).pl().to_dict(as_series=False) == pl.DataFrame(
        reference).to_dict(as_series=False)
    columns = con.execute(query).fetchnumpy()
    assert columns["i"].tolist() == [1, 2, 3] and columns["i"].dtype == np.int64
    assert columns["s"].tolist() == ["a", None, "c"]
    assert columns["f"].mask.tolist() == [False, False, True]
    result = con.execute(query)
    assert result.fetchone() == (1, "a", 0.5)
    assert result.fetch_arrow_table().num_rows == 2  # the rest
    reader = con.execute(query).fetch_record_batch(2)
    assert isinstance(reader, pa.RecordBatchReader)
    assert [b.num_rows for b in reader] == [2, 1]


def test_description_types_match_duckdb(con):
    duckdb = pytest.importorskip("duckdb")
    query = "SELECT 1::BIGINT AS i, 1.5::DOUBLE AS f, 'x' AS s, TRUE AS b"
    ours = [(d[0], str(d[1])) for d in con.execute(query).description]
    theirs = [(d[0], str(d[1])) for d in duckdb.connect().execute(query).description]
    assert ours == theirs
    # literals type as in DuckDB: 1 an INTEGER, 1.5 an exact DECIMAL
    literals = "SELECT 1 AS i, 1.5 AS f"
    assert [(d[0], str(d[1])) for d in con.execute(literals).description] == [
        (d[0], str(d[1])) for d in duckdb.connect().execute(literals).description]
    codes = [d[1] for d in con.execute(query).description]
    assert codes[0] == graphdb.NUMBER and codes[1] == graphdb.NUMBER
    assert codes[2] == graphdb.STRING and codes[2] != graphdb.NUMBER
    assert codes[3] != graphdb.DATETIME and codes[0].arrow_type == pa.int64()


def test_version_is_the_packages(con):
    assert con.execute("SELECT version()").fetchone() == (graphdb.__version__,)


def test_functions_lists_every_function_with_a_description(con):
    rows = con.execute("SELECT name, kind, signature, description FROM functions()").fetchall()
    assert all(description for _, _, _, description in rows)
    kinds = {}
    for name, kind, _, _ in rows:
        kinds.setdefault(kind, set()).add(name)
    assert {"count", "sum", "avg", "min", "max", "median", "string_agg",
            "quantile_cont"} <= kinds["aggregate"]
    assert {"bfs", "pagerank", "settings", "functions", "buffer_stats"} <= kinds["table"]
    assert {"row_number", "rank", "lag"} <= kinds["window"]
    calls = {"lower": "'A'", "upper": "'a'", "length": "'ab'", "year": "DATE '2024-01-02'",
             "date_trunc": "'month', DATE '2024-01-02'", "substring": "'abc', 2, 1",
             "greatest": "1, 2", "round": "2.5", "log": "2, 8"}
    for name, args in calls.items():  # listed, and callable as listed
        assert name in kinds["scalar"], name
        con.execute(f"SELECT {name}({args})").fetchall()
    logs = con.execute("SELECT log10(1000), log2(8), ln(1)").fetchone()
    assert logs == pytest.approx((3.0, 3.0, 0.0))


def test_graph_methods_have_their_real_signatures(con):
    g = con.from_networkx("g", nx.path_graph(3, create_using=nx.DiGraph))
    assert str(inspect.signature(g.bfs)).startswith(
        "(source: 'int | str', max_depth: 'int' = None, *, sources: 'list | None' = None)")
    assert list(inspect.signature(g.pagerank).parameters) == ["damping", "max_iterations",
                                                              "tolerance"]
    assert "Parameters" in g.bfs.__doc__ and "max_depth" in g.bfs.__doc__
    assert g.bfs(0, max_depth=1).num_rows == 2 and g.bfs(source=0).num_rows == 3
    with pytest.raises(TypeError, match=r"bfs\(\): missing a required argument: 'source'"):
        g.bfs()


def test_sql_keywords_are_refused_as_graph_names(con):
    with pytest.raises(graphdb.CatalogError, match="'select' is an SQL keyword"):
        con.ingest("select", pa.table({"src": [1], "dst": [2]}))
    con.ingest("order_graph", pa.table({"src": [1], "dst": [2]}))
    con.ingest("match", pa.table({"src": [1], "dst": [2]}))  # a keyword that still works
    assert con.execute("SELECT count(*) FROM match.edges").fetchone() == (1,)


def test_infinities_in_json_are_null(con):
    from graphdb.formatting import render

    table = con.execute("SELECT * FROM (VALUES (1, 1.5)) t(a, b)").arrow()
    table = table.append_column("c", pa.array([math.inf]))
    import json

    assert json.loads(render(table, "json")) == [{"a": 1, "b": 1.5, "c": None}]


def test_a_value_python_cannot_hold_is_a_clear_error_not_a_traceback():
    with graphdb.connect() as con:
        query = "SELECT TIMESTAMP '44835-01-03 23:11:49' AS t"
        with pytest.raises(graphdb.DataError, match="'t'.*VARCHAR"):
            con.execute(query).fetchall()
        held = con.execute(query).arrow().column("t").cast("int64")[0].as_py()
        assert held == np.datetime64("44835-01-03T23:11:49", "us").astype(np.int64)
