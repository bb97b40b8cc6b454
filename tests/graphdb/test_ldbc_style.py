"""LDBC SNB-style questions (Interactive Complex 1, 2, 6, 7, 9, 13, 14 in spirit) over a property
graph made with CREATE TABLE / INSERT / CREATE PROPERTY GRAPH, as an SNB user writes them in
SQL/PGQ; each answer is compared with networkx (distances, shortest paths) or DuckDB joins over
the same rows."""

from __future__ import annotations

import datetime
import random

import duckdb
import networkx as nx
import pyarrow as pa
import pytest

import graphdb

N, KNOWS, MESSAGES, TAGS = 150, 420, 800, 12
DDL = ["CREATE TABLE person (id BIGINT PRIMARY KEY, first VARCHAR, city INTEGER)",
       "CREATE TABLE knows (src BIGINT REFERENCES person (id), dst BIGINT REFERENCES person (id), "
       "since DATE)",
       "CREATE TABLE tag (id BIGINT PRIMARY KEY, name VARCHAR)",
       "CREATE TABLE message (id BIGINT PRIMARY KEY, creator BIGINT REFERENCES person (id), "
       "created DATE)",
       "CREATE TABLE has_tag (msg BIGINT REFERENCES message (id), tag BIGINT REFERENCES tag (id))",
       "CREATE TABLE likes (person BIGINT REFERENCES person (id), "
       "msg BIGINT REFERENCES message (id))"]
GRAPH = """CREATE PROPERTY GRAPH snb
  VERTEX TABLES (person LABEL Person, message LABEL Message, tag LABEL Tag)
  EDGE TABLES (
    knows SOURCE KEY (src) REFERENCES person (id) DESTINATION KEY (dst) REFERENCES person (id)
      LABEL knows,
    message AS has_creator SOURCE KEY (id) REFERENCES message (id)
      DESTINATION KEY (creator) REFERENCES person (id) LABEL has_creator,
    has_tag SOURCE KEY (msg) REFERENCES message (id) DESTINATION KEY (tag) REFERENCES tag (id)
      LABEL has_tag,
    likes SOURCE KEY (person) REFERENCES person (id) DESTINATION KEY (msg)
      REFERENCES message (id) LABEL likes)"""


class Network:
    def __init__(self, seed: int):
        rng = random.Random(seed)
        day = datetime.date(2010, 1, 1)
        self.persons = [(i, rng.choice(["Ann", "Bob", "Cid", "Dee"]), rng.randrange(5))
                        for i in range(N)]
        pairs: set[tuple[int, int]] = set()
        while len(pairs) < KNOWS:
            a, b = rng.randrange(N), rng.randrange(N)
            if a != b and (b, a) not in pairs:
                pairs.add((a, b))
        self.knows = [(a, b, day + datetime.timedelta(days=rng.randrange(3000)))
                      for a, b in sorted(pairs)]
        self.tags = [(t, f"tag{t}") for t in range(TAGS)]
        self.messages = [(m, rng.randrange(N), day + datetime.timedelta(days=rng.randrange(2000)))
                         for m in range(MESSAGES)]
        self.has_tag = sorted({(m, rng.randrange(TAGS)) for m in range(MESSAGES)
                               for _ in range(rng.randrange(3))})
        self.likes = sorted({(rng.randrange(N), rng.randrange(MESSAGES)) for _ in range(1200)})
        self.graph = nx.Graph()
        self.graph.add_nodes_from(range(N))
        self.graph.add_edges_from((a, b) for a, b, _ in self.knows)

    def tables(self):
        return {"person": self.persons, "knows": self.knows, "tag": self.tags,
                "message": self.messages, "has_tag": self.has_tag, "likes": self.likes}

    def near(self, person: int, hops: int) -> set[int]:
        return {v for v, d in nx.single_source_shortest_path_length(
            self.graph, person, cutoff=hops).items() if d >= 1}


@pytest.fixture(scope="module")
def snb(tmp_path_factory):
    net = Network(7)
    con = graphdb.connect(tmp_path_factory.mktemp("snb") / "db")
    ref = duckdb.connect()
    for statement in DDL:
        con.execute(statement)
        ref.execute(statement)
    for table, rows in net.tables().items():
        con.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})", rows)
        columns = [d[0] for d in ref.execute(f"DESCRIBE {table}").fetchall()]
        data = pa.table({c: [row[i] for row in rows] for i, c in enumerate(columns)})
        ref.register("data", data)  # (DuckDB's executemany is slow)
        ref.execute(f"INSERT INTO {table} SELECT * FROM data")
        ref.unregister("data")
    con.execute(GRAPH)
    yield con, ref, net
    con.close()


PEOPLE = [0, 17, 123]


@pytest.mark.parametrize("person", PEOPLE)
def test_ic1_people_named_within_three_hops_with_distance(snb, person):
    con, _, net = snb
    ours = con.execute("""SELECT id, d FROM GRAPH_TABLE (snb
        MATCH p = ANY SHORTEST (a:Person WHERE a.id = ?)-[:knows]-{1,3}(f:Person WHERE f.first = 'Ann')
        COLUMNS (f.id AS id, path_length(p) AS d)) WHERE id <> ? ORDER BY d, id""",
                       [person, person]).fetchall()
    distance = nx.single_source_shortest_path_length(net.graph, person, cutoff=3)
    assert ours == sorted(((v, d) for v, d in distance.items()
                           if d >= 1 and net.persons[v][1] == "Ann"), key=lambda x: (x[1], x[0]))


@pytest.mark.parametrize("person", PEOPLE)
def test_ic2_recent_messages_of_friends(snb, person):
    con, ref, _ = snb
    ours = con.execute("""SELECT f, m, c FROM GRAPH_TABLE (snb
        MATCH (a:Person WHERE a.id = ?)-[:knows]-(f:Person)<-[:has_creator]-(m:Message)
        COLUMNS (f.id AS f, m.id AS m, m.created AS c))
        WHERE c <= DATE '2014-06-01' ORDER BY c DESC, m LIMIT 20""", [person]).fetchall()
    assert ours == ref.execute("""SELECT f, m.id, m.created FROM (
        SELECT dst AS f FROM knows WHERE src = $1 UNION SELECT src FROM knows WHERE dst = $1) fr
        JOIN message m ON m.creator = fr.f WHERE m.created <= DATE '2014-06-01'
        ORDER BY m.created DESC, m.id LIMIT 20""", [person]).fetchall()


@pytest.mark.parametrize("person", PEOPLE)
def test_ic9_messages_of_friends_and_their_friends(snb, person):
    con, _, net = snb
    ours = con.execute("""SELECT count(*), count(DISTINCT m) FROM (SELECT DISTINCT f, m FROM
        GRAPH_TABLE (snb MATCH (a:Person WHERE a.id = ?)-[:knows]-{1,2}(f:Person)
                                <-[:has_creator]-(m:Message)
                     WHERE f.id <> a.id COLUMNS (f.id AS f, m.id AS m)))""", [person]).fetchall()
    near = net.near(person, 2)
    written = [m for m, creator, _ in net.messages if creator in near]
    assert ours == [(len(written), len(set(written)))]


@pytest.mark.parametrize("person", PEOPLE)
def test_ic6_tags_beside_a_tag_on_messages_within_two_hops(snb, person):
    con, _, net = snb
    ours = con.execute("""SELECT t2, count(DISTINCT m) AS n FROM GRAPH_TABLE (snb
        MATCH (a:Person WHERE a.id = ?)-[:knows]-{1,2}(f:Person)<-[:has_creator]-(m:Message)
              -[:has_tag]->(t:Tag WHERE t.name = 'tag3'),
              (m)-[:has_tag]->(t2:Tag)
        WHERE f.id <> a.id AND t2.id <> t.id COLUMNS (t2.name AS t2, m.id AS m))
        GROUP BY t2 ORDER BY n DESC, t2 LIMIT 10""", [person]).fetchall()
    tagged: dict[int, set[int]] = {}
    for m, t in net.has_tag:
        tagged.setdefault(m, set()).add(t)
    near = net.near(person, 2)
    counts: dict[str, int] = {}
    for m, creator, _ in net.messages:
        if creator in near and 3 in tagged.get(m, ()):
            for t in tagged[m] - {3}:
                counts[f"tag{t}"] = counts.get(f"tag{t}", 0) + 1
    assert ours == sorted(counts.items(), key=lambda x: (-x[1], x[0]))[:10]


@pytest.mark.parametrize("person", PEOPLE)
def test_ic7_likers_who_are_not_friends(snb, person):
    con, _, net = snb
    ours = con.execute("""SELECT l, count(*) FROM GRAPH_TABLE (snb
        MATCH (l:Person)-[:likes]->(m:Message)-[:has_creator]->(a:Person WHERE a.id = ?)
        COLUMNS (l.id AS l, a.id AS a)) g
        WHERE NOT EXISTS (SELECT 1 FROM knows k WHERE (k.src = g.a AND k.dst = g.l)
                                                   OR (k.dst = g.a AND k.src = g.l))
        GROUP BY l ORDER BY 2 DESC, 1""", [person]).fetchall()
    friends = set(net.graph[person])
    counts: dict[int, int] = {}
    for liker, m in net.likes:
        if net.messages[m][1] == person and liker not in friends:
            counts[liker] = counts.get(liker, 0) + 1
    assert ours == sorted(counts.items(), key=lambda x: (-x[1], x[0]))


@pytest.mark.parametrize("person, other", [(0, 5), (17, 140), (123, 5)])
def test_ic13_and_ic14_shortest_path_length_and_count(snb, person, other):
    con, _, net = snb
    length = con.execute("""SELECT len FROM GRAPH_TABLE (snb
        MATCH p = ANY SHORTEST (a:Person WHERE a.id = ?)-[:knows]-*(b:Person WHERE b.id = ?)
        COLUMNS (path_length(p) AS len))""", [person, other]).fetchall()
    count = con.execute("""SELECT count(*) FROM GRAPH_TABLE (snb
        MATCH p = ALL SHORTEST (a:Person WHERE a.id = ?)-[:knows]-*(b:Person WHERE b.id = ?)
        COLUMNS (1 AS one))""", [person, other]).fetchall()
    try:
        expected = nx.shortest_path_length(net.graph, person, other)
        paths = len(list(nx.all_shortest_paths(net.graph, person, other)))
    except nx.NetworkXNoPath:
        assert length == [] and count == [(0,)]
        return
    assert length == [(expected,)] and count == [(paths,)]
