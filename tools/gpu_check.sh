#!/usr/bin/env bash
# One full check on a GPU machine, the run to make with the defaults (about 5-6 minutes on an
# H100/H200, never more than BUDGET_S = 480 s: every step runs under `timeout` with what is left):
#
#   1. the tests marked gpu (pytest -m "gpu and not slow"; TESTS=all runs the whole suite, which
#      on an H200 takes about 450 s by itself: run it as its own command,
#      python3 -m pytest tests -q -o addopts="" -m "not slow" -p no:cacheprovider);
#   2. the demo and a few queries on the GPU through the command line (EXPLAIN ANALYZE included);
#   3. start-up: a BFS query in a fresh process, three times (warm kernel cache);
#   4. tools/bench_gpu.py at its defaults (R-MAT 24, SSSP R-MAT 22, grid 2048): the GPU operators
#      against CuPy, cupyx, scipy and the memory-traffic bound, PageRank by layout and kernel,
#      the start-up of a fresh process's query and the cold compile of every kernel module;
#   5. tools/bench_streaming.py at a reduced size (R-MAT 22, pages R-MAT 19, CPU R-MAT 18): the
#      streamed operators against the resident ones, bytes moved, bandwidth (skipped when less
#      than 45 s are left).
#
# Everything is written under $OUT (default ./gpu-check-out): gpu.txt, pytest.log, queries.log,
# startup.log, bench_gpu.{log,json,md}, bench_streaming.{log,json,md}, summary.txt (each step's
# exit status and seconds; 124 means it ran out of time). Run from the repository root:
#
#   OUT=/some/dir bash tools/gpu_check.sh [--no-bench]
set -uo pipefail
OUT=${OUT:-gpu-check-out}
BUDGET_S=${BUDGET_S:-480}
mkdir -p "$OUT"
: > "$OUT/summary.txt"
export PYTHONUNBUFFERED=1
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
START=$SECONDS

# step NAME CAP_S LOG TAIL_LINES command...: run under timeout (the cap, or what is left of the
# budget), output to $OUT/LOG, its last lines shown, its status in summary.txt.
step() {
  local name=$1 cap=$2 log=$3 lines=$4
  shift 4
  local left=$((BUDGET_S - (SECONDS - START)))
  local limit=$((cap < left ? cap : left))
  if [ "$limit" -lt "${MIN_S:-20}" ]; then
    echo "$name: skipped, budget spent" | tee -a "$OUT/summary.txt"
    return
  fi
  echo "== $name (at most ${limit} s)"
  local t0=$SECONDS
  timeout -k 10 "$limit" "$@" > "$OUT/$log" 2>&1
  local rc=$?
  tail -n "$lines" "$OUT/$log"
  echo "$name: rc=$rc, $((SECONDS - t0)) s" | tee -a "$OUT/summary.txt"
}

{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import sys, cupy; print('python', sys.version.split()[0], 'cupy', cupy.__version__)"
} 2>&1 | tee "$OUT/gpu.txt"

# pytest-timeout >= 2.3 ends the session cleanly (with its summary) before the step's limit
session=()
if python3 -m pytest --help 2>/dev/null | grep -q -- "--session-timeout"; then
  session=(--session-timeout 250)
fi
marker="gpu and not slow"
[ "${TESTS:-gpu}" = all ] && marker="not slow"
step tests "${TESTS_S:-270}" pytest.log 30 python3 -m pytest tests -q -o addopts="" -m "$marker" \
  -p no:cacheprovider -W ignore::DeprecationWarning -rfE --durations=10 ${session[@]+"${session[@]}"}

export DB="$WORK/demo"
cat > "$WORK/queries.sh" <<'SH'
set -e
python3 -m graphdb demo "$DB"
python3 -m graphdb query "$DB" "EXPLAIN ANALYZE SELECT count(*) FROM bfs(roads, 0)"
python3 -m graphdb query "$DB" "EXPLAIN ANALYZE SELECT count(*) FROM pagerank(social)"
python3 -m graphdb query "$DB" "SELECT vertex, distance FROM sssp(roads, 0) ORDER BY distance DESC LIMIT 3"
python3 -m graphdb query "$DB" "SELECT count(DISTINCT component) AS components FROM wcc(social)"
printf "SET device = 'cpu';\nSELECT count(*) FROM pagerank(social);\n" | python3 -m graphdb "$DB"
SH
step queries 90 queries.log 40 bash "$WORK/queries.sh"

cat > "$WORK/startup.py" <<'PY'
import sys, time
t0 = time.perf_counter()
import graphdb
con = graphdb.connect(sys.argv[1])
t1 = time.perf_counter()
con.execute("SELECT count(*) FROM bfs(social, 0)").fetchall()
t2 = time.perf_counter()
print(f"import+connect {1000 * (t1 - t0):.0f} ms, first GPU query {1000 * (t2 - t1):.0f} ms")
PY
# (read from stdin, so that the repository root is on sys.path as for python3 -m graphdb)
step startup 45 startup.log 3 bash -c 'for i in 1 2 3; do python3 - "$DB" < "$1/startup.py"; done' \
  _ "$WORK"

if [ "${1:-}" != "--no-bench" ]; then
  step bench_gpu 240 bench_gpu.log 0 python3 tools/bench_gpu.py --out "$OUT" --startup-db "$DB"
  if [ -f "$OUT/bench_gpu.md" ]; then cat "$OUT/bench_gpu.md"; else tail -30 "$OUT/bench_gpu.log"; fi
  MIN_S=45 step bench_streaming 150 bench_streaming.log 0 python3 tools/bench_streaming.py --out "$OUT" \
    --scale 22 --page-scale 19 --cpu-scale 18 --workdir "$WORK/streaming"
  if [ -f "$OUT/bench_streaming.md" ]; then cat "$OUT/bench_streaming.md"
  elif [ -f "$OUT/bench_streaming.log" ]; then tail -30 "$OUT/bench_streaming.log"; fi
fi
echo "== summary ($((SECONDS - START)) s)"
cat "$OUT/summary.txt"
