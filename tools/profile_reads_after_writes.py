"""Where the first query after a write spends its time: cProfile of BFS, PageRank and WCC after
a 1% delta's write and after a single-row INSERT, on R-MAT ``scale`` (the companion of
tools/bench_reads_after_writes.py, which measures the same queries against the compacted graph).

    python tools/profile_reads_after_writes.py [--scale 20] [--device cpu|gpu]

The device is synchronized before and after each profiled query.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import graphdb  # noqa: E402
from tools.bench_reads_after_writes import QUERIES, _write_delta, warm_up  # noqa: E402
from tools.bench_writes import base_graph  # noqa: E402


def _sync(device: str) -> None:
    if device == "gpu":
        import cupy

        cupy.cuda.Device().synchronize()


def _profiled(con, sql: str, params, label: str, device: str) -> None:
    profile = cProfile.Profile()
    _sync(device)
    start = time.perf_counter()
    profile.enable()
    con.execute(sql, params).fetchall()
    _sync(device)
    profile.disable()
    print(f"===== {label}: {1000 * (time.perf_counter() - start):.1f} ms")
    for order, lines in (("cumulative", 45), ("tottime", 25)):
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats(order).print_stats(lines)
        print(text.getvalue())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--share", type=float, default=0.01)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="profile_reads_after_writes_"))
    try:
        warm_up(work, args.device)
        edges = base_graph(args.scale)
        keep = edges.num_rows - int(edges.num_rows * args.share / 2)
        base = work / "base"
        with graphdb.connect(str(base)) as con:
            con.ingest("g", edges.slice(0, keep),
                       vertices=pa.table({"id": np.arange(1 << args.scale)}))
        source = int(edges.column("src")[0].as_py())
        for name, sql in QUERIES.items():
            db = work / name
            shutil.copytree(base, db)
            params = [source] if "?" in sql else None
            with graphdb.connect(str(db)) as con:
                con.execute(f"SET device = '{args.device}'")
                con.execute("SET compaction_threshold = 0")
                for _ in range(3):
                    con.execute(sql, params).fetchall()
                _sync(args.device)
                start = time.perf_counter()
                con.execute(sql, params).fetchall()
                _sync(args.device)
                print(f"##### {name} base warm {1000 * (time.perf_counter() - start):.1f} ms")
                _write_delta(con, edges.slice(keep), args.share)
                _profiled(con, sql, params, f"{name} first after the delta's write", args.device)
                _profiled(con, sql, params, f"{name} second after the delta's write",
                          args.device)
                con.execute("INSERT INTO g.edges VALUES (?, ?, 1.0)", [1, 2])
                _profiled(con, sql, params, f"{name} first after a single-row write",
                          args.device)
            shutil.rmtree(db)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
