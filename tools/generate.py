"""Write synthetic graphs to edge files: R-MAT (Kronecker) and grids, deterministic by seed.

    python -m tools.generate rmat --scale 20 --edge-factor 16 --seed 1 rmat20.csv
    python -m tools.generate grid --rows 1000 --cols 1000 --weights grid.e

The generators themselves are ``graphdb.generators`` (the installed demo uses them too).
The output format follows the extension: .csv (header src,dst[,weight]), .e / .txt (space
separated), .parquet.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

from graphdb.generators import grid, random_weights, rmat


def write_edges(path: Path, src: np.ndarray, dst: np.ndarray, weights: np.ndarray | None) -> None:
    columns = {"src": src, "dst": dst}
    if weights is not None:
        columns["weight"] = weights
    table = pa.table(columns)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        import pyarrow.csv as pacsv

        pacsv.write_csv(table, path)
    elif suffix == ".parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, path)
    elif suffix in (".e", ".txt"):
        import pyarrow.csv as pacsv

        options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
        if weights is not None:
            table = table.set_column(2, "weight", pa.array(weights.astype(np.int64)))
        pacsv.write_csv(table, path, options)
    else:
        raise SystemExit(f"unknown output format '{suffix}' (use .csv, .e, .txt or .parquet)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.generate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="kind", required=True)
    r = sub.add_parser("rmat", help="R-MAT / Kronecker graph (Graph500 parameters)")
    r.add_argument("--scale", type=int, required=True, help="2**scale vertices")
    r.add_argument("--edge-factor", type=int, default=16, help="edges per vertex (default 16)")
    g = sub.add_parser("grid", help="2-D 4-neighbour grid (each edge once)")
    g.add_argument("--rows", type=int, required=True)
    g.add_argument("--cols", type=int, required=True)
    for p in (r, g):
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--weights", action="store_true", help="add integer weights 1..100")
        p.add_argument("output", type=Path)
    args = parser.parse_args(argv)
    if args.kind == "rmat":
        src, dst = rmat(args.scale, args.edge_factor, seed=args.seed)
    else:
        src, dst = grid(args.rows, args.cols)
    weights = random_weights(len(src), seed=args.seed) if args.weights else None
    write_edges(args.output, src, dst, weights)
    print(f"wrote {len(src):,} edges to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
