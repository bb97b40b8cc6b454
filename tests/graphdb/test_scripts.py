"""Scripts and the command line as sqlite3's and DuckDB's shells behave: results on stdout,
errors on stderr with the line they are near, exit status 1 after an error, ``.bail``,
timings only when asked, valid JSON, dot commands that show their setting, ``-c``,
``--version``, the demo's care for other people's graphs, and ingest's messages."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys

import networkx as nx
import pytest

import graphdb
from graphdb.cli import main
from tests.support import ROOT


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("scripts") / "db"
    with graphdb.connect(path) as con:
        graph = nx.DiGraph()
        graph.add_weighted_edges_from([(1, 2, 1.0), (2, 3, 2.0), (3, 1, 4.0)])
        con.from_networkx("g", graph)
    return str(path)


def process(db: str, script: str, *args: str) -> subprocess.CompletedProcess:
    """The script piped into ``python -m graphdb.cli`` in a process of its own."""
    return subprocess.run([sys.executable, "-m", "graphdb.cli", db, *args], input=script,
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


@pytest.fixture
def shell(monkeypatch, capsys):
    """The script piped into the command line's ``main`` in this process (a new process costs
    a second or two of imports; the checks of a real process and its exit status are
    ``process``'s): (exit status, stdout, stderr) as a CompletedProcess."""

    def run(db: str, script: str, *args: str) -> subprocess.CompletedProcess:
        capsys.readouterr()  # what came before is not this script's
        monkeypatch.setattr(sys, "stdin", io.StringIO(script))
        code = main([db, *args])
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["graphdb", db, *args], code, out, err)

    return run


@pytest.mark.parametrize("run", ["process", "main"])
def test_errors_go_to_stderr_with_their_line_and_the_status_is_1(db, run, shell):
    script = ".mode csv\nSELECT 1 AS one;\n\nSELECT *\n  FROM nowhere;\nSELECT 2 AS two;\n"
    proc = (process if run == "process" else shell)(db, script)
    assert proc.returncode == 1
    assert proc.stdout == "one\n1\ntwo\n2\n"  # nothing but results: no Time:, no errors
    assert proc.stderr.startswith("Error near line 4: unknown table 'nowhere'")


@pytest.mark.parametrize("bail", [[".bail on\n"], ["--bail"]])
def test_bail_stops_at_the_first_error(db, bail, shell):
    head, args = (bail[0], []) if bail[0].startswith(".") else ("", bail)
    proc = shell(db, head + ".mode csv\nSELECT x FROM nowhere;\nSELECT 2 AS two;\n", *args)
    assert proc.returncode == 1 and "two" not in proc.stdout
    assert proc.stderr.count("Error") == 1


def test_a_clean_script_exits_0_and_timings_only_when_asked(db, shell):
    proc = shell(db, ".mode csv\nSELECT 1 AS one;\n")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "one\n1\n", "")
    proc = shell(db, ".mode csv\n.timer on\nSELECT 1 AS one;\n")
    assert proc.stdout == "one\n1\n" and proc.stderr.startswith("Time: ")


def test_json_mode_is_valid_json_with_null_for_infinity(db, shell):
    proc = shell(db, ".mode json\nSELECT vertex, width FROM sswp(g, 1) ORDER BY vertex;\n")
    assert json.loads(proc.stdout) == [{"vertex": 1, "width": None},
                                       {"vertex": 2, "width": 1.0},
                                       {"vertex": 3, "width": 1.0}]


def test_dot_commands_alone_show_their_setting(db, shell):
    proc = shell(db, ".mode\n.timer\n.maxrows\n.bail\n.mode box\n.mode\n.mode nope\n")
    assert "current output mode: table" in proc.stderr  # messages of a script: stderr
    assert "table box line csv json markdown" in proc.stderr
    assert "the timer is off" in proc.stderr and "rows shown: 40" in proc.stderr
    assert "current output mode: box" in proc.stderr
    assert "Unknown or incomplete" not in proc.stderr
    assert "Error near line 7: unknown mode 'nope'" in proc.stderr and proc.returncode == 1


def test_modes_line_and_box(db, shell):
    proc = shell(db, ".mode line\nSELECT 1 AS one, 'x' AS letter;\n.mode box\nSELECT 2 AS two;\n")
    assert "   one = 1\nletter = x\n" in proc.stdout
    assert "┌─────┐\n│ two │\n├─────┤\n│   2 │\n└─────┘" in proc.stdout


def test_explain_prints_the_plan_as_it_is(db, shell):
    proc = shell(db, "EXPLAIN SELECT * FROM bfs(g, 1);\n")
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("PROJECT") and "│" not in proc.stdout


def test_dash_c_runs_statements_and_exits(db):
    proc = subprocess.run([sys.executable, "-m", "graphdb.cli", db, "-c",
                           "SELECT version() AS v", "--mode", "csv"], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert (proc.returncode, proc.stdout) == (0, f"v\n{graphdb.__version__}\n")
    proc = subprocess.run([sys.executable, "-m", "graphdb.cli", db, "-c", "SELECT nope"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 1 and "Error" in proc.stderr


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out == f"graphdb {graphdb.__version__}\n"


def test_import_in_the_shell(tmp_path, shell):
    edges = tmp_path / "e.csv"
    edges.write_text("a,b,minutes\n1,2,5\n2,3,7\n")
    proc = shell(str(tmp_path / "db"), f".import {edges} roads --undirected --weight minutes\n"
                 ".import nope.csv x\n"
                 ".mode csv\nSELECT vertex, distance FROM sssp(roads, 3) ORDER BY vertex;\n")
    assert "Loaded graph 'roads': 3 vertices, 2 edges (undirected, weighted)" in proc.stderr
    assert "Error near line 2:" in proc.stderr and "does not exist" in proc.stderr
    assert proc.stdout == "vertex,distance\n1,12.0\n2,7.0\n3,0.0\n"


def test_demo_leaves_a_database_with_other_graphs_alone(tmp_path, capsys):
    db = tmp_path / "mine"
    with graphdb.connect(db) as con:
        con.from_networkx("social", nx.DiGraph([(1, 2)]))
    assert main(["demo", str(db)]) == 1
    err = capsys.readouterr().err
    assert "holds graphs the demo did not make (social)" in err and "--force" in err
    with graphdb.connect(db) as con:
        assert con.execute("SELECT count(*) FROM social.edges").fetchone() == (1,)


def test_headerless_csv_is_read_as_data_with_a_warning(tmp_path, capsys):
    edges = tmp_path / "e.csv"
    edges.write_text("1,2\n2,3\n3,1\n")
    assert main(["ingest", str(tmp_path / "a"), "g", str(edges)]) == 0
    out, err = capsys.readouterr()
    assert "3 edges" in out and "Warning:" in err and "read as data" in err
    assert main(["ingest", str(tmp_path / "b"), "g", str(edges), "--header"]) == 0
    out, err = capsys.readouterr()
    assert "2 edges" in out and err == ""
    with pytest.warns(graphdb.catalog.errors.IngestWarning):
        with graphdb.connect() as con:
            con.ingest("g", edges)


def test_error_lines_count_comment_lines(tmp_path, capsys):
    edges = tmp_path / "konect.txt"
    edges.write_text("% sym unweighted\n% 3 3 3\n1 2\n2 3\n3 4 5\n")
    assert main(["ingest", str(tmp_path / "db"), "g", str(edges)]) == 1
    assert f"{edges}:5: expected 2 fields" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("graphdb") is None, reason="console script not installed")
def test_the_help_says_what_json_does_with_infinities():
    proc = subprocess.run(["graphdb", "shell", "--help"], capture_output=True, text=True,
                          timeout=60)
    assert "infinities and NaN as null" in proc.stdout.replace("\n", " ").replace("  ", " ")
