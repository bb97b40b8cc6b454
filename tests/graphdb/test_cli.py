"""The `graphdb` command line end to end: ingest, query, shell, demo, and its errors."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
import sys

import pytest

from graphdb.cli import main
from tests.support import DATA, ROOT

EXAMPLE = DATA / "graphalytics" / "example"


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def loaded(db_path, capsys):
    code, out, _ = run(["ingest", db_path, "ex", EXAMPLE / "example-directed.e",
                        "--vertices", EXAMPLE / "example-directed.v"], capsys)
    assert code == 0
    assert "10 vertices" in out and "17 edges" in out
    return db_path


def test_query_csv_matches_reference(loaded, capsys):
    code, out, _ = run(["query", loaded, "SELECT vertex, depth FROM bfs(ex, 1) ORDER BY vertex",
                        "--format", "csv"], capsys)
    assert code == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["vertex", "depth"]
    expected = [line.split() for line in (EXAMPLE / "example-directed-BFS").read_text().splitlines()]
    assert rows[1:] == [[v, d] for v, d in expected if d != "9223372036854775807"]


def test_query_json_and_table(loaded, capsys):
    code, out, _ = run(["query", loaded, "SELECT * FROM pagerank(ex, max_iterations => 2) "
                        "ORDER BY vertex LIMIT 2", "--format", "json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert [row["vertex"] for row in data] == [1, 2]
    assert data[0]["rank"] == pytest.approx(0.1477629166666667, rel=1e-6)
    code, out, _ = run(["query", loaded, "SHOW GRAPHS"], capsys)
    assert code == 0 and "ex" in out and "(1 row)" in out


@pytest.mark.parametrize("argv, message", [
    (["query", "{db}", "SELECT * FROM bfs(nope, 1)"], "graph 'nope' does not exist"),
    (["query", "{db}", "SELECT * FROM\n bfs(ex, 1) WHERE"], "line 2"),
    (["query", "{db}", "SELECT * FROM bfz(ex, 1)"], "did you mean bfs()"),
    (["query", "{db}", "SELECT * FROM bfs(ex, 1, maxdepth => 1)"], "did you mean 'max_depth'"),
    (["query", "{missing}", "SHOW GRAPHS"], "does not exist"),
    (["ingest", "{db}", "g2", "{missing}/edges.csv"], "file does not exist"),
    (["ingest", "{db}", "ex", str(EXAMPLE / "example-directed.e")], "already exists"),
])
def test_errors_exit_nonzero_without_traceback(loaded, tmp_path, capsys, argv, message):
    argv = [a.format(db=loaded, missing=tmp_path / "missing") for a in argv]
    code, out, err = run(argv, capsys)
    assert code == 1
    assert message in err
    assert "Traceback" not in err + out


def test_query_that_writes_starts_a_new_database(tmp_path, capsys):
    """As sqlite3's and DuckDB's command lines: CREATE TABLE on a new path makes the database;
    a read of a mistyped path stays an error and creates nothing."""
    db = tmp_path / "new"
    code, _, err = run(["query", str(db), "SELECT 1"], capsys)
    assert code == 1 and "does not exist" in err and not db.exists()
    code, _, err = run(["query", str(db), "SHOW TABLES"], capsys)
    assert code == 1 and not db.exists()
    assert run(["query", str(db), "CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR)"], capsys)[0] == 0
    assert run(["query", str(db), "INSERT INTO t VALUES (1, 'x'), (2, 'y')"], capsys)[0] == 0
    code, out, _ = run(["query", str(db), "SELECT b FROM t ORDER BY a", "--format", "csv"],
                       capsys)
    assert code == 0 and out.split() == ["b", "x", "y"]


def test_malformed_file_names_the_line(db_path, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n2,3\n3\n4,5\n")
    code, _, err = run(["ingest", db_path, "g", bad], capsys)
    assert code == 1
    assert f"{bad}:4:" in err
    # Nothing half-loaded: the failed graph does not exist.
    code, out, _ = run(["query", db_path, "SHOW GRAPHS", "--format", "csv"], capsys)
    assert out.strip() == "name,directed,weighted,vertices,edges"


def test_weight_column_and_undirected(db_path, tmp_path, capsys):
    edges = tmp_path / "roads.tsv"
    edges.write_text("from\tto\tminutes\n1\t2\t5\n2\t3\t7\n")
    # a third column is not a weight unless named so (issue 16: it was taken by position)
    code, out, _ = run(["ingest", db_path, "plain", edges, "--undirected"], capsys)
    assert code == 0 and "undirected, unweighted" in out
    code, out, _ = run(["ingest", db_path, "roads", edges, "--undirected", "--weight",
                        "minutes"], capsys)
    assert code == 0 and "undirected, weighted" in out
    code, out, _ = run(["query", db_path, "SELECT vertex, depth FROM bfs(roads, 3) ORDER BY vertex",
                        "--format", "csv"], capsys)
    assert out.split() == ["vertex,depth", "1,2", "2,1", "3,0"]


def test_shell_reads_piped_statements(loaded):
    script = "SHOW GRAPHS;\nSELECT vertex\n  FROM bfs(ex, 1)\n  WHERE depth = 1\n  ORDER BY vertex;\n" \
             "SELECT * FROM nothing(ex);\n.quit\nSELECT 1;\n"
    proc = subprocess.run([sys.executable, "-m", "graphdb.cli", str(loaded)], input=script,
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    # as sqlite3 and DuckDB: the script goes on after an error, which makes the status 1
    assert proc.returncode == 1
    assert "ex" in proc.stdout and "Time:" not in proc.stdout + proc.stderr
    assert " 3 \n" in proc.stdout or "      3" in proc.stdout
    assert "Error near line 6: Table Function with name nothing does not exist" in proc.stderr
    assert "Error" not in proc.stdout and "Traceback" not in proc.stdout + proc.stderr
    assert proc.stdout.endswith(" (2 rows)\n")  # .quit ended the script before SELECT 1


@pytest.mark.skipif(shutil.which("graphdb") is None, reason="console script not installed")
def test_console_script_is_installed(loaded):
    proc = subprocess.run(["graphdb", "query", str(loaded), "SELECT COUNT(*) FROM pagerank(ex)"],
                          capture_output=True, text=True, timeout=60)
    # Aggregates come with the query-layer work: until then a clear error, never a traceback.
    assert "Traceback" not in proc.stderr
    proc = subprocess.run(["graphdb", "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "ingest" in proc.stdout and "demo" in proc.stdout


def test_demo_builds_and_queries(tmp_path, capsys):
    db = tmp_path / "demo"
    code, out, err = run(["demo", db], capsys)
    assert code == 0, err
    for text in ("loaded social", "loaded roads", "PageRank", "Time:", f"graphdb {db}"):
        assert text in out
    # The farthest grid vertex from corner 0 is the opposite corner, 2 * (side - 1) hops away.
    from graphdb.demo import GRID_SIDE

    last = GRID_SIDE * GRID_SIDE - 1
    assert re.search(rf"\b{last} │\s+{2 * (GRID_SIDE - 1)}\n", out)
    # Running the demo again replaces its graphs instead of failing.
    assert run(["demo", db], capsys)[0] == 0


def test_exit_status_tells_usage_statement_and_internal_errors_apart(loaded, capsys,
                                                                     monkeypatch):
    assert run(["query", str(loaded), "SELEC 1"], capsys)[0] == 1  # the statement failed
    assert run(["ingest", str(loaded), "g9"], capsys)[0] == 2  # nothing to load: usage
    with pytest.raises(SystemExit) as exit_:
        main(["query", "--no-such-option"])
    assert exit_.value.code == 2  # argparse's usage error
    import graphdb.connection

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(graphdb.connection, "connect_for_reading", broken)
    code, out, err = run(["query", str(loaded), "SELECT 1"], capsys)
    assert code == 3 and "internal error" in err and "Traceback" not in err


def test_every_option_has_help_text(capsys):
    for command in ("query", "shell", "ingest", "demo", "warmup"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = capsys.readouterr().out
        options = re.findall(r"^  (--[\w-]+)[^\n]*\n(?:\s{20,}.*\n)?", text, re.M)
        assert options, text
        for block in re.split(r"\n(?=  -)", text.split("options:")[1])[1:]:
            assert len(block.split()) > 2, f"graphdb {command}: no help for {block.strip()}"
    main_help = _help(capsys, ["query", "--help"])
    assert "where graph operators run" in main_help


def _help(capsys, argv):
    with pytest.raises(SystemExit):
        main(argv)
    return capsys.readouterr().out


def test_query_progress_on_a_terminal(loaded, tmp_path):
    """``graphdb query`` on a terminal shows the shell's status line on stderr (elapsed time,
    then the algorithm's iterations) while a long statement runs; Ctrl-C cancels it."""
    pexpect = pytest.importorskip("pexpect")
    import os

    env = dict(os.environ, PYTHONPATH=str(ROOT), TERM="xterm", GRAPHDB_DISABLE_GPU="1")
    child = pexpect.spawn(sys.executable, [
        "-m", "graphdb", "query", str(loaded),
        "SELECT count(*) FROM pagerank(ex, max_iterations => 1000000, tolerance => 0)"],
        env=env, encoding="utf-8", timeout=60, dimensions=(40, 200))
    try:
        child.expect(r"pagerank: iteration \d+ \(of at most 1000000\)", timeout=60)
        child.sendintr()
        child.expect(pexpect.EOF, timeout=30)
    finally:
        child.close(force=True)
    assert child.exitstatus == 130
