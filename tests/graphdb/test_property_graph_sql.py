"""Property graphs: labelled vertex and edge tables, against the tables themselves.

A random social graph of persons (integer keys), companies (string keys) and posts (integer keys
that overlap the persons'), with knows, works_at and likes edges, is made a property graph from
SQL, Python and the command line; then every label's table, patterns with labels and label
expressions (checked against DuckDB joins of the input tables, an independent engine) and graph
functions over chosen labels (checked against networkx on the edges of those labels) must agree
with the input.
"""

from __future__ import annotations

import random
import subprocess
import sys

import networkx as nx
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

import graphdb
from tests.executor.test_properties import Case, pagerank_reference


def tables(seed: int) -> dict[str, pa.Table]:
    rng = random.Random(seed)
    persons = rng.sample(range(1, 60), rng.randint(4, 14))
    companies = [f"c{i}" for i in rng.sample(range(30), rng.randint(1, 4))]
    posts = rng.sample(range(1, 60), rng.randint(1, 10))
    knows = [(rng.choice(persons), rng.choice(persons)) for _ in range(rng.randint(0, 30))]
    work = [(p, rng.choice(companies)) for p in persons if rng.random() < 0.7]
    likes = [(rng.choice(persons), rng.choice(posts)) for _ in range(rng.randint(0, 15))]
    return {
        "persons": pa.table({"id": persons, "age": [rng.randint(18, 70) for _ in persons],
                             "name": [f"p{p}" for p in persons]}),
        "companies": pa.table({"name": companies, "size": [rng.randint(1, 9) for _ in companies]}),
        "posts": pa.table({"id": posts, "text": [f"t{p}" for p in posts]}),
        "knows": pa.table({"p1": [a for a, _ in knows], "p2": [b for _, b in knows],
                           "since": [rng.randint(2000, 2020) for _ in knows]}),
        "work_at": pa.table({"person": pa.array([p for p, _ in work], pa.int64()),
                             "company": pa.array([c for _, c in work], pa.string())}),
        "likes": pa.table({"person": [p for p, _ in likes], "post": [q for _, q in likes]}),
    }


CREATE = """CREATE OR REPLACE PROPERTY GRAPH social
  VERTEX TABLES (persons KEY (id) LABEL Person, companies KEY (name) LABEL Company,
                 posts LABEL Post)
  EDGE TABLES (
    knows SOURCE KEY (p1) REFERENCES persons (id) DESTINATION KEY (p2) REFERENCES persons (id),
    work_at SOURCE KEY (person) REFERENCES persons DESTINATION KEY (company)
            REFERENCES companies LABEL works_at,
    likes SOURCE KEY (person) REFERENCES persons DESTINATION KEY (post) REFERENCES posts)"""


@pytest.fixture(scope="module")
def con():
    with graphdb.connect() as c:
        yield c


def load(con, seed: int) -> tuple[dict, object]:
    data = tables(seed)
    for name, table in data.items():
        con.register(name, table)
    con.execute(CREATE)
    duck = __import__("duckdb").connect()
    for name, table in data.items():
        duck.register(name, table)
    return data, duck


# 3 random graphs in the default run, all 6 in the slow tier (-m slow)
SEEDS = [*range(3), *(pytest.param(s, marks=pytest.mark.slow) for s in range(3, 6))]


@pytest.mark.parametrize("seed", SEEDS)
def test_each_label_is_its_table(con, seed):
    data, _ = load(con, seed)
    assert sorted(con.execute("SELECT * FROM social.Person").fetchall()) == \
        sorted(data["persons"].to_pylist() and [tuple(r.values()) for r in
                                                 data["persons"].to_pylist()])
    assert sorted(con.execute("SELECT * FROM social.works_at").fetchall()) == \
        sorted(tuple(r.values()) for r in data["work_at"].to_pylist())
    assert sorted(con.execute("SELECT * FROM social.knows").fetchall()) == \
        sorted(tuple(r.values()) for r in data["knows"].to_pylist())
    # the whole graph's ids are 'Label:key'; its vertices one row each
    ids = sorted(r[0] for r in con.execute("SELECT id FROM social.vertices").fetchall())
    expected = sorted([f"Person:{p}" for p in data["persons"]["id"].to_pylist()]
                      + [f"Company:{c}" for c in data["companies"]["name"].to_pylist()]
                      + [f"Post:{p}" for p in data["posts"]["id"].to_pylist()])
    assert ids == expected


PATTERNS = [
    ("MATCH (a:Person)-[k:knows]->(b:Person) WHERE a.age > 40 COLUMNS (a.id AS a, b.id AS b, "
     "k.since AS s)",
     "SELECT k.p1, k.p2, k.since FROM knows k JOIN persons a ON a.id = k.p1 WHERE a.age > 40"),
    ("MATCH (p:Person)-[:works_at]->(c:Company) COLUMNS (p.name AS p, c.name AS c, c.size AS n)",
     "SELECT p.name, c.name, c.size FROM work_at w JOIN persons p ON p.id = w.person "
     "JOIN companies c ON c.name = w.company"),
    ("MATCH (a:Person)-[e]->(x:Post|Company) COLUMNS (a.id AS a, e.label AS l)",
     "SELECT person, 'likes' FROM likes UNION ALL SELECT person, 'works_at' FROM work_at"),
    ("MATCH (a:Person)-[:knows]->(b)-[:likes]->(c:!Person) COLUMNS (a.id AS a, c.id AS c)",
     "SELECT k.p1, l.post FROM knows k JOIN likes l ON l.person = k.p2"),
    ("MATCH (a:Person WHERE a.id < 30)-[:knows]->{1,2}(b:Person) COLUMNS (a.id AS a, b.id AS b)",
     "SELECT p1, p2 FROM knows WHERE p1 < 30 UNION ALL SELECT x.p1, y.p2 FROM knows x "
     "JOIN knows y ON x.p2 = y.p1 WHERE x.p1 < 30"),
    ("MATCH (a:Person)<-[:likes]-(b) WHERE b.age < 30 COLUMNS (a.id AS a, b.id AS b)",
     "SELECT p1, p2 FROM knows WHERE FALSE"),  # persons are never liked
    # start vertices looked up by their label's key (integers, strings, lists, absent keys)
    ("MATCH (a:Person WHERE a.id = 7)-[k:knows]->(b:Person) COLUMNS (b.id AS b, k.since AS s)",
     "SELECT p2, since FROM knows WHERE p1 = 7"),
    ("MATCH (a:Person WHERE a.id IN (3, 7, 11, 1000))-[:knows]->(b) COLUMNS (a.id AS a, b.id AS b)",
     "SELECT p1, p2 FROM knows WHERE p1 IN (3, 7, 11, 1000)"),
    ("MATCH (c:Company WHERE c.name = 'c3')<-[:works_at]-(p:Person) COLUMNS (p.id AS p)",
     "SELECT person FROM work_at WHERE company = 'c3'"),
    ("MATCH (a:Person)-[:works_at]->(c:Company WHERE c.name IN ('c1', 'c2', 'nope')) "
     "COLUMNS (a.id AS a, c.name AS c)",
     "SELECT person, company FROM work_at WHERE company IN ('c1', 'c2', 'nope')"),
    ("MATCH (a:Person WHERE a.id = 5) COLUMNS (a.age AS age, a.name AS n)",
     "SELECT age, name FROM persons WHERE id = 5"),
]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("pattern,join", PATTERNS)
def test_patterns_with_labels_equal_joins_of_the_tables(con, seed, pattern, join):
    _, duck = load(con, seed)
    ours = con.execute(f"SELECT * FROM GRAPH_TABLE (social {pattern})").fetchall()
    assert sorted(ours) == sorted(duck.execute(join).fetchall())


@pytest.mark.parametrize("seed", SEEDS)
def test_graph_functions_over_chosen_labels_match_networkx(con, seed):
    data, _ = load(con, seed)
    persons = sorted(data["persons"]["id"].to_pylist())
    dense = {p: i for i, p in enumerate(persons)}
    knows = [(dense[a], dense[b], 1.0) for a, b in zip(data["knows"]["p1"].to_pylist(),
                                                      data["knows"]["p2"].to_pylist())]
    case = Case(len(persons), knows, True, False)
    got = dict(con.execute("SELECT vertex, rank FROM pagerank(GRAPH social LABELS (Person, "
                           "knows), max_iterations => 6, tolerance => 0)").fetchall())
    expected = pagerank_reference(case, 0.85, 6)
    assert [got[p] for p in persons] == pytest.approx(expected)
    source = persons[0]
    assert dict(con.execute(f"SELECT vertex, depth FROM bfs(GRAPH social LABELS (knows), "
                            f"{source})").fetchall()) == {
        persons[v]: d for v, d in nx.single_source_shortest_path_length(case.nx, 0).items()}
    # companies and the persons working there: components keyed 'Label:key'
    g = nx.Graph()
    g.add_nodes_from([f"Person:{p}" for p in persons] + [
        f"Company:{c}" for c in data["companies"]["name"].to_pylist()])
    g.add_edges_from((f"Person:{p}", f"Company:{c}") for p, c in zip(
        data["work_at"]["person"].to_pylist(), data["work_at"]["company"].to_pylist()))
    got = con.execute("SELECT vertex, component FROM wcc(GRAPH social LABELS (works_at))"
                      ).fetchall()
    parts = {v: frozenset(part) for part in nx.connected_components(g) for v in part}
    assert {v for v, _ in got} == set(g)
    by_component = {}
    for v, c in got:
        by_component.setdefault(c, set()).add(v)
    assert all(frozenset(members) == parts[next(iter(members))]
               for members in by_component.values())
    # a vertex condition on top of the labels: the persons over 30 and their knows edges
    old = [p for p, age in zip(data["persons"]["id"].to_pylist(),
                               data["persons"]["age"].to_pylist()) if age > 30]
    got = dict(con.execute("SELECT vertex, coefficient FROM lcc(GRAPH social LABELS (knows) "
                           "WHERE v.age > 30)").fetchall())
    assert set(got) == set(old)
    if old:
        got = dict(con.execute(f"SELECT * FROM degree(GRAPH social LABELS (Person) WHERE v.age > "
                               f"30, vertices => [{old[0]}])").fetchall())
        assert got == {old[0]: sum(1 for a, b in zip(data["knows"]["p1"].to_pylist(),
                                                      data["knows"]["p2"].to_pylist())
                                   if a == old[0] and b in old)}


def test_python_and_command_line_make_the_same_graph(con, tmp_path):
    data, _ = load(con, 3)
    want = con.execute("SELECT * FROM social.vertices ORDER BY id").fetchall()
    with graphdb.connect() as other:
        other.create_property_graph(
            "social", {"Person": data["persons"], "Company": data["companies"],
                       "Post": data["posts"]},
            {"knows": (data["knows"], "Person", "Person"),
             "works_at": (data["work_at"], "Person", "Company"),
             "likes": (data["likes"], "Person", "Post")}, keys={"Company": "name"})
        assert other.execute("SELECT * FROM social.vertices ORDER BY id").fetchall() == want
    for name, table in data.items():
        pacsv.write_csv(table, tmp_path / f"{name}.csv")
    db = tmp_path / "db"
    subprocess.run([sys.executable, "-m", "graphdb", "ingest", str(db), "social",
                    "--vertex-table", f"Person={tmp_path / 'persons.csv'}",
                    "--vertex-table", f"Company={tmp_path / 'companies.csv'}:name",
                    "--vertex-table", f"Post={tmp_path / 'posts.csv'}",
                    "--edge-table", f"knows={tmp_path / 'knows.csv'}:Person->Person",
                    "--edge-table", f"works_at={tmp_path / 'work_at.csv'}:Person->Company",
                    "--edge-table", f"likes={tmp_path / 'likes.csv'}:Person->Post", "--quiet"],
                   check=True)
    with graphdb.connect(db) as cli:
        assert cli.execute("SELECT * FROM social.vertices ORDER BY id").fetchall() == want


def test_explain_analyze_of_paths_and_label_properties(con):
    # a path's length and a label's stored column are typed for the plan above the pattern
    # (it raised KeyError: no column 'length'); EXPLAIN names the labels and the path mode
    data, duck = load(con, 4)
    query = ("SELECT b, min(n) FROM GRAPH_TABLE (social MATCH p = ANY SHORTEST (a:Person)"
             "-[:knows]->{1,3}(x:Person) COLUMNS (x.id AS b, path_length(p) AS n, x.age AS age))"
             " GROUP BY b")
    text = "\n".join(r[0] for r in con.execute("EXPLAIN ANALYZE " + query).fetchall())
    assert "ANY SHORTEST (a:Person)-[:knows]->{1,3}(x:Person)" in text
    assert "at most 1 shortest walk per pair of endpoints" in text
    targets = duck.execute("SELECT DISTINCT p2 FROM knows").fetchall()
    assert sorted(b for b, _ in con.execute(query).fetchall()) == sorted(
        t for (t,) in targets)


def test_describe_shows_the_labels(con):
    load(con, 1)
    rows = dict(con.execute("DESCRIBE social").fetchall())
    assert rows["vertex label Person"].startswith("table persons, key id (int64)")
    assert "Person (person) -> Company (company)" in rows["edge label works_at"]
    assert rows["property_graph"] == "3 vertex labels, 3 edge labels"


def test_property_graph_errors(con):
    load(con, 2)
    for sql, message in (
            ("SELECT * FROM GRAPH_TABLE (social MATCH (a:Persn) COLUMNS (a.id))",
             "did you mean 'Person'"),
            ("SELECT * FROM GRAPH_TABLE (social MATCH (a:Person) COLUMNS (a.text))",
             "has no column 'text'"),
            ("SELECT * FROM bfs(GRAPH social LABELS (knowz), 1)", "did you mean 'knows'"),
            ("SELECT * FROM bfs(GRAPH social LABELS (knows), 'Person:1')",
             "not a vertex of graph 'social'"),
            ("SELECT * FROM bfs(social, 'Person:0')", "not a vertex of graph 'social'"),
    ):
        with pytest.raises(graphdb.ProgrammingError, match=message):
            con.execute(sql)
    con.register("dupes", pa.table({"id": [1, 1]}))
    with pytest.raises(graphdb.Error, match="not unique"):
        con.execute("CREATE PROPERTY GRAPH bad VERTEX TABLES (dupes)")
    con.register("dangling", pa.table({"a": [1], "b": [2]}))
    con.register("one", pa.table({"id": [1]}))
    with pytest.raises(graphdb.Error, match="no key of vertex table one"):
        con.execute("CREATE PROPERTY GRAPH bad VERTEX TABLES (one) EDGE TABLES (dangling "
                    "SOURCE KEY (a) REFERENCES one DESTINATION KEY (b) REFERENCES one)")


def test_a_start_vertex_given_by_its_key_is_looked_up_not_queried(con):
    load(con, 0)
    plan = con.plan("SELECT * FROM GRAPH_TABLE (social MATCH (a:Person WHERE a.id = ?)-[:knows]->"
                    "(b) COLUMNS (b.id AS b))", [7])
    pattern = next(n for n in plan.walk() if type(n).__name__ == "PatternOperator")
    assert pattern.logical.start_label == "Person" and pattern.logical.start_ids == (7,)
    # a value of another type than the key's is the query's to compare
    plan = con.plan("SELECT * FROM GRAPH_TABLE (social MATCH (a:Person WHERE a.id = '7')-"
                    "[:knows]->(b) COLUMNS (b.id AS b))")
    pattern = next(n for n in plan.walk() if type(n).__name__ == "PatternOperator")
    assert pattern.logical.start_label is None
