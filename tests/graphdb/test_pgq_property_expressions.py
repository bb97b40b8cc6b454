"""Properties that are expressions over their row (``PROPERTIES (eprop1 * 10 AS lprop2)``), on
PostgreSQL's SQL/PGQ example shop: the graph is made over empty tables and its rows come later,
so every expression is worked out by the writes. Each answer is checked against DuckDB running
the same question as joins of the same tables."""

from __future__ import annotations

import duckdb
import pytest

import graphdb
from graphdb.errors import Error

TABLES = """
CREATE TABLE products (product_no integer PRIMARY KEY, name varchar, price numeric(10, 2));
CREATE TABLE customers (customer_id integer PRIMARY KEY, name varchar, address varchar);
CREATE TABLE orders (order_id integer PRIMARY KEY, ordered_when date);
CREATE TABLE order_items (order_items_id integer PRIMARY KEY, order_id integer, product_no integer,
                          quantity integer);
CREATE TABLE customer_orders (customer_orders_id integer PRIMARY KEY, customer_id integer,
                              order_id integer);
CREATE TABLE wishlists (wishlist_id integer PRIMARY KEY, wishlist_name varchar);
CREATE TABLE wishlist_items (wishlist_items_id integer PRIMARY KEY, wishlist_id integer,
                             product_no integer);
CREATE TABLE customer_wishlists (customer_wishlist_id integer PRIMARY KEY, customer_id integer,
                                 wishlist_id integer);
"""

GRAPH = """
CREATE PROPERTY GRAPH myshop
    VERTEX TABLES (
        products LABEL products PROPERTIES (product_no, name, price * 2 AS double_price),
        customers,
        orders DEFAULT LABEL
           LABEL lists PROPERTIES (order_id AS node_id, 'order'::varchar(10) AS list_type),
        wishlists DEFAULT LABEL
           LABEL lists PROPERTIES (wishlist_id AS node_id, 'wishlist'::varchar(10) AS list_type)
    )
    EDGE TABLES (
        order_items KEY (order_items_id)
            SOURCE KEY (order_id) REFERENCES orders (order_id)
            DESTINATION KEY (product_no) REFERENCES products (product_no)
            DEFAULT LABEL
            LABEL list_items PROPERTIES (order_id AS link_id, product_no,
                                         quantity * 10 + order_id AS weight),
        wishlist_items KEY (wishlist_items_id)
            SOURCE KEY (wishlist_id) REFERENCES wishlists (wishlist_id)
            DESTINATION KEY (product_no) REFERENCES products (product_no)
            DEFAULT LABEL
            LABEL list_items PROPERTIES (wishlist_id AS link_id, product_no),
        customer_orders KEY (customer_orders_id)
            SOURCE KEY (customer_id) REFERENCES customers (customer_id)
            DESTINATION KEY (order_id) REFERENCES orders (order_id)
            DEFAULT LABEL LABEL cust_lists PROPERTIES (customer_id, order_id AS link_id),
        customer_wishlists KEY (customer_wishlist_id)
            SOURCE KEY (customer_id) REFERENCES customers (customer_id)
            DESTINATION KEY (wishlist_id) REFERENCES wishlists (wishlist_id)
            DEFAULT LABEL LABEL cust_lists PROPERTIES (customer_id, wishlist_id AS link_id)
    )
"""

ROWS = """
INSERT INTO products VALUES (1, 'product1', 10), (2, 'product2', 20), (3, 'product3', 30);
INSERT INTO customers VALUES (1, 'customer1', 'US'), (2, 'customer2', 'CA'), (3, 'customer3', 'GL');
INSERT INTO orders VALUES (1, date '2024-01-01'), (2, date '2024-01-02'), (3, date '2024-01-03');
INSERT INTO wishlists VALUES (1, 'wishlist1'), (2, 'wishlist2'), (3, 'wishlist3');
INSERT INTO order_items VALUES (1, 1, 1, 5), (2, 1, 2, 10), (3, 2, 1, 7);
INSERT INTO customer_orders VALUES (1, 1, 1), (2, 2, 2);
INSERT INTO customer_wishlists VALUES (1, 2, 3), (2, 3, 1), (3, 3, 2);
INSERT INTO wishlist_items VALUES (1, 1, 2), (2, 1, 3), (3, 2, 1), (4, 3, 1);
"""

#: The lists of the shop as joins: (customer, product, list type) of orders and wishlists.
LISTS = """
SELECT c.name, p.name, 'order' FROM customers c JOIN customer_orders co USING (customer_id)
  JOIN order_items oi USING (order_id) JOIN products p USING (product_no)
UNION ALL
SELECT c.name, p.name, 'wishlist' FROM customers c JOIN customer_wishlists cw USING (customer_id)
  JOIN wishlist_items wi USING (wishlist_id) JOIN products p USING (product_no)
"""


@pytest.fixture()
def shop(tmp_path):
    with graphdb.connect(tmp_path / "db") as con:
        con.execute(TABLES)
        con.execute(GRAPH)  # over empty tables: the rows (and expressions) come with writes
        con.execute(ROWS)
        ref = duckdb.connect()
        ref.execute(TABLES)
        ref.execute(ROWS)
        yield con, ref


def _rows(con, sql: str) -> list:
    return sorted(con.execute(sql).fetchall(), key=repr)


def test_expressions_of_rows_written_after_the_graph(shop):
    con, ref = shop
    mine = _rows(con, "SELECT * FROM GRAPH_TABLE (myshop MATCH (c IS customers)-[IS cust_lists]->"
                      "(l IS lists)-[IS list_items]->(p IS products) COLUMNS (c.name AS c, "
                      "p.name AS p, l.list_type))")
    assert mine == _rows(ref, LISTS)
    assert len(mine) == 7  # PostgreSQL's expected output of the same query has 7 rows
    assert _rows(con, "SELECT * FROM GRAPH_TABLE (myshop MATCH (p IS products) COLUMNS "
                      "(p.product_no, p.double_price))") == \
        _rows(ref, "SELECT product_no, price * 2 FROM products")
    assert _rows(con, "SELECT * FROM GRAPH_TABLE (myshop MATCH (o)-[i IS order_items]->(p) "
                      "WHERE i.weight > 60 COLUMNS (i.link_id, i.product_no, i.weight))") == \
        _rows(ref, "SELECT order_id, product_no, quantity * 10 + order_id FROM order_items "
                   "WHERE quantity * 10 + order_id > 60")


def test_an_update_works_the_expression_out_again(shop):
    con, ref = shop
    for sql in ("UPDATE products SET price = price + 1 WHERE product_no <> 2",
                "UPDATE order_items SET quantity = 1 WHERE order_items_id = 3",
                "INSERT INTO order_items VALUES (4, 3, 3, 2)"):
        con.execute(sql)
        ref.execute(sql)
    assert _rows(con, "SELECT * FROM GRAPH_TABLE (myshop MATCH (p IS products) COLUMNS "
                      "(p.product_no, p.double_price))") == \
        _rows(ref, "SELECT product_no, price * 2 FROM products")
    assert _rows(con, "SELECT * FROM GRAPH_TABLE (myshop MATCH (o)-[i IS order_items]->(p) "
                      "COLUMNS (i.link_id, i.product_no, i.weight))") == \
        _rows(ref, "SELECT order_id, product_no, quantity * 10 + order_id FROM order_items")


def test_a_graph_made_over_rows_works_them_out_too(tmp_path):
    with graphdb.connect(tmp_path / "db") as con:
        con.execute("CREATE TABLE e(a INT PRIMARY KEY, b INT, w INT); "
                    "INSERT INTO e VALUES (1, 2, 5), (2, 1, 6), (3, 1, NULL)")
        con.execute("CREATE PROPERTY GRAPH g VERTEX TABLES (e) EDGE TABLES (e AS f "
                    "SOURCE KEY (a) REFERENCES e (a) DESTINATION KEY (b) REFERENCES e (a) "
                    "PROPERTIES (w * 10 AS w10, w, 'x' || b::VARCHAR AS tag))")
        assert _rows(con, "SELECT * FROM GRAPH_TABLE (g MATCH (x)-[y]->(z) COLUMNS (x.a, y.*))"
                     ) == [(1, 50, 5, "x2"), (2, 60, 6, "x1"), (3, None, None, "x1")]


@pytest.mark.parametrize("properties, error", [
    ("sum(w) AS s", "own row"),
    ("row_number() OVER () AS n", "own row"),
    ("(SELECT 1) AS n", "own row"),
    ("w * 2", "needs a name"),
    ("nope * 2 AS n", "nope"),
    ("w * 2 AS n, w + 1 AS n", "two different"),
])
def test_expressions_that_are_refused(tmp_path, properties, error):
    with graphdb.connect(tmp_path / "db") as con:
        con.execute("CREATE TABLE e(a INT PRIMARY KEY, w INT); INSERT INTO e VALUES (1, 5)")
        with pytest.raises(Error, match=error):
            con.execute(f"CREATE PROPERTY GRAPH g VERTEX TABLES (e PROPERTIES ({properties}))")
        assert con.execute("SHOW PROPERTY GRAPHS").fetchall() == []


def test_one_label_on_vertex_and_edge_tables(tmp_path):
    """PostgreSQL's g1 (less its table of a two-column key): label l1 is given to both vertex
    tables and the edge table, each with its own expression of elname; rows checked by hand."""
    with graphdb.connect(tmp_path / "db") as con:
        con.execute("""
            CREATE TABLE v1 (id int PRIMARY KEY, vname varchar(10), vprop1 int, vprop2 int);
            CREATE TABLE v3 (id int PRIMARY KEY, vname varchar(10), vprop1 int, vprop2 int);
            CREATE TABLE e1_3 (id_1 int, id_3 int, ename varchar(10), eprop1 int);
            CREATE PROPERTY GRAPH g1 VERTEX TABLES (
                v1 LABEL vl1 PROPERTIES (vname, vprop1) LABEL l1 PROPERTIES (vname AS elname),
                v3 LABEL vl3 PROPERTIES (vname, vprop1, 'vl3_prop'::varchar(10) AS lprop1)
                   LABEL l1 PROPERTIES (vname AS elname))
            EDGE TABLES (e1_3 SOURCE KEY (id_1) REFERENCES v1 (id)
                              DESTINATION KEY (id_3) REFERENCES v3 (id)
                              LABEL el1 PROPERTIES (ename, eprop1 * 10 AS lprop2)
                              LABEL l1 PROPERTIES (upper(ename) AS elname));
            INSERT INTO v1 VALUES (1, 'v11', 10, 100), (2, 'v12', 20, 200);
            INSERT INTO v3 VALUES (2001, 'v31', 2010, 2100), (2003, 'v33', 2030, 2300);
            INSERT INTO e1_3 VALUES (1, 2003, 'e131', 10003), (1, 2001, 'e132', 10004);
        """)
        assert _rows(con, "SELECT * FROM GRAPH_TABLE (g1 MATCH (a IS l1) COLUMNS (a.elname))"
                     ) == [("v11",), ("v12",), ("v31",), ("v33",)]
        assert _rows(con, "SELECT * FROM GRAPH_TABLE (g1 MATCH (a IS l1)-[e IS l1]->(b IS l1) "
                          "COLUMNS (a.elname AS a, e.elname AS e, e.lprop2, b.lprop1))") == [
            ("v11", "E131", 100030, "vl3_prop"), ("v11", "E132", 100040, "vl3_prop")]
        with pytest.raises(Error, match="no label 'el1' among the vertex labels"):
            con.execute("SELECT * FROM GRAPH_TABLE (g1 MATCH (a IS el1) COLUMNS (a.vname))")
