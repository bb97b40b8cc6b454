"""The interactive shell: multi-line statements ended by ';', history, completion, highlighting.

With a terminal it uses prompt_toolkit (line editing, persistent history, SQL highlighting,
completion of keywords, functions, graphs and columns); with piped input it reads statements
from stdin, so scripts work too: ``graphdb DB < queries.sql``.

Each statement runs in a worker thread while the main thread waits, so Ctrl-C always reaches
the shell: it asks the connection to cancel (the runner stops at its next operator or frontier
level) and returns to the prompt.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

from graphdb.executor.device import warm_up

from .connection import Connection, connect
from .errors import Error
from .formatting import FORMATS, render
from .query.parser import split_statements

__all__ = ["Shell", "run_shell", "KEYWORDS"]

HELP = """\
Enter SQL statements ended by ';' (they may span several lines). Examples:
  SHOW GRAPHS;
  DESCRIBE g;
  SELECT vertex, depth FROM bfs(g, 1) WHERE depth <= 2 ORDER BY depth;
  SELECT vertex, rank FROM pagerank(g, damping => 0.85) ORDER BY rank DESC LIMIT 10;
  SELECT * FROM GRAPH_TABLE (g MATCH (a)-[e]->(b) WHERE a.id = 1 COLUMNS (b.id AS friend));
  SELECT src, count(*) FROM g.edges GROUP BY src ORDER BY 2 DESC LIMIT 5;
  EXPLAIN ANALYZE SELECT * FROM bfs(g, 1);
  SET device = 'cpu';  SET threads = 2;  RESET threads;  DROP GRAPH g;

Graph functions (arguments: constants, name => value, or (SELECT ...)): {functions}
Other table functions: {builtins}
Graph data as tables: g.vertices, g.edges; patterns: GRAPH_TABLE (g MATCH (a)-[e]->{{1,3}}(b) ...)

Dot commands:
  .help              this text
  .graphs            list the graphs (SHOW GRAPHS)
  .schema [GRAPH]    describe a graph, or every graph
  .mode MODE         output as {modes}
  .timer on|off      show the time of each statement
  .maxrows N         rows shown in table mode before truncating (0: all)
  .read FILE         run the statements in FILE
  .output [FILE]     send results to FILE (no FILE: back to the screen)
  .quit / .exit      leave (Ctrl-D works too); Ctrl-C cancels the running query
"""

HISTORY_FILE = Path(os.environ.get("GRAPHDB_HISTORY", Path.home() / ".graphdb_history"))

KEYWORDS = (
    "SELECT FROM WHERE GROUP BY HAVING ORDER LIMIT OFFSET JOIN LEFT RIGHT FULL INNER OUTER CROSS "
    "ON USING AS AND OR NOT IN IS NULL DISTINCT UNION ALL WITH CASE WHEN THEN ELSE END ASC DESC "
    "BETWEEN LIKE CAST EXPLAIN ANALYZE SHOW GRAPHS SETTINGS DESCRIBE DROP GRAPH SET RESET "
    "GRAPH_TABLE MATCH COLUMNS COUNT SUM AVG MIN MAX TRUE FALSE").split()


class Shell:
    """Reads statements, runs them on a connection, prints the results."""

    def __init__(self, con: Connection, out=None, console=None):
        self.con = con
        self.console = console or out or sys.stdout  # messages and errors
        self.out = out or sys.stdout  # results (.output redirects this)
        self._output_file = None
        self.mode = "table"
        self.timer = True
        self.max_rows = 40
        self.buffer = ""
        self._worker: threading.Thread | None = None

    # -- input ----------------------------------------------------------------------------------
    def feed(self, line: str) -> bool:
        """Take one line of input; run every complete statement. False means quit."""
        if not self.buffer.strip() and line.strip().startswith("."):
            return self.dot(line.strip())
        self.buffer += line + "\n"
        *complete, rest = split_statements(self.buffer)
        self.buffer = rest if rest.strip() else ""
        for statement in complete:
            if statement.strip():
                self.run(statement)
        return True

    @property
    def pending(self) -> bool:
        return bool(self.buffer.strip())

    # -- output ---------------------------------------------------------------------------------
    def write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def say(self, text: str) -> None:
        self.console.write(text)
        self.console.flush()

    def run(self, sql: str) -> None:
        start = time.perf_counter()
        outcome: dict = {}

        def work() -> None:
            try:
                outcome["result"] = self.con.execute(sql)
            except BaseException as exc:  # reported by the main thread
                outcome["error"] = exc

        if self._worker is not None and self._worker.is_alive():
            self.say("(waiting for the cancelled query to stop)\n")
        self._worker = threading.Thread(target=work, name="graphdb-query", daemon=True)
        try:
            self._worker.start()  # inside the try: Ctrl-C may come as soon as it starts
            while self._worker.is_alive():
                self._worker.join(0.05)
        except KeyboardInterrupt:
            self.con.interrupt()
            self._worker.join(1.0)
            self.say("Cancelled.\n")
            return
        elapsed = time.perf_counter() - start
        error = outcome.get("error")
        if error is not None:
            if isinstance(error, Error):
                self.say(f"Error: {error}\n" + _caret(sql, error))
            else:  # a bug, not a user mistake: still no traceback in the shell
                self.say(f"Error: internal error ({type(error).__name__}: {error}); "
                         "please report it\n")
            return
        result = outcome["result"]
        table = result.arrow()
        if table.num_columns == 0:
            self.say((result.message or "OK") + "\n")
        else:
            self.write(render(table, self.mode, max_rows=self.max_rows or None))
        if self.timer:
            self.say(f"Time: {elapsed * 1000:.1f} ms\n")

    def dot(self, command: str) -> bool:
        parts = command.split()
        name, args = parts[0].lower(), parts[1:]
        if name in (".quit", ".exit", ".q"):
            return False
        if name == ".help":
            from graphdb.executor.algorithms import REGISTRY

            functions = ", ".join(sorted(REGISTRY[n].signature() for n in REGISTRY))
            builtins = ", ".join(f"{n}()" for n in sorted(self.con.table_functions))
            self.say(HELP.format(functions=functions, builtins=builtins, modes="|".join(FORMATS)))
        elif name in (".graphs", ".tables"):
            self.run("SHOW GRAPHS")
        elif name == ".schema" and len(args) <= 1:
            for graph in (args or self.con.graphs()):
                self.run(f"DESCRIBE {graph}")
        elif name == ".mode" and len(args) == 1 and args[0].lower() in FORMATS:
            self.mode = args[0].lower()
        elif name == ".timer" and len(args) == 1 and args[0].lower() in ("on", "off"):
            self.timer = args[0].lower() == "on"
        elif name == ".maxrows" and len(args) == 1 and args[0].isdigit():
            self.max_rows = int(args[0])
        elif name == ".read" and len(args) == 1:
            self._read(args[0])
        elif name == ".output" and len(args) <= 1:
            self._output(args[0] if args else None)
        else:
            self.say(f"Unknown or incomplete command '{command}'; try .help\n")
        return True

    def _read(self, path: str) -> None:
        try:
            text = Path(path).expanduser().read_text()
        except OSError as exc:
            self.say(f"Error: cannot read {path}: {exc.strerror or exc}\n")
            return
        for line in text.splitlines():
            if not self.feed(line):
                break
        if self.pending:
            self.feed(";")

    def _output(self, path: str | None) -> None:
        if self._output_file is not None:
            self._output_file.close()
            self._output_file = None
        if path is None or path == "stdout":
            self.out = self.console
            return
        try:
            self._output_file = open(Path(path).expanduser(), "w")
        except OSError as exc:
            self.say(f"Error: cannot write {path}: {exc.strerror or exc}\n")
            self.out = self.console
            return
        self.out = self._output_file

    def close(self) -> None:
        self._output(None)


def _caret(sql: str, error: Error) -> str:
    """The statement line a syntax error points at, with a caret under the column."""
    line, column = getattr(error, "line", None), getattr(error, "column", None)
    lines = sql.strip("\n").splitlines()
    if not isinstance(line, int) or not isinstance(column, int) or not 1 <= line <= len(lines):
        return ""
    text = lines[line - 1]
    return f"  {text}\n  {' ' * max(column - 1, 0)}^\n"


def _interactive(shell: Shell) -> None:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    from .completion import SqlCompleter

    try:
        HISTORY_FILE.touch(exist_ok=True)
        history = FileHistory(str(HISTORY_FILE))
    except OSError:
        history = InMemoryHistory()
    lexer = None
    try:
        from prompt_toolkit.lexers import PygmentsLexer
        from pygments.lexers.sql import SqlLexer

        lexer = PygmentsLexer(SqlLexer)
    except ImportError:  # highlighting is a nicety; pygments may be missing
        pass
    session = PromptSession(history=history, lexer=lexer,
                            completer=SqlCompleter(shell.con, KEYWORDS),
                            complete_while_typing=False)
    while True:
        try:
            line = session.prompt("graphdb> " if not shell.pending else "     ...> ")
        except KeyboardInterrupt:
            shell.buffer = ""  # Ctrl-C at the prompt drops the statement being typed
            continue
        except EOFError:
            break
        if not shell.feed(line):
            break


def run_shell(db: str | None) -> int:
    with connect(db) as con:
        shell = Shell(con)
        label = db or "a temporary database (not kept)"
        try:
            if sys.stdin.isatty() and sys.stdout.isatty():
                print(f"graphdb shell on {label}. Enter .help for help, .quit to leave.")
                # CuPy's import and the CUDA context (about 0.3 s) are made while the user types
                warm_up(con.settings.device)
                _interactive(shell)
            else:
                for line in sys.stdin:
                    if not shell.feed(line.rstrip("\n")):
                        break
                if shell.pending:
                    shell.feed(";")
        finally:
            shell.close()
    return 0
