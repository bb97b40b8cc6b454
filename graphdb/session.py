"""The session: one open database and what its statements run in.

A :class:`Session` holds the settings, the catalog (whose snapshot each statement reads), the
transaction (:mod:`.transaction`), the runner (:mod:`graphdb.executor.runner`) with its embedded
DuckDB, the tables the program registered and the built-in table functions. Its parts are
public: the statement handlers (:mod:`graphdb.query.statements`), the loaders and the Python
API use them, and :class:`graphdb.Connection` is a thin PEP 249 layer over it.

A statement runs as :meth:`Session.execute`: the handler of its parsed tree's kind binds it
into a logical plan (:mod:`graphdb.executor.plan`), the runner plans and runs it; statements
that change only the session (SET, BEGIN, ...) are carried out by their handlers.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import pyarrow as pa

from graphdb.catalog import Catalog, GraphNotFound
from graphdb.executor.arrays import to_table
from graphdb.executor.cancel import sigint_cancels
from graphdb.executor.device import select_device
from graphdb.executor.property_graph import PropertySchema, label_table_columns
from graphdb.executor.residency import RESIDENCY
from graphdb.executor.runner import Runner
from graphdb.executor.stored import graph_key
from graphdb.storage import BufferManager, Environment, stats_table

from . import tempdb
from .errors import (
    CatalogError,
    Error,
    InterfaceError,
    InvalidInputError,
    OperationalError,
    ProgrammingError,
    translate,
)
from .progress import ProgressReport
from .query.tables import Context
from .settings import Settings, apply_threads
from .statement_cache import StatementCache
from .transaction import Transaction

if TYPE_CHECKING:
    from graphdb.catalog import GraphEntry
    from graphdb.executor.physical import PhysicalNode
    from graphdb.executor.plan import PlanNode
    from graphdb.executor.snapshot import StatementCatalog

    from .query.buffered import InsertBuffer
    from .query.parser import Statement

__all__ = ["FUNCTION_COLUMNS", "Session", "require_gpu"]

#: The columns of ``functions()``.
FUNCTION_COLUMNS = ("name", "kind", "signature", "columns", "description")


def require_gpu(memory_limit: int | None) -> None:
    """Raise OperationalError, with what to do instead, where ``device = 'gpu'`` cannot work."""
    from graphdb.executor.errors import DeviceUnavailable

    try:
        select_device("gpu", memory_limit)
    except DeviceUnavailable as exc:
        raise OperationalError(f"{exc}; use device 'auto' or 'cpu' (or install CuPy for a "
                               "CUDA GPU: pip install 'graphdb[gpu]')") from None


def weak(method):
    """``method`` (bound to a session or connection) without a reference to its object: what
    the runner and the table-function registry hold of it must not keep a closed session alive
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


def unweak(function):
    """The bound method behind a :func:`weak` wrapper (``function`` itself otherwise)."""
    ref = getattr(function, "method", None)
    return ref() if isinstance(ref, weakref.WeakMethod) else function


def _release(transaction: Transaction, runner: Runner, catalog: Catalog, env: Environment,
             temporary: Path | None) -> None:
    """Close a session's parts (by close(), or when it is collected unclosed): an open
    transaction rolled back, the graphs' data released by the last session of the process to
    the database, the catalog, buffer pool and environment closed, an in-memory database
    deleted."""
    transaction.close()
    runner.close(last=env.connections == 1)
    catalog.close()
    catalog.buffers.close()
    env.close()
    if temporary is not None:
        tempdb.remove(temporary)


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


class Session:
    """One open database (see the module docstring). ``path`` is its directory (a temporary
    one when ``temporary``); ``settings`` its settings; ``cluster`` the communicator of a
    cluster rank (None outside one); ``gpu_ids`` the GPUs graph operators may be partitioned
    over (None: all)."""

    def __init__(self, path: Path, *, temporary: bool, read_only: bool, create: bool,
                 settings: Settings, page_size: int | None, mode: int | None,
                 gpu_ids: tuple[int, ...] | None, cluster=None):
        self.path = path
        self.temporary = temporary
        self.gpu_ids = gpu_ids
        self.cluster = cluster
        #: reopen read-write at the first write (graphdb.connection.connect_for_reading)
        self.reopen_for_writes = False
        env = None
        try:
            env = Environment(path, create=create and not read_only, read_only=read_only,
                              page_size=page_size, mode=mode)
            buffers = BufferManager(env, settings.buffer_pool_size)
            if settings.device == "gpu":  # a device that cannot be used is reported now
                require_gpu(settings.memory_limit)
        except Exception as exc:
            if env is not None:  # opened, then a setting was refused: do not leak it
                env.close()
            if temporary:
                tempdb.remove(path)
            raise translate(exc) from None
        if cluster is not None:  # the ranks of one machine share its cores
            from .cluster import threads_per_rank

            settings = settings.set("threads", threads_per_rank(cluster))
            apply_threads(settings.threads)
        self.env = env
        self.settings = settings
        env.synchronous = settings.synchronous
        self.catalog = Catalog(env, buffers)
        self.runner = Runner(self.catalog, weak(self.device), weak(self.host_budget),
                             weak(self.debug_variant), weak(self.fleet))
        self.runner.path_rows_for = weak(self.max_path_rows)
        self.transaction = Transaction(self.catalog)
        transaction = self.transaction
        self.runner.writer_for = lambda: transaction.writer
        #: the single-row inserts of an open transaction, applied together (query.buffered)
        self.buffer: "InsertBuffer | None" = None
        #: tables the program registered, by lower-case name (register_table)
        self.tables: dict[str, pa.Table] = {}
        #: raised by every registration of a table or table function: plans kept in
        #: ``plans`` (graphdb.statement_cache) made before it are not reused
        self.registry = 0
        self.plans = StatementCache()
        #: built-in table functions: name -> callable returning a pa.Table, and its doc line
        self.table_functions: dict[str, Any] = {}
        self.table_function_docs: dict[str, str] = {}
        #: ``handler(report)`` for the progress of running statements, or None
        self.progress: Callable[[ProgressReport], None] | None = None
        self.closed = False
        #: whether statements may read or write files outside the database (see
        #: :meth:`disable_external_access`)
        self.external_access = True
        # One statement at a time: the shell runs queries in a worker thread.
        self.lock = threading.RLock()
        self._device_cache: tuple[tuple, Any] | None = None
        self._release = weakref.finalize(self, _release, self.transaction, self.runner,
                                         self.catalog, env, path if temporary else None)
        self.register_table_function("settings", weak(self.settings_table),
                                     "the settings: name, value, description")
        self.register_table_function("functions", weak(self.functions_table),
                                     "every function: name, kind, signature, columns, "
                                     "description")
        self.register_table_function("graphs", self.runner.graphs_table,
                                     "the graphs, as SHOW GRAPHS lists them")
        changes = weak(self.changes_table)
        changes.takes_arguments = True
        self.register_table_function("graph_changes", changes,
                                     "writes since the last compaction, per graph: "
                                     "graph_changes() or graph_changes('g')")

    # -- lifecycle ------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the database (see :meth:`graphdb.Connection.close`); twice is harmless."""
        if self.closed:
            return
        self.closed = True
        with self.lock:
            if self.transaction.started:  # an open transaction is rolled back
                from .query.compacting import stop_compactions

                self.buffer = None
                self.transaction.close()
                stop_compactions(self)
            self._release()
            self._device_cache = None

    def check_open(self) -> None:
        if self.closed:
            raise InterfaceError("the connection is closed")

    def guarded(self, work: Callable[[], Any]) -> Any:
        """Run ``work()`` as this session's one running statement, with lower layers' errors
        translated into the PEP 249 classes."""
        self.check_open()
        with self.lock, self.statement():
            try:
                if self.buffer:  # a transaction's kept inserts go in before anything else
                    self.buffer.flush()
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

    @contextlib.contextmanager
    def statement(self):
        """One statement: ``Connection.interrupt()`` (the runner's cancel) reaches it from start
        to end, and on the main thread Ctrl-C is such an interrupt
        (executor.cancel.sigint_cancels): the statement stops at its next checkpoint and undoes
        itself, then KeyboardInterrupt is raised here, with the session as it was (an open
        transaction still open)."""
        cancel = self.runner.cancel
        with sigint_cancels(cancel) as sigint, self.runner.statement():
            try:
                if sigint["hit"]:  # Ctrl-C before the statement was there to cancel
                    cancel()
                yield
            except BaseException:
                if sigint["hit"]:
                    raise KeyboardInterrupt from None
                raise
        if sigint["hit"]:
            raise KeyboardInterrupt

    # -- statements -----------------------------------------------------------------------------
    def execute(self, statement: "Statement", parameters: Any = None
                ) -> tuple[pa.Table, str | None]:
        """Carry out one parsed statement: (its rows, its status line)."""
        from .query.statements import handler_for

        handler = handler_for(statement.ast)
        if parameters and not handler.parameters:
            raise InvalidInputError(f"{handler.shown} takes no parameters")
        if not self.external_access:
            inner = statement.explained()
            files = handler_for(inner.ast).files(inner)
            if files:
                raise OperationalError(f"{files}, and this connection has no access to files "
                                       "outside the database (disable_external_access)")
        return handler.execute(self, statement, parameters)

    def disable_external_access(self) -> None:
        """Refuse, from now on, every statement that reads or writes a file outside the
        database (see :meth:`graphdb.Connection.disable_external_access`)."""
        self.external_access = False
        self.runner.sql.disable_external_access()

    def plan(self, statement: "Statement", parameters: Any = None) -> "PhysicalNode":
        """The physical plan of a statement, without running it."""
        from .query.statements import handler_for

        handler = handler_for(statement.explained().ast)
        snapshot = self.snapshot()
        return self.runner.plan(handler.plan(self, statement.explained(), parameters, snapshot),
                                snapshot)

    def run(self, logical: "PlanNode", snapshot: "StatementCatalog | None" = None) -> pa.Table:
        """Plan and run a logical plan (on the statement's ``snapshot``)."""
        snapshot = snapshot or self.snapshot()
        return self.runner.run(self.runner.plan(logical, snapshot))

    def execute_plan(self, plan: "PlanNode") -> pa.Table:
        """Run a write's plan that the program's API built (``insert_edges``, ``executemany``,
        a transaction's kept inserts): its rows; outside a transaction, the compaction it made
        due follows, as after an INSERT statement."""
        table = self.run(plan)
        if not self.transaction.open:
            self.after_commit(self.transaction.writer.committed)
        return table

    def snapshot(self) -> "StatementCatalog":
        """The catalog as the next statement sees it."""
        return self.runner.snapshot()

    def context(self, snapshot: "StatementCatalog | None" = None) -> Context:
        """What the binder needs: the statement's view of the catalog, graph table columns
        (from the catalog's schemas: no topology is read), built-in table functions, registered
        tables."""
        snapshot = snapshot or self.snapshot()
        catalog = self.catalog

        def columns(graph: str, which: str) -> list[str]:
            entry = snapshot.get(graph)
            if which.startswith("label:"):  # a property graph's g.Person, g.knows
                return label_table_columns(PropertySchema.of(entry), which[len("label:"):])
            # read once per graph version (the stored schema opens the Arrow file): a subgraph's
            # conditions ask on every statement
            return list(RESIDENCY.get(
                graph_key(catalog, entry), "cpu", f"columns:{which}",
                lambda: tuple((catalog.vertex_schema(entry) if which == "vertices"
                               else catalog.edge_schema(entry)).names)))

        return Context(snapshot, columns, dict(self.table_functions), tables=dict(self.tables))

    # -- writes ---------------------------------------------------------------------------------
    def writable(self) -> None:
        """Before a write: reopen a session opened for reading read-write (or refuse)."""
        if not self.env.read_only:
            return
        if not self.reopen_for_writes:
            raise OperationalError(f"database '{self.path}' is open read-only")
        try:
            self.env.reopen_writable()
        except Exception as exc:
            raise translate(exc) from None

    def after_commit(self, committed: "list[GraphEntry]") -> None:
        """A write committed (the entries ``committed``): compact in the background every graph
        whose delta is due (:mod:`graphdb.query.compacting`), and rewrite as a new base every
        table the commit changed whose records outgrew it."""
        from .query.compacting import maybe_compact

        maybe_compact(self, committed)
        tables = self.transaction.writer.tables.committed
        if tables:
            from .query.table_statements import maybe_compact_tables

            maybe_compact_tables(self, tables)

    def existing(self, name: str) -> "GraphEntry | None":
        """Graph ``name``'s entry (exactly that name), or None."""
        try:
            return self.catalog.get(name, exact=True)
        except GraphNotFound:
            return None

    # -- devices --------------------------------------------------------------------------------
    def device(self):
        """The device statements run on (the ``device`` and ``memory_limit`` settings)."""
        key = (self.settings.device, self.settings.memory_limit)
        if self._device_cache is None or self._device_cache[0] != key:
            if self.cluster is not None and key[0] != "cpu":
                _cluster_gpu(self.cluster)
            self._device_cache = (key, select_device(*key))
        return self._device_cache[1]

    def host_budget(self) -> int | None:
        return self.settings.host_memory_limit

    def max_path_rows(self) -> int:
        return self.settings.max_path_rows

    def debug_variant(self) -> str:
        return self.settings.debug_variant

    def fleet(self, device):
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

        ids = self.gpu_ids if self.gpu_ids is not None else tuple(range(gpu_count()))
        if settings.gpus is not None:
            ids = ids[:settings.gpus]
        if len(ids) >= 2 or (ids and force):
            return Fleet("nccl", len(ids), tuple(ids), "gpu", force,
                         f"{len(ids)} GPUs of this host")
        return None

    # -- settings -------------------------------------------------------------------------------
    def set(self, name: str, value: Any) -> str:
        """``SET name = value``; its status line."""
        settings = self.settings.set(name, value)
        if name in ("device", "memory_limit"):  # fail now, not at the first query
            if settings.device == "gpu":
                require_gpu(settings.memory_limit)
            else:
                select_device(settings.device, settings.memory_limit)
        if name == "buffer_pool_size":
            self.catalog.buffers.resize(settings.buffer_pool_size)
        self.settings = settings
        self.env.synchronous = settings.synchronous
        if name.lower() == "search_path":
            self.catalog.search_path = self._search_path()
        apply_threads(settings.threads)
        if name == "threads":
            self.runner.sql.set_threads(settings.threads)
        return f"{name} = {self.settings.display(name)}"

    def _search_path(self) -> tuple[str, ...]:
        """The schemas of ``search_path``; one that does not exist is refused when set."""
        names = tuple(n for n in self.settings.search_path.split(",") if n)
        known = {s.lower() for s in self.catalog.tables_now().schemas()} | {"main"}
        for name in names:
            if name.lower() not in known:
                self.settings = self.settings.reset("search_path")
                raise CatalogError(f"schema '{name}' does not exist; CREATE SCHEMA {name} "
                                   "first")
        return names

    def reset(self, name: str) -> str:
        """``RESET name`` (or ``RESET ALL``); its status line."""
        names = Settings.names() if name.lower() == "all" else [name]
        for n in names:
            self.settings = self.settings.reset(n)
        self.env.synchronous = self.settings.synchronous
        self.catalog.search_path = tuple(n for n in self.settings.search_path.split(",") if n)
        self.catalog.buffers.resize(self.settings.buffer_pool_size)
        apply_threads(self.settings.threads)
        self.runner.sql.set_threads(self.settings.threads)
        if name.lower() == "all":
            return "all settings reset"
        return f"{name.lower()} reset to {self.settings.display(name.lower())}"

    def set_progress(self, handler: Callable[[ProgressReport], None] | None) -> None:
        """Call ``handler(report)`` as statements make progress (None: no more)."""
        self.progress = handler
        if handler is None:
            self.runner.progress = None
        else:
            self.runner.progress = lambda name, step, total: handler(ProgressReport(
                name, step, total, "iterations" if total is not None else "steps"))

    # -- built-in table functions ---------------------------------------------------------------
    def register_table(self, name: str, table: pa.Table) -> None:
        """Make ``table`` queryable as ``name`` (see :meth:`graphdb.Connection.register`)."""
        self.tables[name.lower()] = table
        self.registry += 1

    def unregister_table(self, name: str) -> pa.Table | None:
        """Forget the table registered as ``name``; it, or None where there was none."""
        self.registry += 1
        return self.tables.pop(name.lower(), None)

    def register_table_function(self, name: str, function, description: str = "") -> None:
        """Make ``SELECT * FROM name()`` return ``function()`` (see
        :meth:`graphdb.Connection.register_table_function`)."""
        self.registry += 1
        self.table_functions[name.lower()] = function
        doc = description or (function.__doc__ or "").strip().split("\n")[0]
        self.table_function_docs[name.lower()] = doc

    def settings_table(self) -> pa.Table:
        names = Settings.names()
        docs = Settings.docs()
        return to_table({"name": names,
                         "value": [self.settings.display(n) for n in names],
                         "description": [docs.get(n, "") for n in names]})

    def functions_table(self) -> pa.Table:
        """``functions()``: every table, scalar and aggregate function, with its signature."""
        from graphdb.executor.algorithms import REGISTRY

        rows = [(a.name, "table", a.signature(), ", ".join(c.name for c in a.columns), a.doc)
                for a in sorted(REGISTRY.values(), key=lambda a: a.name)]
        for name in sorted(self.table_functions):
            function = self.table_functions[name]
            columns = ", ".join(FUNCTION_COLUMNS if unweak(function) == self.functions_table
                                else function().column_names)
            rows.append((name, "table", f"{name}()", columns, self.table_function_docs[name]))
        rows += [(n, kind, sig, "", doc) for n, kind, sig, doc in self.runner.sql.functions()]
        return to_table({k: [r[i] for r in rows] for i, k in enumerate(FUNCTION_COLUMNS)})

    def changes_table(self, graph: str | None = None) -> pa.Table:
        from .query.compacting import changes_table

        return changes_table(self, graph)

    def buffer_stats(self) -> pa.Table:
        """Buffer pool counters, one row per pool."""
        return stats_table(self.catalog.buffers)
