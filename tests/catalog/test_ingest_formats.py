"""Every input format, loaded as a new user would, against hand-checked edge lists."""

from __future__ import annotations

import gzip

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.catalog.ingest_helpers import edge_set, load, write_text

EXPECTED = [(1, 2), (1, 3), (2, 3), (3, 1)]


def test_csv_with_header(tmp_path):
    f = write_text(tmp_path / "e.csv", "from,to\n1,2\n1,3\n2,3\n3,1\n")
    catalog, entry = load(tmp_path / "db", f)
    assert edge_set(catalog, entry) == EXPECTED
    assert (entry.num_vertices, entry.input_edges, entry.directed) == (3, 4, True)


def test_csv_without_header_and_custom_delimiter(tmp_path):
    f = write_text(tmp_path / "e.csv", "1;2\n1;3\n2;3\n3;1\n")
    catalog, entry = load(tmp_path / "db", f, header=False, delimiter=";")
    assert edge_set(catalog, entry) == EXPECTED


def test_tsv_with_named_columns_and_weight(tmp_path):
    f = write_text(tmp_path / "e.tsv", "w\ta\tb\n0.5\t1\t2\n1.5\t1\t3\n2\t2\t3\n3\t3\t1\n")
    catalog, entry = load(tmp_path / "db", f, src="a", dst="b", weight="w")
    assert entry.weighted
    # the weight keeps its name (issue 16: it was renamed 'weight')
    assert edge_set(catalog, entry, "w") == [(1, 2, 0.5), (1, 3, 1.5), (2, 3, 2.0),
                                             (3, 1, 3.0)]


@pytest.mark.parametrize("sep", ["\t", " "])
def test_snap_text_with_comments_anywhere(tmp_path, sep):
    text = (f"# Directed graph\n# FromNodeId{sep}ToNodeId\n1{sep}2\n1{sep}3\n"
            f"# a comment in the middle\n\n2{sep}3\n3{sep}1\n# trailing comment")
    f = write_text(tmp_path / "e.txt", text)
    catalog, entry = load(tmp_path / "db", f)
    assert edge_set(catalog, entry) == EXPECTED


def test_graphalytics_vertex_and_edge_files(tmp_path):
    e = write_text(tmp_path / "g.e", "1 2 0.5\n1 3 1.0\n2 3 2.0\n3 1 4.0\n")
    v = write_text(tmp_path / "g.v", "1\n2\n3\n4\n")  # vertex 4 is isolated
    catalog, entry = load(tmp_path / "db", e, vertices=str(v))
    assert entry.num_vertices == 4 and entry.weighted
    assert edge_set(catalog, entry, "weight")[0] == (1, 2, 0.5)
    assert catalog.vertex_ids(entry).to_pylist() == [1, 2, 3, 4]


def test_parquet_and_arrow_ipc(tmp_path):
    table = pa.table({"s": pa.array([1, 1, 2, 3], pa.int32()),
                      "d": pa.array([2, 3, 3, 1], pa.int32())})
    pq.write_table(table, tmp_path / "e.parquet")
    with pa.ipc.new_file(str(tmp_path / "e.arrow"), table.schema) as w:
        w.write_table(table)
    with pa.ipc.new_stream(str(tmp_path / "e.arrows"), table.schema) as w:
        w.write_table(table)
    for i, name in enumerate(["e.parquet", "e.arrow", "e.arrows"]):
        catalog, entry = load(tmp_path / "db", tmp_path / name, name=f"g{i}")
        assert edge_set(catalog, entry) == EXPECTED, name


def test_gzip_and_glob_of_several_files(tmp_path):
    with gzip.open(tmp_path / "part1.csv.gz", "wt") as f:
        f.write("s,d\n1,2\n1,3\n")
    with gzip.open(tmp_path / "part2.csv.gz", "wt") as f:
        f.write("s,d\n2,3\n3,1\n")
    catalog, entry = load(tmp_path / "db", tmp_path / "part*.csv.gz")
    assert edge_set(catalog, entry) == EXPECTED
    catalog, entry = load(tmp_path / "db", tmp_path / "part2.csv.gz", name="one")
    assert edge_set(catalog, entry) == [(2, 3), (3, 1)]


def test_gzip_snap_text(tmp_path):
    with gzip.open(tmp_path / "e.txt.gz", "wt") as f:
        f.write("# comment\n1\t2\n1\t3\n2\t3\n3\t1\n")
    catalog, entry = load(tmp_path / "db", tmp_path / "e.txt.gz")
    assert edge_set(catalog, entry) == EXPECTED


def test_large_text_in_many_blocks(tmp_path, monkeypatch):
    """Several pyarrow blocks and comment filtering across block boundaries."""
    import graphdb.catalog.readers as readers

    monkeypatch.setattr(readers, "BLOCK_BYTES", 1 << 10)
    lines = []
    for i in range(3000):
        lines.append(f"{i}\t{(i * 7) % 3000}")
        if i % 97 == 0:
            lines.append("# comment line")
    f = write_text(tmp_path / "e.txt", "\n".join(lines) + "\n")
    catalog, entry = load(tmp_path / "db", f)
    assert edge_set(catalog, entry) == sorted((i, (i * 7) % 3000) for i in range(3000))


def test_parallel_parts_store_what_one_reader_stores(tmp_path, monkeypatch):
    """A large text file is parsed in byte-range parts on several threads; the stored arrays
    (including the order within each adjacency list) must not change."""
    import numpy as np

    import graphdb.catalog.readers as readers

    lines = "".join(f"{(i * 37) % 1000} {(i * 11) % 997} {i % 5}\n" for i in range(20_000))
    f = write_text(tmp_path / "e.txt", "# header comment\n" + lines)
    catalog, whole = load(tmp_path / "db", f, name="whole")
    monkeypatch.setattr(readers, "SPLIT_BYTES", 1 << 10)
    monkeypatch.setattr(readers, "BLOCK_BYTES", 1 << 12)
    catalog, parts = load(tmp_path / "db", f, name="parts")
    for name in ("out_offsets", "out_targets", "out_weights", "in_targets", "in_weights"):
        np.testing.assert_array_equal(catalog.read_array(whole, name),
                                      catalog.read_array(parts, name), err_msg=name)


def test_parallel_parts_name_the_right_line(tmp_path, monkeypatch):
    import graphdb.catalog.readers as readers
    from graphdb.catalog import IngestError

    monkeypatch.setattr(readers, "SPLIT_BYTES", 1 << 10)
    monkeypatch.setattr(readers, "BLOCK_BYTES", 1 << 12)
    rows = [f"{i},{i + 1}" for i in range(3000)]
    rows[2500] = "7,8,9"
    f = write_text(tmp_path / "e.csv", "s,d\n" + "\n".join(rows) + "\n")
    with pytest.raises(IngestError) as err:
        load(tmp_path / "db", f)
    assert err.value.line == 2502, str(err.value)
    rows[2500] = "7,"
    f = write_text(tmp_path / "e.csv", "s,d\n" + "\n".join(rows) + "\n")
    with pytest.raises(IngestError) as err:
        load(tmp_path / "db", f)
    assert err.value.line == 2502 and "missing destination" in str(err.value)


def test_parallel_parts_behave_like_one_reader_on_types(tmp_path, monkeypatch):
    """Column types come from the start of the file in every part, as with one reader: later
    integer-looking values stay doubles, and a fraction after integers is the same error."""
    import pyarrow as pa

    import graphdb.catalog.readers as readers
    from graphdb.catalog import IngestError

    monkeypatch.setattr(readers, "BLOCK_BYTES", 1 << 12)
    rows = ([f"{i},{i + 1},{i}.5,x" for i in range(500)]
            + [f"{i},{i + 1},{i},y" for i in range(500)])
    f = write_text(tmp_path / "e.csv", "s,d,score,tag\n" + "\n".join(rows) + "\n")
    # Long integer rows, then short fractional ones: the second part starts among the integers
    # and its first block holds both kinds (alone it would guess doubles).
    bad = write_text(tmp_path / "bad.csv", "s,d,score,tag\n" + "\n".join(
        [f"{i},{i + 1},{i},{'x' * 12}" for i in range(500)]
        + [f"{i},{i + 1},{i}.5,x" for i in range(500)]) + "\n")
    lines = []
    for split_bytes in (1 << 30, 1 << 10):  # one reader, then parts
        monkeypatch.setattr(readers, "SPLIT_BYTES", split_bytes)
        catalog, entry = load(tmp_path / "db", f, name=f"g{split_bytes}")
        table = catalog.edge_table(entry)
        assert table.schema.field("score").type == pa.float64()
        with pytest.raises(IngestError) as err:
            load(tmp_path / "db", bad, name="bad")
        lines.append(err.value.line)
    assert lines == [502, 502]


def test_progress_of_a_part_whose_reader_just_closed_its_file(tmp_path):
    """The progress display asks every part for its bytes from the consuming thread while the
    part's reader thread may close the file between the ``closed`` check and ``tell()``."""
    from graphdb.catalog.readers import InputFile

    path = tmp_path / "e.csv"
    path.write_text("src,dst\n1,2\n")
    part = InputFile(str(path))

    class ClosedUnderfoot:
        closed = False

        def tell(self):
            raise pa.ArrowInvalid("Invalid operation on closed file")

    part._raw = ClosedUnderfoot()
    assert part.bytes_done() == part.size
