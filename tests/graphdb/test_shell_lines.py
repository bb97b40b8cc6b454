"""The shell's line handling, fed directly (the terminal front end is prompt_toolkit)."""

from __future__ import annotations

import io

import pytest

from graphdb.repl import Shell


@pytest.fixture
def shell(con, tmp_path):
    edges = tmp_path / "e.csv"
    edges.write_text("s,d\n1,2\n2,3\n")
    con.ingest("g", edges)
    return Shell(con, out=io.StringIO(), interactive=True)  # as at a terminal: timings on


def output(shell):
    text = shell.out.getvalue()
    shell.out.seek(0)
    shell.out.truncate()
    return text


def test_multi_line_statement_runs_at_semicolon(shell):
    assert shell.feed("SELECT vertex, depth")
    assert shell.pending and output(shell) == ""
    shell.feed("FROM bfs(g, 1)")
    shell.feed("ORDER BY vertex;")
    text = output(shell)
    assert "vertex │ depth" in text and "(3 rows)" in text and "Time:" in text
    assert not shell.pending


def test_two_statements_on_one_line_and_semicolon_in_string(shell):
    shell.feed("SELECT 'a;b' AS s; SELECT 2 AS two;")
    text = output(shell)
    assert "a;b" in text and "two" in text


def test_dot_commands(shell):
    shell.feed(".timer off")
    shell.feed(".mode csv")
    shell.feed("SELECT vertex FROM bfs(g, 3);")
    assert output(shell) == "vertex\n3\n"
    shell.feed(".help")
    assert ".quit" in output(shell)
    shell.feed(".graphs")
    assert "g,true,false,3,2" in output(shell)
    shell.feed(".bogus")
    assert "Unknown or incomplete command" in output(shell)
    assert shell.feed(".quit") is False


def test_errors_keep_the_shell_running(shell):
    shell.feed("SELECT * FROM bfs(h, 1);")
    assert "Error: graph 'h' does not exist" in output(shell)
    shell.feed("SELECT 1 AS one;")
    assert "one" in output(shell)
