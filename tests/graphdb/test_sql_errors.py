"""Every mistake a query can make is a ``graphdb.Error``: the PEP 249 class it belongs to (for
the relational part, by DuckDB's exception type), DuckDB's own words for DuckDB's mistakes, and
no excerpt of the statement DuckDB ran, no internal names.

Two checks: the usual mistakes one by one, and a fixed-seed fuzz that mutates the statements of
the SQL corpus (tokens inserted, deleted, replaced) and requires each to answer or raise a
``graphdb.Error`` whose message carries no internals.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import graphdb

DATA = Path(__file__).resolve().parents[1] / "sql" / "data"
CORPUS = sorted((Path(__file__).resolve().parents[1] / "sql").rglob("*.test"))
INTERNALS = ("__graphdb", "LINE 1", "Binder Error", "Catalog Error", "Parser Error",
             "Conversion Error", "Traceback")


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    with graphdb.connect(tmp_path_factory.mktemp("errors") / "db") as con:
        con.ingest("social", DATA / "social.csv", vertices=str(DATA / "social_vertices.csv"))
        con.ingest("friends", DATA / "friends.csv", vertices=str(DATA / "people.csv"),
                   undirected=True)
        yield con


@pytest.mark.parametrize("sql, kind, message", [
    # DuckDB's mistakes: the class by DuckDB's exception type, the message in DuckDB's words
    ("SELECT nosuch FROM social.edges", graphdb.BinderError, 'column "nosuch" not found'),
    ("SELECT srcc FROM social.edges", graphdb.BinderError, 'candidate bindings: "src"'),
    ("SELECT x.src FROM social.edges e", graphdb.BinderError, 'table "x" not found'),
    ("SELECT lenght('a')", graphdb.CatalogError, 'did you mean "length"'),
    ("SELECT id FROM social.vertices a, social.vertices b", graphdb.BinderError, "ambiguous"),
    ("SELECT src, dst FROM social.edges GROUP BY src", graphdb.BinderError,
     "must appear in the GROUP BY clause"),
    ("SELECT * FROM social.edges WHERE src = 'one'", graphdb.DataError,
     "could not convert string 'one'"),
    ("SELECT 'a' + 1", graphdb.BinderError, "explicit type casts"),
    ("SELECT * FROM social.edges LIMIT -1", graphdb.BinderError, "cannot be negative"),
    ("SELECT src FROM social.edges ORDER BY 3", graphdb.BinderError, "ORDER term out of range"),
    ("SELECT id FROM social.vertices WHERE id = (SELECT src FROM social.edges)",
     graphdb.DataError, "more than one row returned by a subquery"),
    ("SELECT 5 // 0", graphdb.DataError, "division by zero"),
    ("SELECT CAST(9223372036854775807 AS BIGINT) + 1", graphdb.DataError, "overflow"),
    ("SELECT DATE '2024-13-01'", graphdb.DataError, "out of range"),
    ("SELECT CAST('abc' AS INTEGER)", graphdb.DataError, "could not convert string 'abc'"),
    ("SELEC 1", graphdb.ParseError, 'at or near "SELEC"'),
    # graphdb's own
    ("SELECT * FROM bfz(social, 1)", graphdb.BinderError, "did you mean bfs()"),
    ("SELECT * FROM social.nodes", graphdb.BinderError, "has no table 'nodes'"),
    ("SELECT * FROM socal.edges", graphdb.CatalogError, "did you mean 'social'"),
    ("SELECT * FROM nowhere", graphdb.BinderError, "unknown table 'nowhere'"),
    ("SELECT * FROM bfs(social, 99)", graphdb.ProgrammingError, "not a vertex"),
    ("SELECT * FROM social.vertices v, LATERAL khop(social, w.id, 1)", graphdb.BinderError,
     "no table before the call"),
    ("SELECT * FROM bfs(social, 1) AS a JOIN bfs(social, 2) AS a ON true",
     graphdb.BinderError, "used twice"),
])
def test_mistakes_are_clear_errors(con, sql, kind, message):
    with pytest.raises(kind) as info:
        con.execute(sql).fetchall()
    text = str(info.value)
    assert message.lower() in text.lower(), text
    assert not any(internal in text for internal in INTERNALS), text


def _statements() -> list[str]:
    out = []
    for path in CORPUS:
        out += [line.strip() for line in path.read_text().splitlines()
                if line.strip().upper().startswith(("SELECT", "WITH", "EXPLAIN", "DESCRIBE"))]
    return out


TOKENS = ["(", ")", ",", "?", "$1", "NULL", "'x'", "1", "-", "*", "bfs(social, 1)", "LATERAL",
          "social.edges", "friends.adjacency", "GRAPH_TABLE", "SELECT", "FROM", "WHERE", "JOIN",
          "ON", "=>", "khop(friends, p.id, 1)", "::DATE", "OVER ()", "GROUP BY", "ORDER BY",
          "LIMIT", "UNION", "'", '"', "AS", "social", "(SELECT 1)", "NOT IN", "EXISTS", "1e400",
          "9223372036854775808", "[1, 2]"]


def test_mutated_statements_answer_or_raise_a_graphdb_error(con):
    r = random.Random(1624)
    seeds = _statements()
    for _ in range(300):
        words = r.choice(seeds).split(" ")
        for _ in range(r.randrange(1, 4)):
            at = r.randrange(len(words))
            change = r.randrange(3)
            if change == 0:
                words.insert(at, r.choice(TOKENS))
            elif change == 1 and len(words) > 1:
                del words[at]
            else:
                words[at] = r.choice(TOKENS)
        sql = " ".join(words)
        parameters = r.choice([None, [1], [1, 2], {"x": 1}, [[1, 2]]])
        try:
            con.execute(sql, parameters).fetchall()
        except graphdb.Error as exc:
            text = str(exc)
            assert not any(internal in text for internal in INTERNALS), (sql, text)
