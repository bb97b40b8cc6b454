"""SQL/PGQ as its users write it: the school example (tables made with CREATE TABLE, a property
graph over them), each GRAPH_TABLE checked against the same question as joins of the tables in
DuckDB, an independent engine, or against the rows worked out by hand."""

from __future__ import annotations

import duckdb
import pytest

import graphdb
from tests.support import same_rows as same
from tests.support import with_reference

TABLES = """
CREATE TABLE Student(id BIGINT, name VARCHAR);
INSERT INTO Student VALUES (0, 'Daniel'), (1, 'Tavneet'), (2, 'Gabor'), (3, 'Peter'), (4, 'David');
CREATE TABLE know(src BIGINT, dst BIGINT, createDate BIGINT);
INSERT INTO know VALUES (0,1, 10), (0,2, 11), (0,3, 12), (3,0, 13), (1,2, 14), (1,3, 15),
                        (2,3, 16), (4,3, 17);
CREATE TABLE School(name VARCHAR, Id BIGINT, Kind VARCHAR);
INSERT INTO School VALUES ('VU', 0, 'University'), ('UVA', 1, 'University');
CREATE TABLE StudyAt(personId BIGINT, schoolId BIGINT);
INSERT INTO StudyAt VALUES (0, 0), (1, 0), (2, 1), (3, 1), (4, 1);
"""

GRAPH = """
CREATE PROPERTY GRAPH pg
VERTEX TABLES (
    Student PROPERTIES ( id, name ) LABEL Person,
    School LABEL SCHOOL
    )
EDGE TABLES (
    know    SOURCE KEY ( src ) REFERENCES Student ( id )
            DESTINATION KEY ( dst ) REFERENCES Student ( id )
            LABEL Knows,
    studyAt SOURCE KEY ( personId ) REFERENCES Student ( id )
            DESTINATION KEY ( SchoolId ) REFERENCES School ( id )
            LABEL StudyAt
    )
"""


@pytest.fixture(scope="module")
def both():
    with with_reference(None, TABLES, GRAPH) as pair:
        yield pair


def test_labels_and_directions(both):
    same(both, "SELECT study.name, study.school FROM GRAPH_TABLE (pg MATCH (a:Person)-[s:StudyAt]->"
               "(b:School) WHERE a.name = 'Daniel' COLUMNS (a.name as name, b.name as school)) "
               "study",
         "SELECT s.name, c.name FROM Student s JOIN StudyAt t ON t.personId = s.id "
         "JOIN School c ON c.Id = t.schoolId WHERE s.name = 'Daniel'")
    same(both, "SELECT * FROM GRAPH_TABLE (pg MATCH (a:PERSON)-[k:knows]->(b:person) "
               "COLUMNS (a.name as a_name, b.name as b_name))",
         "SELECT a.name, b.name FROM know k JOIN Student a ON a.id = k.src "
         "JOIN Student b ON b.id = k.dst")
    same(both, "SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)<-[k:Knows]-(b:Person) "
               "WHERE a.name = 'Peter' COLUMNS (a.name, b.name AS b))",
         "SELECT a.name, b.name FROM know k JOIN Student a ON a.id = k.dst "
         "JOIN Student b ON b.id = k.src WHERE a.name = 'Peter'")
    either = ("SELECT a.name, b.name FROM know k JOIN Student a ON a.id IN (k.src, k.dst) "
              "JOIN Student b ON b.id = CASE WHEN a.id = k.src THEN k.dst ELSE k.src END "
              "WHERE a.name = 'Peter'")
    same(both, "SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)-[k:Knows]-(b:Person) "
               "WHERE a.name = 'Peter' COLUMNS (a.name, b.name AS b))", either)
    # <-[]-> points left or right: any direction, as -[]- (SQL/PGQ)
    same(both, "SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)<-[k:Knows]->(b:Person) "
               "WHERE a.name = 'Peter' COLUMNS (a.name, b.name AS b))", either)
    same(both, "SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)<->(b:Person) "
               "WHERE a.name = 'Peter' COLUMNS (a.name, b.name AS b))", either)


def test_triangles_and_aggregates(both):
    rows = same(both, "SELECT a_name, b_name, c_name FROM GRAPH_TABLE (pg MATCH (a:Person)-"
                      "[k:Knows]->(b:Person)-[k2:Knows]->(c:Person)-[k3:Knows]->(a:Person) "
                      "COLUMNS (a.name as a_name, b.name as b_name, c.name as c_name))",
                "SELECT a.name, b.name, c.name FROM know x JOIN know y ON y.src = x.dst "
                "JOIN know z ON z.src = y.dst AND z.dst = x.src JOIN Student a ON a.id = x.src "
                "JOIN Student b ON b.id = x.dst JOIN Student c ON c.id = y.dst")
    assert len(rows) == 6  # as the example says: three triangles, each from its three corners
    con, _ = both
    assert con.execute("SELECT * FROM GRAPH_TABLE (pg MATCH (a:PERSON)-[k:knows]->(b:person) "
                       "COLUMNS (avg(a.id)))").fetchall() == [(1.375,)]


def test_all_properties_and_bare_variables(both):
    con, _ = both
    rows = con.execute("FROM GRAPH_TABLE (pg MATCH (a:PERSON)-[k:knows]->(b:person) "
                       "COLUMNS (a.*)) study ORDER BY study.id, study.name").fetchall()
    assert rows == [(0, "Daniel")] * 3 + [(1, "Tavneet")] * 2 + [
        (2, "Gabor"), (3, "Peter"), (4, "David")]
    rows = con.execute("FROM GRAPH_TABLE (pg MATCH (a:PERSON)-[k:knows]->(b:person) WHERE "
                       "k.createDate = 10 COLUMNS (a, k, b)) study").fetchall()
    assert rows == [({"id": 0, "name": "Daniel"}, {"src": 0, "dst": 1, "createDate": 10},
                     {"id": 1, "name": "Tavneet"})]
    names = con.execute("SELECT * FROM GRAPH_TABLE (pg MATCH (s:School) COLUMNS (s.*)) "
                        "LIMIT 0").description
    assert [d[0] for d in names] == ["name", "Id", "Kind"]


def test_element_id_optional_hops_and_several_patterns(both):
    con, ref = both
    ids = con.execute("SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)-[k:Knows]->(b) "
                      "COLUMNS (element_id(a) AS a, element_id(k) AS k, element_id(b) AS b))"
                      ).fetchall()
    assert len({k for _, k, _ in ids}) == 8  # one per edge
    vertices = {a for a, _, _ in ids} | {b for _, _, b in ids}
    assert not {k for _, k, _ in ids} & vertices
    schools = con.execute("SELECT * FROM GRAPH_TABLE (pg MATCH (s:School) COLUMNS "
                          "(element_id(s)))").fetchall()
    assert len(schools) == 2 and not {s for (s,) in schools} & vertices  # Person 0, School 0
    same(both, "SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)-[k:Knows]->?(b:Person) "
               "WHERE a.name = 'David' COLUMNS (a.name, b.name AS b))",
         "SELECT 'David', 'David' UNION ALL SELECT 'David', b.name FROM know k JOIN Student b "
         "ON b.id = k.dst WHERE k.src = 4")
    same(both, "SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)-[:StudyAt]->(s:School), "
               "(b:Person)-[:StudyAt]->(s) WHERE a.name = 'Daniel' AND a.id <> b.id "
               "COLUMNS (a.name AS a, b.name AS b, s.name AS school))",
         "SELECT a.name, b.name, c.name FROM StudyAt x JOIN StudyAt y ON y.schoolId = "
         "x.schoolId AND y.personId <> x.personId JOIN Student a ON a.id = x.personId "
         "JOIN Student b ON b.id = y.personId JOIN School c ON c.Id = x.schoolId "
         "WHERE a.name = 'Daniel'")
    same(both, "SELECT count(*) FROM GRAPH_TABLE (pg MATCH (a:Person)-[:Knows]->(b:Person), "
               "(a)-[:StudyAt]->(s:School), (b)-[:StudyAt]->(s))",
         "SELECT count(*) FROM know k JOIN StudyAt x ON x.personId = k.src "
         "JOIN StudyAt y ON y.personId = k.dst AND y.schoolId = x.schoolId")


def test_several_patterns_share_vertices_by_identity(both):
    con, _ = both
    # s is labelled in one pattern only; Person 0 and School 0 share a key, not an identity
    rows = con.execute("SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)-[:StudyAt]->(s:School), "
                       "(b:Person)-[:StudyAt]->(s) WHERE a.id = 0 AND b.id <> 0 "
                       "COLUMNS (b.*, s, element_id(s) AS e))").fetchall()
    assert rows == [(1, "Tavneet", {"name": "VU", "Id": 0, "Kind": "University"}, "SCHOOL:0")]


def test_labels_a_column_gives_rows(both):
    """DuckPGQ's ``LABEL l IN column (a, b)``: label i is given to the rows whose column has
    bit i set; the expected rows are worked out from the bits here."""
    con, _ = both
    kinds = {"a": 1, "b": 2, "c": 3, "d": 0}
    con.execute("CREATE TABLE Org (name VARCHAR, kind BIGINT)")
    con.execute("INSERT INTO Org VALUES " + ", ".join(f"('{n}', {k})" for n, k in kinds.items()))
    con.execute("CREATE TABLE Member (person BIGINT, org VARCHAR)")
    con.execute("INSERT INTO Member VALUES (0, 'a'), (1, 'b'), (2, 'c'), (3, 'd')")
    con.execute("CREATE PROPERTY GRAPH orgs VERTEX TABLES (Student, Org KEY (name) PROPERTIES "
                "ARE ALL COLUMNS EXCEPT (kind) LABEL Org IN kind (Company, Club)) EDGE TABLES ("
                "Member SOURCE KEY (person) REFERENCES Student (id) DESTINATION KEY (org) "
                "REFERENCES Org (name))")

    def names(sql):
        return sorted(r[0] for r in con.execute(sql).fetchall())

    every = sorted(kinds)
    assert names("SELECT * FROM GRAPH_TABLE (orgs MATCH (o:Org) COLUMNS (o.*))") == every
    for label, bit in (("Company", 1), ("club", 2)):
        assert names(f"FROM GRAPH_TABLE (orgs MATCH (o:{label}) COLUMNS (o.name))") == \
            [n for n, k in kinds.items() if k & bit]
    assert names("FROM GRAPH_TABLE (orgs MATCH (s:Student)-[:Member]->(o:Club) "
                 "COLUMNS (s.name))") == ["Gabor", "Tavneet"]
    assert names("FROM GRAPH_TABLE (orgs MATCH (o:Club|Student) COLUMNS (o.name))") == \
        sorted(["b", "c", "Daniel", "Tavneet", "Gabor", "Peter", "David"])
    con.execute("INSERT INTO Org VALUES ('e', 2)")  # the graph follows its table
    assert names("FROM GRAPH_TABLE (orgs MATCH (o:Club) COLUMNS (o.name))") == ["b", "c", "e"]
    con.execute("DROP PROPERTY GRAPH orgs")
    for twice in ("IN kind (Company, company)", "IN kind (Company) IN kind (Club)"):
        with pytest.raises(graphdb.ParseError):
            con.execute(f"CREATE PROPERTY GRAPH bad VERTEX TABLES (Org LABEL Org {twice})")
    # DuckPGQ's short form: the table's name is the label
    con.execute("CREATE PROPERTY GRAPH short VERTEX TABLES (Org IN kind (Company, Club))")
    assert names("FROM GRAPH_TABLE (short MATCH (o:Company) COLUMNS (o.name))") == ["a", "c"]
    assert names("FROM GRAPH_TABLE (short MATCH (o:Org) COLUMNS (o.name))") == \
        ["a", "b", "c", "d", "e"]


def test_describe_show_and_drop(both):
    con, _ = both
    shown = con.execute("SHOW PROPERTY GRAPHS").fetchall()
    assert shown[0][:3] == ("pg", "Person, SCHOOL", "Knows, StudyAt")
    assert "table Student" in dict(con.execute("DESCRIBE pg").fetchall())["vertex label Person"]
    con.execute("CREATE PROPERTY GRAPH gone VERTEX TABLES (Student)")
    con.execute("DROP PROPERTY GRAPH gone")
    with pytest.raises(graphdb.CatalogError):
        con.execute("DROP PROPERTY GRAPH gone")
    con.execute("DROP PROPERTY GRAPH IF EXISTS gone")


def test_duckpgq_dash_and_describe_property_graph(both):
    """DuckPGQ's scripts write '-' before the statements its parser takes."""
    same(both, "-FROM GRAPH_TABLE (pg MATCH (a:Person)-[k:Knows]->(b:Person) WHERE a.name = "
               "'Daniel' COLUMNS (b.name))",
         "SELECT b.name FROM know k JOIN Student a ON a.id = k.src JOIN Student b ON "
         "b.id = k.dst WHERE a.name = 'Daniel'")
    con, _ = both
    rows = con.execute("DESCRIBE PROPERTY GRAPH pg").fetchall()
    assert [d[0] for d in con.execute("DESCRIBE PROPERTY GRAPH pg").description] == [
        "property_graph", "table_name", "label", "is_vertex_table", "source_table", "source_pk",
        "source_fk", "destination_table", "destination_pk", "destination_fk", "discriminator",
        "sub_labels", "catalog", "schema"]
    # the tables of GRAPH above, spelled as the tables are (CREATE TABLE StudyAt (.. schoolId))
    assert rows == [
        ("pg", "Student", "Person", True) + (None,) * 9 + ("",),
        ("pg", "School", "SCHOOL", True) + (None,) * 9 + ("",),
        ("pg", "know", "Knows", False, "Student", ["id"], ["src"], "Student", ["id"], ["dst"],
         None, None, None, ""),
        ("pg", "StudyAt", "StudyAt", False, "Student", ["id"], ["personId"], "School", ["Id"],
         ["schoolId"], None, None, None, "")]
    with pytest.raises(graphdb.CatalogError):
        con.execute("DESCRIBE PROPERTY GRAPH nothing")


def test_anonymous_elements_with_is_labels(both):
    """``-[IS label]->`` and ``(IS label)``: an element with a label and no variable."""
    same(both, "SELECT * FROM GRAPH_TABLE (pg MATCH (a IS Person)-[IS Knows]->(IS Person)"
               "-[IS StudyAt]->(s IS SCHOOL) COLUMNS (a.name, s.name AS school))",
         "SELECT a.name, s.name FROM know k JOIN Student a ON a.id = k.src "
         "JOIN StudyAt t ON t.personId = k.dst JOIN School s ON s.id = t.schoolId")


def test_same_and_all_different(both):
    """SQL/PGQ's element predicates: SAME(x, y) (one element), ALL_DIFFERENT(x, y, ...)."""
    same(both, "SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)-[e:Knows]->(b:Person)-[f:Knows]->"
               "(c:Person) WHERE ALL_DIFFERENT(a, b, c) COLUMNS (a.id AS a, b.id AS b, c.id AS c))",
         "SELECT k1.src, k1.dst, k2.dst FROM know k1 JOIN know k2 ON k2.src = k1.dst "
         "WHERE k1.src <> k1.dst AND k2.dst <> k1.src AND k2.dst <> k1.dst")
    same(both, "SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)-[e:Knows]->(b:Person)-[f:Knows]->"
               "(c:Person) WHERE SAME(a, c) COLUMNS (a.id AS a, b.id AS b))",
         "SELECT k1.src, k1.dst FROM know k1 JOIN know k2 ON k2.src = k1.dst AND k2.dst = k1.src")
    # an edge walked back over the same edge: excluded by ALL_DIFFERENT on the edges
    same(both, "SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)-[e:Knows]-(b:Person)-[f:Knows]-"
               "(c:Person) WHERE ALL_DIFFERENT(e, f) COLUMNS (a.id AS a, c.id AS c))",
         "WITH u AS (SELECT rowid AS r, src AS x, dst AS y FROM know UNION ALL "
         "SELECT rowid, dst, src FROM know) "
         "SELECT u1.x, u2.y FROM u u1 JOIN u u2 ON u2.x = u1.y AND u2.r <> u1.r")


def test_element_id_of_a_path(both):
    """element_id(p): the path's vertices (their keys) and edges (their rows in the edge table)
    interleaved, checked against networkx's shortest paths (unique from David)."""
    import networkx as nx

    con, ref = both
    rows = ref.execute("SELECT rowid, src, dst FROM know").fetchall()
    g = nx.DiGraph()
    g.add_edges_from((s, d, {"row": r}) for r, s, d in rows)
    expected = []
    for target, path in nx.single_source_shortest_path(g, 4).items():
        if target == 4:
            continue
        elements = [path[0]]
        for u, v in zip(path, path[1:]):
            elements += [g.edges[u, v]["row"], v]
        expected.append((target, len(path) - 1, elements))
    got = con.execute("SELECT * FROM GRAPH_TABLE (pg MATCH p = ANY SHORTEST (a:Person)-[k:Knows]->"
                      "{1,3}(b:Person) WHERE a.id = 4 COLUMNS (b.id, path_length(p), "
                      "element_id(p)))").fetchall()
    assert sorted(got) == sorted(expected)


def test_no_columns_gives_every_property(both):
    """A GRAPH_TABLE without COLUMNS on a property graph: each named variable's properties."""
    same(both, "SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)-[k:Knows]->(b:Person))",
         "SELECT a.id, a.name, k.src, k.dst, k.createDate, b.id, b.name FROM know k "
         "JOIN Student a ON a.id = k.src JOIN Student b ON b.id = k.dst")


def test_import_database_of_duckdb_export(tmp_path):
    """IMPORT DATABASE runs the schema.sql and load.sql DuckDB's EXPORT DATABASE wrote."""
    ref = duckdb.connect()
    ref.execute(TABLES)
    ref.execute(f"EXPORT DATABASE '{tmp_path / 'export'}'")
    with graphdb.connect() as con:
        con.execute(f"IMPORT DATABASE '{tmp_path / 'export'}'")
        for table in ("Student", "know", "School", "StudyAt"):
            query = f"SELECT * FROM {table} ORDER BY ALL"
            assert con.execute(query).fetchall() == ref.execute(query).fetchall()
        con.execute(GRAPH)
        assert len(con.execute("SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)-[k:Knows]->"
                               "(b:Person) COLUMNS (a.id))").fetchall()) == 8


def test_element_id_lists_vertex_rows_not_keys():
    """A vertex in element_id(p) is its row in its table (DuckDB's rowid), whatever its key."""
    script = ("CREATE TABLE nodes (id INTEGER); CREATE TABLE edges (src INTEGER, dst INTEGER);"
              "INSERT INTO nodes VALUES (30), (10), (20);"
              "INSERT INTO edges VALUES (10, 20), (20, 30), (30, 10);")
    ref = duckdb.connect()
    ref.execute(script)
    rowid = dict(ref.execute("SELECT id, rowid FROM nodes").fetchall())
    edge_row = {(s, d): r for r, s, d in ref.execute("SELECT rowid, src, dst FROM edges").fetchall()}
    with graphdb.connect() as con:
        con.execute(script)
        con.execute("CREATE PROPERTY GRAPH t VERTEX TABLES (nodes LABEL N) EDGE TABLES (edges "
                    "SOURCE KEY (src) REFERENCES nodes (id) DESTINATION KEY (dst) REFERENCES "
                    "nodes (id) LABEL E)")
        got = con.execute("SELECT * FROM GRAPH_TABLE (t MATCH p = ANY SHORTEST (a:N)-[e:E]->+"
                          "(b:N) WHERE a.id = 10 COLUMNS (b.id, element_id(p)))").fetchall()
    walk = {20: [10, 20], 30: [10, 20, 30], 10: [10, 20, 30, 10]}
    expected = []
    for target, path in walk.items():
        elements = [rowid[path[0]]]
        for u, v in zip(path, path[1:]):
            elements += [edge_row[u, v], rowid[v]]
        expected.append((target, elements))
    assert sorted(got) == sorted(expected)


SHOP = """
CREATE TABLE customers (customer_id integer PRIMARY KEY, name varchar, address varchar);
CREATE TABLE orders (order_id integer PRIMARY KEY, ordered_when date);
CREATE TABLE wishlists (wishlist_id integer PRIMARY KEY, wishlist_name varchar);
CREATE TABLE customer_orders (customer_orders_id integer PRIMARY KEY,
    customer_id integer REFERENCES customers (customer_id),
    order_id integer REFERENCES orders (order_id));
CREATE PROPERTY GRAPH shop
    VERTEX TABLES (
        customers,
        orders DEFAULT LABEL LABEL lists PROPERTIES (order_id AS node_id),
        wishlists DEFAULT LABEL LABEL lists PROPERTIES (wishlist_id AS node_id)
    )
    EDGE TABLES (
        customer_orders KEY (customer_orders_id)
            SOURCE KEY (customer_id) REFERENCES customers (customer_id)
            DESTINATION KEY (order_id) REFERENCES orders (order_id)
            DEFAULT LABEL
            LABEL cust_lists PROPERTIES (customer_id, order_id AS link_id)
    );
INSERT INTO customers VALUES (1, 'customer1', 'US'), (2, 'customer2', 'CA'), (3, 'customer3', 'GL');
INSERT INTO orders VALUES (1, date '2024-01-01'), (2, date '2024-01-02'), (3, date '2024-01-03');
INSERT INTO wishlists VALUES (1, 'wishlist1'), (2, 'wishlist2');
INSERT INTO customer_orders VALUES (1, 1, 1), (2, 2, 2);
"""


def test_each_label_has_its_own_properties(tmp_path):
    """SQL/PGQ's per-label properties (the PostgreSQL regression tests' shop): DEFAULT LABEL
    without a clause has every column, LABEL lists its own; the element has their union, and
    a label's property reached through another label's table is there too. Rows by hand."""
    con = graphdb.connect(str(tmp_path / "db"))
    for statement in SHOP.split(";"):
        if statement.strip():
            con.execute(statement)
    rows = con.execute("SELECT * FROM GRAPH_TABLE (shop MATCH (o IS orders)<-[IS customer_orders]"
                       "-(c IS customers) COLUMNS (c.name, o.ordered_when, o.node_id)) "
                       "ORDER BY 1").fetchall()
    assert [(r[0], str(r[1]), r[2]) for r in rows] == [("customer1", "2024-01-01", 1),
                                                       ("customer2", "2024-01-02", 2)]
    rows = con.execute("SELECT * FROM GRAPH_TABLE (shop MATCH (l IS lists) COLUMNS (l.node_id, "
                       "l.wishlist_name)) ORDER BY 2 NULLS FIRST, 1").fetchall()
    assert rows == [(1, None), (2, None), (3, None), (1, "wishlist1"), (2, "wishlist2")]
    rows = con.execute("SELECT * FROM GRAPH_TABLE (shop MATCH (c)-[e IS cust_lists]->(o) "
                       "COLUMNS (e.link_id, e.customer_orders_id, c.address)) ORDER BY 1"
                       ).fetchall()
    assert rows == [(1, 1, "US"), (2, 2, "CA")]
    con.execute("CREATE PROPERTY GRAPH typed VERTEX TABLES (orders LABEL a PROPERTIES "
                "(order_id, 'order'::varchar(10) AS list_type))")  # an expression's property
    assert con.execute("SELECT * FROM GRAPH_TABLE (typed MATCH (o) COLUMNS (o.order_id, "
                       "o.list_type)) ORDER BY 1").fetchall() == [
        (1, "order"), (2, "order"), (3, "order")]
    with pytest.raises(graphdb.Error, match="two different columns"):
        con.execute("CREATE PROPERTY GRAPH bad VERTEX TABLES (orders LABEL a PROPERTIES "
                    "(order_id AS x) LABEL b PROPERTIES (ordered_when AS x))")


def test_a_self_loop_matches_an_any_direction_edge_once(tmp_path):
    """``-[e]-`` takes each edge either way; a self-loop read either way is one binding, not
    two (the PostgreSQL regression tests' looping edge). Checked against DuckDB over the same
    table: the edges out of the vertex, then those into it that are not loops."""
    con = graphdb.connect(str(tmp_path / "db"))
    con.execute("CREATE TABLE v (id INT PRIMARY KEY, p INT)")
    con.execute("CREATE TABLE e (id INT PRIMARY KEY, s INT REFERENCES v (id), "
                "d INT REFERENCES v (id), w INT)")
    vertices = [(1, 10), (2, 20), (3, 30)]
    edges = [(1, 1, 2, 5), (2, 2, 3, 6), (3, 3, 1, 7), (4, 3, 3, 8), (5, 2, 2, 9)]
    con.executemany("INSERT INTO v VALUES (?, ?)", vertices)
    con.executemany("INSERT INTO e VALUES (?, ?, ?, ?)", edges)
    con.execute("CREATE PROPERTY GRAPH g VERTEX TABLES (v) EDGE TABLES (e SOURCE KEY (s) "
                "REFERENCES v (id) DESTINATION KEY (d) REFERENCES v (id))")
    ref = duckdb.connect()
    ref.execute("CREATE TABLE e (id INT, s INT, d INT, w INT)")
    ref.executemany("INSERT INTO e VALUES (?, ?, ?, ?)", edges)
    either = ("SELECT s AS a, w, d AS b FROM e UNION ALL "
              "SELECT d AS a, w, s AS b FROM e WHERE s <> d")
    for where, condition in (("", ""), (" WHERE a.id = 3", " WHERE a = 3")):
        got = con.execute(f"SELECT * FROM GRAPH_TABLE (g MATCH (a)-[x]-(b){where} "
                          "COLUMNS (a.id AS a, x.w, b.id AS b)) ORDER BY 1, 2, 3").fetchall()
        want = ref.execute(f"SELECT * FROM ({either}){condition} ORDER BY 1, 2, 3").fetchall()
        assert got == want
    assert con.execute("SELECT * FROM GRAPH_TABLE (g MATCH (a)-[x]-(a) COLUMNS (a.id, x.w)) "
                       "ORDER BY 1").fetchall() == [(2, 9), (3, 8)]
    assert con.execute("SELECT count(*) FROM GRAPH_TABLE (g MATCH (a)-[]-(b) COLUMNS (a.id))"
                       ).fetchone()[0] == 2 * len(edges) - 2
    # a closing hop either way: a -> b, then b back to a by any edge (loops at a = b once)
    got = con.execute("SELECT * FROM GRAPH_TABLE (g MATCH (a)-[x]->(b)-[y]-(a) COLUMNS "
                      "(x.w AS x, y.w AS y)) ORDER BY 1, 2").fetchall()
    want = ref.execute(f"SELECT e.w, t.w FROM e JOIN ({either}) t ON t.a = e.d AND t.b = e.s "
                       "ORDER BY 1, 2").fetchall()
    assert got == want


def test_a_parenthesized_path_pattern_is_its_elements(both):
    """``((a)-[]->(b) WHERE ...)`` without a quantifier groups a path pattern (SQL/PGQ's
    parenthesized path pattern; PostgreSQL's tests write one): the same rows as the pattern
    unparenthesized with its WHERE on the whole."""
    con, _ = both
    plain = con.execute("SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)-[k:Knows]->(b:Person) "
                        "WHERE a.id < b.id COLUMNS (a.name AS a, b.name AS b)) ORDER BY 1, 2"
                        ).fetchall()
    assert plain and con.execute(
        "SELECT * FROM GRAPH_TABLE (pg MATCH ((a:Person)-[k:Knows]->(b:Person) WHERE a.id < b.id)"
        " COLUMNS (a.name AS a, b.name AS b)) ORDER BY 1, 2").fetchall() == plain
    two = con.execute("SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)-[:Knows]->(b:Person)"
                      "-[:Knows]->(c:Person) COLUMNS (a.id AS a, b.id AS b, c.id AS c)) "
                      "ORDER BY 1, 2, 3").fetchall()
    assert two and con.execute(
        "SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)-[:Knows]->((b:Person)-[:Knows]->"
        "(c:Person)) COLUMNS (a.id AS a, b.id AS b, c.id AS c)) ORDER BY 1, 2, 3").fetchall() == two


def test_tables_of_schemas_by_qualified_names(tmp_path):
    with graphdb.connect(tmp_path / "db") as con:
        con.execute("CREATE SCHEMA s1; CREATE SCHEMA s2")
        con.execute("CREATE TABLE s1.Person (id BIGINT PRIMARY KEY, name TEXT)")
        con.execute("INSERT INTO s1.Person VALUES (1, 'Alice'), (3, 'Cy')")
        con.execute("CREATE TABLE s2.Company (id BIGINT PRIMARY KEY, name TEXT)")
        con.execute("INSERT INTO s2.Company VALUES (2, 'Bob B.V.')")
        con.execute("CREATE TABLE s2.WorksAt (person_id BIGINT, company_id BIGINT)")
        con.execute("INSERT INTO s2.WorksAt VALUES (1, 2), (3, 2)")
        con.execute("CREATE PROPERTY GRAPH g VERTEX TABLES (s1.Person, s2.Company) EDGE TABLES ("
                    "s2.WorksAt SOURCE KEY (person_id) REFERENCES s1.Person (id) "
                    "DESTINATION KEY (company_id) REFERENCES s2.Company (id) LABEL works_at)")
        rows = con.execute("FROM GRAPH_TABLE (g MATCH (a:Person)-[:works_at]->(c:Company) "
                           "COLUMNS (a.name AS a, c.name AS c)) ORDER BY a").fetchall()
        assert rows == [("Alice", "Bob B.V."), ("Cy", "Bob B.V.")]
        with pytest.raises(graphdb.Error):
            con.execute("CREATE PROPERTY GRAPH bad VERTEX TABLES (s1.Person) EDGE TABLES ("
                        "s2.WorksAt SOURCE KEY (person_id) REFERENCES s3.Person (id) "
                        "DESTINATION KEY (company_id) REFERENCES s1.Person (id))")


def test_bare_property_names_in_columns_and_where(both):
    """A name that one variable has a property of needs no qualifier (DuckPGQ's reading);
    one that several have is refused as ambiguous. Checked against the joins in DuckDB."""
    con, _ = both
    same(both, "SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)-[k:Knows]->(b:Person) "
               "WHERE createDate > 11 COLUMNS (createDate, a.name AS a, b.name AS b))",
         "SELECT k.createDate, a.name, b.name FROM know k JOIN Student a ON a.id = k.src "
         "JOIN Student b ON b.id = k.dst WHERE k.createDate > 11")
    rows = con.execute("SELECT * FROM GRAPH_TABLE (pg MATCH (s:SCHOOL WHERE Kind = 'University')"
                       " COLUMNS (upper(name), Id))").fetchall()
    assert sorted(rows) == [("UVA", 1), ("VU", 0)]
    with pytest.raises(graphdb.BinderError, match="qualify"):
        con.execute("SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)-[k:Knows]->(b:Person) "
                    "COLUMNS (name))")


def test_default_columns_leave_out_a_quantified_edge(both):
    """Without COLUMNS, a quantified edge (a list of edges) adds no columns; the vertices'
    properties are the rows of zero or one step, checked against DuckDB."""
    same(both, "FROM GRAPH_TABLE (pg MATCH ANY SHORTEST (a:Person)<-[k:Knows]-?(b:Person))",
         "SELECT id, name, id, name FROM Student UNION ALL SELECT a.id, a.name, b.id, b.name "
         "FROM know k JOIN Student a ON a.id = k.dst JOIN Student b ON b.id = k.src")


def test_a_graph_table_without_alias_is_named_as_any_subquery(both):
    """DuckDB names subqueries without an alias unnamed_subquery, unnamed_subquery2, ...; a
    GRAPH_TABLE is one of them, as in DuckPGQ."""
    con, _ = both
    rows = con.execute("SELECT unnamed_subquery.id, unnamed_subquery2.id FROM GRAPH_TABLE (pg "
                       "MATCH (a:Person) COLUMNS (a.id)), (SELECT 7 AS id) ORDER BY 1").fetchall()
    assert rows == [(i, 7) for i in range(5)]
    same(both, "SELECT unnamed_subquery.id, unnamed_subquery2.n FROM GRAPH_TABLE (pg MATCH "
               "(a:Person) COLUMNS (a.id)), GRAPH_TABLE (pg MATCH (b:Person) WHERE b.id < 2 "
               "COLUMNS (upper(b.name) AS n))",
         "SELECT a.id, upper(b.name) FROM Student a, Student b WHERE b.id < 2")


def test_insert_from_a_graph_table_in_parentheses(tmp_path):
    """DuckDB's ``INSERT INTO t (FROM ...)``: a query in parentheses, not a column list."""
    with graphdb.connect(tmp_path / "db") as con:
        con.execute(TABLES)
        con.execute(GRAPH)
        con.execute("CREATE TABLE result (name VARCHAR)")
        con.execute("INSERT INTO result (FROM GRAPH_TABLE (pg MATCH (a IS Person WHERE a.id = 3)"
                    " COLUMNS (a.name)) tmp)")
        con.execute("INSERT INTO result (name) (FROM Student SELECT name WHERE id < 2)")
        assert sorted(con.execute("FROM result").fetchall()) == [
            ("Daniel",), ("Peter",), ("Tavneet",)]


@pytest.mark.parametrize("wrong, error", [
    ("MATCH ANY SHORTEST (a:Person)< -*(b:Person) COLUMNS (b.id)", graphdb.ParseError),
    ("MATCH (a:Person)< -[k:Knows]-(b:Person) COLUMNS (b.id)", graphdb.ParseError),
    ("MATCH (a:Person) COLUMNS (main.a.id)", graphdb.BinderError),
    ("MATCH (a:Person)-[k:StudyAt]->(b:SCHOOL) COLUMNS (src)", graphdb.BinderError),
])
def test_pattern_mistakes_are_refused(both, wrong, error):
    """'<-' is one symbol (as '->' is); a property is named by its variable alone; a bare
    name reaches the labels' properties, not the extras every edge has (src, dst): StudyAt's
    are personId and schoolId."""
    con, _ = both
    with pytest.raises(error):
        con.execute(f"SELECT * FROM GRAPH_TABLE (pg {wrong})")
    import networkx as nx

    knows = nx.DiGraph(con.execute("SELECT src, dst FROM know").fetchall())
    reached = sum(len(nx.descendants(knows, v)) + 1 for v in knows)  # (b, a): b reaches a
    assert con.execute("SELECT count(*) FROM GRAPH_TABLE (pg MATCH ANY SHORTEST (a:Person)<-*"
                       "(b:Person) COLUMNS (b.id))").fetchall() == [(reached,)]


def test_a_label_from_a_column_must_not_be_another_tables(both):
    con, _ = both
    with pytest.raises(graphdb.ParseError, match="unique"):
        con.execute("CREATE PROPERTY GRAPH clash VERTEX TABLES (School LABEL School IN Id "
                    "(Hogeschool, University), Student LABEL hogeschool)")


def test_columns_star_gives_every_variables_properties(both):
    """DuckPGQ's ``COLUMNS (*)``: each named vertex's properties, then each named edge's; a
    property name an earlier variable took gets _1, as DuckDB names a subquery's columns."""
    con, _ = both
    result = con.execute("SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)-[k:Knows]->(b:Person) "
                         "COLUMNS (*)) ORDER BY 1, 3")
    assert [d[0] for d in result.description] == ["id", "name", "id_1", "name_1", "src", "dst",
                                                  "createDate"]
    same(both, "SELECT * FROM GRAPH_TABLE (pg MATCH (a:Person)-[k:Knows]->(b:Person) "
               "COLUMNS (*))",
         "SELECT a.id, a.name, b.id, b.name, k.src, k.dst, k.createDate FROM know k "
         "JOIN Student a ON a.id = k.src JOIN Student b ON b.id = k.dst")
