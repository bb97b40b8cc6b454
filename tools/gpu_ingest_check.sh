#!/usr/bin/env bash
# The ingest on a GPU machine: its GPU tests (the sort on the device against the CPU's, byte for
# byte), then RMAT24 (263 M edges) timed side by side: the sort on the CPU, on the GPU, and
# DuckDB's plain read of the same CSV on the same host (issue 18: GPU path >= 2x the CPU path,
# at most 1.5x DuckDB). Output under $OUT (default ./gpu-ingest-out).
#
#   OUT=/some/dir bash tools/gpu_ingest_check.sh [SCALE]
set -uo pipefail
OUT=${OUT:-gpu-ingest-out}
SCALE=${1:-24}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
nproc | tee -a "$OUT/gpu.txt"

echo "== GPU ingest tests"
timeout 600 python3 -m pytest -q -o addopts="" -p no:cacheprovider \
    tests/gpu/test_ingest_gpu.py tests/catalog/test_device_build.py 2>&1 | tee "$OUT/pytest.log" | tail -5

echo "== RMAT$SCALE: graphdb (CPU sort, GPU sort) beside DuckDB"
work=$(mktemp -d)
timeout 3000 python3 tools/bench_ingest.py --scale "$SCALE" --repeat 2 --no-rss \
    --engines graphdb-cpu,graphdb-gpu,duckdb --workdir "$work" --out "$OUT/bench.json" \
    2>&1 | tee "$OUT/bench.log" | tail -12
rm -rf "$work"
