#!/usr/bin/env bash
# The one device run of issue 21 (branch gpu-speed): its GPU tests, then its measurements
# (tools/bench_e2e.py: whole queries against kernel time and result bytes, GPU against CPU,
# grid BFS per level, BFS GTEPS, PageRank against its traffic bound, fresh-process start-up).
# Everything lands under $OUT; the whole run stops itself before 9 minutes.
#
#   OUT=/some/dir bash tools/gpu_speed.sh
set -uo pipefail
OUT=${OUT:-gpu-speed-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
    --format=csv,noheader 2>&1 | tee "$OUT/gpu.txt"
python3 -c "import cupy, numpy, pyarrow; print('cupy', cupy.__version__, 'numpy', numpy.__version__, 'pyarrow', pyarrow.__version__)" \
    2>&1 | tee -a "$OUT/gpu.txt"

echo "== new GPU tests: result path, pushdown, single-block kernels, sswp/neighbors/paths ($(elapsed) s)"
timeout 140 python3 -m pytest -q -p no:cacheprovider -o addopts="" -m "not slow" -rf \
    --durations=10 tests/gpu/test_gpu_results.py tests/gpu/test_gpu_paths.py \
    2>&1 | tee "$OUT/pytest_new.log" | tail -25

echo "== GPU operators, start-up, tiles, the SQL corpus on the GPU, pushdown ($(elapsed) s)"
timeout 110 python3 -m pytest -q -p no:cacheprovider -o addopts="" -m "not slow" -rf \
    tests/gpu/test_gpu_operators.py tests/gpu/test_gpu_startup.py tests/gpu/test_pagerank_tiles.py \
    tests/sql tests/executor/test_pushdown.py tests/executor/test_gpu_plans.py \
    2>&1 | tee "$OUT/pytest_rest.log" | tail -25

left=$(( 515 - $(elapsed) ))
echo "== benchmark, ${left} s left ($(elapsed) s)"
if [ "$left" -gt 60 ]; then
  timeout "$left" python3 tools/bench_e2e.py --out "$OUT" --budget-s $(( left - 75 )) \
      2>&1 | tee "$OUT/bench.log" | tail -45
fi
echo "== done in $(elapsed) s"
