#!/usr/bin/env bash
# One full check on a GPU machine: the whole test suite (GPU tests included), the demo and a few
# queries on the GPU through the command line, start-up time of a query in a fresh process, and
# the GPU benchmark. Everything worth keeping is written under $OUT (default ./gpu-check-out).
#
#   OUT=/some/dir bash tools/gpu_check.sh [--no-bench]
set -uo pipefail
OUT=${OUT:-gpu-check-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -c "import cupy; print('cupy', cupy.__version__)" | tee -a "$OUT/gpu.txt"

echo "== tests"
timeout 420 python3 -m pytest tests -q -o addopts="" -m "not slow" -p no:cacheprovider \
    -W ignore::DeprecationWarning 2>&1 | tee "$OUT/pytest.log" | tail -25

echo "== demo and queries on the GPU"
db=$(mktemp -d)/demo
{
  python3 -m graphdb demo "$db"
  python3 -m graphdb query "$db" "EXPLAIN ANALYZE SELECT count(*) FROM bfs(roads, 0)"
  python3 -m graphdb query "$db" "SELECT vertex, distance FROM sssp(roads, 0) ORDER BY distance DESC LIMIT 3"
  python3 -m graphdb query "$db" "SELECT count(DISTINCT component) AS components FROM wcc(social)"
  printf 'SET device = %s;\nSELECT count(*) FROM pagerank(social);\n' "'cpu'" | python3 -m graphdb "$db"
} 2>&1 | tee "$OUT/queries.log" | tail -40

echo "== start-up: a query in a fresh process (warm kernel cache)"
for i in 1 2 3; do
  python3 - "$db" <<'PY' 2>&1 | tee -a "$OUT/startup.log"
import sys, time
t0 = time.perf_counter()
import graphdb
con = graphdb.connect(sys.argv[1])
t1 = time.perf_counter()
con.execute("SELECT count(*) FROM bfs(social, 0)").fetchall()
t2 = time.perf_counter()
print(f"import+connect {1000 * (t1 - t0):.0f} ms, first GPU query {1000 * (t2 - t1):.0f} ms")
PY
done

if [ "${1:-}" != "--no-bench" ]; then
  echo "== GPU benchmark"
  timeout 300 python3 tools/bench_gpu.py --out "$OUT" 2>&1 | tail -30
fi
