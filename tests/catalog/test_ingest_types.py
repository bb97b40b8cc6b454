"""What a load does with the types of typed inputs (Parquet, Arrow): ids are integers or text and
never change type without being asked (issue 28.8); other types are refused by name, or read as
``--id-type`` says; weights a double cannot hold exactly are refused (28.9). Every refusal is an
IngestError naming the file (and the row), with the database as it was."""

from __future__ import annotations

import datetime

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graphdb.catalog import IngestError
from tests.catalog.ingest_helpers import load, snapshot, write_text


def _parquet(path, **columns):
    pq.write_table(pa.table(columns), path)
    return path


DAY = datetime.datetime(2020, 1, 1)
REFUSED = {
    # name: (columns, words in the message)
    "float_ids": ({"src": [1.0, 2.0], "dst": [2.0, 3.0]}, ["floating-point", "--id-type int"]),
    "fractional_ids": ({"src": [1.5, 2.0], "dst": [2.0, 3.0]}, ["row 1", "1.5",
                                                                "not an integer"]),
    "timestamp_ids": ({"src": [DAY, DAY], "dst": [DAY, DAY]}, ["timestamp", "--id-type string"]),
    "boolean_ids": ({"src": [True, False], "dst": [False, True]}, ["bool", "--id-type string"]),
    "list_ids": ({"src": [[1], [2]], "dst": [[2], [3]]}, ["lists", "one integer or one string"]),
    "struct_ids": ({"src": [{"a": 1}, {"a": 2}], "dst": [{"a": 2}, {"a": 3}]}, ["structs"]),
    "list_weights": ({"src": [1, 2], "dst": [2, 3], "weight": [[1.0], [2.0]]},
                     ["weight column 'weight'", "list", "--weight none"]),
    "inexact_integer_weight": ({"src": [1, 2], "dst": [2, 3],
                                "weight": pa.array([1, 2**60 + 1], pa.int64())},
                               ["row 2", str(2**60 + 1), "cannot be stored exactly"]),
}


@pytest.fixture
def db(tmp_path):
    load(tmp_path / "db", write_text(tmp_path / "good.csv", "s,d\n1,2\n"), name="g")
    return tmp_path / "db"


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_types_name_the_file_and_leave_the_database(tmp_path, db, case):
    columns, words = REFUSED[case]
    path = _parquet(tmp_path / "e.parquet", **columns)
    before = snapshot(db)
    with pytest.raises(IngestError) as err:
        load(db, path, name="new")
    assert err.value.file == str(path)
    for word in words:
        assert word in str(err.value), str(err.value)
    assert snapshot(db) == before


def test_id_type_says_how_to_read_other_types(tmp_path, db):
    floats = _parquet(tmp_path / "f.parquet", src=[1.0, 2.0], dst=[2.0, 3.0])
    catalog, entry = load(db, floats, name="f", id_type="int")
    assert entry.id_type == "int64" and catalog.vertex_ids(entry).to_pylist() == [1, 2, 3]
    days = _parquet(tmp_path / "t.parquet", src=[DAY], dst=[DAY + datetime.timedelta(days=1)])
    catalog, entry = load(db, days, name="t", id_type="string")
    assert entry.id_type == "string"
    assert catalog.vertex_ids(entry).to_pylist()[0].startswith("2020-01-01")


def test_exact_large_integer_weights_and_dictionary_ids_load(tmp_path, db):
    path = _parquet(tmp_path / "e.parquet", src=pa.array(["a", "b"]).dictionary_encode(),
                    dst=pa.array(["b", "c"]).dictionary_encode(),
                    weight=pa.array([2**60, 3], pa.int64()))
    catalog, entry = load(db, path, name="d")
    assert catalog.vertex_ids(entry).to_pylist() == ["a", "b", "c"]
    assert sorted(catalog.edge_table(entry).column("weight").to_pylist()) == [3.0, 2.0**60]


def test_a_directory_says_to_give_a_glob(tmp_path, db):
    folder = tmp_path / "parts"
    folder.mkdir()
    write_text(folder / "a.csv", "s,d\n1,2\n")
    with pytest.raises(IngestError, match=r"is a directory.*parts/\*\.csv"):
        load(db, folder, name="new")


def test_numeric_edge_ids_after_a_text_vertex_file_are_refused(tmp_path, db):
    vertices = write_text(tmp_path / "v.csv", "id\nann\nbob\n")
    edges = write_text(tmp_path / "e.csv", "src,dst\n1,2\n")
    with pytest.raises(IngestError, match="are numbers, but the ids before them are text"):
        load(db, edges, name="new", vertices=str(vertices))
