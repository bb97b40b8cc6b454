"""The shell's dot commands (``.mode``, ``.timer``, ``.import``, ...), one function each.

A command alone shows its current setting and its usage (``.mode`` lists the modes), as in
DuckDB's and sqlite3's shells; a wrong argument says what is expected.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from .formatting import FORMATS

if TYPE_CHECKING:
    from .repl import Shell

__all__ = ["COMMANDS", "HELP", "command_names", "run_dot_command"]

HELP = """\
Enter SQL statements ended by ';' (they may span several lines). Examples:
  SHOW GRAPHS;
  DESCRIBE g;
  SELECT vertex, depth FROM bfs(g, 1) WHERE depth <= 2 ORDER BY depth;
  SELECT vertex, rank FROM pagerank(g, damping => 0.85) ORDER BY rank DESC LIMIT 10;
  SELECT * FROM GRAPH_TABLE (g MATCH (a)-[e]->(b) WHERE a.id = 1 COLUMNS (b.id AS friend));
  SELECT src, count(*) FROM g.edges GROUP BY src ORDER BY 2 DESC LIMIT 5;
  CREATE GRAPH roads FROM 'roads.csv' (UNDIRECTED, WEIGHT 'minutes');
  COPY (SELECT * FROM pagerank(g)) TO 'ranks.parquet' (FORMAT parquet);
  EXPLAIN ANALYZE SELECT * FROM bfs(g, 1);
  SET device = 'cpu';  SET threads = 2;  RESET threads;  DROP GRAPH g;

Graph functions (arguments: constants, name => value, or (SELECT ...)):
  {functions}
Other functions: SELECT * FROM functions() lists every table, scalar and aggregate function.
Graph data as tables: g.vertices, g.edges; patterns: GRAPH_TABLE (g MATCH (a)-[e]->{{1,3}}(b) ...)

Dot commands:
{commands}
Modes: table and box fit the terminal's width, line shows one column per line, csv and json
are for programs (json writes infinities and NaN as null), markdown for documents.
In scripts (graphdb DB < file.sql) errors go to stderr and make the exit status 1; Time: lines
appear only after .timer on. Ctrl-C cancels the running statement; Ctrl-D leaves.
"""


def _switch(shell: "Shell", args: list[str], name: str, attribute: str, what: str) -> None:
    """``.NAME on|off``: set; alone: show."""
    if not args:
        shell.say(f"{what} is {'on' if getattr(shell, attribute) else 'off'}; "
                  f"usage: {name} on|off\n")
    elif len(args) == 1 and args[0].lower() in ("on", "off"):
        setattr(shell, attribute, args[0].lower() == "on")
    else:
        shell.error(f"usage: {name} on|off")


def _number(shell: "Shell", args: list[str], name: str, attribute: str, what: str,
            zero: str) -> None:
    """``.NAME N``: set (0 means ``zero``); alone: show."""
    if not args:
        value = getattr(shell, attribute)
        shell.say(f"{what}: {value or zero}; usage: {name} N (0: {zero})\n")
    elif len(args) == 1 and args[0].isdigit():
        setattr(shell, attribute, int(args[0]))
    else:
        shell.error(f"usage: {name} N, a whole number")


def _mode(shell: "Shell", args: list[str]) -> None:
    if not args:
        shell.say(f"current output mode: {shell.mode}\navailable modes: {' '.join(FORMATS)}\n")
    elif len(args) == 1 and args[0].lower() in FORMATS:
        shell.mode = args[0].lower()
    else:
        shell.error(f"unknown mode '{' '.join(args)}'; modes: {' '.join(FORMATS)}")


def _pager(shell: "Shell", args: list[str]) -> None:
    if not args:
        shell.say(f"pager: {shell.pager}; usage: .pager on|off|auto (auto: results taller "
                  "than the terminal, through $PAGER or less)\n")
    elif len(args) == 1 and args[0].lower() in ("on", "off", "auto"):
        shell.pager = args[0].lower()
    else:
        shell.error("usage: .pager on|off|auto")


def _help(shell: "Shell", args: list[str]) -> None:
    from graphdb.executor.algorithms import REGISTRY

    functions = "\n  ".join(REGISTRY[n].signature() for n in sorted(REGISTRY))
    commands = "\n".join(f"  {usage:<22} {doc}" for usage, doc in (
        (usage, doc) for usage, doc, _ in COMMANDS.values()))
    shell.say_long(HELP.format(functions=functions, commands=commands))


def _schema(shell: "Shell", args: list[str]) -> None:
    tables = [r[0] for r in shell.con.execute("SHOW TABLES").fetchall()] if not args else []
    for name in (args or shell.con.graphs() + tables):
        shell.run(f"DESCRIBE {name}")


def _read(shell: "Shell", args: list[str]) -> bool:
    if len(args) != 1:
        shell.error("usage: .read FILE")
        return True
    path = args[0]
    try:
        text = Path(path).expanduser().read_text()
    except OSError as exc:
        shell.error(f"cannot read {path}: {exc.strerror or exc}")
        return True
    for line in text.splitlines():
        if not shell.feed(line):
            return False
    if shell.pending:
        return shell.feed(";")
    return True


def _import(shell: "Shell", args: list[str]) -> None:
    """``.import FILE GRAPH [ingest options]``: load a graph as ``graphdb ingest`` does."""
    from .cli import add_ingest_options, ingest_keywords, ingest_summary

    parser = _Parser(prog=".import", add_help=False)
    parser.add_argument("edges", metavar="FILE")
    parser.add_argument("graph", metavar="GRAPH")
    add_ingest_options(parser)
    try:
        options = parser.parse_args(args)
    except _UsageError as exc:
        shell.error(f"{exc}; usage: .import FILE GRAPH [--undirected] [--no-header] "
                    "[--weight COL] [--vertices FILE] ... (the options of graphdb ingest)")
        return
    work = lambda: shell.con.ingest(options.graph, options.edges,  # noqa: E731
                                    **ingest_keywords(options))
    summary, error, cancelled = shell.in_worker(work)
    if cancelled:
        shell.say("Cancelled.\n")
    elif error is not None:
        shell.report_error(error)
    else:
        shell.say(ingest_summary(summary, None) + "\n")


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # never exit the shell
        raise _UsageError(message)


def _output(shell: "Shell", args: list[str]) -> None:
    if len(args) > 1:
        shell.error("usage: .output [FILE]")
    else:
        shell.redirect(args[0] if args else None)


def _serve(shell: "Shell", args: list[str]) -> None:
    """``.serve [--write] [--port N]``: the web explorer on this database, in the background;
    ``.serve stop`` ends it; alone, while it runs, its address."""
    running = getattr(shell, "explorer", None)
    if args == ["stop"]:
        if running is None:
            shell.error("the explorer is not running; start it with .serve")
        else:
            running.stop()
            shell.explorer = None
            shell.say("explorer stopped\n")
        return
    if running is not None:
        if args:
            shell.error(".serve stop first: the explorer runs at " + running.url)
        else:
            shell.say(f"the explorer runs at {running.url}\n")
        return
    parser = _Parser(prog=".serve", add_help=False)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--port", type=int, default=8750)
    try:
        options = parser.parse_args(args)
    except _UsageError as exc:
        shell.error(f"{exc}; usage: .serve [--write] [--port N] | .serve stop")
        return
    try:
        shell.explorer = shell.con.serve(port=options.port, write=options.write)
    except Exception as exc:
        shell.report_error(exc)
        return
    mode = "read-write" if options.write else "read-only"
    shell.say(f"explorer ({mode}) at {shell.explorer.url}\n")


def _exit(shell: "Shell", args: list[str]) -> bool:
    if args and args[0].lstrip("-").isdigit():
        shell.exit_code = int(args[0])
    return False


#: name -> (usage, description, handler(shell, args) -> False to stop the shell or None)
COMMANDS: dict[str, tuple[str, str, Callable]] = {
    ".help": (".help", "this text", _help),
    ".graphs": (".graphs", "list the graphs (SHOW GRAPHS)", lambda sh, a: sh.run("SHOW GRAPHS")),
    ".tables": (".tables", "list the tables and views (SHOW TABLES)",
                lambda sh, a: sh.run("SHOW TABLES")),
    ".schema": (".schema [NAME]", "describe a graph or table, or every one", _schema),
    ".mode": (".mode [MODE]", f"output mode: {'|'.join(FORMATS)}; alone: the current one",
              _mode),
    ".timer": (".timer [on|off]", "show each statement's time (on in a terminal)",
               lambda sh, a: _switch(sh, a, ".timer", "timer", "the timer")),
    ".maxrows": (".maxrows [N]", "rows shown in table/box/line modes (0: all; default 40)",
                 lambda sh, a: _number(sh, a, ".maxrows", "max_rows", "rows shown", "all")),
    ".maxwidth": (".maxwidth [N]", "width tables fit (0: the terminal's)",
                  lambda sh, a: _number(sh, a, ".maxwidth", "max_width", "width",
                                        "the terminal's width")),
    ".pager": (".pager [on|off|auto]", "long results through $PAGER or less (default auto)",
               _pager),
    ".bail": (".bail [on|off]", "stop at the first error (default off)",
              lambda sh, a: _switch(sh, a, ".bail", "bail", "bail")),
    ".import": (".import FILE GRAPH ...", "load FILE as graph GRAPH (graphdb ingest's options)",
                _import),
    ".read": (".read FILE", "run the statements in FILE", _read),
    ".output": (".output [FILE]", "send results to FILE (alone: back to the screen)", _output),
    ".serve": (".serve [--write] [stop]", "the web explorer on this database (prints its "
               "address)", _serve),
    ".quit": (".quit / .exit [CODE]", "leave (Ctrl-D works too)", _exit),
}
_ALIASES = {".exit": ".quit", ".q": ".quit", ".once": ".output"}


def command_names() -> list[str]:
    """Every dot command and alias, as the shell completes them."""
    return sorted(set(COMMANDS) | set(_ALIASES))


def run_dot_command(shell: "Shell", line: str) -> bool:
    """Run one dot command line; False means leave the shell."""
    try:
        parts = shlex.split(line)
    except ValueError as exc:
        shell.error(f"{line}: {exc}")
        return True
    name = _ALIASES.get(parts[0].lower(), parts[0].lower())
    command = COMMANDS.get(name)
    if command is None:
        shell.error(f"Unknown or incomplete command '{line}'; try .help")
        return True
    return command[2](shell, parts[1:]) is not False
