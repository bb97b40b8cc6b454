"""Run a directory of sqllogictest files (DuckDB's format) against graphdb, record by record.

Usage::

    python tools/pgq_conformance.py DIR [--root ROOT] [--timeout SECONDS] [--verbose]

``DIR`` holds ``*.test`` files (searched recursively), such as a public SQL/PGQ engine's own
test suite. Each file runs against a fresh ``graphdb.connect(tmpdir)``, in a child process of
its own (so that a crash or a hang costs one file), with ``ROOT`` (default: the parent of
``DIR``'s ``test`` folder, else ``DIR``) as the working directory, since such suites name their
data files relative to their repository's root.

The records understood are DuckDB's: ``statement ok|error|maybe [conn]`` and
``query <types> [nosort|rowsort|valuesort] [conn]`` with ``----`` and the expected rows
(columns separated by tabs), ``require``, ``load``, ``mode skip|unskip``, ``halt``,
``skipif``/``onlyif``, ``loop``/``foreach`` ... ``endloop`` and ``# comments``. A query without
a sort mode compares its rows in order, as DuckDB's runner does; a mismatch that only the order
makes is reported as its own cause. Values print as DuckDB prints them (``NULL``, ``(empty)``,
``true``, lists ``[1, 2]``, structs ``{'k': v}``); numbers compare with a relative tolerance of
1e-6. A ``statement error`` passes when the statement fails with an error of graphdb's; the
message the file expects is not compared (it is an engine's own wording) but is shown.

Records that use an engine's own extensions beyond SQL/PGQ (DuckPGQ's pragmas, its table and
scalar functions over CSRs, ATTACH, ...) are counted apart as "not SQL/PGQ", as are the records
of a file after a ``require`` this runner cannot give. The report lists per-file counts, then
the failures grouped by cause, biggest first, each with its first example: the statement, what
graphdb did, what the file expected.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

#: Statements that use DuckPGQ's own extensions rather than SQL/PGQ (pattern, reason).
NOT_PGQ = [
    (r"^\s*pragma\b", "PRAGMA"),
    (r"\b(create_csr_\w*|get_csr_\w*|csr_get_w_type|delete_csr|csrv|csre)\b", "CSR functions"),
    (r"\b(iterativelength\w*|shortestpath\w*|reachability\w*|cheapest_path_length\w*)\s*\(",
     "path UDFs over CSRs"),
    (r"\b(local_clustering_coefficient|weakly_connected_component|pagerank)\s*\(",
     "graph algorithm table functions"),
    (r"\bsummarize_property_graph\b", "summarize_property_graph"),
    (r"\b(duckpgq_\w*|get_pg_\w*|pgq_\w*)\s*\(", "DuckPGQ functions"),
    (r"\b__duckpgq_internal\b|\bduckpgq\b", "DuckPGQ internals"),
    (r"^\s*attach\b|^\s*detach\b|^\s*use\b", "ATTACH/USE of database files"),
    (r"^\s*(install|load)\b", "extension loading"),
]
#: require NAME that this runner satisfies
REQUIRES = {"duckpgq", "parquet", "json", "icu"}


@dataclass
class Record:
    line: int
    kind: str  # statement, query
    mode: str  # ok, error, maybe; or the sort mode of a query
    conn: str | None
    sql: str
    expected: list[str]
    types: str = ""


@dataclass
class Outcome:
    file: str
    line: int
    status: str  # pass, fail, not_pgq, skipped
    cause: str = ""
    sql: str = ""
    got: str = ""
    expected: str = ""


@dataclass
class FileResult:
    file: str
    outcomes: list[Outcome] = field(default_factory=list)
    crashed: str = ""


# ----------------------------------------------------------------------------- parsing

def parse(text: str) -> list[tuple[int, str, list[str], list[str]]]:
    """Splits a file into (line, header words, body lines, expected lines) blocks."""
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        raw = lines[i]
        if not raw.strip() or raw.lstrip().startswith("#"):
            i += 1
            continue
        start, head = i + 1, raw.split()
        if head[0] not in ("statement", "query"):
            blocks.append((start, head, [], []))
            i += 1
            continue
        body, expected, i = [], [], i + 1
        while i < len(lines) and lines[i].strip() and lines[i].strip() != "----":
            if not lines[i].lstrip().startswith("#"):  # a comment inside a record, as DuckDB's
                body.append(lines[i])                 # runner drops it
            i += 1
        if i < len(lines) and lines[i].strip() == "----":
            i += 1
            while i < len(lines) and lines[i].strip():
                expected.append(lines[i].rstrip("\n"))
                i += 1
        blocks.append((start, head, body, expected))
    return blocks


def expand(blocks, variables=None):
    """Unrolls loop/foreach blocks and substitutes ${var}; yields the blocks to run."""
    variables = dict(variables or {})
    i = 0
    while i < len(blocks):
        line, head, body, expected = blocks[i]
        if head[0] in ("loop", "foreach", "concurrentloop", "concurrentforeach"):
            depth, j = 1, i + 1
            while j < len(blocks) and depth:
                if blocks[j][1][0] in ("loop", "foreach", "concurrentloop", "concurrentforeach"):
                    depth += 1
                elif blocks[j][1][0] == "endloop":
                    depth -= 1
                j += 1
            inner = blocks[i + 1:j - 1]
            if head[0].endswith("loop"):
                values = [str(v) for v in range(int(head[2]), int(head[3]))]
            else:
                values = head[2:]
            for value in values:
                yield from expand(inner, {**variables, head[1]: value})
            i = j
            continue
        if variables:
            def sub(s):
                for k, v in variables.items():
                    s = s.replace("${" + k + "}", v)
                return s
            body, expected = [sub(b) for b in body], [sub(e) for e in expected]
        yield line, head, body, expected
        i += 1


# ----------------------------------------------------------------------------- values

def as_text(table) -> list[list[str]]:
    """The rows of an Arrow table as DuckDB prints them: each value cast to VARCHAR by DuckDB
    itself (nested values, timestamps, booleans and floats exactly as its sqllogictest runner
    shows them), NULL as ``NULL`` and the empty string as ``(empty)``."""
    import duckdb

    if table.num_columns == 0:
        return []
    names = [f"c{i}" for i in range(table.num_columns)]
    renamed = table.rename_columns(names)
    con = duckdb.connect()
    con.register("t", renamed)
    rows = con.execute("SELECT " + ", ".join(f"CAST({n} AS VARCHAR)" for n in names)
                       + " FROM t").fetchall()
    con.close()
    return [[("NULL" if v is None else v if v else "(empty)") for v in row] for row in rows]


def same_value(actual: str, expected: str) -> bool:
    """sqllogictest's comparison of one printed value: equal text, or numbers equal to 1e-6."""
    if actual == expected:
        return True
    try:
        a, e = float(actual), float(expected)
    except ValueError:
        return False
    if math.isnan(a) and math.isnan(e):
        return True
    return math.isclose(a, e, rel_tol=1e-6, abs_tol=1e-9)


def rows_equal(actual, expected) -> bool:
    """Printed rows equal value by value (:func:`same_value`)."""
    return len(actual) == len(expected) and all(
        len(a) == len(e) and all(same_value(x, y) for x, y in zip(a, e))
        for a, e in zip(actual, expected))


def _sort_key(row):
    return [(0, float(c), "") if _is_number(c) else (1, 0.0, c) for c in row]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# ----------------------------------------------------------------------------- running

class RecordTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise RecordTimeout


def not_pgq(sql: str) -> str:
    for pattern, reason in NOT_PGQ:
        if re.search(pattern, sql, re.IGNORECASE | re.MULTILINE):
            return reason
    return ""


def _cause(exc: BaseException) -> str:
    """An error's message with names and numbers blanked, to group failures by cause."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'?'", text)
    text = re.sub(r"\b\d+\b", "N", text)
    text = re.sub(r"at line N, column N:?", "", text)
    return f"{type(exc).__name__}: {text[:140]}"


def run_file(path: Path, root: Path, timeout: float) -> FileResult:
    import graphdb

    rel = str(path)
    result = FileResult(rel)
    tmp = tempfile.mkdtemp(prefix="pgqconf-")
    os.chdir(root)
    signal.signal(signal.SIGALRM, _alarm)
    connections: dict = {}
    main = graphdb.connect(Path(tmp) / "db")
    skipping, skip_rest, halted = False, "", False

    def conn(name):
        if name is None:
            return main
        if name not in connections:
            try:
                connections[name] = graphdb.connect(Path(tmp) / "db")
            except Exception:  # one writer per database: share the main connection
                connections[name] = main
        return connections[name]

    blocks = list(expand(parse(path.read_text())))
    for line, head, body, expected in blocks:
        word = head[0]
        if word == "require":
            if head[1] not in REQUIRES:
                skip_rest = f"require {head[1]}"
            continue
        if word == "mode":
            skipping = head[1:2] == ["skip"]
            continue
        if word == "halt":
            halted = True
            continue
        if word in ("load", "restart", "skipif", "onlyif", "endloop", "set", "reset",
                    "sleep", "hash-threshold", "unzip", "test-env", "require-env"):
            continue
        if word not in ("statement", "query"):
            continue
        sql = "\n".join(body).replace("__TEST_DIR__", tmp)
        out = Outcome(rel, line, "pass", sql=sql)
        result.outcomes.append(out)
        if skipping or halted or skip_rest:
            out.status, out.cause = "skipped", skip_rest or "mode skip"
            continue
        reason = not_pgq(sql)
        if reason:
            out.status, out.cause = "not_pgq", reason
        args = head[1:]
        label = None
        if word == "statement":
            mode = args[0] if args else "ok"
            label = args[1] if len(args) > 1 else None
        else:
            mode = "nosort"
            for a in args[1:]:
                if a in ("nosort", "rowsort", "valuesort"):
                    mode = a
                elif a.startswith("con"):
                    label = a
        con = conn(label)
        signal.alarm(int(timeout))
        try:
            cur = con.execute(sql)
            rows = as_text(cur.arrow()) if word == "query" else None
            if word == "statement":
                try:
                    cur.fetchall()
                except Exception:
                    pass
            error = None
        except RecordTimeout:
            error = RecordTimeout(f"timed out after {timeout:g} s")
        except Exception as exc:  # noqa: BLE001 - every failure is a result to report
            error = exc
        finally:
            signal.alarm(0)
        want = "\n".join(expected)
        if word == "statement" and mode == "error":
            if error is None:
                _fail(out, "statement error: no error raised", "succeeded", want)
            elif not isinstance(error, graphdb.Error):
                _fail(out, "statement error: raw " + type(error).__name__, repr(error), want)
            continue
        if word == "statement" and mode == "maybe":
            continue
        if error is not None:
            kind = "" if isinstance(error, graphdb.Error) else "raw "
            _fail(out, kind + _cause(error), f"{type(error).__name__}: {error}", want)
            continue
        if word == "statement":
            continue
        got = rows
        want_rows = [e.split("\t") for e in expected]
        if mode == "valuesort":
            got_v = sorted((c for r in got for c in r), key=lambda c: _sort_key([c]))
            want_v = sorted((c for r in want_rows for c in r), key=lambda c: _sort_key([c]))
            ok = len(got_v) == len(want_v) and all(map(same_value, got_v, want_v))
        elif mode == "rowsort":
            ok = rows_equal(sorted(got, key=_sort_key), sorted(want_rows, key=_sort_key))
        else:
            ok = rows_equal(got, want_rows)
        if ok:
            continue
        text = "\n".join("\t".join(r) for r in got)
        if got and want_rows and len(got[0]) != len(want_rows[0]):
            cause = f"wrong column count ({len(got[0])} for {len(want_rows[0])})"
        elif len(got) != len(want_rows):
            cause = "wrong row count"
        elif rows_equal(sorted(got, key=_sort_key), sorted(want_rows, key=_sort_key)):
            cause = "rows in another order (nosort)"
        else:
            cause = "wrong values"
        _fail(out, cause, text, want)
    for c in {id(c): c for c in connections.values()}.values():
        if c is not main:
            try:
                c.close()
            except Exception:
                pass
    try:
        main.close()
    except Exception:
        pass
    return result


def _fail(out: Outcome, cause: str, got: str, expected: str) -> None:
    if out.status == "pass":
        out.status = "fail"
    out.cause = out.cause or cause
    if out.status == "not_pgq":
        out.cause = f"{out.cause}"
    out.got, out.expected = got[:2000], expected[:2000]
    out.got_cause = cause  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------- report

def child(path: str, root: str, timeout: float) -> None:
    res = run_file(Path(path), Path(root), timeout)
    payload = {"file": res.file, "outcomes": [
        {**asdict(o), "why": getattr(o, "got_cause", "")} for o in res.outcomes]}
    sys.stdout.write("\n@@RESULT@@" + json.dumps(payload))


def run_all(directory: Path, root: Path, timeout: float, file_timeout: float):
    files = sorted(p for p in directory.rglob("*") if p.suffix in (".test", ".test_slow"))
    results = []
    for path in files:
        try:
            proc = subprocess.run(
                [sys.executable, __file__, "--child", str(path.resolve()), "--root", str(root),
                 "--timeout", str(timeout)],
                capture_output=True, text=True, timeout=file_timeout)
            marker = proc.stdout.rfind("@@RESULT@@")
            if marker < 0:
                tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
                results.append({"file": str(path), "crashed": " | ".join(tail), "outcomes": []})
            else:
                results.append(json.loads(proc.stdout[marker + len("@@RESULT@@"):]))
        except subprocess.TimeoutExpired:
            results.append({"file": str(path), "crashed": "file timed out", "outcomes": []})
        r = results[-1]
        counts = _counts(r["outcomes"])
        rel = os.path.relpath(r["file"], directory)
        print(f"{rel:55s} pass {counts['pass']:4d}  fail {counts['fail']:4d}  "
              f"not-pgq {counts['not_pgq']:3d} (passing {counts['not_pgq_pass']:3d})  "
              f"skipped {counts['skipped']:3d}" + (f"  CRASHED: {r['crashed']}"
                                                  if r.get("crashed") else ""), flush=True)
    return results


def _counts(outcomes):
    c = defaultdict(int)
    for o in outcomes:
        if o["status"] == "not_pgq":
            c["not_pgq"] += 1
            c["not_pgq_pass"] += not o["why"]
        else:
            c[o["status"]] += 1
    return c


def report(results, directory: Path, verbose: bool) -> None:
    total = defaultdict(int)
    for r in results:
        for k, v in _counts(r["outcomes"]).items():
            total[k] += v
    pgq = total["pass"] + total["fail"]
    print(f"\nSQL/PGQ records: {total['pass']} of {pgq} pass "
          f"({100 * total['pass'] / max(pgq, 1):.1f}%); not SQL/PGQ: {total['not_pgq']} "
          f"({total['not_pgq_pass']} pass); skipped: {total['skipped']}; "
          f"files crashed: {sum(1 for r in results if r.get('crashed'))}")
    groups, blocks = defaultdict(list), defaultdict(int)
    for r in results:
        failed = [o for o in r["outcomes"] if o["status"] == "fail"]
        for o in failed:
            groups[o["cause"]].append(o)
        if failed:  # the first failure of a file often blocks the records after it
            blocks[failed[0]["cause"]] += len(failed) - 1
    print(f"\nFailures by cause ({len(groups)} causes):")
    for cause, items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        files = len({o["file"] for o in items})
        later = f", first of its file before {blocks[cause]} more" if blocks[cause] else ""
        print(f"\n[{len(items)} records, {files} files{later}] {cause}")
        shown = items if verbose else items[:1]
        for o in shown:
            print(f"  at {os.path.relpath(o['file'], directory)}:{o['line']}")
            print("    " + first_lines(o["sql"], 8).replace("\n", "\n    "))
            print("    -- graphdb: " + first_lines(o["got"], 6).replace("\n", "\n    |  "))
            if o["expected"]:
                print("    -- expected: " + first_lines(o["expected"], 6)
                      .replace("\n", "\n    |  "))
    causes = defaultdict(list)
    for r in results:
        for o in r["outcomes"]:
            if o["status"] == "not_pgq":
                causes[o["cause"]].append(o)
    if causes:
        print("\nNot SQL/PGQ (counted apart):")
        for cause, items in sorted(causes.items(), key=lambda kv: -len(kv[1])):
            passing = sum(1 for o in items if not o["why"])
            print(f"  {cause}: {len(items)} records, {passing} pass")


def first_lines(text: str, n: int) -> str:
    lines = (text or "").splitlines()
    return "\n".join(lines[:n]) + ("\n..." if len(lines) > n else "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("directory", type=Path)
    ap.add_argument("--root", type=Path, help="working directory for the files' data paths")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per record")
    ap.add_argument("--file-timeout", type=float, default=300.0, help="seconds per file")
    ap.add_argument("--verbose", action="store_true", help="list every failing record")
    ap.add_argument("--json", type=Path, help="write every record's outcome here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(str(args.directory), str(args.root), args.timeout)
        return 0
    directory = args.directory.resolve()
    root = args.root
    if root is None:
        parts = directory.parts
        root = Path(*parts[:parts.index("test")]) if "test" in parts else directory
    results = run_all(directory, root.resolve(), args.timeout, args.file_timeout)
    report(results, directory, args.verbose)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
