"""The interactive shell: multi-line statements ended by ';', history, aligned tables, timing.

With a terminal it uses prompt_toolkit (line editing, persistent history); with piped input it
reads statements from stdin, so scripts work too: ``graphdb DB < queries.sql``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from .connection import Connection, connect
from .errors import Error
from .formatting import FORMATS, render
from .query.parser import split_statements

__all__ = ["Shell", "run_shell"]

HELP = """\
Enter SQL statements ended by ';' (they may span several lines). Examples:
  SHOW GRAPHS;
  DESCRIBE g;
  SELECT vertex, depth FROM bfs(g, 1) WHERE depth <= 2 ORDER BY depth;
  SELECT vertex, rank FROM pagerank(g, damping => 0.85) ORDER BY rank DESC LIMIT 10;
  EXPLAIN SELECT * FROM bfs(g, 1);
  SET device = 'cpu';

Graph functions: {functions}

Dot commands:
  .help              this text
  .graphs            list the graphs (SHOW GRAPHS)
  .schema GRAPH      describe a graph (DESCRIBE GRAPH)
  .mode MODE         output as {modes}
  .timer on|off      show the time of each statement (on by default)
  .maxrows N         rows shown in table mode before truncating (0: all)
  .quit / .exit      leave (Ctrl-D works too)
"""

HISTORY_FILE = Path(os.environ.get("GRAPHDB_HISTORY", Path.home() / ".graphdb_history"))


class Shell:
    """Reads statements, runs them on a connection, prints the results."""

    def __init__(self, con: Connection, out=None):
        self.con = con
        self.out = out or sys.stdout
        self.mode = "table"
        self.timer = True
        self.max_rows = 40
        self.buffer = ""

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

    def run(self, sql: str) -> None:
        start = time.perf_counter()
        try:
            result = self.con.execute(sql)
        except Error as exc:
            self.write(f"Error: {exc}\n")
            return
        except KeyboardInterrupt:
            self.write("Cancelled.\n")
            return
        elapsed = time.perf_counter() - start
        table = result.arrow()
        if table.num_columns == 0:
            self.write((result.message or "OK") + "\n")
        else:
            self.write(render(table, self.mode, max_rows=self.max_rows or None))
        if self.timer:
            self.write(f"Time: {elapsed * 1000:.1f} ms\n")

    def dot(self, command: str) -> bool:
        parts = command.split()
        name, args = parts[0].lower(), parts[1:]
        if name in (".quit", ".exit", ".q"):
            return False
        if name == ".help":
            from executor.algorithms import REGISTRY

            functions = ", ".join(sorted(REGISTRY[n].signature() for n in REGISTRY))
            self.write(HELP.format(functions=functions, modes="|".join(FORMATS)))
        elif name in (".graphs", ".tables"):
            self.run("SHOW GRAPHS")
        elif name == ".schema" and len(args) == 1:
            self.run(f"DESCRIBE {args[0]}")
        elif name == ".mode" and len(args) == 1 and args[0].lower() in FORMATS:
            self.mode = args[0].lower()
        elif name == ".timer" and len(args) == 1 and args[0].lower() in ("on", "off"):
            self.timer = args[0].lower() == "on"
        elif name == ".maxrows" and len(args) == 1 and args[0].isdigit():
            self.max_rows = int(args[0])
        else:
            self.write(f"Unknown or incomplete command '{command}'; try .help\n")
        return True


def _interactive(shell: Shell, db_label: str) -> None:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    try:
        history = FileHistory(str(HISTORY_FILE))
        HISTORY_FILE.touch(exist_ok=True)
    except OSError:
        history = InMemoryHistory()
    session = PromptSession(history=history)
    while True:
        try:
            line = session.prompt("graphdb> " if not shell.pending else "     ...> ")
        except KeyboardInterrupt:
            shell.buffer = ""  # Ctrl-C drops the statement being typed
            continue
        except EOFError:
            break
        if not shell.feed(line):
            break


def run_shell(db: str | None) -> int:
    with connect(db) as con:
        shell = Shell(con)
        label = db or "a temporary database (not kept)"
        if sys.stdin.isatty() and sys.stdout.isatty():
            print(f"graphdb shell on {label}. Enter .help for help, .quit to leave.")
            _interactive(shell, label)
        else:
            for line in sys.stdin:
                if not shell.feed(line.rstrip("\n")):
                    break
            if shell.pending:
                shell.feed(";")
    return 0
