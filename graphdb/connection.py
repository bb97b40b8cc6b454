"""Connections: one open database, its settings, and statement execution."""

from __future__ import annotations

import os
import re
import threading
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import pyarrow as pa

from graphdb.catalog import Catalog, CorruptGraph, GraphNotFound
from graphdb.executor.arrays import to_table
from graphdb.executor.device import select_device
from graphdb.executor.plan import DescribeGraph, ShowGraphs, ValuesScan
from graphdb.executor.property_graph import PropertySchema, label_table_columns
from graphdb.executor.residency import RESIDENCY
from graphdb.executor.runner import Runner
from graphdb.executor.stored import graph_key
from graphdb.storage import BufferManager, Environment, stats_table
from graphdb.storage.env import MARKER

from . import tempdb
from .errors import (
    BinderError,
    CatalogError,
    Error,
    InterfaceError,
    InvalidInputError,
    OperationalError,
    ProgrammingError,
    translate,
)
from .progress import ProgressReport
from .query.binder import bind_query
from .query.explain import explain_lines, sql_plan_lines
from .query.names import is_sql_keyword
from .query.parser import Statement, parse
from .query.statements import describe_target, set_item
from .query.tables import Context
from .query.writes import WRITE_KINDS, execute_write
from .result import Result
from .settings import Settings, apply_threads

if TYPE_CHECKING:
    from .graph import GraphHandle
    from .result import Cursor

__all__ = ["Connection", "connect", "connect_for_reading", "MEMORY"]

#: The path that names an in-memory database, as in sqlite3 and DuckDB.
MEMORY = ":memory:"
#: The columns of ``functions()``.
_FUNCTION_COLUMNS = ("name", "kind", "signature", "columns", "description")


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
    con._reopen_for_writes = True
    return con


def _file(path) -> str:
    """A file as DuckDB reads it in FROM (its format from its extension)."""
    return "'" + str(path).replace("'", "''") + "'"


def _release_resources(held: dict, runner, catalog, env, temporary: Path | None) -> None:
    """Close a connection's parts (by close(), or when it is collected unclosed): an open
    transaction rolled back, the graphs' data released by the last connection of the process
    to the database, the catalog, buffer pool and environment closed, an in-memory database
    deleted."""
    if held["writer"] is not None:
        held["writer"].close()
    runner.close(last=env.connections == 1)
    catalog.close()
    catalog.buffers.close()
    env.close()
    if temporary is not None:
        tempdb.remove(temporary)


def _weak(method):
    """``method`` (bound to a connection) without a reference to the connection: what the
    runner and the table-function registry hold of it must not keep a closed connection alive
    until the next garbage collection (it holds its graphs and buffer pool)."""
    ref = weakref.WeakMethod(method)

    def call(*args, **kwargs):
        bound = ref()
        if bound is None:
            raise InterfaceError("the connection is closed")
        return bound(*args, **kwargs)

    call.__name__ = method.__name__
    call.__doc__ = method.__doc__
    call.method = ref
    return call


def _unweak(function):
    """The bound method behind a :func:`_weak` wrapper (``function`` itself otherwise)."""
    ref = getattr(function, "method", None)
    return ref() if isinstance(ref, weakref.WeakMethod) else function


def _gpu_list(gpus: Any) -> tuple[int, ...] | None:
    """connect()'s ``gpus``: None (all), a count, or device ids."""
    if gpus is None or (isinstance(gpus, str) and gpus.lower() == "all"):
        return None
    if isinstance(gpus, int) and not isinstance(gpus, bool):
        if gpus < 1:
            raise InterfaceError(f"gpus must be positive, got {gpus}")
        return tuple(range(gpus))
    try:
        ids = tuple(int(g) for g in gpus)
    except (TypeError, ValueError):
        raise InterfaceError(f"gpus must be 'all', a count or a list of device ids, "
                             f"got {gpus!r}") from None
    if not ids or len(set(ids)) != len(ids) or min(ids) < 0:
        raise InterfaceError(f"gpus must list distinct device ids, got {gpus!r}")
    return ids


def _current_gpu() -> int:
    import cupy

    return int(cupy.cuda.Device().id)


def _cluster_gpu(comm) -> None:
    """A cluster rank takes the GPU of its place among the ranks of its machine."""
    from graphdb.executor.device import gpu_count

    count = gpu_count()
    if count:
        import cupy

        from .cluster import local_rank

        cupy.cuda.Device(local_rank(comm) % count).use()


def _require_gpu(memory_limit: int | None) -> None:
    """Raise OperationalError, with what to do instead, where ``device = 'gpu'`` cannot work."""
    from graphdb.executor.errors import DeviceUnavailable

    try:
        select_device("gpu", memory_limit)
    except DeviceUnavailable as exc:
        raise OperationalError(f"{exc}; use device 'auto' or 'cpu' (or install CuPy for a "
                               "CUDA GPU: pip install 'graphdb[gpu]')") from None


class Connection:
    """An open database. Use as a context manager, or call :meth:`close`."""

    def __init__(self, path: str | os.PathLike | None = None, *, read_only: bool = False,
                 create: bool = True, device: str = "auto",
                 memory_limit: int | str | None = None, buffer_pool_size: int | str | None = None,
                 page_size: int | None = None, mode: int | None = None, gpus: Any = None,
                 cluster: str | None = None, cluster_timeout: float | None = None):
        self._gpu_ids = _gpu_list(gpus)
        self.cluster = None
        if cluster is not None:  # a rank of a job: its own read-only copy of the database
            from .cluster import join

            if path is None or str(path) in ("", MEMORY):
                raise InterfaceError("a cluster connection needs the path of the database "
                                     "copy each rank reads")
            self.cluster = join(cluster, cluster_timeout)
            read_only, create = True, False
        self._temporary = path is None or str(path) in ("", MEMORY)
        #: reopen read-write at the first write (see connect_for_reading)
        self._reopen_for_writes = False
        if self._temporary:
            if read_only:
                raise InvalidInputError("an in-memory database cannot be opened read-only")
            path = tempdb.create()
        self.path = Path(path)
        try:
            self._env = Environment(self.path, create=create and not read_only, read_only=read_only,
                                    page_size=page_size, mode=mode)
            settings = Settings().set("device", device)
            if memory_limit is not None:
                settings = settings.set("memory_limit", memory_limit)
            if buffer_pool_size is not None:
                settings = settings.set("buffer_pool_size", buffer_pool_size)
            buffers = BufferManager(self._env, settings.buffer_pool_size)
            if settings.device == "gpu":  # a device that cannot be used is reported now
                _require_gpu(settings.memory_limit)
        except Exception as exc:
            if hasattr(self, "_env"):  # opened, then a setting was refused: do not leak it
                self._env.close()
            if self._temporary:
                tempdb.remove(self.path)
            raise translate(exc) from None
        if self.cluster is not None:  # the ranks of one machine share its cores
            from .cluster import threads_per_rank

            settings = settings.set("threads", threads_per_rank(self.cluster))
            apply_threads(settings.threads)
        self.settings = settings
        self.catalog = Catalog(self._env, buffers)
        self._runner = Runner(self.catalog, _weak(self._device), _weak(self._host_budget),
                              _weak(self._debug_variant), _weak(self._fleet))
        self._runner.path_rows_for = _weak(self._max_path_rows)
        self._device_cache: tuple[tuple, Any] | None = None
        self._writer = None  # catalog.writer.Writer, made at the first write
        #: what close() releases, also released when the connection is collected unclosed (a
        #: forgotten connection kept its database's files, locks and memory until the process
        #: ended: 5 file handles each)
        self._held: dict[str, Any] = {"writer": None}
        self._release = weakref.finalize(self, _release_resources, self._held, self._runner,
                                         self.catalog, self._env,
                                         self.path if self._temporary else None)
        self._buffer = None  # query.buffered.InsertBuffer of an open transaction
        self._closed = False
        # One statement at a time: the shell runs queries in a worker thread.
        self._lock = threading.RLock()
        self._registered: dict[str, pa.Table] = {}
        self._progress: Callable[[ProgressReport], None] | None = None
        self.table_functions: dict[str, Any] = {}
        self._table_function_docs: dict[str, str] = {}
        self.register_table_function("settings", _weak(self._settings_table),
                                     "the settings: name, value, description")
        self.register_table_function("functions", _weak(self._functions_table),
                                     "every function: name, kind, signature, columns, "
                                     "description")
        self.register_table_function("graphs", self._runner.graphs_table,
                                     "the graphs, as SHOW GRAPHS lists them")
        self.register_table_function("buffer_stats", _weak(self.buffer_stats),
                                     "buffer pool counters, one row per pool")
        changes = _weak(self._changes_table)
        changes.takes_arguments = True
        self.register_table_function("graph_changes", changes,
                                     "writes since the last compaction, per graph: "
                                     "graph_changes() or graph_changes('g')")
        if self.cluster is not None:
            from .cluster import check_copies

            try:
                check_copies(self, self.cluster)
            except Error:
                self.close()
                raise

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
        if not self._closed:
            self._closed = True
            with self._lock:
                if self._writer is not None:  # an open transaction is rolled back
                    from .query.compacting import stop_compactions

                    self._buffer = None
                    self._writer.close()
                    stop_compactions(self)
                self._release()
                self._device_cache = None

    def _writes(self):
        """The connection's writer (its write transaction, catalog.writer)."""
        if self._writer is None:
            from graphdb.catalog.writer import Writer

            self._writer = self._held["writer"] = Writer(self.catalog)
        return self._writer

    def _host_budget(self) -> int | None:
        return self.settings.host_memory_limit

    def _max_path_rows(self) -> int:
        return self.settings.max_path_rows

    def _debug_variant(self) -> str:
        return self.settings.debug_variant

    def _writable(self) -> None:
        """Before a write: reopen a connection opened for reading read-write (or refuse)."""
        if not self._env.read_only:
            return
        if not self._reopen_for_writes:
            raise OperationalError(f"database '{self.path}' is open read-only")
        try:
            self._env.reopen_writable()
        except Exception as exc:
            raise translate(exc) from None

    def __repr__(self) -> str:
        where = MEMORY if self._temporary else str(self.path)
        return f"<graphdb.Connection {where}{' (closed)' if self._closed else ''}>"

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise InterfaceError("the connection is closed")

    def _device(self):
        key = (self.settings.device, self.settings.memory_limit)
        if self._device_cache is None or self._device_cache[0] != key:
            if self.cluster is not None and key[0] != "cpu":
                _cluster_gpu(self.cluster)
            self._device_cache = (key, select_device(*key))
        return self._device_cache[1]

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

    def _fleet(self, device):
        """The ranks a statement on ``device`` may partition graph operators over."""
        from graphdb.executor.physical.scaling import Fleet

        settings = self.settings
        force = settings.debug_variant == "partitioned"
        if self.cluster is not None:
            devices = (_current_gpu(),) if device.is_gpu else ()
            return Fleet("mpi", self.cluster.size, devices, device.kind, force,
                         f"a cluster job of {self.cluster.size} ranks")
        if settings.debug_ranks:
            devices = (_current_gpu(),) if device.is_gpu else ()
            return Fleet("local", settings.debug_ranks, devices, device.kind, force,
                         f"debug_ranks = {settings.debug_ranks}")
        if not device.is_gpu:
            return None
        from graphdb.executor.device import gpu_count

        ids = self._gpu_ids if self._gpu_ids is not None else tuple(range(gpu_count()))
        if settings.gpus is not None:
            ids = ids[:settings.gpus]
        if len(ids) >= 2 or (ids and force):
            return Fleet("nccl", len(ids), tuple(ids), "gpu", force,
                         f"{len(ids)} GPUs of this host")
        return None

    # -- statements -----------------------------------------------------------------------------
    def execute(self, sql: str, parameters: Any = None) -> Result:
        """Run one SQL statement; ``parameters`` fill ``?`` (a sequence) or ``$name`` (a dict).

        Returns a :class:`Result`, which is also a PEP 249 cursor over the rows.

        Examples
        --------
        >>> import graphdb
        >>> with graphdb.connect() as con:
        ...     con.execute("SELECT ? + 1 AS answer", [41]).fetchone()
        (42,)
        """
        start = time.perf_counter()
        if self._buffer is not None and self._writer.in_transaction:
            with self._lock:  # an INSERT of one row inside a transaction (query.buffered)
                self._check_open()
                table = self._buffer.add(sql, parameters)
            if table is not None:
                return Result(table, elapsed=time.perf_counter() - start, kind="insert")
        statement = self._guarded(lambda: parse(sql))
        table, message = self._guarded(lambda: self._execute(statement, parameters))
        return Result(table, elapsed=time.perf_counter() - start, message=message,
                      kind="explain" if statement.explain else statement.kind)

    def _guarded(self, work):
        """Run ``work()`` as this connection's one running statement, with lower layers' errors
        translated into the PEP 249 classes."""
        self._check_open()
        with self._lock:
            try:
                if self._buffer:  # a transaction's kept inserts go in before anything else
                    self._buffer.flush()
                return work()
            except Error:
                raise
            except RecursionError:  # the parser's nesting limits catch most of these first
                raise ProgrammingError("the statement is nested too deeply to plan (subqueries, "
                                       "CASE or function calls within each other); simplify "
                                       "it or split it up") from None
            except Exception as exc:
                translated = translate(exc)
                if translated is exc:
                    raise
                raise translated from None

    def cursor(self) -> "Cursor":
        """A PEP 249 cursor on this connection.

        >>> import graphdb
        >>> cur = graphdb.connect().cursor()
        >>> cur.execute("SELECT 1 AS one").fetchone()
        (1,)
        """
        from .result import Cursor

        self._check_open()
        return Cursor(self)

    def interrupt(self) -> None:
        """Cancel the statement running on this connection (safe from another thread): it
        stops at its next operator, frontier level or iteration, raising OperationalError.

        >>> import graphdb, threading
        >>> con = graphdb.connect()
        >>> timer = threading.Timer(0.5, con.interrupt)  # e.g. from a GUI's cancel button
        """
        self._runner.cancel()

    def commit(self) -> None:
        """PEP 249: commit the transaction BEGIN opened (statements outside one commit on
        their own, so without one there is nothing to do).

        >>> import graphdb
        >>> graphdb.connect().commit()
        """
        if self._writer is not None and self._writer.in_transaction:
            self.execute("COMMIT")

    def rollback(self) -> None:
        """PEP 249: undo the transaction BEGIN opened (nothing to do without one).

        >>> import graphdb
        >>> graphdb.connect().rollback()
        """
        if self._writer is not None and self._writer.in_transaction:
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
        from .query.dml import execute_many

        start = time.perf_counter()
        statement = self._guarded(lambda: parse(sql))
        if statement.kind == "insert":
            count = self._guarded(lambda: execute_many(self, statement, seq_of_parameters))
            if count is not None:
                return Result(to_table({"Count": [count]}), elapsed=time.perf_counter() - start,
                              kind="insert")
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
        from .interop import plain_table
        from .query.dml import insert_rows

        self._check_open()
        table = self._guarded(lambda: plain_table(data, f"insert_edges('{graph}')"))

        def work():
            self._writable()
            return insert_rows(self, graph, "edges", table)

        return self._guarded(work)

    def context(self, snapshot=None) -> Context:
        """What the binder needs: the statement's view of the catalog, graph table columns
        (from the catalog's schemas: no topology is read), built-in table functions, registered
        tables.

        >>> import graphdb
        >>> sorted(graphdb.connect().context().builtins)
        ['buffer_stats', 'functions', 'graph_changes', 'graphs', 'settings']
        """
        snapshot = snapshot or self._runner.snapshot()

        def columns(graph: str, which: str) -> list[str]:
            entry = snapshot.get(graph)
            if which.startswith("label:"):  # a property graph's g.Person, g.knows
                return label_table_columns(PropertySchema.of(entry), which[len("label:"):])
            # read once per graph version (the stored schema opens the Arrow file): a subgraph's
            # conditions ask on every statement
            return list(RESIDENCY.get(
                graph_key(self.catalog, entry), "cpu", f"columns:{which}",
                lambda: tuple((self.catalog.vertex_schema(entry) if which == "vertices"
                               else self.catalog.edge_schema(entry)).names)))

        return Context(snapshot, columns, dict(self.table_functions),
                       tables=dict(self._registered))

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

        self._check_open()
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise InvalidInputError(f"cannot register {name!r}: a table name is letters, digits "
                                    "and underscores, starting with a letter or underscore")
        if is_sql_keyword(name):
            raise InvalidInputError(f"cannot register '{name}': it is an SQL keyword")
        self._registered[name.lower()] = plain_table(data, f"register('{name}')")
        return self

    def unregister(self, name: str) -> "Connection":
        """Forget the table registered as ``name``; returns the connection.

        >>> import graphdb, pyarrow as pa
        >>> con = graphdb.connect().register("t", pa.table({"x": [1]}))
        >>> con.unregister("t").execute("SELECT * FROM t")
        Traceback (most recent call last):
        graphdb.errors.BinderError: unknown table 't'
        """
        self._check_open()
        if self._registered.pop(name.lower(), None) is None:
            raise CatalogError(f"no table '{name}' is registered"
                               + (f" (registered: {', '.join(sorted(self._registered))})"
                                  if self._registered else ""))
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
        self._progress = handler
        if handler is None:
            self._runner.progress = None
        else:
            self._runner.progress = lambda name, step, total: handler(ProgressReport(
                name, step, total, "iterations" if total is not None else "steps"))

    def plan(self, sql: str, parameters: Any = None):
        """Parse, bind and plan ``sql`` without running it: the physical plan (tests,
        benchmarks and EXPLAIN read it).

        >>> import graphdb
        >>> graphdb.connect().plan("SELECT 1 AS one").kind
        'RelationalQuery'
        """

        def work():
            snapshot = self._runner.snapshot()
            statement = parse(sql)
            logical = bind_query(statement.ast, statement.text, parameters,
                                 self.context(snapshot))
            return self._runner.plan(logical, snapshot)

        return self._guarded(work)

    def _execute(self, statement: Statement, parameters: Any) -> tuple[pa.Table, str | None]:
        if statement.kind in WRITE_KINDS:  # INSERT, DELETE, UPDATE, transactions (query.writes)
            return execute_write(self, statement, parameters)
        ast = statement.ast
        if statement.kind not in ("select", "copy_to") and parameters:
            raise InvalidInputError(f"{statement.kind.replace('_', ' ').upper()} takes no "
                                    "parameters")
        kind = statement.kind
        snapshot = self._runner.snapshot()  # one view of the catalog for the whole statement
        if statement.explain and kind in ("set", "reset", "drop_graph", "copy_to",
                                          "load_graph", "vacuum", "create_property_graph"):
            raise BinderError(f"EXPLAIN shows how a query runs; {kind.replace('_', ' ').upper()} "
                              "is not a query")
        if kind == "set":
            return pa.table({}), self._set(ast)
        if kind == "reset":
            return pa.table({}), self._reset(statement.name)
        if kind == "drop_graph":
            return pa.table({}), self._drop(statement)
        if kind == "vacuum":
            return pa.table({}), self._vacuum()
        if kind == "load_graph":
            from .loading import load_statement

            return pa.table({}), load_statement(self, statement)
        if kind == "create_property_graph":
            from .property_graphs import create_statement

            return pa.table({}), create_statement(self, statement)
        # The catalog snapshot of the statement: binding, planning and running read the versions
        # it holds, whose data its lease keeps on disk until the statement ends.
        with self.catalog.snapshot():
            if kind == "copy_to":
                from .export import write_table

                logical = bind_query(ast, statement.text, parameters, self.context(snapshot))
                table = self._runner.run(self._runner.plan(logical, snapshot))
                rows = write_table(table, statement.path, statement.options)
                return to_table({"Count": [rows]}), None
            if kind == "show_settings":
                plan = ValuesScan("settings", self._settings_table())
            elif kind == "show_functions":
                plan = ValuesScan("functions", self._functions_table())
            elif kind == "show_graphs":
                plan = ShowGraphs()
            elif kind == "describe":
                plan = self._describe(ast, statement.text, snapshot)
            else:
                plan = bind_query(ast, statement.text, parameters, self.context(snapshot))
            physical = self._runner.plan(plan, snapshot)
            if statement.explain:
                return self._explain(physical, statement.analyze), None
            return self._runner.run(physical), None

    def _explain(self, plan, analyze: bool) -> pa.Table:
        stats = None
        total = None
        if analyze:
            start = time.perf_counter()
            self._runner.profile = True
            try:
                self._runner.run(plan)
            finally:
                self._runner.profile = False
            total = time.perf_counter() - start
            stats = dict(self._runner.stats)
        sql_plans = {}
        for node in plan.walk():
            if node.kind != "RelationalQuery" or node.logical.direct is not None:
                continue
            if analyze:  # (a subgraph's mask kept from an earlier statement is not run)
                ran = stats.get(id(node))
                trees = (ran.metrics.get("duckdb_profile") or []) if ran is not None else []
            else:
                trees = self._runner.sql_plan(node)
            sql_plans[id(node)] = sql_plan_lines(trees, self._runner.relations(node), analyze)
        lines = explain_lines(plan, stats, sql_plans)
        if total is not None:
            lines.append(f"Total: {total * 1000:.2f} ms")
        return to_table({"plan": lines})

    def _describe(self, ast, text: str, snapshot):
        kind, target = describe_target(ast, text)
        if kind == "graph":
            return DescribeGraph(snapshot.get(target).name)
        # DESCRIBE g.edges or DESCRIBE SELECT ...: the columns and their types
        if kind == "table":
            statement = parse(f"SELECT * FROM {target} LIMIT 0")
        else:
            statement = parse(target)
        query = bind_query(statement.ast, statement.text, None, self.context(snapshot))
        schema = self._runner.run(self._runner.plan(query, snapshot)).schema
        return ValuesScan("describe", to_table({
            "column": [f.name for f in schema], "type": [str(f.type) for f in schema]}))

    def _set(self, ast) -> str:
        name, value = set_item(ast)
        settings = self.settings.set(name, value)
        if name in ("device", "memory_limit"):  # fail now, not at the first query
            if settings.device == "gpu":
                _require_gpu(settings.memory_limit)
            else:
                select_device(settings.device, settings.memory_limit)
        if name == "buffer_pool_size":
            self.catalog.buffers.resize(settings.buffer_pool_size)
        self.settings = settings
        apply_threads(settings.threads)
        if name == "threads":
            self._runner.sql.set_threads(settings.threads)
        return f"{name} = {self.settings.display(name)}"

    def _reset(self, name: str) -> str:
        names = Settings.names() if name.lower() == "all" else [name]
        for n in names:
            self.settings = self.settings.reset(n)
        self.catalog.buffers.resize(self.settings.buffer_pool_size)
        apply_threads(self.settings.threads)
        self._runner.sql.set_threads(self.settings.threads)
        if name.lower() == "all":
            return "all settings reset"
        return f"{name.lower()} reset to {self.settings.display(name.lower())}"

    def _drop(self, statement: Statement) -> str:
        self._writable()
        try:
            try:  # what this process holds of the version goes with it
                old = self.catalog.get(statement.name)
            except CorruptGraph:
                old = None  # a damaged entry can be dropped; nothing of it was loaded
            name = self.catalog.drop(statement.name)
        except GraphNotFound:
            if statement.if_exists:
                return f"graph '{statement.name}' does not exist; nothing dropped"
            raise
        if old is not None:
            self._runner.forget(old)
        return f"dropped graph '{name}'"

    def _vacuum(self) -> str:
        from graphdb.executor.device import format_bytes

        self._writable()
        before = self.catalog.env.space()
        after = self.catalog.vacuum()
        return (f"database file compacted: {format_bytes(before.used_bytes)} -> "
                f"{format_bytes(after.used_bytes)} in use")

    def _settings_table(self) -> pa.Table:
        names = Settings.names()
        docs = Settings.docs()
        return to_table({"name": names,
                         "value": [self.settings.display(n) for n in names],
                         "description": [docs.get(n, "") for n in names]})

    def _changes_table(self, graph: str | None = None) -> pa.Table:
        from .query.compacting import changes_table

        return changes_table(self, graph)

    def buffer_stats(self) -> pa.Table:
        """Buffer pool counters, one row per pool (what ``SELECT * FROM buffer_stats()`` shows).

        >>> import graphdb
        >>> graphdb.connect().buffer_stats().column_names[:3]
        ['pool', 'capacity_bytes', 'frame_bytes']
        """
        self._check_open()
        return stats_table(self.catalog.buffers)

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
        self.table_functions[name.lower()] = function
        doc = description or (function.__doc__ or "").strip().split("\n")[0]
        self._table_function_docs[name.lower()] = doc

    def _functions_table(self) -> pa.Table:
        """``functions()``: every table, scalar and aggregate function, with its signature."""
        from graphdb.executor.algorithms import REGISTRY

        rows = [(a.name, "table", a.signature(), ", ".join(c.name for c in a.columns), a.doc)
                for a in sorted(REGISTRY.values(), key=lambda a: a.name)]
        for name in sorted(self.table_functions):
            function = self.table_functions[name]
            columns = ", ".join(_FUNCTION_COLUMNS if _unweak(function) == self._functions_table
                                else function().column_names)
            rows.append((name, "table", f"{name}()", columns, self._table_function_docs[name]))
        rows += [(n, kind, sig, "", doc) for n, kind, sig, doc in self._runner.sql.functions()]
        return to_table({k: [r[i] for r in rows] for i, k in enumerate(_FUNCTION_COLUMNS)})

    def graph(self, name: str) -> "GraphHandle":
        """A Python handle on graph ``name``: ``con.graph("g").pagerank()`` returns Arrow.

        >>> import graphdb, pyarrow as pa
        >>> con = graphdb.connect()
        >>> _ = con.ingest("g", pa.table({"src": [1, 2], "dst": [2, 3]}))
        >>> con.graph("g").bfs(1).num_rows
        3
        """
        from .graph import GraphHandle

        self._check_open()
        try:
            entry = self.catalog.get(name)
        except Exception as exc:
            raise translate(exc) from None
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

        self._check_open()
        return ingest(self, graph, edges, vertices=vertices, undirected=undirected,
                      format=format, src=src, dst=dst, weight=weight, replace=replace,
                      vertex_format=vertex_format, vertex_id=vertex_id, delimiter=delimiter,
                      header=header, id_type=id_type, self_loops=self_loops,
                      duplicates=duplicates, merge_weights=merge_weights,
                      missing_vertices=missing_vertices, invalid_weights=invalid_weights,
                      memory_limit=memory_limit, temp_dir=temp_dir, pages=pages,
                      device=device or self.settings.device, progress=progress)

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
        from .interop import plain_table
        from .property_graphs import EdgeTable, VertexTable, create_property_graph

        self._check_open()
        keys = keys or {}

        def table(obj, what):
            if isinstance(obj, (str, os.PathLike)):
                return self._runner.sql.run(f"SELECT * FROM {_file(obj)}", {})[0]
            return plain_table(obj, what)

        vertex_tables = [VertexTable(label, table(obj, f"vertex table {label}"), label,
                                     keys.get(label)) for label, obj in vertices.items()]
        edge_tables = []
        for label, spec in (edges or {}).items():
            obj, source, destination, *columns = spec
            edge_tables.append(EdgeTable(label, table(obj, f"edge table {label}"), source,
                                         destination, *(columns + [None, None])[:2], label))
        return self._guarded(lambda: create_property_graph(
            self, name, vertex_tables, edge_tables, undirected=undirected, replace=replace))

    def _existing(self, name: str):
        try:
            return self.catalog.get(name, exact=True)
        except GraphNotFound:
            return None

    def graphs(self) -> list[str]:
        """The names of the graphs, sorted.

        >>> import graphdb, pyarrow as pa
        >>> con = graphdb.connect()
        >>> _ = con.ingest("g", pa.table({"src": [1], "dst": [2]}))
        >>> con.graphs()
        ['g']
        """
        return sorted(self.catalog.names())
