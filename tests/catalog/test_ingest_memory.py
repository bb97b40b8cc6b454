"""An ingest's peak memory is bounded by --memory-limit, not by the input: measured from outside,
in fresh processes, on inputs four times apart in size, for text and Parquet."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from graphdb.generators import rmat

ROOT = Path(__file__).resolve().parents[2]
LIMIT = "4MiB"

CHILD = """
import json, sys, graphdb
with graphdb.connect(sys.argv[1]) as con:
    summary = con.ingest("g", sys.argv[2], memory_limit=sys.argv[3])
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(json.dumps({"peak_kib": int(status["VmHWM"].split()[0]), "edges": summary["edges"]}))
"""


def peak_mib(tmp_path: Path, edges: Path, limit: str = LIMIT) -> float:
    db = tmp_path / f"db-{edges.stem}"
    out = subprocess.run([sys.executable, "-c", CHILD, str(db), str(edges), limit],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["peak_kib"] / 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
# the spilling ingest behind both readers is bounded the same way: text by default, Parquet's
# reader in the slow tier
@pytest.mark.parametrize("fmt", ["csv", pytest.param("parquet", marks=pytest.mark.slow)])
def test_peak_memory_does_not_grow_with_the_input(tmp_path, fmt):
    peaks = {}
    for scale in (14, 16):  # 262 k and 1 M edges: 4 and 16 MB of ids against a 4 MiB limit
        src, dst = rmat(scale, seed=scale)
        path = tmp_path / f"rmat{scale}.{fmt}"
        table = pa.table({"src": src, "dst": dst})
        if fmt == "csv":
            pacsv.write_csv(table, path)
        else:
            pq.write_table(table, path, row_group_size=len(src))  # one row group: no help
        peaks[scale] = peak_mib(tmp_path, path)
    # Unbounded, the larger input would hold 12 MB more of ids alone, and more again sorted.
    assert peaks[16] - peaks[14] < 8, peaks
