"""The ``graphdb`` command: the shell, ingest, query and demo.

    graphdb [DB]                        interactive shell (a temporary database without DB)
    graphdb ingest DB GRAPH EDGES ...   load an edge list
    graphdb query DB "SQL" [--format]   run one statement and print the result
    graphdb demo [DB]                   build a sample database and run showcase queries
"""

from __future__ import annotations

import argparse
import sys

from . import __version__
from .errors import Error

__all__ = ["main"]

COMMANDS = ("ingest", "query", "demo", "shell")


def _parser() -> argparse.ArgumentParser:
    from catalog import FORMATS

    from .formatting import FORMATS as OUTPUT_FORMATS

    parser = argparse.ArgumentParser(
        prog="graphdb",
        description="An embeddable graph database: SQL traversal queries on GPU and CPU.",
        epilog="Run 'graphdb DB' for the interactive shell on database DB, "
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
    p.add_argument("edges", metavar="EDGES", help="edge file (.csv, .tsv, .txt, .e, .parquet)")
    p.add_argument("--vertices", metavar="FILE", help="vertex file: one vertex id per line/row")
    p.add_argument("--undirected", action="store_true", help="edges have no direction")
    p.add_argument("--format", default="auto", choices=FORMATS,
                   help="input format (default: from the file extension)")
    p.add_argument("--src", metavar="COL", help="source column (name, or 1-based position)")
    p.add_argument("--dst", metavar="COL", help="destination column")
    p.add_argument("--weight", metavar="COL", help="weight column (default: a third numeric column)")
    p.add_argument("--replace", action="store_true", help="replace a graph of the same name")

    q = sub.add_parser("query", help="run one SQL statement",
                       description="Run one SQL statement against database DB and print the result.")
    q.add_argument("db", metavar="DB", help="database directory")
    q.add_argument("sql", metavar="SQL", help="the statement, e.g. \"SELECT * FROM bfs(g, 1)\"")
    q.add_argument("--format", default="table", choices=OUTPUT_FORMATS, help="output format")
    q.add_argument("--device", default="auto", choices=("auto", "cpu", "gpu"))

    d = sub.add_parser("demo", help="build a sample database and run showcase queries")
    d.add_argument("db", metavar="DB", nargs="?", default="graphdb-demo",
                   help="database directory (default: ./graphdb-demo)")

    s = sub.add_parser("shell", help="the interactive shell (same as 'graphdb DB')")
    s.add_argument("db", metavar="DB", nargs="?", help="database directory (default: temporary)")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and not argv[0].startswith("-")):
        argv = ["shell"] + argv
    args = _parser().parse_args(argv)
    try:
        if args.command == "ingest":
            return _ingest(args)
        if args.command == "query":
            return _query(args)
        if args.command == "demo":
            from .demo import run_demo

            return run_demo(args.db)
        from .repl import run_shell

        return run_shell(args.db)
    except Error as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug, not a user mistake: one line, never a traceback
        print(f"Error: internal error ({type(exc).__name__}: {exc}); please report it",
              file=sys.stderr)
        return 2


def _ingest(args) -> int:
    from .connection import connect

    with connect(args.db) as con:
        summary = con.ingest(args.graph, args.edges, vertices=args.vertices,
                             undirected=args.undirected, format=args.format, src=args.src,
                             dst=args.dst, weight=args.weight, replace=args.replace)
    kind = ("undirected" if not summary["directed"] else "directed") + ", " + (
        "weighted" if summary["weighted"] else "unweighted")
    print(f"Loaded graph '{summary['graph']}' into {args.db}: {summary['vertices']:,} vertices, "
          f"{summary['edges']:,} edges ({kind}) in {summary['seconds']:.2f} s")
    return 0


def _query(args) -> int:
    from .connection import connect
    from .formatting import render

    with connect(args.db, create=False, device=args.device) as con:
        result = con.execute(args.sql)
    table = result.arrow()
    if result.message and table.num_columns == 0:
        print(result.message)
    else:
        sys.stdout.write(render(table, args.format))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
