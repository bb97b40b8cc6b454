"""The ingest's progress: the bytes reported track the rows parsed, also for compressed input
(pyarrow's reader reads tens of blocks ahead, and a compressed stream further), and the
terminal display gives each phase its own measure, stops when done and fits 80 columns."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pytest

from graphdb.catalog.readers import InputFile

ROWS = 200_000


@pytest.fixture(scope="module")
def edge_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("progress")
    rng = np.random.default_rng(3)
    text = "src,dst\n" + "\n".join(f"{a},{b}" for a, b in rng.integers(0, 10**6, (ROWS, 2))) + "\n"
    (folder / "e.csv").write_text(text)
    with gzip.open(folder / "e.csv.gz", "wt", compresslevel=1) as f:
        f.write(text)
    return folder


@pytest.mark.parametrize("name", ["e.csv", "e.csv.gz"])
def test_bytes_done_tracks_rows_parsed(edge_files, name):
    source = InputFile(str(edge_files / name), block_bytes=32 << 10)
    gaps = []
    for _batch in source.batches():
        gaps.append(abs(source.bytes_done() / source.size - source._rows_done / ROWS))
    assert len(gaps) > 20  # many blocks, while the reader reads ahead
    # within a few blocks (the reader thread races the check); before, the bar ran 30% ahead
    assert max(gaps) < 0.1
    assert source.bytes_done() == source.size


def test_the_terminal_display_measures_each_phase_and_fits_80_columns():
    from graphdb.progress import RichProgress

    out = io.StringIO()
    progress = RichProgress(out)
    progress.phase("read", 267_000_000)
    progress.advance(120_000_000, 3_801_234)
    progress.advance(267_000_000, 8_000_000)
    progress.phase("sort")
    progress.phase("commit")
    progress.close()
    lines = [line for line in out.getvalue().splitlines() if line.strip()]
    assert [line.split()[:2] for line in lines[-3:]] == [["✓", "read"], ["✓", "sort"],
                                                          ["✓", "commit"]]
    read = lines[-3]
    assert "100%" in read and "254.6/254.6 MiB" in read and "8,000,000 rows" in read
    assert "bytes" not in lines[-2] and "?" not in "".join(lines)  # no '0/? bytes'
    assert max(len(line) for line in lines) <= 80

