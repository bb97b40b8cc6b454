"""Connections: one open database, its settings, and statement execution."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from catalog import Catalog, IngestOptions
from executor.device import select_device
from executor.plan import DescribeGraph, ShowGraphs
from executor.runner import Runner
from storage import BufferManager, Environment, stats_table

from .errors import Error, InterfaceError, translate
from .query.explain import explain_lines
from .query.parser import Statement, parse
from .query.planner import bind_parameters, constant, plan_select
from .result import Result
from .settings import Settings

__all__ = ["Connection", "connect"]


def connect(path: str | os.PathLike | None = None, *, read_only: bool = False,
            create: bool = True, device: str = "auto",
            memory_limit: int | str | None = None, buffer_pool_size: int | str | None = None,
            page_size: int | None = None) -> "Connection":
    """Open (or create) the database at ``path``; ``None`` makes a temporary one.

    Examples
    --------
    >>> import graphdb, tempfile
    >>> with graphdb.connect() as con:
    ...     con.execute("SHOW GRAPHS").fetchall()
    []
    """
    return Connection(path, read_only=read_only, create=create, device=device,
                      memory_limit=memory_limit, buffer_pool_size=buffer_pool_size,
                      page_size=page_size)


class Connection:
    """An open database. Use as a context manager, or call :meth:`close`."""

    def __init__(self, path: str | os.PathLike | None = None, *, read_only: bool = False,
                 create: bool = True, device: str = "auto",
                 memory_limit: int | str | None = None, buffer_pool_size: int | str | None = None,
                 page_size: int | None = None):
        self._temporary = path is None
        if path is None:
            path = tempfile.mkdtemp(prefix="graphdb-")
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
        except Exception as exc:
            raise translate(exc) from None
        self.settings = settings
        self.catalog = Catalog(self._env, buffers)
        self._runner = Runner(self.catalog, self._device)
        self._device_cache: tuple[tuple, Any] | None = None
        self._closed = False

    # -- lifecycle ------------------------------------------------------------------------------
    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.catalog.buffers.close()
            self._env.close()
            if self._temporary:
                shutil.rmtree(self.path, ignore_errors=True)

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
        """Run one SQL statement; ``parameters`` fill ``?`` (a sequence) or ``$name`` (a dict)."""
        self._check_open()
        start = time.perf_counter()
        try:
            statement = parse(sql)
            table, message = self._execute(statement, parameters)
        except Error:
            raise
        except Exception as exc:
            translated = translate(exc)
            if translated is exc:
                raise
            raise translated from None
        return Result(table, elapsed=time.perf_counter() - start, message=message)

    def _execute(self, statement: Statement, parameters: Any) -> tuple[pa.Table, str | None]:
        ast = statement.ast
        if ast is not None and parameters is not None:
            ast = bind_parameters(ast, parameters)
        elif ast is not None:
            ast = bind_parameters(ast, None)
        if statement.kind == "set":
            item = ast.expressions[0].this
            name = item.this.name if hasattr(item.this, "name") else item.this.sql()
            value = constant(item.expression, f"SET {name}")
            settings = self.settings.set(name, value)
            if name.lower() in ("device", "memory_limit"):
                select_device(settings.device, settings.memory_limit)  # fail now, not later
            if name.lower() == "buffer_pool_size":
                self.catalog.buffers.resize(settings.buffer_pool_size)
            self.settings = settings
            return pa.table({}), f"{name} = {getattr(self.settings, name.lower())!r}"
        if statement.kind == "reset":
            name = str(ast.expression.this if ast.expression is not None else "").strip()
            self.settings = self.settings.reset(name)
            if name.lower() == "buffer_pool_size":
                self.catalog.buffers.resize(self.settings.buffer_pool_size)
            return pa.table({}), f"{name} reset to {getattr(self.settings, name.lower())!r}"
        if statement.kind == "show_graphs":
            plan, _ = ShowGraphs(), None
        elif statement.kind == "describe":
            plan = DescribeGraph(ast.this.name)
            self.catalog.get(plan.graph)
        else:
            plan, _columns = plan_select(ast, self.catalog)
        if statement.explain:
            choices = self._runner.choices(plan)
            analyzed = None
            if statement.analyze:
                self._runner.run(plan)
                analyzed = {
                    key: f"{s.seconds * 1000:.2f} ms, {s.rows} rows"
                    + "".join(f", {k} {v}" for k, v in s.metrics.items())
                    for key, s in self._runner.stats.items()
                }
            return pa.table({"plan": explain_lines(plan, choices, analyzed)}), None
        return self._runner.run(plan), None

    # -- ingest ---------------------------------------------------------------------------------
    def ingest(self, graph: str, edges: str | os.PathLike, *, vertices: str | None = None,
               undirected: bool = False, format: str = "auto", src: str | None = None,
               dst: str | None = None, weight: str | None = None, replace: bool = False) -> dict:
        """Load an edge file into graph ``graph``. Returns a summary (|V|, |E|, seconds)."""
        self._check_open()
        start = time.perf_counter()
        options = IngestOptions(vertices=None if vertices is None else str(vertices),
                                undirected=undirected, format=format, src=src, dst=dst,
                                weight=weight)
        try:
            entry = self.catalog.ingest(graph, str(edges), options, replace=replace)
        except Exception as exc:
            translated = translate(exc)
            if translated is exc:
                raise
            raise translated from None
        self._runner.forget(graph)
        return {
            "graph": entry.name, "vertices": entry.num_vertices, "edges": entry.input_edges,
            "directed": entry.directed, "weighted": entry.weighted,
            "seconds": time.perf_counter() - start,
        }

    def buffer_stats(self) -> pa.Table:
        """Buffer pool counters, one row per pool (what ``SELECT * FROM buffer_stats()`` shows)."""
        self._check_open()
        return stats_table(self.catalog.buffers)

    def graphs(self) -> list[str]:
        return sorted(self.catalog.names())
