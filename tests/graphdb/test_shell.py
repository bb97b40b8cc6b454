"""The shell, fed line by line (Shell.feed) and once driven in a pseudo-terminal."""

from __future__ import annotations

import _thread
import io
import json
import os
import sys
import threading
from pathlib import Path

import networkx as nx
import pytest

import graphdb
from graphdb.completion import SqlCompleter
from graphdb.repl import KEYWORDS, Shell

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def shell(con):
    con.from_networkx("g", nx.DiGraph([(1, 2), (2, 3), (3, 1), (3, 4)]))
    out = io.StringIO()
    return Shell(con, out, interactive=True), out  # as at a terminal: timings on


def feed(shell: Shell, *lines: str) -> None:
    for line in lines:
        shell.feed(line)


def test_multiline_statement_runs_when_terminated(shell):
    sh, out = shell
    feed(sh, "SELECT vertex, depth", "FROM bfs(g, 1)")
    assert sh.pending and out.getvalue() == ""
    feed(sh, "ORDER BY vertex;")
    text = out.getvalue()
    assert "vertex │ depth" in text and "(4 rows)" in text and "Time:" in text


def test_output_modes(shell):
    sh, out = shell
    feed(sh, ".timer off", ".mode csv", "SELECT vertex, depth FROM bfs(g, 1) ORDER BY vertex;")
    assert out.getvalue().splitlines()[:2] == ["vertex,depth", "1,0"]
    out.truncate(0), out.seek(0)
    feed(sh, ".mode json", "SELECT vertex FROM bfs(g, 3, 1) ORDER BY vertex;")
    assert json.loads(out.getvalue()) == [{"vertex": 1}, {"vertex": 3}, {"vertex": 4}]
    out.truncate(0), out.seek(0)
    feed(sh, ".mode markdown", "SELECT 1 AS a;")
    assert out.getvalue().splitlines()[:2] == ["| a |", "|--:|"] or \
        out.getvalue().splitlines()[0] == "| a |"


def test_long_results_are_truncated_with_a_count(shell):
    sh, out = shell
    feed(sh, ".maxrows 2", "SELECT * FROM bfs(g, 1) ORDER BY vertex;")
    text = out.getvalue()
    assert "(4 rows, 2 shown)" in text
    assert [line.split()[0] for line in text.splitlines()[2:5]] == ["1", "…", "4"]


def test_errors_are_one_line_and_the_shell_goes_on(shell):
    sh, out = shell
    feed(sh, "SELEC 1;", "SELECT * FROM bfz(g, 1);", "SELECT 1 AS ok;")
    text = out.getvalue()
    assert "Error: syntax error" in text and "did you mean bfs()" in text
    assert "Traceback" not in text and " ok" in text


def test_syntax_errors_point_at_the_column(shell):
    sh, out = shell
    feed(sh, "SELECT * FROM bfs(g, 1) WHERE depth >;")
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("Error: syntax error at line 1")
    assert lines[1].strip() == "SELECT * FROM bfs(g, 1) WHERE depth >"
    assert lines[2].index("^") > 2


def test_dot_commands(shell, tmp_path):
    sh, out = shell
    script = tmp_path / "q.sql"
    script.write_text("SELECT count(*) AS n\nFROM g.edges;\n-- a comment\nSELECT 7 AS seven")
    feed(sh, ".timer off", ".graphs", ".schema g", f".read {script}", ".nope",
         f".read {tmp_path / 'missing.sql'}")
    text = out.getvalue()
    assert " g " in text and "directed" in text and " 4" in text and " 7" in text
    assert "Unknown or incomplete command '.nope'" in text and "cannot read" in text
    target = tmp_path / "out.csv"
    feed(sh, ".mode csv", f".output {target}", "SELECT 5 AS five;", ".output", "SELECT 6 AS six;")
    assert target.read_text() == "five\n5\n" and "six\n6" in out.getvalue()
    assert sh.feed(".quit") is False


def test_help_lists_the_registry(shell):
    sh, out = shell
    feed(sh, ".help")
    assert "bfs(graph, source, max_depth => NULL)" in out.getvalue()


def test_completion_of_keywords_functions_graphs_and_columns(con):
    con.from_networkx("social", nx.DiGraph([(1, 2)]))
    completer = SqlCompleter(con, KEYWORDS)
    assert "SELECT" in completer.candidates("sel")
    assert "pagerank" in completer.candidates("SELECT * FROM pag")
    assert completer.candidates("SELECT * FROM social.") == ["social.vertices", "social.edges"]
    assert "social" in completer.candidates("SELECT * FROM soc")
    assert "depth" in completer.candidates("SELECT dep")
    assert "weight" not in completer.candidates("SELECT wei")  # social is unweighted
    assert completer.candidates(".sch") == [".schema"]
    from graphdb.shell_commands import COMMANDS

    # every dot command of the shell's command table, aliases too (.tables)
    assert set(COMMANDS) | {".tables"} <= set(completer.candidates("."))
    assert completer.candidates(".im") == [".import"]


def test_continuation_prompt_is_not_shown_inside_a_wrapped_line():
    from graphdb.repl import _continuation

    assert _continuation(9, 1, 0).strip() == "...>"  # the statement's next line
    assert _continuation(9, 1, 1) == ""  # the same line, wrapped by the terminal


def test_help_goes_through_the_pager_when_taller_than_the_terminal(shell, monkeypatch):
    sh, out = shell
    paged = []
    monkeypatch.setattr(sh, "_wants_pager", lambda text: True)
    monkeypatch.setattr(sh, "_page", lambda text: paged.append(text) or True)
    feed(sh, ".help")
    assert paged and "Dot commands:" in paged[0] and "Dot commands:" not in out.getvalue()


def test_ctrl_c_cancels_the_query_and_keeps_the_shell(shell):
    sh, out = shell
    started, release = threading.Event(), threading.Event()

    class Slow:
        """A connection whose statement runs until interrupted."""

        def execute(self, sql):
            started.set()
            release.wait(10)
            raise graphdb.OperationalError("query cancelled")

        def interrupt(self):
            release.set()

    real = sh.con
    sh.con = Slow()
    threading.Thread(target=lambda: (started.wait(5), _thread.interrupt_main())).start()
    sh.run("SELECT slow")
    assert "Cancelled." in out.getvalue()
    sh.con = real
    feed(sh, "SELECT 1 AS still_here;")
    assert "still_here" in out.getvalue()


def _spawn_shell(tmp_path, graph):
    """``graphdb DB`` in a pseudo-terminal on a database holding ``graph`` as g."""
    pexpect = pytest.importorskip("pexpect")
    db = tmp_path / "db"
    with graphdb.connect(db) as con:
        con.from_networkx("g", graph)
    # pexpect's terminal never answers cursor-position requests; without this prompt_toolkit
    # may swallow the first keystrokes while it waits for an answer.
    env = dict(os.environ, GRAPHDB_HISTORY=str(tmp_path / "history"), PYTHONPATH=str(ROOT),
               TERM="xterm", GRAPHDB_DISABLE_GPU="1", PROMPT_TOOLKIT_NO_CPR="1")
    return pexpect, pexpect.spawn(sys.executable, ["-m", "graphdb.cli", str(db)], env=env,
                                  encoding="utf-8", timeout=60, dimensions=(40, 200))


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_graphdb_command_in_a_terminal(tmp_path):
    pexpect, child = _spawn_shell(tmp_path, nx.DiGraph([(1, 2), (2, 3)]))
    try:
        child.expect("graphdb shell on")
        child.expect("graphdb>")
        child.sendline("SELECT count(*) * 14 AS answer FROM bfs(g, 1);")
        child.expect(r"answer\s*\r?\n.*\r?\n\s*42\s*\r?\n")
        child.expect("Time:")
        child.sendline("SELECT * FROM nope;")
        child.expect("Error: unknown table 'nope'")
        child.sendline(".quit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_a_terminal_session_history_status_line_and_ctrl_c(tmp_path):
    pexpect, child = _spawn_shell(tmp_path, nx.gnp_random_graph(368, 0.01, seed=1,
                                                                directed=True))
    long_queries = [
        # 18 billion rows of nested-loop join, filtered chunk by chunk: far longer than the
        # test waits, so only Ctrl-C ends it; past a second the status line counts the time
        ("SELECT count(*) FROM g.vertices a, g.vertices b, g.vertices c, g.vertices d "
         "WHERE a.id + b.id + c.id + d.id < 0;", r"[0-9]\.[0-9] s"),
        # an iterative algorithm also says how far it is
        ("SELECT count(*) FROM pagerank(g, max_iterations => 1000000, tolerance => 0);",
         r"pagerank: iteration \d+ \(of at most 1000000\)"),
    ]
    try:
        child.expect("graphdb>")
        child.send("SELECT 40 + 2\r  AS answer;\r")  # Enter inside a statement: a new line
        child.expect("42")
        child.expect("Time:")
        child.send("\x1b[A")  # up: the whole statement comes back, both lines
        child.expect("AS")
        child.send("\x03")  # Ctrl-C at the prompt drops it
        for query, status in long_queries:
            child.send(query + "\r")
            child.expect(status, timeout=30)
            child.sendintr()
            child.expect("Cancelled.", timeout=10)
        child.send("SELECT 6 * 7 AS answer;\r")
        child.expect("42")
        child.send(".quit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    history = (tmp_path / "history").read_text()
    assert "\n+SELECT 40 + 2\n+  AS answer;\n" in history  # one entry of two lines
