"""User ids of every kind, vertex and edge properties with their Arrow types, and the policies."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graphdb.catalog import IngestError
from tests.catalog.ingest_helpers import adjacency, edge_set, load, write_text


def test_string_ids_sorted_and_mapped_back(tmp_path):
    f = write_text(tmp_path / "e.csv", "a,b\ncarol,alice\nbob,carol\nalice,bob\ndave,alice\n")
    catalog, entry = load(tmp_path / "db", f)
    assert entry.id_type == "string"
    assert catalog.vertex_ids(entry).to_pylist() == ["alice", "bob", "carol", "dave"]
    assert edge_set(catalog, entry) == sorted([("carol", "alice"), ("bob", "carol"),
                                               ("alice", "bob"), ("dave", "alice")])
    # internal ids follow the ascending order of the user's ids: alice=0 -> bob=1
    assert adjacency(catalog, entry)[0] == [1]


def test_id_type_string_keeps_numeric_looking_ids_as_text(tmp_path):
    f = write_text(tmp_path / "e.csv", "a,b\n10,9\n9,100\n")
    catalog, entry = load(tmp_path / "db", f, id_type="string")
    assert catalog.vertex_ids(entry).to_pylist() == ["10", "100", "9"]


@pytest.mark.parametrize("arrow_type", [pa.int8(), pa.uint16(), pa.int32(), pa.uint64(),
                                        pa.int64()])
def test_integer_ids_of_any_width(tmp_path, arrow_type):
    src = pa.array([5, 1, 100], arrow_type)
    dst = pa.array([1, 100, 5], arrow_type)
    pq.write_table(pa.table({"s": src, "d": dst}), tmp_path / "e.parquet")
    catalog, entry = load(tmp_path / "db", tmp_path / "e.parquet")
    assert catalog.vertex_ids(entry).to_pylist() == [1, 5, 100]
    assert edge_set(catalog, entry) == [(1, 100), (5, 1), (100, 5)]


def test_sparse_64bit_ids_use_the_sorted_path(tmp_path):
    big = [2**62 + 7, -5, 2**40, 3]
    f = write_text(tmp_path / "e.csv", "s,d\n" + "".join(
        f"{big[i]},{big[(i + 1) % 4]}\n" for i in range(4)))
    catalog, entry = load(tmp_path / "db", f)
    assert catalog.vertex_ids(entry).to_pylist() == sorted(big)
    assert edge_set(catalog, entry) == sorted((big[i], big[(i + 1) % 4]) for i in range(4))


def test_vertex_and_edge_properties_keep_types_and_alignment(tmp_path):
    v = pa.table({"id": pa.array(["x", "y", "z"]), "age": pa.array([30, 40, 50], pa.int16()),
                  "joined": pa.array([1, 2, 3], pa.date32())})
    pq.write_table(v, tmp_path / "v.parquet")
    e = pa.table({"src": ["z", "x", "y", "x"], "dst": ["x", "y", "z", "z"],
                  "weight": [3.0, 1.0, 2.0, 4.0], "since": pa.array([2003, 2001, 2002, 2004],
                                                                     pa.int32()),
                  "kind": ["c", "a", "b", "d"]})
    pq.write_table(e, tmp_path / "e.parquet")
    catalog, entry = load(tmp_path / "db", tmp_path / "e.parquet",
                          vertices=str(tmp_path / "v.parquet"))
    vt = catalog.vertex_table(entry)
    assert vt.schema.field("age").type == pa.int16()
    assert vt.schema.field("joined").type == pa.date32()
    assert vt.column("age").to_pylist() == [30, 40, 50]
    et = catalog.edge_table(entry)
    assert et.column_names == ["src", "dst", "weight", "since", "kind"]
    assert et.schema.field("since").type == pa.int32()
    rows = sorted(zip(*[et.column(c).to_pylist() for c in et.column_names]))
    assert rows == [("x", "y", 1.0, 2001, "a"), ("x", "z", 4.0, 2004, "d"),
                    ("y", "z", 2.0, 2002, "b"), ("z", "x", 3.0, 2003, "c")]


def test_missing_vertices_error_or_add(tmp_path):
    v = write_text(tmp_path / "v.csv", "id,name\n1,one\n2,two\n")
    e = write_text(tmp_path / "e.csv", "s,d\n1,2\n2,3\n")
    with pytest.raises(IngestError) as err:
        load(tmp_path / "db", e, vertices=str(v))
    assert err.value.line == 3 and "destination vertex 3" in str(err.value)
    catalog, entry = load(tmp_path / "db", e, vertices=str(v), missing_vertices="add")
    vt = catalog.vertex_table(entry)
    assert vt.column("id").to_pylist() == [1, 2, 3]
    assert vt.column("name").to_pylist() == ["one", "two", None]


def test_duplicate_vertex_in_vertex_file(tmp_path):
    v = write_text(tmp_path / "v.csv", "id\n1\n2\n1\n")
    e = write_text(tmp_path / "e.csv", "s,d\n1,2\n")
    with pytest.raises(IngestError) as err:
        load(tmp_path / "db", e, vertices=str(v))
    assert err.value.line == 4 and "more than once" in str(err.value)


def test_self_loops_keep_and_drop(tmp_path):
    f = write_text(tmp_path / "e.csv", "s,d\n1,1\n1,2\n2,2\n")
    catalog, entry = load(tmp_path / "db", f)
    assert entry.num_edges == 3 and entry.stats["self_loops"] == 2
    catalog, entry = load(tmp_path / "db", f, name="h", self_loops="drop")
    assert edge_set(catalog, entry) == [(1, 2)]
    assert entry.stats["self_loops_dropped"] == 2 and entry.num_vertices == 2


@pytest.mark.parametrize("policy,expected", [("min", 1.0), ("max", 5.0), ("sum", 9.0),
                                             ("first", 3.0)])
def test_duplicates_merge_weights(tmp_path, policy, expected):
    f = write_text(tmp_path / "e.csv", "s,d,weight,tag\n1,2,3,p\n2,1,7,q\n1,2,1,r\n1,2,5,s\n")
    catalog, entry = load(tmp_path / "db", f, duplicates="merge", merge_weights=policy)
    assert entry.stats["duplicates_merged"] == 2
    assert edge_set(catalog, entry, "weight", "tag") == [(1, 2, expected, "p"), (2, 1, 7.0, "q")]
    assert adjacency(catalog, entry, "in") == [[1], [0]]


def test_duplicates_kept_by_default(tmp_path):
    f = write_text(tmp_path / "e.csv", "s,d\n1,2\n1,2\n")
    catalog, entry = load(tmp_path / "db", f)
    assert edge_set(catalog, entry) == [(1, 2), (1, 2)]


def test_undirected_stores_both_directions(tmp_path):
    f = write_text(tmp_path / "e.csv", "s,d,weight\n1,2,0.5\n2,3,1.5\n3,3,9\n")
    catalog, entry = load(tmp_path / "db", f, undirected=True)
    assert not entry.directed and entry.num_edges == 5
    assert edge_set(catalog, entry, "weight") == [(1, 2, 0.5), (2, 1, 0.5), (2, 3, 1.5),
                                                  (3, 2, 1.5), (3, 3, 9.0)]
    # undirected input given in both directions merges to one edge per direction
    f2 = write_text(tmp_path / "e2.csv", "s,d\n1,2\n2,1\n")
    catalog, entry = load(tmp_path / "db", f2, name="u", undirected=True, duplicates="merge")
    assert edge_set(catalog, entry) == [(1, 2), (2, 1)]
