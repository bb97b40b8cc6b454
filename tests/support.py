"""Paths and checks shared by the tests (importable as ``support``: tests/ is on sys.path under
pytest)."""

import contextlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


def same_rows(both, query: str, reference: str) -> list:
    """The rows of ``query`` on graphdb, which must be those of ``reference`` on an
    independent engine (``both``: the graphdb connection and the reference's, such as DuckDB's),
    in any order; returns them sorted."""
    con, ref = both
    mine = sorted(con.execute(query).fetchall(), key=repr)
    assert mine == sorted(ref.execute(reference).fetchall(), key=repr), query
    return mine


@contextlib.contextmanager
def with_reference(path, tables: str, graph: str):
    """(a graphdb connection to ``path`` (None: in memory) with the script ``tables`` and the
    statement ``graph`` run, DuckDB's with ``tables`` run): the pair :func:`same_rows` takes."""
    import duckdb

    import graphdb

    with graphdb.connect(path) as con:
        con.execute(tables)
        con.execute(graph)
        ref = duckdb.connect()
        ref.execute(tables)
        yield con, ref
