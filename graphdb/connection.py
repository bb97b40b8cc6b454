"""Connections (PEP 249): a thin layer over the session of one open database.

:class:`Connection` opens a :class:`graphdb.session.Session` (the settings, catalog, transaction
and runner statements run in) and gives it the interface of PEP 249 and DuckDB's Python API:
``execute`` parses a statement and hands it to the session, whose handler for that kind of
statement binds, plans and runs it (:mod:`graphdb.query.statements`); results are
:class:`graphdb.Result` objects. ``con.session`` is the session, with public parts.
"""

from __future__ import annotations

import os
import re
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import pyarrow as pa

from graphdb.storage.env import MARKER

from . import tempdb
from .errors import CatalogError, Error, InterfaceError, InvalidInputError, OperationalError
from .progress import ProgressReport
from .query.names import is_sql_keyword
from .query.parser import parse, split_script
from .query.tables import Context
from .result import Result
from .session import Session, weak
from .settings import Settings
from .statement_cache import PreparedStatement

if TYPE_CHECKING:
    from graphdb.catalog import Catalog

    from .graph import GraphHandle
    from .result import Cursor

__all__ = ["Connection", "connect", "connect_for_reading", "MEMORY"]

#: The path that names an in-memory database, as in sqlite3 and DuckDB.
MEMORY = ":memory:"


def connect(path: str | os.PathLike | None = None, *, read_only: bool = False,
            create: bool = True, device: str = "auto",
            memory_limit: int | str | None = None, buffer_pool_size: int | str | None = None,
            page_size: int | None = None, mode: int | None = None, gpus: Any = None,
            cluster: str | None = None, cluster_timeout: float | None = None) -> "Connection":
    """Open (or create) the database at ``path`` (a directory); no path, or ``":memory:"``,
    makes an in-memory database that disappears when the connection closes.

    ``read_only``: open without write access (several processes may read while one writes;
    a user who may only read the files can query). ``mode``: permission bits of the files a new
    database creates, e.g. ``0o640`` to let the group read it (default ``0o600``, directories
    ``0o700``); later opens follow what the database was created with.

    An in-memory database keeps its data in a temporary directory (LMDB needs files), which is
    removed on close, at exit, and even when the process is killed (see :mod:`graphdb.tempdb`).
    ``device='gpu'`` fails here, not at the first query, when no GPU can be used.

    ``gpus``: the GPUs of this host graph operators may be partitioned over (a list of device
    ids, a count, or None for all). ``cluster="mpi"``: this process is one rank of an MPI job
    (started by ``mpiexec``); see :mod:`graphdb.cluster`.

    Examples
    --------
    >>> import graphdb
    >>> with graphdb.connect(":memory:") as con:
    ...     con.execute("SHOW GRAPHS").fetchall()
    []
    """
    return Connection(path, read_only=read_only, create=create, device=device,
                      memory_limit=memory_limit, buffer_pool_size=buffer_pool_size,
                      page_size=page_size, mode=mode, gpus=gpus, cluster=cluster,
                      cluster_timeout=cluster_timeout)


def connect_for_reading(path: str | os.PathLike | None, **options) -> "Connection":
    """A connection that opens an existing database read-only and reopens it read-write at its
    first write (DROP GRAPH, an ingest): the shell and ``graphdb query``, so that reading needs
    only read access and never waits for a writer. A new or in-memory database opens
    read-write.

    >>> import graphdb
    >>> with graphdb.connection.connect_for_reading(None) as con:
    ...     con.execute("SHOW GRAPHS").fetchall()
    []
    """
    if path is None or str(path) in ("", MEMORY):
        return Connection(path, **options)
    try:
        con = Connection(path, read_only=True, **options)
    except OperationalError:
        if (Path(path) / MARKER).exists():
            raise
        return Connection(path, **options)  # a new database
    con.session.reopen_for_writes = True
    return con


#: More GPUs than any host has (CUDA numbers a process's devices from 0).
_MAX_GPUS = 1024


def _gpu_list(gpus: Any) -> tuple[int, ...] | None:
    """connect()'s ``gpus``: None (all), a count, or device ids."""
    if gpus is None or (isinstance(gpus, str) and gpus.lower() == "all"):
        return None
    if isinstance(gpus, int) and not isinstance(gpus, bool):
        if not 1 <= gpus <= _MAX_GPUS:
            raise InterfaceError(f"gpus must be a count from 1 to {_MAX_GPUS}, got {gpus}")
        return tuple(range(gpus))
    try:
        ids = tuple(int(g) for g in gpus)
    except (TypeError, ValueError):
        raise InterfaceError(f"gpus must be 'all', a count or a list of device ids, "
                             f"got {gpus!r}") from None
    if not ids or len(set(ids)) != len(ids) or min(ids) < 0 or max(ids) >= _MAX_GPUS:
        raise InterfaceError(f"gpus must list distinct device ids from 0 to {_MAX_GPUS - 1}, "
                             f"got {str(gpus)[:80]}")
    return ids


class Connection:
    """An open database. Use as a context manager, or call :meth:`close`."""

    def __init__(self, path: str | os.PathLike | None = None, *, read_only: bool = False,
                 create: bool = True, device: str = "auto",
                 memory_limit: int | str | None = None, buffer_pool_size: int | str | None = None,
                 page_size: int | None = None, mode: int | None = None, gpus: Any = None,
                 cluster: str | None = None, cluster_timeout: float | None = None):
        gpu_ids = _gpu_list(gpus)
        communicator = None
        if cluster is not None:  # a rank of a job: its own read-only copy of the database
            from .cluster import join

            if path is None or str(path) in ("", MEMORY):
                raise InterfaceError("a cluster connection needs the path of the database "
                                     "copy each rank reads")
            communicator = join(cluster, cluster_timeout)
            read_only, create = True, False
        temporary = path is None or str(path) in ("", MEMORY)
        if temporary:
            if read_only:
                raise InvalidInputError("an in-memory database cannot be opened read-only")
            path = tempdb.create()
        try:
            settings = Settings().set("device", device)
            if memory_limit is not None:
                settings = settings.set("memory_limit", memory_limit)
            if buffer_pool_size is not None:
                settings = settings.set("buffer_pool_size", buffer_pool_size)
        except Exception:
            if temporary:
                tempdb.remove(Path(path))
            raise
        #: the session statements run in (:mod:`graphdb.session`)
        self.session = Session(Path(path), temporary=temporary, read_only=read_only,
                               create=create, settings=settings, page_size=page_size,
                               mode=mode, gpu_ids=gpu_ids, cluster=communicator)
        #: con.serve()'s explorers, each as the finalizer that stops it
        self._servers: list[weakref.finalize] = []
        self.session.register_table_function("buffer_stats", weak(self.buffer_stats),
                                             "buffer pool counters, one row per pool")
        if communicator is not None:
            from .cluster import check_copies

            try:
                check_copies(self, communicator)
            except Error:
                self.close()
                raise

    # -- the session's parts --------------------------------------------------------------------
    @property
    def path(self) -> Path:
        """The database's directory (a temporary one for an in-memory database).

        >>> import graphdb
        >>> con = graphdb.connect()
        >>> con.path.is_dir()
        True
        """
        return self.session.path

    @property
    def catalog(self) -> "Catalog":
        """The catalog of the database's graphs (:class:`graphdb.catalog.Catalog`).

        >>> import graphdb, pyarrow as pa
        >>> con = graphdb.connect()
        >>> _ = con.ingest("g", pa.table({"src": [1], "dst": [2]}))
        >>> con.catalog.get("g").num_edges
        1
        """
        return self.session.catalog

    @property
    def settings(self) -> Settings:
        """The settings (``SET name = value`` changes them).

        >>> import graphdb
        >>> con = graphdb.connect()
        >>> _ = con.execute("SET threads = 1")
        >>> con.settings.threads
        1
        """
        return self.session.settings

    @property
    def cluster(self):
        """The communicator of a cluster rank (``connect(path, cluster="mpi")``), else None.

        >>> import graphdb
        >>> graphdb.connect().cluster is None
        True
        """
        return self.session.cluster

    @property
    def table_functions(self) -> dict[str, Any]:
        """The built-in table functions by name (:meth:`register_table_function`).

        >>> import graphdb
        >>> sorted(graphdb.connect().table_functions)
        ['buffer_stats', 'functions', 'graph_changes', 'graphs', 'settings']
        """
        return self.session.table_functions

    # -- lifecycle ------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the database (an in-memory one is deleted); closing twice is harmless. The
        connection's memory (its buffer pool, and the graphs it loaded when no other connection
        of this process has the database open) is released now, not at a later garbage
        collection.

        >>> import graphdb
        >>> con = graphdb.connect()
        >>> con.close()
        >>> con.execute("SELECT 1")
        Traceback (most recent call last):
        graphdb.errors.InterfaceError: the connection is closed
        """
        for stop in self._servers:  # the explorers end with the connection
            stop()
        self.session.close()

    def __repr__(self) -> str:
        where = MEMORY if self.session.temporary else str(self.path)
        return f"<graphdb.Connection {where}{' (closed)' if self.session.closed else ''}>"

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def rank(self) -> int:
        """This process's rank in its cluster job (``connect(path, cluster="mpi")`` under
        ``mpiexec``); 0 outside one.

        >>> import graphdb
        >>> with graphdb.connect() as con:
        ...     con.rank
        0
        """
        return 0 if self.cluster is None else self.cluster.ranks[0]

    # -- statements -----------------------------------------------------------------------------
    def execute(self, sql: str, parameters: Any = None) -> Result:
        """Run one SQL statement; ``parameters`` fill ``?`` (a sequence) or ``$name`` (a dict).
        Several statements separated by ``;`` (without parameters) run one after the other,
        as a script; the last one's result is returned.

        Returns a :class:`Result`, which is also a PEP 249 cursor over the rows.

        Examples
        --------
        >>> import graphdb
        >>> with graphdb.connect() as con:
        ...     con.execute("SELECT ? + 1 AS answer", [41]).fetchone()
        (42,)
        """
        start = time.perf_counter()
        if isinstance(sql, PreparedStatement):
            sql = sql.sql
        session = self.session
        if session.buffer is not None and session.transaction.open:
            with session.lock:  # an INSERT of one row inside a transaction (query.buffered)
                session.check_open()
                table = session.buffer.add(sql, parameters)
            if table is not None:
                return Result(table, elapsed=time.perf_counter() - start, kind="insert")
        if isinstance(sql, str) and ";" in sql and not parameters:
            pieces = split_script(sql)
            if len(pieces) > 1:
                for piece in pieces[:-1]:
                    self.execute(piece)
                return self.execute(pieces[-1])
            if pieces:
                sql = pieces[0]  # without what followed its ';' (a comment)
        def run() -> tuple:  # parsed and run as one statement of the session (one guard)
            statement = parse(sql)
            return (statement, *session.execute(statement, parameters))

        statement, table, message = session.guarded(run)
        return Result(table, elapsed=time.perf_counter() - start, message=message,
                      kind=statement.kind)

    def prepare(self, sql: str) -> PreparedStatement:
        """A statement to run many times (``.execute(parameters)``): parsed now (its errors
        raised here), planned at its first run, and its plan reused while nothing it depends
        on changed (the catalog, the settings, the registered tables; see
        :mod:`graphdb.statement_cache`). ``execute`` keeps plans the same way; a prepared
        statement names one.

        >>> import graphdb, pyarrow as pa
        >>> con = graphdb.connect().register("t", pa.table({"id": [1, 2], "x": ["a", "b"]}))
        >>> lookup = con.prepare("SELECT x FROM t WHERE id = ?")
        >>> lookup.execute([2]).fetchall(), lookup.execute([1]).fetchall()
        ([('b',)], [('a',)])
        """
        statement = self.session.guarded(lambda: parse(sql))
        return PreparedStatement(self, sql, statement)

    def cursor(self) -> "Cursor":
        """A PEP 249 cursor on this connection.

        >>> import graphdb
        >>> cur = graphdb.connect().cursor()
        >>> cur.execute("SELECT 1 AS one").fetchone()
        (1,)
        """
        from .result import Cursor

        self.session.check_open()
        return Cursor(self)

    def serve(self, *, port: int = 8750, write: bool = False, **options):
        """Start the web explorer on this database in the background (as ``graphdb serve``):
        returns the running server, whose ``url`` (with its token) to open; ``stop()`` ends it
        (closing the connection does too). Its statements run on connections of its own,
        read-only unless ``write``; tables registered on this connection are not seen there.

        >>> import graphdb
        >>> con = graphdb.connect()
        >>> server = con.serve(port=0)
        >>> server.url.startswith("http://127.0.0.1:")
        True
        >>> con.close()
        """
        from .explorer.server import Server

        self.session.check_open()
        server = Server(self, port=port, write=write, **options).start()
        # stopped by close(), or when the connection is collected unclosed
        self._servers.append(weakref.finalize(self, server.stop))
        return server

    def disable_external_access(self) -> None:
        """From now on refuse every statement that would read or write a file outside the
        database: DuckDB's file functions and file names in FROM (``read_csv``, ``'x.csv'``,
        ``glob``, ``ATTACH``, extensions), ``COPY ... TO``, and loads from files (``COPY g
        FROM``, ``CREATE GRAPH g FROM``, ``CREATE PROPERTY GRAPH`` over files). It cannot be
        undone (``graphdb serve`` runs its statements on connections like this).

        >>> import graphdb
        >>> con = graphdb.connect()
        >>> con.disable_external_access()
        >>> con.execute("COPY (SELECT 1) TO 'one.csv'")
        Traceback (most recent call last):
        graphdb.errors.OperationalError: COPY ... TO writes a file, and this connection has no access to files outside the database (disable_external_access)
        """
        session = self.session
        session.check_open()
        with session.lock:
            session.disable_external_access()

    def interrupt(self) -> None:
        """Cancel the statement running on this connection (safe from another thread): it
        stops at its next operator, frontier level or iteration, raising OperationalError.

        >>> import graphdb, threading
        >>> con = graphdb.connect()
        >>> timer = threading.Timer(0.5, con.interrupt)  # e.g. from a GUI's cancel button
        """
        self.session.runner.cancel()

    def commit(self) -> None:
        """PEP 249: commit the transaction BEGIN opened (statements outside one commit on
        their own, so without one there is nothing to do).

        >>> import graphdb
        >>> graphdb.connect().commit()
        """
        if self.session.transaction.open:
            self.execute("COMMIT")

    def rollback(self) -> None:
        """PEP 249: undo the transaction BEGIN opened (nothing to do without one).

        >>> import graphdb
        >>> graphdb.connect().rollback()
        """
        if self.session.transaction.open:
            self.execute("ROLLBACK")

    def executemany(self, sql: str, seq_of_parameters) -> Result:
        """Run one statement once per parameter set. An ``INSERT ... VALUES`` of parameters
        inserts every set's rows in one statement (all of them or, on an error, none);
        other statements run once per set. Returns the last result (an INSERT's: its count).

        >>> import graphdb
        >>> con = graphdb.connect()
        >>> _ = con.execute("CREATE GRAPH g (EDGES (weight DOUBLE))")
        >>> con.executemany("INSERT INTO g.edges VALUES (?, ?, ?)",
        ...                 [(1, 2, 0.5), (2, 3, 1.5)]).fetchall()
        [(2,)]
        """
        from .query.statements.write import insert_values

        start = time.perf_counter()
        session = self.session
        statement = session.guarded(lambda: parse(sql))
        if statement.kind == "insert":
            def insert():
                plan = insert_values(session, statement, seq_of_parameters)
                if plan is None or isinstance(plan, pa.Table):  # (a stored table's: done)
                    return plan
                session.writable()
                return session.execute_plan(plan)

            table = session.guarded(insert)
            if table is not None:
                return Result(table, elapsed=time.perf_counter() - start, kind="insert")
        result = None
        for parameters in seq_of_parameters:
            result = self.execute(sql, parameters)
        return result if result is not None else Result(pa.table({}), kind=statement.kind)

    def insert_edges(self, graph: str, data: Any) -> int:
        """Insert edges into ``graph``: a pyarrow Table or RecordBatchReader, a pandas or polars
        DataFrame, with columns ``src``, ``dst``, the weight on a weighted graph, and any of the
        edge properties. Ids that are no vertex yet become vertices. Returns the edges inserted.
        Inside BEGIN ... COMMIT it joins the transaction; otherwise it commits on its own.

        >>> import graphdb, pyarrow as pa
        >>> con = graphdb.connect()
        >>> _ = con.execute("CREATE GRAPH g")
        >>> con.insert_edges("g", pa.table({"src": [1, 2], "dst": [2, 3]}))
        2
        >>> con.execute("SELECT count(*) FROM g.edges").fetchone()
        (2,)
        """
        from graphdb.executor.plan import InsertRows, ValuesScan

        from .interop import plain_table

        session = self.session
        session.check_open()
        table = session.guarded(lambda: plain_table(data, f"insert_edges('{graph}')"))

        def work():
            session.writable()
            plan = InsertRows(graph, "edges", tuple(table.column_names),
                              ValuesScan("values", table))
            return session.execute_plan(plan).column(0)[0].as_py()

        return session.guarded(work)

    def context(self, snapshot=None) -> Context:
        """What the binder needs: the statement's view of the catalog, graph table columns
        (from the catalog's schemas: no topology is read), built-in table functions, registered
        tables.

        >>> import graphdb
        >>> sorted(graphdb.connect().context().builtins)
        ['buffer_stats', 'functions', 'graph_changes', 'graphs', 'settings']
        """
        return self.session.context(snapshot)

    def register(self, name: str, data: Any) -> "Connection":
        """Make ``data`` queryable as table ``name`` (until :meth:`unregister` or close):
        a pandas or polars DataFrame, a pyarrow Table, RecordBatch or RecordBatchReader (read
        once, here), or any object with ``__arrow_c_stream__``. Registering a name again
        replaces the table. Returns the connection.

        Examples
        --------
        >>> import graphdb, pyarrow as pa
        >>> with graphdb.connect() as con:
        ...     con.register("people", pa.table({"id": [1, 2], "name": ["ada", "bob"]}))
        ...     con.execute("SELECT name FROM people WHERE id = 2").fetchall()
        <graphdb.Connection :memory:>
        [('bob',)]
        """
        from .interop import plain_table

        self.session.check_open()
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise InvalidInputError(f"cannot register {name!r}: a table name is letters, digits "
                                    "and underscores, starting with a letter or underscore")
        if is_sql_keyword(name):
            raise InvalidInputError(f"cannot register '{name}': it is an SQL keyword")
        self.session.register_table(name, plain_table(data, f"register('{name}')"))
        return self

    def create_table(self, name: str, data: Any, *, replace: bool = False,
                     primary_key: str | list[str] | tuple[str, ...] | None = None
                     ) -> "Connection":
        """Store ``data`` as table ``name`` in the database (as ``CREATE TABLE name AS``): a
        pandas or polars DataFrame, a pyarrow Table or RecordBatchReader, an object with
        ``__arrow_c_stream__``, or a file DuckDB reads (CSV, Parquet, JSON). ``primary_key``:
        its key column(s), enforced from then on. ``replace`` replaces a table of that name.
        Returns the connection.

        >>> import graphdb, pyarrow as pa
        >>> con = graphdb.connect()
        >>> con.create_table("t", pa.table({"k": [1, 2], "v": ["a", "b"]}), primary_key="k")
        <graphdb.Connection :memory:>
        >>> con.execute("SELECT v FROM t WHERE k = 2").fetchall()
        [('b',)]
        """
        from .interop import plain_table
        from .query.table_statements import create_table_from, read_file

        session = self.session
        session.check_open()
        keys = (primary_key,) if isinstance(primary_key, str) else tuple(primary_key or ())

        def work():
            session.writable()
            if isinstance(data, (str, os.PathLike)):
                path = "'" + str(data).replace("'", "''") + "'"
                rows = read_file(session, path, {"header": True} if str(data).lower()
                                 .endswith((".csv", ".csv.gz", ".tsv")) else {})
            else:
                rows = plain_table(data, f"create_table('{name}')")
            create_table_from(session, name, rows, replace=replace, primary_key=keys)

        session.guarded(work)
        return self

    def unregister(self, name: str) -> "Connection":
        """Forget the table registered as ``name``; returns the connection.

        >>> import graphdb, pyarrow as pa
        >>> con = graphdb.connect().register("t", pa.table({"x": [1]}))
        >>> con.unregister("t").execute("SELECT * FROM t")
        Traceback (most recent call last):
        graphdb.errors.BinderError: unknown table 't'
        """
        self.session.check_open()
        registered = self.session.tables
        if self.session.unregister_table(name) is None:
            raise CatalogError(f"no table '{name}' is registered"
                               + (f" (registered: {', '.join(sorted(registered))})"
                                  if registered else ""))
        return self

    def set_progress_handler(self, handler: Callable[[ProgressReport], None] | None) -> None:
        """Call ``handler(report)`` as statements make progress (from the thread running the
        statement): an iterative algorithm after each iteration (``report.unit`` is
        'iterations' with ``report.total`` its ``max_iterations``, or 'steps' when the total is
        unknown), and an ingest (COPY ... FROM, CREATE GRAPH) as it reads its input
        ('bytes') and through its later phases. ``None`` removes the handler. The shell
        shows these reports while a statement runs for more than a second.

        >>> import graphdb, networkx as nx
        >>> con = graphdb.connect()
        >>> _ = con.from_networkx("g", nx.path_graph(4))
        >>> reports = []
        >>> con.set_progress_handler(reports.append)
        >>> _ = con.execute("SELECT * FROM pagerank(g, max_iterations => 2)")
        >>> [(r.task, r.done, r.total, r.unit) for r in reports]
        [('pagerank', 1, 2, 'iterations'), ('pagerank', 2, 2, 'iterations')]
        """
        self.session.set_progress(handler)

    def plan(self, sql: str, parameters: Any = None):
        """Parse, bind and plan ``sql`` without running it: the physical plan (tests,
        benchmarks and EXPLAIN read it).

        >>> import graphdb
        >>> graphdb.connect().plan("SELECT 1 AS one").kind
        'RelationalQuery'
        """
        session = self.session
        return session.guarded(lambda: session.plan(parse(sql), parameters))

    def buffer_stats(self) -> pa.Table:
        """Buffer pool counters, one row per pool (what ``SELECT * FROM buffer_stats()`` shows).

        >>> import graphdb
        >>> graphdb.connect().buffer_stats().column_names[:3]
        ['pool', 'capacity_bytes', 'frame_bytes']
        """
        self.session.check_open()
        return self.session.buffer_stats()

    def register_table_function(self, name: str, function, description: str = "") -> None:
        """Make ``SELECT * FROM name()`` return ``function()`` (a ``pa.Table``); ``description``
        is its line in ``functions()`` (default: the first line of its docstring).

        This is the hook for built-in, non-graph table functions: ``settings()``,
        ``functions()``, ``graphs()`` (SHOW GRAPHS) and ``buffer_stats()`` are registered here.

        >>> import graphdb, pyarrow as pa
        >>> con = graphdb.connect()
        >>> con.register_table_function("answer", lambda: pa.table({"x": [42]}), "the answer")
        >>> con.execute("SELECT x FROM answer()").fetchall()
        [(42,)]
        """
        self.session.register_table_function(name, function, description)

    def graph(self, name: str) -> "GraphHandle":
        """A Python handle on graph ``name``: ``con.graph("g").pagerank()`` returns Arrow.

        >>> import graphdb, pyarrow as pa
        >>> con = graphdb.connect()
        >>> _ = con.ingest("g", pa.table({"src": [1, 2], "dst": [2, 3]}))
        >>> con.graph("g").bfs(1).num_rows
        3
        """
        from .graph import GraphHandle

        self.session.check_open()
        entry = self.session.guarded(lambda: self.catalog.get(name))
        return GraphHandle(self, entry.name)

    def from_networkx(self, name: str, graph, *, weight: str | None = "weight",
                      replace: bool = False) -> "GraphHandle":
        """Store a networkx graph as graph ``name``, with every node and edge attribute (the
        edge attribute ``weight`` is the weight when every edge has a number there); returns
        its handle.

        >>> import graphdb, networkx as nx
        >>> con = graphdb.connect()
        >>> g = con.from_networkx("karate", nx.karate_club_graph())
        >>> con.execute("SELECT count(*) FROM karate.vertices WHERE club = 'Mr. Hi'").fetchone()
        (17,)
        """
        from .interop import from_networkx

        return from_networkx(self, name, graph, weight=weight, replace=replace)

    def from_scipy(self, name: str, matrix, *, directed: bool = True, weighted: bool = True,
                   replace: bool = False) -> "GraphHandle":
        """Store a scipy.sparse adjacency matrix as graph ``name`` (vertex ids 0..n-1, entry
        (i, j) an edge i -> j, its value the weight); returns its handle.

        >>> import graphdb, scipy.sparse as sp
        >>> con = graphdb.connect()
        >>> g = con.from_scipy("m", sp.csr_array([[0, 2.0], [0, 0]]))
        >>> con.execute("SELECT * FROM m.edges").fetchall()
        [(0, 1, 2.0)]
        """
        from .interop import from_scipy

        return from_scipy(self, name, matrix, directed=directed, weighted=weighted,
                          replace=replace)

    # -- ingest ---------------------------------------------------------------------------------
    def ingest(self, graph: str, edges: Any, *, vertices: Any = None,
               undirected: bool = False, format: str = "auto", src: str | None = None,
               dst: str | None = None, weight: str | None = "auto", replace: bool = False,
               vertex_format: str = "auto", vertex_id: str | None = None,
               delimiter: str | None = None, header: bool | None = None, id_type: str = "auto",
               self_loops: str = "keep", duplicates: str = "keep", merge_weights: str = "min",
               missing_vertices: str = "error", invalid_weights: str = "error",
               memory_limit: int | str | None = None,
               temp_dir: str | os.PathLike | None = None, pages: bool = False,
               device: str | None = None, progress: Any = False) -> dict:
        """Load edges into a new graph ``graph``; the options are those of ``graphdb ingest``
        (see ``graphdb ingest --help``).

        ``edges`` is an edge file or a glob pattern of files (``"parts/*.csv.gz"``), a pandas or
        polars DataFrame, a pyarrow Table or RecordBatchReader (read batch by batch), or a
        networkx graph (with every node and edge attribute; its nodes are the vertices).
        ``vertices`` likewise: a vertex file or table (an id column, then properties). A graph
        may have no edges when ``vertices`` gives its vertices.

        ``weight``: the weight column (a name or a 1-based position); ``"auto"`` (default) the
        column named ``weight`` if there is one (of a networkx graph: the attribute
        ``weight``, when every edge has a number there); ``None`` (or ``"none"``) an
        unweighted graph. The column keeps its name in ``g.edges``.

        ``progress``: False (default), True (a progress bar on stderr when it is a terminal),
        or a :class:`graphdb.catalog.progress.Progress`. Returns a summary: |V|, |E| read and
        stored, self loops and duplicates dropped, bytes stored, seconds and edges per second.

        Examples
        --------
        >>> import graphdb, pyarrow as pa
        >>> with graphdb.connect() as con:
        ...     summary = con.ingest("g", pa.table({"src": [1, 2], "dst": [2, 3]}))
        ...     summary["vertices"], summary["edges"]
        (3, 2)
        """
        from .loading import ingest

        session = self.session
        session.check_open()
        return session.guarded(lambda: ingest(
            session, graph, edges, vertices=vertices, undirected=undirected, format=format,
            src=src, dst=dst, weight=weight, replace=replace, vertex_format=vertex_format,
            vertex_id=vertex_id, delimiter=delimiter, header=header, id_type=id_type,
            self_loops=self_loops, duplicates=duplicates, merge_weights=merge_weights,
            missing_vertices=missing_vertices, invalid_weights=invalid_weights,
            memory_limit=memory_limit, temp_dir=temp_dir, pages=pages,
            device=device or session.settings.device, progress=progress))

    def create_property_graph(self, name: str, vertices: dict, edges: dict | None = None, *,
                              keys: dict | None = None, undirected: bool = False,
                              replace: bool = False) -> dict:
        """Store a property graph: ``vertices`` maps each vertex label to its table (a file,
        a DataFrame, an Arrow table), keyed by the column ``keys`` names for it (default: the
        first); ``edges`` maps each edge label to ``(table, source label, destination label)``
        or ``(table, source label, destination label, source column, destination column)``
        (default: the first two columns). SQL: ``CREATE PROPERTY GRAPH``. Returns the ingest's
        summary.

        >>> import graphdb, pyarrow as pa
        >>> con = graphdb.connect()
        >>> _ = con.create_property_graph(
        ...     "social", {"Person": pa.table({"id": [1, 2]}), "City": pa.table({"name": ["x"]})},
        ...     {"knows": (pa.table({"a": [1], "b": [2]}), "Person", "Person"),
        ...      "lives_in": (pa.table({"p": [1, 2], "c": ["x", "x"]}), "Person", "City")})
        >>> con.execute("SELECT count(*) FROM social.lives_in").fetchone()
        (2,)
        """
        from .property_graphs import create_property_graph

        session = self.session
        session.check_open()
        return session.guarded(lambda: create_property_graph(
            session, name, vertices, edges, keys=keys, undirected=undirected, replace=replace))

    def graphs(self) -> list[str]:
        """The names of the graphs, sorted.

        >>> import graphdb, pyarrow as pa
        >>> con = graphdb.connect()
        >>> _ = con.ingest("g", pa.table({"src": [1], "dst": [2]}))
        >>> con.graphs()
        ['g']
        """
        return self.session.guarded(lambda: sorted(self.catalog.names()))
