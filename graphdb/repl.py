"""The interactive shell: statements ended by ';', history, completion, highlighting.

With a terminal it uses prompt_toolkit: a statement is edited as one multi-line buffer (Enter
runs it once it ends with ';', else starts a new line), so the history holds whole statements;
plus SQL highlighting and completion of keywords, functions, graphs and columns. Results fit the
terminal's width; one taller than the terminal goes through a pager (``$PAGER``, else
``less -SRFX``). With piped input it reads a script from stdin, as sqlite3 and DuckDB do:
``graphdb DB < queries.sql``; then results go to stdout, errors (with the line they are near) to
stderr, timings only when ``.timer on`` asks for them, and the exit status is 1 if any statement
failed (``.bail on`` stops at the first).

Each statement runs in a worker thread while the main thread waits, so Ctrl-C always reaches
the shell: it asks the connection to cancel (the runner stops at its next operator, frontier
level or iteration) and returns to the prompt. A statement that runs longer than a second shows
a status line with its elapsed time and, where the statement reports it, its progress
(iterations of an algorithm, bytes and rows of a load).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

from graphdb.executor.device import warm_up
from graphdb.storage.compiled import first_use_seconds

from .connection import Connection, connect, connect_for_reading
from .errors import Error
from .formatting import render
from .progress import ProgressReport, describe_report, time_line
from .query.parser import split_statements
from .shell_commands import run_dot_command

__all__ = ["Shell", "run_shell", "statement_complete", "KEYWORDS", "HISTORY_FILE"]

HISTORY_FILE = Path(os.environ.get("GRAPHDB_HISTORY", Path.home() / ".graphdb_history"))

KEYWORDS = (
    "SELECT FROM WHERE GROUP BY HAVING ORDER LIMIT OFFSET JOIN LEFT RIGHT FULL INNER OUTER CROSS "
    "ON USING AS AND OR NOT IN IS NULL DISTINCT UNION ALL WITH CASE WHEN THEN ELSE END ASC DESC "
    "BETWEEN LIKE CAST EXPLAIN ANALYZE SHOW GRAPHS SETTINGS DESCRIBE DROP GRAPH SET RESET "
    "GRAPH_TABLE MATCH COLUMNS COUNT SUM AVG MIN MAX TRUE FALSE COPY TO CREATE REPLACE FORMAT "
    "PARQUET CSV JSON HEADER DELIMITER VERTICES UNDIRECTED WEIGHT").split()

#: A statement running longer than this shows the status line (seconds).
STATUS_AFTER = 1.0
_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class Shell:
    """Reads statements, runs them on a connection, prints the results.

    ``out`` takes results (``.output`` redirects it), ``console`` the status messages and
    timings, ``err`` the errors; given only ``out``, everything goes there (tests).
    ``interactive``: a person at a terminal (timings on, a status line for long statements, a
    pager, fitting the terminal's width); else a script (errors counted for the exit status,
    with the line they are near)."""

    def __init__(self, con: Connection, out=None, console=None, err=None, *,
                 interactive: bool = False):
        self.con = con
        self.out = out or sys.stdout
        self.screen = self.out  # where results go when not redirected
        self.console = console or out or sys.stdout
        self.err = err or out or sys.stderr
        self.interactive = interactive
        self._output_file = None
        self.mode = "table"
        self.timer = interactive
        self.max_rows = 40
        self.max_width = 0  # 0: the terminal's width (no limit when output is not a terminal)
        self.pager = "auto"  # 'auto': long results through the pager, in a terminal
        self.bail = False
        self.errors = 0  # statements that failed
        self.exit_code: int | None = None  # set by .exit CODE
        self.buffer = ""
        self.line = 0  # lines read so far (for 'near line N')
        self._statement_line = 0
        self._worker: threading.Thread | None = None
        self._report: ProgressReport | None = None
        con.set_progress_handler(self._on_progress)

    # -- input ----------------------------------------------------------------------------------
    def feed(self, line: str) -> bool:
        """Take one line of input; run every complete statement. False means stop (``.quit``,
        or an error under ``.bail on``)."""
        self.line += 1
        if not self.buffer.strip() and line.strip().startswith("."):
            return run_dot_command(self, line.strip()) and not self._bailing()
        if not self.buffer.strip():
            self._statement_line = self.line
        self.buffer += line + "\n"
        *complete, rest = split_statements(self.buffer)
        self.buffer = rest if rest.strip() else ""
        for statement in complete:
            if statement.strip():
                self.run(statement, line=self._statement_line)
                if self._bailing():
                    self.buffer = ""
                    return False
            self._statement_line = self.line
        return True

    def feed_text(self, text: str) -> bool:
        """Take a whole edited buffer (one or more lines) from the terminal."""
        for line in text.split("\n"):
            if not self.feed(line):
                return False
        return True

    def _bailing(self) -> bool:
        return self.bail and self.errors > 0

    @property
    def pending(self) -> bool:
        return bool(self.buffer.strip())

    # -- output ---------------------------------------------------------------------------------
    def write(self, text: str) -> None:
        """Results: to the ``.output`` file, or the screen (through the pager when long)."""
        if self.out is self.screen and self._wants_pager(text):
            if self._page(text):
                return
        self.out.write(text)
        self.out.flush()

    def say(self, text: str) -> None:
        """Status messages and timings."""
        self.console.write(text)
        self.console.flush()

    def say_long(self, text: str) -> None:
        """A long message (``.help``): through the pager when taller than the terminal."""
        if self.out is self.screen and self._wants_pager(text) and self._page(text):
            return
        self.say(text)

    def error(self, message: str, line: int | None = None) -> None:
        """Report an error (in a script: near ``line``, by default the line just read)."""
        self.errors += 1
        line = self.line if line is None else line
        where = f" near line {line}" if line and not self.interactive else ""
        self.err.write(f"Error{where}: {message}\n")
        self.err.flush()

    def width(self) -> int | None:
        """The width results are fitted to: ``.maxwidth``, else the terminal's, else none."""
        if self.max_width:
            return self.max_width
        if self.out is self.screen and _is_terminal(self.out):
            return shutil.get_terminal_size().columns
        return None

    def _wants_pager(self, text: str) -> bool:
        if self.pager == "off" or not self.interactive or not _is_terminal(self.out):
            return False
        return self.pager == "on" or text.count("\n") > shutil.get_terminal_size().lines - 2

    def _page(self, text: str) -> bool:
        command = os.environ.get("GRAPHDB_PAGER") or os.environ.get("PAGER") or (
            "less -SRFX" if shutil.which("less") else "")
        if not command.strip() or command.strip() == "cat":
            return False
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the pager's
        try:
            subprocess.run(command, shell=True, input=text, text=True, check=False)
            return True
        except OSError:
            return False
        finally:
            signal.signal(signal.SIGINT, previous)

    # -- running --------------------------------------------------------------------------------
    def _on_progress(self, report: ProgressReport) -> None:
        self._report = report  # read by the main thread's status line

    def in_worker(self, work: Callable[[], object]) -> tuple[object, BaseException | None, bool]:
        """Run ``work()`` in a worker thread, showing the status line after a second and
        cancelling on Ctrl-C: (result, error, cancelled)."""
        outcome: dict = {}

        def target() -> None:
            try:
                outcome["result"] = work()
            except BaseException as exc:  # reported by the main thread
                outcome["error"] = exc

        if self._worker is not None and self._worker.is_alive():
            self.say("(waiting for the cancelled query to stop)\n")
        self._report = None
        self._worker = threading.Thread(target=target, name="graphdb-query", daemon=True)
        start = time.perf_counter()
        status = self.interactive and _is_terminal(self.console)
        shown = False
        try:
            self._worker.start()  # inside the try: Ctrl-C may come as soon as it starts
            frame = 0
            while self._worker.is_alive():
                self._worker.join(0.1)
                elapsed = time.perf_counter() - start
                if status and elapsed >= STATUS_AFTER and self._worker.is_alive():
                    self._status(f"{_SPINNER[frame % len(_SPINNER)]} {elapsed:5.1f} s", shown)
                    shown, frame = True, frame + 1
        except KeyboardInterrupt:
            self.con.interrupt()
            self._worker.join(1.0)
            if shown:
                self._status("", True)
            return None, None, True
        if shown:
            self._status("", True)
        return outcome.get("result"), outcome.get("error"), False

    def _status(self, head: str, clear: bool) -> None:
        text = head
        if head and self._report is not None:
            text += "  " + describe_report(self._report)
        width = shutil.get_terminal_size().columns
        self.console.write("\r\x1b[2K" + text[: max(width - 1, 0)] if clear or text else "")
        self.console.flush()

    def run(self, sql: str, line: int | None = None) -> bool:
        """Run one statement and print its result; False when it failed or was cancelled."""
        start, one_time = time.perf_counter(), first_use_seconds()
        result, error, cancelled = self.in_worker(lambda: self.con.execute(sql))
        if cancelled:
            if not self.interactive:  # Ctrl-C ends a script (status 130), as in sqlite3
                raise KeyboardInterrupt
            self.say("Cancelled.\n")
            return False
        elapsed = time.perf_counter() - start
        if error is not None:
            self.report_error(error, sql, line)
            return False
        table = result.arrow()
        if result.kind == "explain" and table.column_names == ["plan"]:
            self.write("\n".join(table.column("plan").to_pylist()) + "\n")
        elif table.num_columns == 0:
            self.say((result.message or "OK") + "\n")
        else:
            self.write(render(table, self.mode, max_rows=self.max_rows or None,
                              max_width=self.width()))
        if self.timer:
            self.say(time_line(elapsed, one_time, first_use_seconds()) + "\n")
        return True

    def report_error(self, error: BaseException, sql: str = "", line: int | None = None) -> None:
        if isinstance(error, Error):
            self.error(str(error) + ("\n" + _caret(sql, error) if sql else "").rstrip("\n"),
                       line)
        elif isinstance(error, KeyboardInterrupt):
            self.error("interrupted", line)
        else:  # a bug, not a user mistake: still no traceback in the shell
            self.error(f"internal error ({type(error).__name__}: {error}); please report it",
                       line)

    def close(self) -> None:
        self.con.set_progress_handler(None)
        self.redirect(None)

    def redirect(self, path: str | None) -> None:
        """``.output [FILE]``: results to FILE, or back to the screen."""
        if self._output_file is not None:
            self._output_file.close()
            self._output_file = None
        self.out = self.screen
        if path is None or path == "stdout":
            return
        try:
            self._output_file = open(Path(path).expanduser(), "w")
        except OSError as exc:
            self.error(f"cannot write {path}: {exc.strerror or exc}")
            return
        self.out = self._output_file


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _caret(sql: str, error: Error) -> str:
    """The statement line a syntax error points at, with a caret under the column."""
    line, column = getattr(error, "line", None), getattr(error, "column", None)
    lines = sql.strip("\n").splitlines()
    if not isinstance(line, int) or not isinstance(column, int) or not 1 <= line <= len(lines):
        return ""
    text = lines[line - 1]
    return f"  {text}\n  {' ' * max(column - 1, 0)}^\n"


def statement_complete(text: str) -> bool:
    """Whether the terminal's buffer is ready to run: empty, a dot command, or ending with a
    ';' outside quotes and comments."""
    stripped = text.strip()
    if not stripped or stripped.startswith("."):
        return True
    *complete, rest = split_statements(text)
    return bool(complete) and not rest.strip()


def _interactive(shell: Shell) -> None:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory
    from prompt_toolkit.key_binding import KeyBindings

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
    keys = KeyBindings()

    @keys.add("enter")
    def _enter(event) -> None:
        buffer = event.current_buffer
        if statement_complete(buffer.text):
            buffer.validate_and_handle()  # the whole statement becomes one history entry
        else:
            buffer.insert_text("\n")

    session = PromptSession(history=history, lexer=lexer, multiline=True, key_bindings=keys,
                            completer=SqlCompleter(shell.con, KEYWORDS),
                            complete_while_typing=False,
                            prompt_continuation=_continuation)
    while True:
        try:
            text = session.prompt("graphdb> ")
        except KeyboardInterrupt:
            continue  # Ctrl-C at the prompt drops the statement being typed
        except EOFError:
            break
        if not shell.feed_text(text):
            break


def _continuation(width: int, line: int, wrap: int) -> str:
    """The prompt of a statement's next line; none where a long line only wraps on the screen
    (a prompt there would stand in the middle of a word)."""
    return "" if wrap else "     ...> "


def run_shell(db: str | None, *, commands: list[str] | None = None, bail: bool = False,
              mode: str | None = None, device: str = "auto", cluster: str | None = None) -> int:
    """The shell on ``db`` (in memory without one). ``commands``: statements to run instead of
    reading input (``-c``). ``cluster``: one rank of an MPI job; rank 0 reads the statements
    and sends them to the others (:mod:`graphdb.cluster`). Returns the exit status: 1 when a
    statement of a script failed."""
    if cluster is not None:
        from .cluster import Leader, follow

        con = connect(db, device=device, cluster=cluster)
        if con.rank != 0:
            with con:
                return follow(con, con.cluster)
        con = Leader(con, con.cluster)
    else:  # read-only until the first write (DROP GRAPH): see connection.connect_for_reading
        con = connect_for_reading(db, device=device)
    with con:
        interactive = commands is None and sys.stdin.isatty() and sys.stdout.isatty()
        shell = Shell(con, sys.stdout, sys.stdout if interactive else sys.stderr, sys.stderr,
                      interactive=interactive)
        shell.bail = bail
        if mode is not None:
            shell.mode = mode
        label = db or "an in-memory database (not kept)"
        try:
            if commands is not None:
                for command in commands:
                    if not shell.feed_text(command.rstrip() + ("" if command.rstrip().endswith(
                            ";") or command.strip().startswith(".") else ";")):
                        break
            elif interactive:
                print(f"graphdb shell on {label}. Enter .help for help, .quit to leave.")
                # CuPy's import and the CUDA context (about 0.3 s) are made while the user types
                warm_up(con.settings.device)
                _interactive(shell)
            else:
                for line in sys.stdin:
                    if not shell.feed(line.rstrip("\n")):
                        break
                else:
                    if shell.pending:
                        shell.feed(";")
        finally:
            shell.close()
    if shell.exit_code is not None:
        return shell.exit_code
    return 1 if shell.errors and not interactive else 0

