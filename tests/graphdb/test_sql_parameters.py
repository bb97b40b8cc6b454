"""Query parameters bind by their position in the text (issue 16: ``LIMIT ?`` took the first
value), ``IN ?`` takes a list or tuple, and every Python type a program passes reads as the
value it is. The answers are checked against networkx and hand-computed rows."""

from __future__ import annotations

import datetime
import decimal
import re

import networkx as nx
import pytest

import graphdb

# a path 0 - 1 - 2 - 3 - 4 and a branch 1 - 5, directed away from 0
EDGES = [(0, 1), (1, 2), (2, 3), (3, 4), (1, 5)]


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    path = tmp_path_factory.mktemp("params")
    edges = path / "roads.csv"
    edges.write_text("src,dst\n" + "".join(f"{a},{b}\n" for a, b in EDGES))
    with graphdb.connect(path / "db") as con:
        con.ingest("roads", edges)
        yield con


def _depths(source: int) -> dict[int, int]:
    return nx.single_source_shortest_path_length(nx.DiGraph(EDGES), source)


def test_limit_parameter_after_a_function_argument(con):
    # was: bfs(roads, 2) with LIMIT 0
    rows = con.execute("SELECT vertex, depth FROM bfs(roads, ?) ORDER BY vertex LIMIT ?",
                       [0, 2]).fetchall()
    assert rows == sorted(_depths(0).items())[:2]


def test_where_and_limit_parameters(con):
    rows = con.execute("SELECT vertex FROM bfs(roads, ?) WHERE depth = ? ORDER BY vertex "
                       "LIMIT ?", [1, 1, 5]).fetchall()
    assert rows == [(v,) for v, d in sorted(_depths(1).items()) if d == 1]


def test_having_and_limit_parameters(con):
    rows = con.execute("SELECT depth, count(*) FROM bfs(roads, ?) GROUP BY depth "
                       "HAVING count(*) > ? ORDER BY depth LIMIT ?", [0, 1, 10]).fetchall()
    counts: dict[int, int] = {}
    for d in _depths(0).values():
        counts[d] = counts.get(d, 0) + 1
    assert rows == [(d, c) for d, c in sorted(counts.items()) if c > 1]


@pytest.mark.parametrize("values", [(2, 4, 99), [2, 4, 99], {2, 4}])
def test_in_a_list_or_tuple(con, values):
    rows = con.execute("SELECT id FROM roads.vertices WHERE id IN ? ORDER BY id",
                       [values]).fetchall()
    assert rows == [(2,), (4,)]


def test_in_an_empty_list_matches_nothing_and_not_in_everything(con):
    assert con.execute("SELECT count(*) FROM roads.vertices WHERE id IN ?", [[]]).fetchone() \
        == (0,)
    assert con.execute("SELECT count(*) FROM roads.vertices WHERE id NOT IN ?",
                       [()]).fetchone() == (6,)


def test_in_a_scalar_is_a_clear_error(con):
    with pytest.raises(graphdb.ProgrammingError, match="list or tuple"):
        con.execute("SELECT id FROM roads.vertices WHERE id IN ?", [3])


def test_numbered_and_named_parameters(con):
    assert con.execute("SELECT $2 - $1, $1", [1, 10]).fetchone() == (9, 1)
    rows = con.execute("SELECT vertex FROM khop(roads, $src, $k) WHERE hops = $k ORDER BY 1",
                       {"src": 0, "k": 2}).fetchall()
    assert rows == [(v,) for v, d in sorted(_depths(0).items()) if d == 2]


def test_parameters_in_a_subquery_argument_and_the_query_around_it(con):
    rows = con.execute("SELECT vertex FROM bfs(roads, (SELECT min(id) FROM roads.vertices "
                       "WHERE id > ?)) WHERE depth <= ? ORDER BY 1", [0, 1]).fetchall()
    assert rows == [(v,) for v, d in sorted(_depths(1).items()) if d <= 1]


@pytest.mark.parametrize("value, sql_type", [
    (5, "INTEGER"), (2**40, "BIGINT"), (2**70, "HUGEINT"), (0.1, "DOUBLE"), (float("inf"), "DOUBLE"),
    ("it's", "VARCHAR"), (True, "BOOLEAN"), (None, '"NULL"'),
    (datetime.date(2024, 2, 29), "DATE"), (datetime.datetime(2024, 2, 29, 13, 5), "TIMESTAMP"),
    (datetime.time(7, 30), "TIME"), (decimal.Decimal("12.345"), "DECIMAL(38,3)"),
    (b"\x00\xff", "BLOB"), ([1, 2], "INTEGER[]"),
])
def test_values_keep_their_type(con, value, sql_type):
    got, kind = con.execute("SELECT ?, typeof(?)", [value, value]).fetchone()
    assert kind == sql_type
    assert got == value


def test_dates_compare_with_parameters(con):
    day = datetime.date(2024, 1, 31)
    assert con.execute("SELECT ? + INTERVAL 1 MONTH", [day]).fetchone()[0] == \
        datetime.datetime(2024, 2, 29)
    assert con.execute("SELECT ?::DATE + 1", [day]).fetchone()[0] == datetime.date(2024, 2, 1)


def test_an_integer_parameter_types_as_duckdb_types_it(con):
    # an INTEGER where it fits (so functions taking INTEGER take it), BIGINT beyond
    assert con.execute("SELECT lpad('a', ?, '*'), ? + 1", [3, 2**31]).fetchone() == \
        ("**a", 2**31 + 1)
    with pytest.raises(graphdb.DataError, match="Overflow"):  # as an INTEGER would
        con.execute("SELECT ? + 1", [2**31 - 1])


def test_quotes_in_strings_are_data(con):
    text = "x'); DROP GRAPH roads; --"
    assert con.execute("SELECT ?", [text]).fetchone() == (text,)
    assert "roads" in con.graphs()


@pytest.mark.parametrize("sql, values, message", [
    ("SELECT ?, ?", [1], "more '?' placeholders"),
    ("SELECT ?", [1, 2], "2 parameters given but the query has 1"),
    ("SELECT 1", [1], "has none"),
    ("SELECT $x", {"y": 1}, "no value given for parameter $x"),
    ("SELECT ?", {"a": 1}, "given by name"),
    ("SELECT ?", [object()], "not supported"),
])
def test_parameter_mistakes_are_clear_errors(con, sql, values, message):
    with pytest.raises(graphdb.ProgrammingError, match=re.escape(message)):
        con.execute(sql, values)
