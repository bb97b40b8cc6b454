"""The ``graphdb`` command: the shell, ingest, query and demo.

    graphdb [DB]                        interactive shell (an in-memory database without DB);
                                        a script on stdin: graphdb DB < file.sql
    graphdb DB -c "SQL" [-c ...]        run statements and exit
    graphdb ingest DB GRAPH EDGES ...   load an edge list
    graphdb query DB "SQL" [--format]   run one statement and print the result
    graphdb demo [DB]                   build a sample database and run showcase queries
    graphdb warmup                      compile the kernels now, not at the first query
    graphdb serve DB [--write]          the web explorer on DB (prints the address to open)
    graphdb check DB                    verify every page, record, block and file of DB

Errors go to stderr, one line each (never a traceback). The exit status says what happened:
0 done, 1 a statement or an input failed (a query error, a bad file), 2 the command line was
wrong (usage), 3 an internal error (a bug: please report it), 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import warnings

from ._version import __version__
from .errors import Error

__all__ = ["main", "add_ingest_options", "ingest_keywords", "ingest_summary"]

COMMANDS = ("ingest", "query", "demo", "shell", "warmup", "serve", "check")

#: Exit statuses: a statement or input failed, the command line was wrong, a bug, Ctrl-C.
EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 1, 2, 3, 130

_DEVICE_HELP = ("where graph operators run: a GPU when one can be used, else the CPU (auto, "
                "the default), the CPU, or a GPU (an error without one)")

_JSON_NOTE = "json writes infinities and NaN as null (JSON has no number for them)"


def add_ingest_options(p: argparse.ArgumentParser) -> None:
    """The options of ``graphdb ingest`` after DB GRAPH EDGES (also the shell's ``.import``)."""
    from graphdb.catalog import FORMATS

    p.add_argument("--vertices", metavar="FILE",
                   help="vertex file: an id column, then property columns (one row per vertex)")
    p.add_argument("--undirected", action="store_true", help="edges have no direction")
    p.add_argument("--format", default="auto", choices=FORMATS,
                   help="input format (default: from the file extension)")
    p.add_argument("--vertex-format", default="auto", choices=FORMATS,
                   help="format of the vertex file (default: from its extension)")
    p.add_argument("--src", metavar="COL", help="source column (name, or 1-based position)")
    p.add_argument("--dst", metavar="COL", help="destination column")
    p.add_argument("--weight", metavar="COL", default="auto",
                   help="weight column, by name or 1-based position; 'none' for an unweighted "
                        "graph (default: the column named 'weight', if any); it keeps its name, "
                        "and other columns become edge properties")
    p.add_argument("--vertex-id", metavar="COL",
                   help="id column of the vertex file (default: the first)")
    p.add_argument("--delimiter", metavar="CHAR",
                   help="field delimiter of the edge file(s) ('\\t' for tab)")
    header = p.add_mutually_exclusive_group()
    header.add_argument("--header", dest="header", action="store_true", default=None,
                        help="the first line of the CSV/TSV edge file(s) names the columns")
    header.add_argument("--no-header", dest="header", action="store_false",
                        help="the first line is data (default for CSV/TSV: a header, unless "
                             "the first line is all numbers, which is read as data with a "
                             "warning)")
    p.add_argument("--id-type", default="auto", choices=("auto", "int", "string"),
                   help="read vertex ids as integers or as text (default: as the data says)")
    p.add_argument("--self-loops", default="keep", choices=("keep", "drop"),
                   help="edges from a vertex to itself (default: keep)")
    p.add_argument("--duplicates", default="keep", choices=("keep", "merge"),
                   help="repeated (source, destination) edges (default: keep)")
    p.add_argument("--merge-weights", default="min", choices=("min", "max", "sum", "first"),
                   help="weight of merged duplicates (default: min); properties are the first's")
    p.add_argument("--missing-vertices", default="error", choices=("error", "add"),
                   help="an edge endpoint absent from --vertices (default: error)")
    p.add_argument("--invalid-weights", default="error", choices=("error", "keep"),
                   help="weights that are NaN, infinite or negative: refuse the file (default) "
                        "or store them (the summary counts them)")
    p.add_argument("--memory-limit", metavar="SIZE",
                   help="memory budget, e.g. 2GB (default: half the available memory); larger "
                        "inputs are sorted in runs on disk")
    p.add_argument("--temp-dir", metavar="DIR",
                   help="where sorted runs go (default: inside the database directory)")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "gpu"),
                   help="where ids are mapped and edges sorted: a GPU when there is one (auto, "
                        "the default), the CPU, or a GPU (an error without one)")
    p.add_argument("--pages", action="store_true",
                   help="also build the slotted pages now (page streaming reads them; by "
                        "default the first page-streamed query builds them)")
    p.add_argument("--replace", action="store_true", help="replace a graph of the same name")


def ingest_keywords(args: argparse.Namespace) -> dict:
    """The keyword arguments of ``Connection.ingest`` from parsed ingest options."""
    return dict(vertices=args.vertices, undirected=args.undirected, format=args.format,
                vertex_format=args.vertex_format, src=args.src, dst=args.dst,
                weight=args.weight, vertex_id=args.vertex_id, delimiter=args.delimiter,
                header=args.header, id_type=args.id_type, self_loops=args.self_loops,
                duplicates=args.duplicates, merge_weights=args.merge_weights,
                missing_vertices=args.missing_vertices, invalid_weights=args.invalid_weights,
                memory_limit=args.memory_limit, temp_dir=args.temp_dir, replace=args.replace,
                pages=args.pages, device=args.device)


def _parser() -> argparse.ArgumentParser:
    from .formatting import FORMATS as OUTPUT_FORMATS

    parser = argparse.ArgumentParser(
        prog="graphdb",
        description="An embeddable graph database: SQL traversal queries on GPU and CPU.",
        epilog="Run 'graphdb DB' for the interactive shell on database DB (no DB: an "
               "in-memory database), 'graphdb DB < script.sql' for a script, "
               "'graphdb COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"graphdb {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("ingest", help="load an edge list into a graph",
                       description="Load an edge list into graph GRAPH of database DB "
                                   "(created if missing). The graph appears only when the load "
                                   "has completed.")
    p.add_argument("db", metavar="DB", help="database directory")
    p.add_argument("graph", metavar="GRAPH", help="name of the graph to create")
    p.add_argument("edges", metavar="EDGES", nargs="?",
                   help="edge file (.csv .tsv .txt .e .parquet .arrow, optionally .gz), or a "
                        "quoted glob pattern such as 'parts/*.csv.gz'; left out for a "
                        "property graph of --vertex-table and --edge-table files")
    p.add_argument("--vertex-table", action="append", metavar="LABEL=FILE[:KEY]",
                   help="a property graph's vertex file with its label (and key column; "
                        "default the first); repeat for each label")
    p.add_argument("--edge-table", action="append", metavar="LABEL=FILE:SRC->DST[:COL,COL]",
                   help="a property graph's edge file with its label, the labels of its sources "
                        "and destinations (and the columns holding their keys; default the "
                        "first two); repeat for each label; quote it, the shell reads '>'")
    add_ingest_options(p)
    p.add_argument("--mode", metavar="OCTAL", type=_octal_mode,
                   help="permission bits of the files of a database this creates, e.g. 640 to "
                        "let the group read it (default 600, directories 700)")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary")

    q = sub.add_parser("query", help="run one SQL statement",
                       description="Run one SQL statement against database DB and print the "
                                   f"result. Formats: {', '.join(OUTPUT_FORMATS)}; "
                                   f"{_JSON_NOTE}.")
    q.add_argument("db", metavar="DB", help="database directory")
    q.add_argument("sql", metavar="SQL", help="the statement, e.g. \"SELECT * FROM bfs(g, 1)\"")
    q.add_argument("--format", default="table", choices=OUTPUT_FORMATS, help="output format")
    q.add_argument("--device", default="auto", choices=("auto", "cpu", "gpu"),
                   help=_DEVICE_HELP)
    q.add_argument("--timer", action="store_true", help="print the time taken (on stderr)")
    q.add_argument("--cluster", choices=("mpi",),
                   help="run as one rank of an MPI job (mpiexec -n N graphdb query ...): every "
                        "rank reads its own copy of DB, rank 0 prints")

    d = sub.add_parser("demo", help="build a sample database and run showcase queries",
                       description="Build a sample database (graphs 'social' and 'roads') and "
                                   "run showcase queries. A database that holds other graphs, "
                                   "or graphs of these names that the demo did not make, is "
                                   "left alone unless --force is given.")
    d.add_argument("db", metavar="DB", nargs="?", default="graphdb-demo",
                   help="database directory (default: ./graphdb-demo)")
    d.add_argument("--force", action="store_true",
                   help="use DB even if it holds other graphs (its 'social' and 'roads' are "
                        "replaced)")

    w = sub.add_parser("serve", help="the web explorer: query and draw graphs in a browser",
                       description="Serve the web explorer on database DB: a SQL editor, "
                                   "results as tables, graphs and charts, the schema and "
                                   "plans. It listens on 127.0.0.1 only and prints the address "
                                   "to open, with a random token that every request needs. "
                                   "Read-only unless --write.")
    w.add_argument("db", metavar="DB", help="database directory")
    w.add_argument("--port", type=int, default=8750,
                   help="port (default 8750, or the next free one; 0: any free port)")
    w.add_argument("--host", default="127.0.0.1",
                   help="interface to listen on (default 127.0.0.1: this machine only)")
    w.add_argument("--write", action="store_true",
                   help="allow statements that change the database (INSERT, CREATE GRAPH, "
                        "DROP GRAPH, ...) and that read or write files (COPY, loads)")
    w.add_argument("--no-browser", dest="browser", action="store_false",
                   help="do not open a browser")
    w.add_argument("--workers", type=int, default=2,
                   help="statements run at once, each on a connection of its own (default 2)")
    w.add_argument("--device", default="auto", choices=("auto", "cpu", "gpu"))
    c = sub.add_parser("check", help="verify a whole database",
                       description="Read every page, record, block and file of database DB and "
                                   "verify each (LMDB's trees, the catalog and its ledger, CSR "
                                   "blocks and their invariants, slotted pages, Arrow files, "
                                   "write logs, links). Prints 'ok', or one line per problem "
                                   "(exit status 1). Nothing is changed; the check runs in a "
                                   "child process. SQL: PRAGMA integrity_check.")
    c.add_argument("db", metavar="DB", help="database directory")

    s = sub.add_parser("shell", help="the interactive shell (same as 'graphdb DB')",
                       description="The shell. In a terminal: statements ended by ';', .help "
                                   "for help. With a script on stdin: results on stdout, errors "
                                   "on stderr, exit status 1 if a statement failed. Modes: "
                                   f"{', '.join(OUTPUT_FORMATS)}; {_JSON_NOTE}.")
    s.add_argument("db", metavar="DB", nargs="?",
                   help="database directory (default: an in-memory database)")
    s.add_argument("-c", "--command", dest="commands", action="append", metavar="SQL",
                   help="run SQL (or a dot command) and exit; may be repeated")
    s.add_argument("--bail", action="store_true", help="stop at the first error")
    s.add_argument("--mode", choices=OUTPUT_FORMATS, help="output mode (default: table)")
    s.add_argument("--device", default="auto", choices=("auto", "cpu", "gpu"),
                   help=_DEVICE_HELP)
    s.add_argument("--cluster", choices=("mpi",),
                   help="run as one rank of an MPI job: rank 0 reads the statements")

    w = sub.add_parser("warmup", help="compile the kernels now, not at the first query",
                       description="Compile graphdb's CPU kernels (and GPU kernels, with a GPU) "
                                   "by running every graph function on a small graph: the "
                                   "first query of each kind then does not pay the compile. "
                                   "They are kept in graphdb's cache directory "
                                   "(~/.cache/graphdb, or $GRAPHDB_CACHE_DIR). On a host with "
                                   "several GPUs it then times them for the planner (about a "
                                   "minute, once per GPU model, count and driver).")
    w.add_argument("--device", default="auto", choices=("auto", "cpu", "gpu"),
                   help="the kernels of which devices (default: the CPU's, and a GPU's when "
                        "one can be used)")
    w.add_argument("--recalibrate", action="store_true",
                   help="with several GPUs, time them again even when a calibration for them "
                        "is kept")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv = ["shell"] + argv
    args = _parser().parse_args(argv)
    warnings.showwarning = _show_warning
    try:
        if args.command == "ingest":
            return _ingest(args)
        if args.command == "query":
            return _query(args)
        if args.command == "check":
            from .integrity import check_command

            return check_command(args.db)
        if args.command == "demo":
            from .demo import run_demo

            return run_demo(args.db, force=args.force)
        if args.command == "warmup":
            from .warmup import run_warmup

            return run_warmup(args.device, recalibrate=args.recalibrate)
        if args.command == "serve":
            from .explorer.server import serve

            return serve(args.db, host=args.host, port=args.port, write=args.write,
                         workers=args.workers, browser=args.browser, device=args.device)
        from .repl import run_shell

        return run_shell(args.db, commands=args.commands, bail=args.bail, mode=args.mode,
                         device=args.device, cluster=args.cluster)
    except _Usage as exc:
        print(f"graphdb {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Error as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug, not a user mistake: one line, never a traceback
        print(f"Error: internal error ({type(exc).__name__}: {exc}); please report it",
              file=sys.stderr)
        return EXIT_INTERNAL


class _Usage(Exception):
    """A command line that asks for nothing that can be done (exit status 2, as argparse's)."""


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings (a CSV header that looks like data, ...) as one line on stderr."""
    print(f"Warning: {message}", file=sys.stderr)


def _octal_mode(text: str) -> int:
    try:
        mode = int(text, 8)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an octal mode such as 640") from None
    if not 0 <= mode <= 0o777:
        raise argparse.ArgumentTypeError(f"{text!r} is not a permission mode (000 to 777)")
    return mode


def _ingest(args) -> int:
    from .connection import connect
    from .progress import terminal_progress

    progress = None if args.quiet else terminal_progress(sys.stdout)
    if args.vertex_table or args.edge_table:
        with connect(args.db, mode=args.mode) as con:
            summary = con.create_property_graph(args.graph, **_tables(args),
                                                undirected=args.undirected,
                                                replace=args.replace)
        if not args.quiet:
            print(ingest_summary(summary, args.db))
        return 0
    if args.edges is None:
        raise _Usage("give an edge file (- for standard input), or a property graph's "
                     "--vertex-table and --edge-table files")
    with connect(args.db, mode=args.mode) as con:
        summary = con.ingest(args.graph, args.edges, progress=progress or False,
                             **ingest_keywords(args))
    if not args.quiet:
        print(ingest_summary(summary, args.db, detailed=progress is not None))
    return 0


_VERTEX_TABLE = re.compile(r"(?P<label>[A-Za-z_]\w*)=(?P<file>.+?)(?::(?P<key>\w+))?")
_EDGE_TABLE = re.compile(r"(?P<label>[A-Za-z_]\w*)=(?P<file>.+?):(?P<src>\w+)->(?P<dst>\w+)"
                         r"(?::(?P<from>\w+),(?P<to>\w+))?")


def _tables(args) -> dict:
    """``Connection.create_property_graph``'s vertices, edges and keys from --vertex-table and
    --edge-table."""
    vertices, edges, keys = {}, {}, {}
    for text in args.vertex_table or []:
        match = _VERTEX_TABLE.fullmatch(text)
        if match is None:
            raise _Usage(f"--vertex-table {text}: expected LABEL=FILE or "
                                    "LABEL=FILE:KEY")
        vertices[match["label"]] = match["file"]
        if match["key"]:
            keys[match["label"]] = match["key"]
    for text in args.edge_table or []:
        match = _EDGE_TABLE.fullmatch(text)
        if match is None:
            raise _Usage(f"--edge-table {text}: expected LABEL=FILE:SRC->DST or "
                                    "LABEL=FILE:SRC->DST:SRC_COLUMN,DST_COLUMN")
        edges[match["label"]] = (match["file"], match["src"], match["dst"], match["from"],
                                 match["to"])
    return {"vertices": vertices, "edges": edges, "keys": keys}


def ingest_summary(summary: dict, db: str | None, detailed: bool = False) -> str:
    from graphdb.executor.device import format_bytes

    kind = ("undirected" if not summary["directed"] else "directed") + ", " + (
        "weighted" if summary["weighted"] else "unweighted")
    into = f" into {db}" if db else ""
    line = (f"Loaded graph '{summary['graph']}'{into}: {summary['vertices']:,} vertices, "
            f"{summary['edges']:,} edges ({kind}) in {summary['seconds']:.2f} s")
    kept = summary.get("weights_kept", {})
    if any(kept.values()):  # said even without details: such weights change what SSSP means
        line += "\n  weights kept       " + ", ".join(
            f"{n:,} {what}" for what, n in (("NaN", kept["nan"]), ("infinite", kept["infinite"]),
                                            ("negative", kept["negative"])) if n)
    if not detailed:
        return line
    return "\n".join([
        line,
        f"  stored edges       {summary['stored_edges']:,}",
        f"  self loops dropped {summary['self_loops_dropped']:,}",
        f"  duplicates merged  {summary['duplicates_merged']:,}",
        f"  bytes stored       {format_bytes(summary['bytes_stored'])}",
        f"  rate               {summary['edges_per_second']:,.0f} edges/s",
    ])


def _query(args) -> int:
    from .connection import connect, connect_for_reading
    from .formatting import render

    # Read-only unless the statement writes (then reopened read-write): a user who may only
    # read the database can query it, and a query never waits for a writer. A cluster rank
    # opens its copy read-only.
    opened = (connect(args.db, create=False, device=args.device, cluster=args.cluster)
              if args.cluster else connect_for_reading(args.db, create=_creates(args),
                                                       device=args.device))
    with opened as con:
        result = _run_statement(con, args.sql)
        if con.rank != 0:
            return 0  # every rank ran the statement; rank 0 speaks for the job
    table = result.arrow()
    if result.kind == "explain" and table.column_names == ["plan"]:
        sys.stdout.write("\n".join(table.column("plan").to_pylist()) + "\n")
    elif result.message and table.num_columns == 0:
        print(result.message)
    else:
        sys.stdout.write(render(table, args.format))
    if args.timer:
        from .progress import time_line

        print(time_line(result.elapsed, *result.one_time), file=sys.stderr)
    return 0


def _creates(args) -> bool:
    """Whether ``graphdb query``'s statement may create its database: it writes (a mistyped
    path under a SELECT is an error, not a new empty database; a CREATE TABLE starts one, as
    sqlite3's and DuckDB's command lines do)."""
    from .errors import Error
    from .query.parser import parse

    if os.path.exists(args.db):
        return False  # only a new path is created: no second parse of every statement
    try:
        statement = parse(args.sql)
    except Error:
        return False  # the statement's own error is said when it runs
    return not statement.explain and not statement.reads_only


def _run_statement(con, sql: str):
    """``con.execute(sql)``; on a terminal, with the shell's status line on stderr (elapsed
    time and progress after a second) and Ctrl-C cancelling the statement."""
    from graphdb.storage.compiled import first_use_seconds

    before = first_use_seconds()
    if not sys.stderr.isatty() or con.rank != 0:
        result = con.execute(sql)
    else:
        from .repl import Shell  # (the shell's libraries only where its status line shows)

        shell = Shell(con, sys.stdout, sys.stderr, sys.stderr, interactive=True)
        try:
            result, error, cancelled = shell.in_worker(lambda: con.execute(sql))
        finally:
            shell.close()
        if cancelled:
            raise KeyboardInterrupt
        if error is not None:
            raise error
    result.one_time = (before, first_use_seconds())
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
