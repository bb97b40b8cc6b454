"""The README's error classes hold: each class it names is raised for the mistakes it names
(one case each here; tests/graphdb/test_sql_errors.py has the many)."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest

import graphdb
from tests.support import ROOT


@pytest.fixture(scope="module")
def con():
    with graphdb.connect() as con:
        con.ingest("g", pa.table({"src": [1, 2], "dst": [2, 3]}))
        yield con


CASES = [
    # (README class, statement, its PEP 249 base)
    ("ParseError", "SELEC 1", graphdb.ProgrammingError),
    ("BinderError", "SELECT nosuch FROM g.edges", graphdb.ProgrammingError),
    ("CatalogError", "SELECT * FROM bfs(nope, 1)", graphdb.ProgrammingError),
    ("CatalogError", "SELECT lenght('a')", graphdb.ProgrammingError),
    ("ProgrammingError", "SELECT * FROM bfs(g, 99)", graphdb.DatabaseError),
    ("DataError", "SELECT CAST('abc' AS INTEGER)", graphdb.DatabaseError),
    ("DataError", "SELECT 1 // 0", graphdb.DatabaseError),
    ("DataError", "SELECT CAST(9223372036854775807 AS BIGINT) + 1", graphdb.DatabaseError),
    ("OperationalError", "SELECT * FROM 'no/such/file.csv'", graphdb.DatabaseError),
]


@pytest.mark.parametrize("name, sql, base", CASES)
def test_each_class_the_readme_names(con, name, sql, base):
    cls = getattr(graphdb, name)
    assert issubclass(cls, base)
    with pytest.raises(cls):
        con.execute(sql).fetchall()


def test_parse_errors_carry_the_offending_tokens_place(con):
    with pytest.raises(graphdb.ParseError) as info:
        con.execute("SELECT 1,\n  2 +")
    assert (info.value.line, info.value.column) == (2, 5)


def test_bad_input_files_are_ingest_errors_naming_file_and_line(con, tmp_path):
    bad = tmp_path / "e.csv"
    bad.write_bytes(b"src,dst\n1,2\n\xff,3\n")
    with pytest.raises(graphdb.IngestError) as info:
        con.ingest("h", bad)
    assert isinstance(info.value, graphdb.DataError)
    assert (info.value.file, info.value.line) == (str(bad), 3)


def test_the_readme_names_these_classes():
    text = (ROOT / "README.md").read_text()
    paragraph = text[text.index("Mistakes in a query raise"):]
    paragraph = paragraph[:paragraph.index("\n\n")]
    named = set(re.findall(r"`(?:graphdb\.)?([A-Z][A-Za-z]+Error)`", paragraph))
    assert named >= {c[0] for c in CASES} | {"IngestError", "CorruptDatabaseError"}
    assert all(hasattr(graphdb, n) for n in named)
