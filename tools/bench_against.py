"""The same statements in this tree and in an older one, on the same graph, in one run: the
figure a regression is checked with.

    python tools/bench_against.py [--rev d3712cd] [--persons 50000] [--knows 1000000]
                                  [--repeats 5] [--rounds 2] [--out FILE] [STATEMENT ...]

The older tree is checked out into a temporary git worktree (``git worktree add --detach``;
removed afterwards) and imported from there in its own process (``PYTHONPATH``; trees before the
layers moved under ``graphdb`` import ``catalog``/``executor`` at the top level, which that
handles too). Both processes load the ``knows`` edges of :func:`bench_graph_language.generate`
(the LDBC SNB-style social graph: 50 k persons, 1 M friendships) from one Parquet file as graph
``k`` with ``SET device = 'cpu'``, run each statement once untimed (compiled kernels, the graph
read from storage), then ``--repeats`` timed runs; the processes alternate for ``--rounds``
rounds so that a busy machine's drift hits both. Reported: the median over all timed runs per
tree, and this tree's over the older one's (below 1: faster now). The answers must be equal.

The default statement is CPU CDLP with 10 iterations, the regression of issue 31 (2.0-2.8 s
where d3712cd took 288 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_STATEMENTS = ("SELECT count(DISTINCT label), count(*) FROM cdlp(k, max_iterations => 10)",)

#: What runs in each tree's process: load the graph, time the statements, print JSON.
WORKER = r"""
import json, sys, tempfile, time
import graphdb
data, statements, repeats = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
with tempfile.TemporaryDirectory(prefix="graphdb-against-") as tmp:
    con = graphdb.connect(tmp + "/db")
    con.execute("SET device = 'cpu'")
    try:
        con.ingest("k", data, weight=None)
    except TypeError:  # older trees take no weight argument
        con.ingest("k", data)
    out = []
    for sql in statements:
        answer = [list(r) for r in con.execute(sql).fetchall()]  # warm
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            con.execute(sql).fetchall()
            times.append((time.perf_counter() - start) * 1000)
        out.append({"sql": sql, "ms": times, "answer": answer})
    con.close()
print("RESULT " + json.dumps({"graphdb": graphdb.__file__, "rows": out}))
"""


def _run_tree(path: Path | None, data: Path, statements: list[str], repeats: int) -> dict:
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = str(path)
    done = subprocess.run([sys.executable, "-c", WORKER, str(data), json.dumps(statements),
                           str(repeats)], env=env, capture_output=True, text=True,
                          cwd=path or ROOT, timeout=3600)
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
    if done.returncode or line is None:
        raise SystemExit(f"the run in {path or ROOT} failed:\n{done.stderr[-3000:]}")
    return json.loads(line[len("RESULT "):])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("statements", nargs="*", default=list(DEFAULT_STATEMENTS))
    parser.add_argument("--rev", default="d3712cd", help="the older tree (a git revision)")
    parser.add_argument("--persons", type=int, default=50_000)
    parser.add_argument("--knows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", help="write the results as JSON to this file")
    args = parser.parse_args(argv)

    import pyarrow.parquet as pq

    sys.path.insert(0, str(ROOT / "tools"))
    from bench_graph_language import generate

    with tempfile.TemporaryDirectory(prefix="graphdb-against-") as tmp_name:
        tmp = Path(tmp_name)
        knows = generate(args.persons, args.knows)["knows"]
        data = tmp / "knows.parquet"
        pq.write_table(knows.rename_columns(["src", "dst", "year", "interactions"])
                       .select(["src", "dst"]), data)
        old = tmp / "old"
        subprocess.run(["git", "worktree", "add", "--detach", str(old), args.rev], cwd=ROOT,
                       check=True, capture_output=True)
        try:
            runs: dict[str, list[dict]] = {"now": [], args.rev: []}
            start = time.perf_counter()
            for _ in range(args.rounds):
                runs[args.rev].append(_run_tree(old, data, args.statements, args.repeats))
                runs["now"].append(_run_tree(None, data, args.statements, args.repeats))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT,
                           capture_output=True)
    report = {"rev": args.rev, "persons": args.persons, "knows": knows.num_rows,
              "seconds": time.perf_counter() - start, "statements": []}
    print(f"{args.persons:,} persons, {knows.num_rows:,} knows; this tree against {args.rev}, "
          f"{args.rounds} rounds x {args.repeats} runs, 2 processes each\n")
    print(f"| statement | {args.rev} ms | now ms | now / {args.rev} | same answer |")
    print("|---|---:|---:|---:|---|")
    agree_all = True
    for i, sql in enumerate(args.statements):
        ms = {tree: statistics.median([t for run in done for t in run["rows"][i]["ms"]])
              for tree, done in runs.items()}
        answers = {tree: done[0]["rows"][i]["answer"] for tree, done in runs.items()}
        agree = answers["now"] == answers[args.rev]
        agree_all &= agree
        report["statements"].append({"sql": sql, "old_ms": ms[args.rev], "now_ms": ms["now"],
                                     "ratio": ms["now"] / ms[args.rev], "agree": agree,
                                     "answers": answers})
        print(f"| `{sql}` | {ms[args.rev]:.1f} | {ms['now']:.1f} | "
              f"{ms['now'] / ms[args.rev]:.2f} | {'yes' if agree else 'NO ' + str(answers)} |")
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    return 0 if agree_all else 1


if __name__ == "__main__":
    sys.exit(main())
