"""Check the NCCL backend and the partitioned GPU operators on whatever GPUs are present.

    OUT=/some/dir python tools/check_multi_gpu.py [--skip-bench]

One GPU is enough for most of it (NCCL with one rank is a valid communicator, and several ranks
simulated on one GPU run the multi-rank GPU code); with two or more every GPU takes part. In
order, each step's output under ``$OUT`` (default ``./multi-gpu-check``), the summary last:

1. the GPUs, CuPy, NCCL (``NCCL_NVLS_ENABLE`` is set to 0 before any communicator);
2. ``pytest tests/gpu/test_partitioned_gpu.py``: NCCL collectives and byte counts on 1 and all
   GPUs, every partitioned operator on 1-3 ranks simulated on GPU 0 and over NCCL on all GPUs
   against the CPU, split state, streamed ranks, SQL with ``debug_variant = 'partitioned'``;
   then the SQL corpus and the Graphalytics cases on 3 ranks simulated on the GPU;
3. the partitioned operators on R-MAT 20 and a 512 x 512 grid against the one-GPU operators
   (``tools/bench_multi_gpu.py --quick``: times, bytes per step, the planner's choice);
4. the same cases through MPI with one rank per GPU (NCCL over MPI; ``mpiexec -n <GPUs>``)
   when mpi4py and mpiexec are installed (found as ``tools/mpi_runtime.py`` says: also
   ``pip install --target DIR`` with ``DIR`` on ``PYTHONPATH``, or ``GRAPHDB_MPI_HOME``).

About 3-5 minutes on one H200 (most of it compiling kernels once and generating the graphs).
The exit status is 0 only when every step passed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.mpi_runtime import mpi_environment  # noqa: E402
from tools.mpi_runtime import mpiexec as find_mpiexec  # noqa: E402


def step(name: str, command: list[str], out: Path, timeout: float, env: dict) -> dict:
    """Run one step, its output to OUT/<name>.log; (name, ok, seconds, last lines)."""
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=timeout)
        text, ok = done.stdout + done.stderr, done.returncode == 0
    except subprocess.TimeoutExpired as exc:
        text = f"{exc.stdout or ''}{exc.stderr or ''}\nTIMEOUT after {timeout} s"
        ok = False
    (out / f"{name}.log").write_text(text)
    seconds = time.perf_counter() - start
    tail = "\n".join(text.strip().splitlines()[-12:])
    print(f"== {name}: {'ok' if ok else 'FAILED'} in {seconds:.0f} s\n{tail}\n", flush=True)
    return {"step": name, "ok": ok, "seconds": round(seconds, 1), "tail": tail}


def environment(env: dict) -> dict:
    code = ("import cupy, json; from cupy.cuda import nccl, runtime as r\n"
            "n = r.getDeviceCount()\n"
            "names = [r.getDeviceProperties(d)['name'] for d in range(n)]\n"
            "names = [x.decode() if isinstance(x, bytes) else str(x) for x in names]\n"
            "print(json.dumps({'gpus': names, 'cupy': cupy.__version__,\n"
            "                  'nccl': nccl.get_version()}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120)
    if done.returncode:
        return {"error": done.stderr[-2000:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-bench", action="store_true")
    args = parser.parse_args()
    out = Path(os.environ.get("OUT") or "multi-gpu-check")
    out.mkdir(parents=True, exist_ok=True)
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "NCCL_NVLS_ENABLE": "0",
           "PYTHONUNBUFFERED": "1"}
    summary: dict = {"environment": environment(env), "steps": []}
    print(json.dumps(summary["environment"]), flush=True)
    gpus = len(summary["environment"].get("gpus", []))
    if not gpus:
        print("no GPU visible: nothing to check here", file=sys.stderr)
        return 2
    steps = summary["steps"]
    steps.append(step("pytest_partitioned_gpu", [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
        "tests/gpu/test_partitioned_gpu.py", "tests/executor/test_partitioned.py"],
        out, 300, env))
    steps.append(step("sql_gpu_partitioned", [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
        "tests/sql/test_sql_files.py", "tests/graphdb/test_graphalytics_sql.py",
        "-k", "gpu-partitioned"], out, 240, env))
    for done in steps:  # a GPU test that did not run failed
        if done["tail"] and "skipped" in done["tail"].splitlines()[-1]:
            done["ok"] = False
    if not args.skip_bench:
        steps.append(step("bench_quick", [
            sys.executable, "tools/bench_multi_gpu.py", "--quick", "--repeats", "2",
            "--sources", "2", "--out", str(out / "bench")], out, 200, env))
    mpi = find_mpiexec()
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        mpi = None
    if mpi and gpus:
        steps.append(step("mpi_gpu_ranks", [
            mpi, "-n", str(gpus), sys.executable, "-m", "tests.cluster.mpi_cases", "--gpu"],
            out, 180, mpi_environment(env)))
    else:
        steps.append({"step": "mpi_gpu_ranks", "ok": None,
                      "tail": "skipped: mpi4py or mpiexec missing (pip install 'graphdb[cluster]')"})
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print("== summary")
    for s in steps:
        verdict = {True: "ok", False: "FAILED", None: "skipped"}[s["ok"]]
        print(f"{s['step']:>24}: {verdict} ({s.get('seconds', 0)} s)")
    return 0 if all(s["ok"] in (True, None) for s in steps) else 1


if __name__ == "__main__":
    sys.exit(main())
