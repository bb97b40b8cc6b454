"""Connections: one open database, its settings, and statement execution."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from graphdb.catalog import Catalog, GraphNotFound, IngestOptions
from graphdb.executor.arrays import to_table
from graphdb.executor.device import select_device
from graphdb.executor.plan import DescribeGraph, ShowGraphs, ValuesScan
from graphdb.executor.runner import Runner
from graphdb.storage import BufferManager, Environment, stats_table

from . import tempdb
from .errors import (
    BinderError,
    Error,
    InterfaceError,
    InvalidInputError,
    OperationalError,
    translate,
)
from .query.explain import explain_lines
from .query.parser import Statement, parse
from .query.planner import Context, bind_parameters, plan_query
from .query.statements import describe_target, set_item
from .result import Result
from .settings import Settings, apply_threads, parse_bytes

if TYPE_CHECKING:
    from .graph import GraphHandle
    from .result import Cursor

__all__ = ["Connection", "connect", "MEMORY"]

#: The path that names an in-memory database, as in sqlite3 and DuckDB.
MEMORY = ":memory:"


def connect(path: str | os.PathLike | None = None, *, read_only: bool = False,
            create: bool = True, device: str = "auto",
            memory_limit: int | str | None = None, buffer_pool_size: int | str | None = None,
            page_size: int | None = None) -> "Connection":
    """Open (or create) the database at ``path`` (a directory); no path, or ``":memory:"``,
    makes an in-memory database that disappears when the connection closes.

    An in-memory database keeps its data in a temporary directory (LMDB needs files), which is
    removed on close, at exit, and even when the process is killed (see :mod:`graphdb.tempdb`).
    ``device='gpu'`` fails here, not at the first query, when no GPU can be used.

    Examples
    --------
    >>> import graphdb
    >>> with graphdb.connect(":memory:") as con:
    ...     con.execute("SHOW GRAPHS").fetchall()
    []
    """
    return Connection(path, read_only=read_only, create=create, device=device,
                      memory_limit=memory_limit, buffer_pool_size=buffer_pool_size,
                      page_size=page_size)


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
                 page_size: int | None = None):
        self._temporary = path is None or str(path) in ("", MEMORY)
        if self._temporary:
            if read_only:
                raise InvalidInputError("an in-memory database cannot be opened read-only")
            path = tempdb.create()
        self.path = Path(path)
        try:
            self._env = Environment(self.path, create=create and not read_only, read_only=read_only,
                                    page_size=page_size)
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
        self.settings = settings
        self.catalog = Catalog(self._env, buffers)
        self._runner = Runner(self.catalog, self._device,
                              lambda: self.settings.host_memory_limit,
                              lambda: self.settings.debug_variant)
        self._device_cache: tuple[tuple, Any] | None = None
        self._closed = False
        # One statement at a time: the shell runs queries in a worker thread.
        self._lock = threading.RLock()
        self.table_functions: dict[str, Any] = {}
        self.register_table_function("settings", self._settings_table)
        self.register_table_function("functions", self._functions_table)
        self.register_table_function("graphs", self._runner.graphs_table)
        self.register_table_function("buffer_stats", self.buffer_stats)

    # -- lifecycle ------------------------------------------------------------------------------
    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.catalog.buffers.close()
            self._env.close()
            if self._temporary:
                tempdb.remove(self.path)

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
            self._device_cache = (key, select_device(*key))
        return self._device_cache[1]

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
        table, message = self._guarded(lambda: self._execute(parse(sql), parameters))
        return Result(table, elapsed=time.perf_counter() - start, message=message)

    def _guarded(self, work):
        """Run ``work()`` as this connection's one running statement, with lower layers' errors
        translated into the PEP 249 classes."""
        self._check_open()
        with self._lock:
            try:
                return work()
            except Error:
                raise
            except Exception as exc:
                translated = translate(exc)
                if translated is exc:
                    raise
                raise translated from None

    def cursor(self) -> "Cursor":
        """A PEP 249 cursor on this connection."""
        from .result import Cursor

        self._check_open()
        return Cursor(self)

    def interrupt(self) -> None:
        """Cancel the statement running on this connection (safe from another thread)."""
        self._runner.cancel()

    def commit(self) -> None:
        """PEP 249: every statement commits on its own, so there is nothing to do."""

    def rollback(self) -> None:
        """PEP 249: statements commit on their own; there is no open transaction to undo."""

    def context(self, snapshot=None) -> Context:
        """What the binder needs: the statement's view of the catalog, graph table columns
        (from the catalog's schemas: no topology is read), built-in table functions."""
        snapshot = snapshot or self._runner.snapshot()

        def columns(graph: str, which: str) -> list[str]:
            entry = snapshot.get(graph)
            schema = (self.catalog.vertex_schema(entry) if which == "vertices"
                      else self.catalog.edge_schema(entry))
            return list(schema.names)

        return Context(snapshot, columns, dict(self.table_functions))

    def plan(self, sql: str, parameters: Any = None):
        """Parse, bind and plan ``sql`` without running it: the physical plan (tests,
        benchmarks and EXPLAIN read it)."""

        def work():
            snapshot = self._runner.snapshot()
            logical = plan_query(bind_parameters(parse(sql).ast, parameters),
                                 self.context(snapshot))[0]
            return self._runner.plan(logical, snapshot)

        return self._guarded(work)

    def _execute(self, statement: Statement, parameters: Any) -> tuple[pa.Table, str | None]:
        ast = statement.ast
        if ast is not None:
            ast = bind_parameters(ast, parameters)
        elif parameters:
            raise InvalidInputError(f"{statement.kind.replace('_', ' ').upper()} takes no "
                                    "parameters")
        kind = statement.kind
        snapshot = self._runner.snapshot()  # one view of the catalog for the whole statement
        if statement.explain and kind in ("set", "reset", "drop_graph"):
            raise BinderError(f"EXPLAIN shows how a query runs; {kind.replace('_', ' ').upper()} "
                              "is not a query")
        if kind == "set":
            return pa.table({}), self._set(ast)
        if kind == "reset":
            return pa.table({}), self._reset(statement.name)
        if kind == "drop_graph":
            return pa.table({}), self._drop(statement)
        if kind == "show_settings":
            plan = ValuesScan("settings", self._settings_table())
        elif kind == "show_functions":
            plan = ValuesScan("functions", self._functions_table())
        elif kind == "show_graphs":
            plan = ShowGraphs()
        elif kind == "describe":
            plan = self._describe(ast, snapshot)
        else:
            plan, _names = plan_query(ast, self.context(snapshot))
        physical = self._runner.plan(plan, snapshot)
        if statement.explain:
            return self._explain(physical, statement.analyze), None
        return self._runner.run(physical), None

    def _explain(self, plan, analyze: bool) -> pa.Table:
        stats = None
        total = None
        if analyze:
            start = time.perf_counter()
            self._runner.run(plan)
            total = time.perf_counter() - start
            stats = dict(self._runner.stats)
        lines = explain_lines(plan, stats)
        if total is not None:
            lines.append(f"Total: {total * 1000:.2f} ms")
        return to_table({"plan": lines})

    def _describe(self, ast, snapshot):
        kind, target = describe_target(ast)
        if kind == "graph":
            return DescribeGraph(snapshot.get(target).name)
        # DESCRIBE g.edges or DESCRIBE SELECT ...: the columns and their types
        if kind == "table":
            target = parse(f"SELECT * FROM {target} LIMIT 0").ast
        query = plan_query(target, self.context(snapshot))[0]
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
        return f"{name} = {self.settings.display(name)}"

    def _reset(self, name: str) -> str:
        names = Settings.names() if name.lower() == "all" else [name]
        for n in names:
            self.settings = self.settings.reset(n)
        self.catalog.buffers.resize(self.settings.buffer_pool_size)
        apply_threads(self.settings.threads)
        if name.lower() == "all":
            return "all settings reset"
        return f"{name.lower()} reset to {self.settings.display(name.lower())}"

    def _drop(self, statement: Statement) -> str:
        try:
            entry = self.catalog.drop(statement.name)
        except GraphNotFound:
            if statement.if_exists:
                return f"graph '{statement.name}' does not exist; nothing dropped"
            raise
        self._runner.forget(entry)
        return f"dropped graph '{entry.name}'"

    def _settings_table(self) -> pa.Table:
        names = Settings.names()
        docs = Settings.docs()
        return to_table({"name": names,
                         "value": [self.settings.display(n) for n in names],
                         "description": [docs.get(n, "") for n in names]})

    def buffer_stats(self) -> pa.Table:
        """Buffer pool counters, one row per pool (what ``SELECT * FROM buffer_stats()`` shows)."""
        self._check_open()
        return stats_table(self.catalog.buffers)

    def register_table_function(self, name: str, function) -> None:
        """Make ``SELECT * FROM name()`` return ``function()`` (a ``pa.Table``).

        This is the hook for built-in, non-graph table functions: ``settings()`` and
        ``functions()`` are registered here, and ``buffer_stats()`` is as soon as the connection
        has a ``buffer_stats`` method returning a ``pa.Table``. ``graphs()`` is SHOW GRAPHS.
        """
        self.table_functions[name.lower()] = function

    def _functions_table(self) -> pa.Table:
        from graphdb.executor.algorithms import REGISTRY

        specs = sorted(REGISTRY.values(), key=lambda a: a.name)
        return to_table({
            "name": [a.name for a in specs] + sorted(self.table_functions),
            "signature": [a.signature() for a in specs] + [f"{n}()" for n in
                                                          sorted(self.table_functions)],
            "columns": [", ".join(c.name for c in a.columns) for a in specs] + [
                "" for _ in self.table_functions],
            "description": [a.doc for a in specs] + ["" for _ in self.table_functions],
        })

    def graph(self, name: str) -> "GraphHandle":
        """A Python handle on graph ``name``: ``con.graph("g").pagerank()`` returns Arrow."""
        from .graph import GraphHandle

        self._check_open()
        try:
            entry = self.catalog.get(name)
        except Exception as exc:
            raise translate(exc) from None
        return GraphHandle(self, entry.name)

    def from_networkx(self, name: str, graph, *, weight: str | None = "weight",
                      replace: bool = False) -> "GraphHandle":
        """Store a networkx graph as graph ``name`` (edge attribute ``weight`` if all have it)."""
        from .interop import from_networkx

        return from_networkx(self, name, graph, weight=weight, replace=replace)

    def from_scipy(self, name: str, matrix, *, directed: bool = True, weighted: bool = True,
                   replace: bool = False) -> "GraphHandle":
        """Store a scipy.sparse adjacency matrix as graph ``name`` (vertex ids 0..n-1)."""
        from .interop import from_scipy

        return from_scipy(self, name, matrix, directed=directed, weighted=weighted,
                          replace=replace)

    # -- ingest ---------------------------------------------------------------------------------
    def ingest(self, graph: str, edges: str | os.PathLike, *, vertices: str | None = None,
               undirected: bool = False, format: str = "auto", src: str | None = None,
               dst: str | None = None, weight: str | None = None, replace: bool = False,
               vertex_format: str = "auto", vertex_id: str | None = None,
               delimiter: str | None = None, header: bool | None = None, id_type: str = "auto",
               self_loops: str = "keep", duplicates: str = "keep", merge_weights: str = "min",
               missing_vertices: str = "error", memory_limit: int | str | None = None,
               temp_dir: str | os.PathLike | None = None, progress: Any = False) -> dict:
        """Load an edge file (or a glob pattern of files, e.g. ``"parts/*.csv.gz"``) into graph
        ``graph``; the options are those of ``graphdb ingest`` (see ``graphdb ingest --help``).

        ``progress``: False (default), True (a progress bar on stderr when it is a terminal), or
        a :class:`graphdb.catalog.progress.Progress`. Returns a summary: |V|, |E| read and stored, self
        loops and duplicates dropped, bytes stored, seconds and edges per second.
        """
        self._check_open()
        start = time.perf_counter()
        try:
            limit = None if memory_limit is None else parse_bytes(memory_limit, "memory_limit")
            options = IngestOptions(
                vertices=None if vertices is None else str(vertices), undirected=undirected,
                format=format, vertex_format=vertex_format, src=src, dst=dst, weight=weight,
                vertex_id=vertex_id, delimiter=delimiter, header=header, id_type=id_type,
                self_loops=self_loops, duplicates=duplicates, merge_weights=merge_weights,
                missing_vertices=missing_vertices, memory_limit=limit,
                temp_dir=None if temp_dir is None else str(temp_dir))
            if progress is True:
                from .progress import terminal_progress

                progress = terminal_progress()
            old = self._existing(graph)
            entry = self.catalog.ingest(graph, str(edges), options, replace=replace,
                                        progress=progress or None)
        except Exception as exc:
            translated = translate(exc)
            if translated is exc:
                raise
            raise translated from None
        if old is not None:
            self._runner.forget(old)
        seconds = time.perf_counter() - start
        stats = entry.stats
        return {
            "graph": entry.name, "vertices": entry.num_vertices, "edges": entry.input_edges,
            "stored_edges": entry.num_edges, "directed": entry.directed,
            "weighted": entry.weighted, "self_loops_dropped": stats.get("self_loops_dropped", 0),
            "duplicates_merged": stats.get("duplicates_merged", 0),
            "bytes_stored": stats.get("bytes_stored", 0), "seconds": seconds,
            "edges_per_second": entry.input_edges / seconds if seconds > 0 else 0.0,
        }

    def _existing(self, name: str):
        try:
            return self.catalog.get(name, exact=True)
        except GraphNotFound:
            return None

    def graphs(self) -> list[str]:
        return sorted(self.catalog.names())
