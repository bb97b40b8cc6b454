"""Bad input: a clear error naming the file, the line and the problem, and the database exactly
as it was before (files and every LMDB key), also when a graph of that name is being replaced."""

from __future__ import annotations

import gzip

import pytest

from graphdb.catalog import GraphExists, IngestError
from tests.catalog.ingest_helpers import load, snapshot, write_text

BAD = {
    # name: (file name, content, expected line, words in the message)
    "malformed_line": ("e.csv", "s,d\n1,2\n3,4\n5,6,7\n8,9\n", 4, ["expected 2 fields", "3"]),
    "non_numeric_weight": ("e.csv", "s,d,weight\n1,2,0.5\n3,4,heavy\n", 3, ["heavy"]),
    "non_numeric_first_weight": ("e.csv", "s,d,weight\n1,2,heavy\n3,4,1\n", 2,
                                 ["not numeric", "heavy"]),
    "missing_endpoint": ("e.csv", "s,d\n1,2\n3,\n", 3, ["missing destination"]),
    "text_id_after_integers": ("e.txt", "# c\n1 2\n3 x\n", 3, ["'x'", "--id-type string"]),
    "empty_file": ("e.csv", "", None, ["empty"]),
    "header_only": ("e.csv", "s,d\n", None, ["no rows"]),
    "comments_only": ("e.txt", "# nothing\n# here\n", None, ["no data lines"]),
    "id_above_int64": ("e.csv", "s,d\n1,2\n9223372036854775808,3\n", 3,
                       ["9223372036854775808", "beyond the range", "--id-type string"]),
    "id_below_int64": ("e.csv", "s,d\n1,2\n3,-9223372036854775809\n", 3,
                       ["beyond the range", "--id-type string"]),
    # input that is not UTF-8 text: named at its line, as DuckDB's reader does
    "not_utf8_id": ("e.csv", b"src,dst\n1,2\n\xff\xfe,3\n", 3, ["not valid UTF-8", "0xff"]),
    "not_utf8_property": ("e.csv", b"s,d,name\n1,2,ok\n2,3,caf\xe9\n", 3,
                          ["not valid UTF-8", "column 8"]),
    "utf16": ("e.csv", "s,d\n1,2\n".encode("utf-16"), 1, ["UTF-16", "iconv"]),
    "duplicate_header": ("e.csv", "src,src,weight\n1,2,3\n", 1, ["'src' twice"]),
    "no_destination_column": ("e.csv", "src,weight\n1,4.04\n", None,
                              ["no destination column", "--dst"]),
    # a load never changes the ids' type silently (issue 28.8)
    "fractional_id": ("e.csv", "s,d\n1,2\n2,1.5\n3,4\n", 3, ["1.5", "not an integer"]),
    "text_among_numbers": ("e.csv", "s,d\n1,2\n2,abc\n3,4\n", 3,
                           ["'abc'", "mixes numbers and text", "--id-type string"]),
    "number_among_text": ("e.csv", "s,d\nann,bob\nbob,42\n", 3,
                          ["'42'", "mixes numbers and text", "--id-type string"]),
    "unterminated_quote": ("e.csv", 's,d\n1,2\n2,"3\n', 3, ["quote"]),
    # an integer weight a double cannot hold (issue 28.9)
    "inexact_weight": ("e.csv", "s,d,weight\n1,2,1\n2,3,9007199254740993\n", 3,
                       ["9007199254740993", "cannot be stored exactly", "--weight none"]),
    "nan_weight": ("e.csv", "s,d,weight\n1,2,0.5\n3,4,nan\n", 3,
                   ["weight nan", "not a number", "--invalid-weights keep"]),
    "infinite_weight": ("e.csv", "s,d,weight\n1,2,0.5\n2,3,1\n3,4,-inf\n", 4,
                        ["weight -inf", "infinite"]),
    "negative_weight": ("e.txt", "1 2 0.5\n3 4 -1.5\n", 2, ["weight -1.5", "negative"]),
}


@pytest.fixture
def db_with_graph(tmp_path):
    good = write_text(tmp_path / "good.csv", "s,d\n1,2\n2,3\n")
    load(tmp_path / "db", good, name="g")
    return tmp_path / "db"


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_file_names_file_and_line_and_leaves_db_untouched(tmp_path, db_with_graph, case):
    name, content, line, words = BAD[case]
    f = write_text(tmp_path / name, content)
    before = snapshot(db_with_graph)
    for target, replace in (("new", False), ("g", True)):
        with pytest.raises(IngestError) as err:
            load(db_with_graph, f, name=target, replace=replace)
        assert err.value.file == str(f)
        assert err.value.line == line, str(err.value)
        for word in words:
            assert word in str(err.value)
        assert snapshot(db_with_graph) == before


def test_bad_line_in_a_gzipped_file_and_in_a_later_block(tmp_path, db_with_graph, monkeypatch):
    import graphdb.catalog.readers as readers

    monkeypatch.setattr(readers, "BLOCK_BYTES", 1 << 10)
    lines = "".join(f"{i},{i + 1}\n" for i in range(500))
    with gzip.open(tmp_path / "e.csv.gz", "wt") as f:
        f.write("s,d\n" + lines + "1,2,3\n" + lines)
    before = snapshot(db_with_graph)
    with pytest.raises(IngestError) as err:
        load(db_with_graph, tmp_path / "e.csv.gz", name="new")
    assert err.value.line == 502
    text = write_text(tmp_path / "later.txt", lines.replace(",", " ") + "# c\n7 seven\n")
    with pytest.raises(IngestError) as err:
        load(db_with_graph, text, name="new")
    assert err.value.line == 502 and "'seven'" in str(err.value)
    assert snapshot(db_with_graph) == before


def test_unknown_column_suggests_the_close_one(tmp_path, db_with_graph):
    f = write_text(tmp_path / "e.csv", "source,target,weight\n1,2,1\n")
    before = snapshot(db_with_graph)
    with pytest.raises(IngestError) as err:
        load(db_with_graph, f, name="new", weight="wieght")
    assert "no column 'wieght'" in str(err.value) and "did you mean 'weight'" in str(err.value)
    assert snapshot(db_with_graph) == before


def test_missing_file_and_empty_glob(tmp_path, db_with_graph):
    before = snapshot(db_with_graph)
    with pytest.raises(IngestError, match="does not exist"):
        load(db_with_graph, tmp_path / "nope.csv", name="new")
    with pytest.raises(IngestError, match="no file matches"):
        load(db_with_graph, tmp_path / "nope*.csv", name="new")
    with pytest.raises(IngestError, match="does not exist"):
        load(db_with_graph, tmp_path / "good.csv", name="new", vertices=str(tmp_path / "v.csv"))
    assert snapshot(db_with_graph) == before


def test_existing_name_needs_replace(tmp_path, db_with_graph):
    f = write_text(tmp_path / "other.csv", "s,d\n7,8\n")
    with pytest.raises(GraphExists):
        load(db_with_graph, f, name="g")
    catalog, entry = load(db_with_graph, f, name="g", replace=True)
    assert catalog.vertex_ids(entry).to_pylist() == [7, 8]
    graphs = [p.name for p in (db_with_graph / "graphs").iterdir()]
    assert graphs == [entry.graph_id]  # the replaced version's files are gone


def test_failure_with_temp_dir_leaves_nothing_there(tmp_path, db_with_graph):
    f = write_text(tmp_path / "e.csv", "s,d\n1,2\n3,4,5\n")
    temp = tmp_path / "scratch"
    temp.mkdir()
    with pytest.raises(IngestError):
        load(db_with_graph, f, name="new", temp_dir=str(temp), memory_limit=1 << 20)
    assert list(temp.iterdir()) == []
