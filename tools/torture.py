"""Damage, planted links and interrupts against a database, with every outcome counted.

    python -m tools.torture [--families lmdb,values,arrow,links,interrupts] [--trials 200]
                            [--seed 1] [--json report.json]

Builds a reference database (graphs with blocks, slotted pages, a delta log, Arrow properties
and enough catalog entries for a multi-page tree), answers a fixed set of queries on it, then
runs trials, each on a fresh copy, in worker processes (so that a crash is counted, not
suffered). Families:

- ``lmdb``: bit flips, zeroed bytes and zeroed runs in LMDB's own pages (meta, branch and leaf
  pages of every tree, the free-page lists), chosen among the pages in use;
- ``values``: the same inside values (the pages that hold blocks and slotted pages);
- ``arrow``: bit flips, zeroed bytes and truncation of the graphs' Arrow files;
- ``links``: a symbolic link (to a victim file outside, or dangling) or a second hard link in
  place of one of the database's files;
- ``interrupts``: SIGINT at a random moment of a statement (a process's first graph query, an
  iterative algorithm, a relational cross join, a large INSERT, a transaction, a pattern, a
  load); then the same connection must answer correctly, nothing partial may be committed and
  an open transaction must still roll back.

Each trial ends in one outcome; the goal is none of ``crash`` (the process died of a signal),
``wrong`` (an answer that differs from the reference, without an error), ``raw`` (an exception
that is not graphdb's own), ``outside`` (a file outside the database changed or appeared),
``lost`` (a graph directory or committed row gone), ``slow`` (an interrupt that took more than
a second to stop its statement), ``broken`` (a connection unusable after an interrupt). The
good ones: ``refused`` (graphdb's error, naming the damage), ``same`` (the damage changed
nothing anyone reads), ``stopped`` (an interrupt that stopped its statement in time).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BAD = ("crash", "wrong", "raw", "outside", "lost", "slow", "broken")
FAMILIES = ("lmdb", "values", "arrow", "links", "interrupts")

QUERIES = [
    "SHOW GRAPHS",
    "SELECT * FROM bfs(g, 1) ORDER BY vertex",
    "SELECT * FROM wcc(g) ORDER BY vertex",
    "SELECT vertex, round(rank, 9) FROM pagerank(g) ORDER BY vertex",
    "SELECT * FROM sssp(g, 1) ORDER BY vertex",
    "SELECT count(*), sum(weight), min(label) FROM g.edges",
    "SELECT * FROM g.vertices ORDER BY id",
    "SELECT * FROM neighbors(g, 3, 'in') ORDER BY neighbor",
    "SELECT * FROM bfs(s, 'v1') ORDER BY vertex",
    "SELECT count(*) FROM s.edges",
    "SELECT count(*), sum(src), sum(dst) FROM w.edges",
    "SELECT * FROM bfs(w, 0) ORDER BY vertex",
    "SELECT count(*) FROM m7.edges",
]
#: Queries run with the page-streamed operators forced (they read the slotted pages).
PAGE_QUERIES = ["SELECT * FROM bfs(g, 1) ORDER BY vertex",
                "SELECT vertex, round(rank, 9) FROM pagerank(g) ORDER BY vertex"]


# -- the reference database ------------------------------------------------------------------
def build(root: Path) -> tuple[Path, dict]:
    """The reference database under ``root`` and its answers."""
    import numpy as np
    import pyarrow as pa

    import graphdb

    rng = np.random.default_rng(7)
    n, m = 80, 600
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    g = pa.table({"src": src, "dst": dst, "weight": 1 + (src * 7 + dst) % 5,
                  "label": [f"e{a % 3}" for a in src.tolist()]})
    s = pa.table({"src": [f"v{a}" for a in src[:200].tolist()],
                  "dst": [f"v{b}" for b in dst[:200].tolist()]})
    db = root / "db"
    with graphdb.connect(db, page_size=4096) as con:
        con.ingest("g", g)
        con.ingest("s", s, undirected=True)
        con.execute("CREATE GRAPH w")
        con.executemany("INSERT INTO w.edges VALUES (?, ?)",
                        [(i, (i * 7) % 50) for i in range(120)])
        for i in range(12):  # a catalog of several LMDB pages
            con.execute(f"CREATE GRAPH m{i}")
            con.execute(f"INSERT INTO m{i}.edges VALUES ({i}, {i + 1})")
        answers = _answers(con)
    return db, answers


def _answers(con) -> dict:
    out = {q: _rows(con.execute(q).fetchall()) for q in QUERIES}
    con.execute("SET debug_variant = 'pages'")
    try:
        out.update({"pages: " + q: _rows(con.execute(q).fetchall()) for q in PAGE_QUERIES})
    finally:
        con.execute("RESET debug_variant")
    return out


def _rows(rows) -> list:
    return json.loads(json.dumps([list(r) for r in rows], default=str))


# -- damage ----------------------------------------------------------------------------------
def _lmdb_pages(db: Path) -> tuple[list[int], list[int], int]:
    """(tree and meta pages, pages that hold values, page size) of the data file."""
    from graphdb.storage.lmdb_verify import verify_file

    report = verify_file(db / "meta.lmdb" / "data.mdb", full=True)
    tree = [0, 1] + sorted({p for pages in report.tree_pages.values() for p in pages})
    values = sorted(set(range(2, report.last_page + 1)) - set(tree))
    return tree, values, report.page_size


def damage_pages(db: Path, rng: random.Random, pages: list[int], psize: int) -> str:
    data = db / "meta.lmdb" / "data.mdb"
    page = rng.choice(pages)
    kind = rng.choice(["bit", "bit", "zero2", "zero16", "head", "ptrs"])
    with open(data, "r+b") as f:
        base = page * psize
        if kind == "bit":
            at = base + rng.randrange(psize)
            f.seek(at)
            byte = f.read(1)[0] ^ (1 << rng.randrange(8))
            f.seek(at)
            f.write(bytes([byte]))
        elif kind == "zero2":
            at = base + rng.randrange(psize - 2)
            f.seek(at)
            f.write(b"\0\0")
        elif kind == "zero16":
            at = base + rng.randrange(psize - 16)
            f.seek(at)
            f.write(b"\0" * 16)
        elif kind == "head":  # a bit of the page header
            at = base + rng.randrange(16)
            f.seek(at)
            byte = f.read(1)[0] ^ (1 << rng.randrange(8))
            f.seek(at)
            f.write(bytes([byte]))
        else:  # a bit of the node-offset array
            f.seek(base + 12)
            lower = int.from_bytes(f.read(2), "little")
            at = base + 16 + rng.randrange(max(2, min(lower, psize) - 16))
            f.seek(at)
            byte = f.read(1)[0] ^ (1 << rng.randrange(8))
            f.seek(at)
            f.write(bytes([byte]))
    return f"{kind} in page {page}"


def damage_arrow(db: Path, rng: random.Random) -> str:
    files = sorted((db / "graphs").glob("*/*.arrow"))
    path = rng.choice(files)
    size = path.stat().st_size
    kind = rng.choice(["bit", "zero2", "truncate"])
    with open(path, "r+b") as f:
        if kind == "truncate":
            f.truncate(rng.randrange(size))
        else:
            at = rng.randrange(size - 2)
            f.seek(at)
            if kind == "bit":
                byte = f.read(1)[0] ^ (1 << rng.randrange(8))
                f.seek(at)
                f.write(bytes([byte]))
            else:
                f.write(b"\0\0")
    return f"{kind} in {path.relative_to(db)}"


LINK_NAMES = ["graphdb.db", "meta.lmdb/lock.mdb", "meta.lmdb/data.mdb", "leases.lock",
              "open.lock", "writer.lock", "meta.lmdb.compact", "graphdb.db.tmp", "graphs",
              "meta.lmdb"]


def plant_link(db: Path, victim: Path, rng: random.Random) -> str:
    """A link in place of one of the database's names (an Arrow file among them)."""
    names = LINK_NAMES + [str(p.relative_to(db)) for p in (db / "graphs").glob("*/*.arrow")]
    name = rng.choice(names)
    path = db / name
    how = rng.choice(["victim", "dangling", "copy", "hard"])
    target = victim / f"target-{rng.randrange(1 << 30)}"
    if how in ("victim", "copy", "hard"):
        if path.is_dir():
            shutil.copytree(path, target)
        elif path.exists():
            shutil.copy(path, target)
        else:
            target.write_bytes(b"victim's bytes\n")
        if how == "victim" and target.is_file():
            target.write_bytes(b"victim's bytes\n")
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    if how == "hard" and target.is_file():
        os.link(target, path)
    else:
        path.symlink_to(target)
    return f"{how} link at {name}"


def _outside(work: Path, db: Path) -> dict:
    """Every file outside the database (under ``work``): size and bytes' hash."""
    import hashlib

    out = {}
    for p in sorted(work.rglob("*")):
        if db in p.parents or p == db or p.is_dir():
            continue
        try:
            out[str(p)] = hashlib.sha1(p.read_bytes()).hexdigest()
        except OSError:
            out[str(p)] = "unreadable"
    return out


# -- the worker: runs trials in a process of its own -------------------------------------------
WORKER = r"""
import json, sys, time, traceback
sys.path.insert(0, {root!r})
import graphdb

def kind(exc):
    if isinstance(exc, graphdb.Error):
        return "refused"
    return "raw"

for line in sys.stdin:
    job = json.loads(line)
    out = {{"answers": {{}}, "errors": {{}}}}
    try:
        con = graphdb.connect(job["db"])
    except BaseException as exc:
        out["open"] = [kind(exc), f"{{type(exc).__name__}}: {{exc}}"[:300]]
        print(json.dumps(out), flush=True)
        continue
    for q in job["queries"]:
        pages = q.startswith("pages: ")
        try:
            if pages:
                con.execute("SET debug_variant = 'pages'")
            rows = con.execute(q[7:] if pages else q).fetchall()
            out["answers"][q] = json.loads(json.dumps([list(r) for r in rows], default=str))
        except BaseException as exc:
            out["errors"][q] = [kind(exc), f"{{type(exc).__name__}}: {{exc}}"[:300]]
        finally:
            if pages:
                try:
                    con.execute("RESET debug_variant")
                except BaseException:
                    pass
    for q in job.get("writes", []):
        try:
            con.execute(q)
        except BaseException as exc:
            out["errors"][q] = [kind(exc), f"{{type(exc).__name__}}: {{exc}}"[:300]]
    try:
        con.close()
    except BaseException as exc:
        out["errors"]["close"] = [kind(exc), f"{{type(exc).__name__}}: {{exc}}"[:300]]
    print(json.dumps(out), flush=True)
"""

WRITES = ["CREATE GRAPH extra", "INSERT INTO extra.edges VALUES (1, 2)", "DROP GRAPH extra",
          "VACUUM"]


class Workers:
    """A worker process that runs jobs one by one; restarted after a crash."""

    def __init__(self, root: Path):
        self.root = root
        self.proc = None

    def run(self, job: dict, timeout: float = 120) -> dict | str:
        if self.proc is None or self.proc.poll() is not None:
            env = dict(os.environ, GRAPHDB_INITIAL_MAP_SIZE=str(2 << 20))
            self.proc = subprocess.Popen([sys.executable, "-c", WORKER.format(root=str(self.root))],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True, env=env)
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(timeout)
            code = self.proc.returncode
            self.proc = None
            return f"crash (exit {code})"
        return json.loads(line)

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(30)


def classify(result, answers: dict, graphs_before: set, db: Path, outside_before: dict,
             work: Path) -> tuple[str, str]:
    """(outcome, detail) of one damage or link trial."""
    if isinstance(result, str):
        return "crash", result
    if _outside(work, db) != outside_before:
        return "outside", "a file outside the database changed"
    if "open" in result:
        status, text = result["open"]
        return ("raw" if status == "raw" else "refused"), text
    worst, detail = "same", ""
    for q, (status, text) in result["errors"].items():
        if status == "raw":
            return "raw", f"{q}: {text}"
        worst, detail = "refused", f"{q}: {text}"
    for q, rows in result["answers"].items():
        if rows != answers[q]:
            return "wrong", f"{q}: {str(rows)[:200]}"
    graphs_now = {p.name for p in (db / "graphs").iterdir()} if (db / "graphs").is_dir() else set()
    if not graphs_before <= graphs_now:
        return "lost", f"graph directories gone: {sorted(graphs_before - graphs_now)}"
    return worst, detail


def damage_trials(family: str, trials: int, rng: random.Random, base: Path, answers: dict,
                  scratch: Path, workers: Workers, report: dict) -> None:
    tree, values, psize = _lmdb_pages(base)
    for t in range(trials):
        work = scratch / f"{family}-{t}"
        db = work / "db"
        shutil.copytree(base, db, symlinks=True)
        victim = work / "victim"
        victim.mkdir()
        (victim / "precious.txt").write_text("keep me")
        if family == "lmdb":
            what = damage_pages(db, rng, tree, psize)
        elif family == "values":
            what = damage_pages(db, rng, values, psize)
        elif family == "arrow":
            what = damage_arrow(db, rng)
        else:
            what = plant_link(db, victim, rng)
        graphs_before = {p.name for p in (db / "graphs").iterdir()} if \
            (db / "graphs").is_dir() and not (db / "graphs").is_symlink() else set()
        before = _outside(work, db)
        job = {"db": str(db), "queries": list(answers), "writes": WRITES}
        result = workers.run(job)
        outcome, detail = classify(result, answers, graphs_before, db, before, work)
        report[family][outcome] += 1
        if outcome in BAD:
            report["bad"].append({"family": family, "damage": what, "outcome": outcome,
                                  "detail": detail})
        shutil.rmtree(work, ignore_errors=True)


# -- interrupts ------------------------------------------------------------------------------
INTERRUPTED = r"""
import json, os, signal, sys, threading, time
sys.path.insert(0, {root!r})
import graphdb
con = graphdb.connect({db!r})
setup = {setup!r}
for s in setup:
    con.execute(s)
print("ready", flush=True)
sys.stdin.readline()
print("started", flush=True)
start = time.time()
outcome = {{"finished": False}}
try:
    for s in {statements!r}:
        con.execute(s)
    outcome["finished"] = True
except KeyboardInterrupt:
    outcome["error"] = "KeyboardInterrupt"
except graphdb.OperationalError as exc:
    outcome["error"] = "OperationalError: " + str(exc)[:200]
except BaseException as exc:
    outcome["error"] = "raw " + type(exc).__name__ + ": " + str(exc)[:200]
outcome["stopped_at"] = time.time()
try:  # the signal is sent, and handled, before the checks run (it may come after the end)
    sys.stdin.readline()
    time.sleep(0.2)
except KeyboardInterrupt:
    outcome["after_end"] = True
try:
    outcome["after"] = [[list(r) for r in con.execute(q).fetchall()] for q in {checks!r}]
    if {rollback!r}:
        con.execute("ROLLBACK")
        outcome["after_rollback"] = [[list(r) for r in con.execute(q).fetchall()]
                                     for q in {checks!r}]
except BaseException as exc:
    outcome["broken"] = type(exc).__name__ + ": " + str(exc)[:200]
con.close()
print(json.dumps(outcome, default=str), flush=True)
"""

#: (name, setup statements, the interrupted statements, checks, rollback after, the answers the
#: checks may give: before or after the statement, never between)
INTERRUPT_CASES = [
    ("first graph query", [], ["SELECT count(*) FROM bfs(g, 1)"],
     ["SELECT count(*) FROM bfs(g, 1)"], False),
    ("pagerank", [], ["SELECT count(*) FROM pagerank(g, max_iterations => 100000, "
                      "tolerance => 0)"], ["SELECT count(*) FROM g.edges"], False),
    ("cross join", [], ["SELECT count(*) FROM range(100000) a, range(100000) b"],
     ["SELECT count(*) FROM g.edges"], False),
    ("insert select", [], ["INSERT INTO w.edges SELECT i, i + 1 FROM range(1000000) t(i)"],
     ["SELECT count(*) FROM w.edges"], False),
    ("transaction", ["BEGIN", "INSERT INTO w.edges VALUES (5000, 5001)"],
     ["INSERT INTO w.edges SELECT i, i + 1 FROM range(1000000) t(i)"],
     ["SELECT count(*) FROM w.edges"], True),
    ("pattern", [], ["SELECT count(*) FROM GRAPH_TABLE (g MATCH (a)-[]->{1,3}(b) "
                     "COLUMNS (a.id AS x))"], ["SELECT count(*) FROM g.edges"], False),
    ("checkpoint", ["INSERT INTO w.edges SELECT i, i + 1 FROM range(2000) t(i)"],
     ["CHECKPOINT w"], ["SELECT count(*) FROM w.edges"], False),
]


def interrupt_trials(trials: int, rng: random.Random, base: Path, root: Path, scratch: Path,
                     report: dict) -> None:
    for t in range(trials):
        name, setup, statements, checks, rollback = rng.choice(INTERRUPT_CASES)
        work = scratch / f"interrupt-{t}"
        db = work / "db"
        shutil.copytree(base, db, symlinks=True)
        code = INTERRUPTED.format(root=str(root), db=str(db), setup=setup,
                                  statements=statements, checks=checks, rollback=rollback)
        # the reference: what the checks answer before and after the statement
        proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = proc.stdout.readline()
        if line.strip() != "ready":
            proc.kill()
            proc.communicate()
            report["interrupts"]["setup failed"] += 1
            continue
        delay = rng.choice([0.0, 0.01, 0.05, 0.1, 0.3, 1.0, 2.0]) * rng.random()
        proc.stdin.write("go\n")
        proc.stdin.flush()
        proc.stdout.readline()  # "started"
        time.sleep(delay)
        sent = time.time()
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate("sent\n", timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            outcome, detail = "slow", "did not stop within 120 s"
        else:
            outcome, detail = _interrupt_outcome(proc.returncode, out, err, sent)
        report["interrupts"][outcome] += 1
        if outcome in BAD:
            report["bad"].append({"family": "interrupts", "case": name, "delay": delay,
                                  "outcome": outcome, "detail": detail})
        shutil.rmtree(work, ignore_errors=True)


def _interrupt_outcome(code: int, out: str, err: str, sent: float) -> tuple[str, str]:
    if code < 0:
        return "crash", f"signal {-code}: {err[-300:]}"
    lines = out.strip().splitlines()
    if code != 0 or not lines:
        return "raw", err.strip().splitlines()[-1][:300] if err.strip() else f"exit {code}"
    result = json.loads(lines[-1])
    if "broken" in result:
        return "broken", result["broken"]
    if result.get("error", "").startswith("raw"):
        return "raw", result["error"]
    if result["finished"] or result.get("after_end"):
        return "finished", ""
    took = result["stopped_at"] - sent
    if took > 1.0:
        return "slow", f"stopped {took:.2f} s after the signal ({result.get('error')})"
    return "stopped", ""


# -- main --------------------------------------------------------------------------------------
def run(families, trials: int, seed: int, root: Path | None = None) -> dict:
    root = root or Path(__file__).resolve().parent.parent
    rng = random.Random(seed)
    report = {f: collections.Counter() for f in families}
    report["bad"] = []
    os.environ.setdefault("GRAPHDB_INITIAL_MAP_SIZE", str(2 << 20))
    with tempfile.TemporaryDirectory(prefix="graphdb-torture-") as scratch:
        scratch = Path(scratch)
        (scratch / "ref").mkdir()
        base, answers = build(scratch / "ref")
        workers = Workers(root)
        try:
            for family in families:
                if family == "interrupts":
                    interrupt_trials(trials, rng, base, root, scratch, report)
                else:
                    damage_trials(family, trials, rng, base, answers, scratch, workers, report)
        finally:
            workers.close()
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--trials", type=int, default=100, help="trials per family")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="write the report (counts and every bad trial) here")
    args = parser.parse_args(argv)
    families = [f.strip() for f in args.families.split(",") if f.strip()]
    unknown = set(families) - set(FAMILIES)
    if unknown:
        parser.error(f"unknown families: {', '.join(sorted(unknown))}")
    report = run(families, args.trials, args.seed)
    bad = report.pop("bad")
    for family in families:
        counts = report[family]
        print(f"{family:11s} " + "  ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for item in bad[:50]:
        print("BAD", json.dumps(item))
    if args.json:
        Path(args.json).write_text(json.dumps({"counts": report, "bad": bad}, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
