"""What an ingest tells: errors naming file and line for damaged compressed files and values out
of range (quoting a short excerpt, never a 20 MB field), weights that are NaN, infinite or
negative refused or kept on request and counted, graph names refused before any work."""

from __future__ import annotations

import gzip
import math
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import graphdb
from graphdb.catalog import CatalogError, IngestError
from tests.catalog.ingest_helpers import load, write_text

ROOT = Path(__file__).resolve().parents[2]


def complete_lines_before_damage(path: Path) -> int:
    """Independent count: Python's own gzip reader, line by line, until it fails."""
    count = 0
    try:
        with gzip.open(path, "rb") as f:
            for line in f:
                count += line.endswith(b"\n")
    except (EOFError, OSError, zlib.error):
        pass
    return count


@pytest.mark.parametrize("cut", [0.5, 0.93])
def test_a_truncated_gzip_file_names_the_line_where_its_data_ends(tmp_path, cut):
    data = gzip.compress(b"s,d\n" + b"".join(b"%d,%d\n" % (i, i + 1) for i in range(100_000)))
    path = tmp_path / "e.csv.gz"
    path.write_bytes(data[: int(len(data) * cut)])
    with pytest.raises(IngestError) as err:
        load(tmp_path / "db", path)
    assert err.value.file == str(path)
    assert err.value.line == complete_lines_before_damage(path) + 1
    assert "gzip data is damaged or cut short" in str(err.value)


def test_a_file_that_is_not_gzip_at_all(tmp_path):
    path = tmp_path / "e.csv.gz"
    path.write_bytes(b"src,dst\n1,2\n" * 50)
    with pytest.raises(IngestError) as err:
        load(tmp_path / "db", path)
    assert err.value.line == 1 and "damaged" in str(err.value)


@pytest.mark.parametrize("column", ["src", "weight"])
def test_a_huge_field_is_quoted_short(tmp_path, column):
    field = "x" * 20_000_000
    rows = ["s,d,weight", "1,2,0.5", f"{field},3,1" if column == "src" else f"2,3,{field}"]
    path = write_text(tmp_path / "e.csv", "\n".join(rows) + "\n")
    with pytest.raises(IngestError) as err:
        load(tmp_path / "db", path)
    assert err.value.line == 3 and len(str(err.value)) < 400, str(err.value)[:500]
    assert "20,000,000 characters" in str(err.value)


def test_integer_ids_beyond_64_bits_load_as_text(tmp_path):
    path = write_text(tmp_path / "e.csv", "s,d\n1,2\n9223372036854775808,1\n")
    catalog, entry = load(tmp_path / "db", path, id_type="string")
    assert catalog.vertex_ids(entry).to_pylist() == ["1", "2", "9223372036854775808"]


def test_unsigned_ids_above_2_63_in_parquet_name_their_row(tmp_path):
    path = tmp_path / "e.parquet"
    pq.write_table(pa.table({"s": pa.array([1, 2, 2**63 + 5], pa.uint64()),
                             "d": pa.array([2, 3, 1], pa.uint64())}), path)
    with pytest.raises(IngestError, match=r"row 3: vertex id 9223372036854775813 is above 2\^63"):
        load(tmp_path / "db", path)


WEIGHTS = "s,d,weight\n1,2,0.5\n2,3,nan\n3,4,inf\n4,5,-2\n5,1,-inf\n6,1,\n"


def test_invalid_weights_kept_on_request_and_counted(tmp_path):
    path = write_text(tmp_path / "e.csv", WEIGHTS.replace("6,1,\n", ""))
    with graphdb.connect(tmp_path / "db") as con:
        with pytest.raises(graphdb.Error, match=r"e.csv:3: weight nan .* not a number"):
            con.ingest("g", path)
        summary = con.ingest("g", path, invalid_weights="keep")
        assert summary["weights_kept"] == {"nan": 1, "infinite": 2, "negative": 1}
        weights = dict(((s, d), w) for s, d, w in con.execute(
            "SELECT src, dst, weight FROM g.edges").fetchall())
    assert weights[(1, 2)] == 0.5 and math.isnan(weights[(2, 3)])
    assert weights[(3, 4)] == math.inf and weights[(5, 1)] == -math.inf
    assert weights[(4, 5)] == -2


def test_an_empty_weight_is_missing_not_nan(tmp_path):
    path = write_text(tmp_path / "e.csv", WEIGHTS)
    with pytest.raises(IngestError) as err:
        load(tmp_path / "db", path, invalid_weights="keep")
    assert err.value.line == 7 and "missing weight" in str(err.value)


def test_nan_in_parquet_weights_is_refused_with_its_row(tmp_path):
    path = tmp_path / "e.parquet"
    pq.write_table(pa.table({"s": [1, 2], "d": [2, 3], "weight": [1.0, np.nan]}), path)
    with pytest.raises(IngestError, match="row 2: weight nan"):
        load(tmp_path / "db", path)


def test_the_command_line_says_what_was_kept(tmp_path):
    path = write_text(tmp_path / "e.csv", "s,d,weight\n1,2,-1\n2,3,1\n")
    run = [sys.executable, "-m", "graphdb.cli", "ingest", str(tmp_path / "db"), "g", str(path)]
    refused = subprocess.run(run + ["--quiet"], capture_output=True, text=True, cwd=ROOT)
    assert refused.returncode == 1 and "e.csv:2: weight -1.0" in refused.stderr
    assert "internal error" not in refused.stderr
    kept = subprocess.run(run + ["--invalid-weights", "keep"], capture_output=True, text=True,
                          cwd=ROOT)
    assert kept.returncode == 0 and "weights kept       1 negative" in kept.stdout


def test_a_name_too_long_is_refused_before_the_input_is_read(tmp_path):
    with graphdb.connect(tmp_path / "db") as con:
        for name in ("g" * 600, "g" * 256):
            with pytest.raises(graphdb.Error, match=r"invalid graph name .*at most 255"):
                con.ingest(name, tmp_path / "does-not-exist.csv")
        assert list((tmp_path / "db" / "graphs").iterdir()) == []
        assert con.graphs() == []
    with pytest.raises(CatalogError):
        load(tmp_path / "db2", tmp_path / "does-not-exist.csv", name="1g")


@pytest.mark.parametrize("late", ["3000000000", "-2147483649", "x7"])
def test_ids_read_as_32_bit_until_one_is_not(tmp_path, monkeypatch, late):
    """The first rows' ids fit 32 bits, so the text is parsed so; a later id that does not (in
    a later block) makes the ingest read the file again with 64-bit ids, or, not an integer at
    all, fail naming its line."""
    import graphdb.catalog.readers as readers

    monkeypatch.setattr(readers, "BLOCK_BYTES", 1 << 10)
    rows = [f"{i},{(7 * i) % 3000}" for i in range(3000)]
    rows[2500] = f"{late},5"
    path = write_text(tmp_path / "e.csv", "s,d\n" + "\n".join(rows) + "\n")
    if late == "x7":
        with pytest.raises(IngestError) as err:
            load(tmp_path / "db", path, memory_limit=1 << 20)
        assert err.value.line == 2502 and "'x7'" in str(err.value)
        return
    catalog, entry = load(tmp_path / "db", path, memory_limit=1 << 20)
    ids = catalog.vertex_ids(entry).to_pylist()  # 2500 only ever met itself, on its row
    assert ids == sorted([int(late)] + [i for i in range(3000) if i != 2500])
    edges = set(zip(*[catalog.edge_table(entry).column(c).to_pylist() for c in ("src", "dst")]))
    assert (int(late), 5) in edges and (2499, (7 * 2499) % 3000) in edges and len(edges) == 3000
