#!/usr/bin/env bash
# The ingest on a GPU machine, in stages that each fit a 10-minute command:
#
#   OUT=/some/dir bash tools/gpu_ingest_check.sh tests          # device sort vs CPU, byte for byte
#   OUT=/some/dir bash tools/gpu_ingest_check.sh input [SCALE]  # RMAT SCALE (24) CSV in $WORK
#   OUT=/some/dir bash tools/gpu_ingest_check.sh bench [SCALE]  # CPU sort, GPU sort, DuckDB
#
# Issue 18's targets for RMAT24 (263 M edges): graphdb at most 1.5x DuckDB's plain read of the
# same CSV on the same host, the GPU path at least 2x the CPU path. $WORK (default
# .gpuwork/ingest, ignored by git) keeps the CSV between stages; results go under $OUT
# (default .gpuwork/ingest-out).
set -uo pipefail
OUT=${OUT:-.gpuwork/ingest-out}
WORK=${WORK:-.gpuwork/ingest}
STAGE=${1:-tests}
SCALE=${2:-24}
mkdir -p "$OUT" "$WORK"
export PYTHONUNBUFFERED=1
case "$STAGE" in
  tests)
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
    nproc | tee -a "$OUT/gpu.txt"
    timeout 570 python3 -m pytest -q -o addopts="" -p no:cacheprovider \
        tests/gpu/test_ingest_gpu.py tests/catalog/test_device_build.py 2>&1 \
        | tee "$OUT/pytest.log" | tail -5 ;;
  input)
    timeout 570 python3 -c "
import sys; sys.path.insert(0, '.')
from pathlib import Path
from tools.bench_ingest import rmat_csv
print(rmat_csv(Path('$WORK'), $SCALE))" 2>&1 | tee "$OUT/input.log" ;;
  bench)
    timeout 570 python3 tools/bench_ingest.py --scale "$SCALE" --repeat 2 --no-rss \
        --engines graphdb-cpu,graphdb-gpu,duckdb --workdir "$WORK" --out "$OUT/bench.json" \
        2>&1 | tee "$OUT/bench.log" | tail -12 ;;
  *)
    echo "stages: tests, input, bench" >&2; exit 2 ;;
esac
