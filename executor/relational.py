"""The relational engine: an embedded DuckDB reading the graph operators' Arrow results.

Every query's relational part (joins, aggregates, windows, subqueries, dates, strings, NULL
logic) is one SQL statement that DuckDB runs over named relations: Arrow tables handed over
zero-copy (DuckDB scans their buffers in place and pushes column selections into the scan).
Nothing relational is implemented here; this module owns the DuckDB side of the boundary:

- one DuckDB database per process, created on the first relational statement (importing and
  starting DuckDB costs ~0.1 s that a graph-only session never pays), and one DuckDB connection
  (a cursor of that database) per :class:`SQLEngine`, i.e. per graphdb connection, so that two
  graphdb connections never see each other's relations;
- relations: a statement's own inputs (an algorithm's result) are registered for the statement
  and dropped after it; a table that stays the same object from one statement to the next (a
  resident ``g.edges``) is registered once and kept (registering costs ~0.2 ms, as much as
  a point lookup takes), until it is replaced or :meth:`SQLEngine.forget` drops it;
- results come back as an Arrow table; HUGEINT columns (DuckDB's exact ``sum`` of BIGINTs) come
  back as int64 when every value fits, else as exact 128-bit decimals: never wrapped;
- DuckDB's exceptions become :class:`~graphdb.executor.errors.SQLError` (its kind from
  DuckDB's exception class), interrupts :class:`~graphdb.executor.errors.QueryCancelled`;
- EXPLAIN: DuckDB's physical plan of a statement (``EXPLAIN (FORMAT json)``), and under
  ANALYZE its profile with the rows and time of each operator.
"""

from __future__ import annotations

import json
import threading
import time
import warnings
from collections import OrderedDict
from typing import Any

import pyarrow as pa

from .cancel import in_background
from .errors import QueryCancelled, SQLError

__all__ = ["SQLEngine"]

#: DuckDB relations of queries already run, kept per connection (least recently used first out)
KEPT_STATEMENTS = 128

_DATABASE: Any = None
_DATABASE_LOCK = threading.Lock()

#: DuckDB's exception classes -> SQLError kind (the PEP 249 class the front end raises). Read
#: by type, nearest class first; a class not named here goes by DuckDB's own PEP 249 base.
_KINDS = {
    "ParserException": "parser", "SyntaxException": "parser",
    "BinderException": "binder", "InvalidTypeException": "binder",
    "CatalogException": "catalog", "DependencyException": "catalog",
    "ConversionException": "data", "TypeMismatchException": "data",
    "OutOfRangeException": "data", "InvalidInputException": "data",
    "NotImplementedException": "not_supported",
    "ConstraintException": "integrity",
    "OutOfMemoryException": "resources", "IOException": "resources",
    "PermissionException": "resources", "TransactionException": "resources",
    "SerializationException": "resources", "ConnectionException": "resources",
    "InternalException": "internal", "FatalException": "internal",
    # DuckDB's PEP 249 bases, for classes a later release adds
    "DataError": "data", "ProgrammingError": "binder", "NotSupportedError": "not_supported",
    "IntegrityError": "integrity", "OperationalError": "resources", "InternalError": "internal",
}


def _kind(exc: BaseException) -> str:
    """The SQLError kind of a DuckDB exception, by its class (never by its message)."""
    for cls in type(exc).__mro__:
        if cls.__name__ in _KINDS:
            return _KINDS[cls.__name__]
    return "database"


def _database():
    """The process's DuckDB database (in memory: it holds no tables, only views of Arrow).
    Its first start (an import and a database, about a second) runs in a thread of its own,
    so an interrupt of the statement waiting for it stops the wait, never the start."""
    if _DATABASE is not None:
        return _DATABASE
    return in_background(_start_database, "graphdb-duckdb-start")


def _start_database():
    global _DATABASE
    with _DATABASE_LOCK:
        if _DATABASE is None:
            import duckdb

            _DATABASE = duckdb.connect(":memory:")
        return _DATABASE


def _sandbox():
    """A DuckDB database of its own without external access (see
    :meth:`SQLEngine.disable_external_access`)."""
    import duckdb

    return duckdb.connect(":memory:", config={
        "enable_external_access": False, "autoload_known_extensions": False,
        "autoinstall_known_extensions": False})


def _to_arrow(relation) -> pa.Table:
    """A DuckDB relation's rows as one Arrow table (duckdb 2 renamed ``arrow()``)."""
    fetch = getattr(relation, "to_arrow_table", None) or relation.arrow
    table = fetch()
    if isinstance(table, pa.RecordBatchReader):
        table = table.read_all()
    return _exact_integers(table)


def _exact_integers(table: pa.Table) -> pa.Table:
    """HUGEINT columns (Arrow ``decimal128(38, 0)``) as int64 where every value fits."""
    for i, field in enumerate(table.schema):
        if pa.types.is_decimal128(field.type) and field.type.scale == 0 \
                and field.type.precision == 38:
            try:
                column = table.column(i).cast(pa.int64())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                continue  # beyond 64 bits: the exact decimal stays
            table = table.set_column(i, pa.field(field.name, pa.int64()), column)
    return table


class SQLEngine:
    """The DuckDB connection of one graphdb connection (statements run one at a time on it)."""

    def __init__(self, threads: int | None = None):
        self._cursor: Any = None
        self._threads = threads
        self._sandboxed = False  # a DuckDB database of its own, without file access
        self._kept: dict[str, Any] = {}  # name -> the object registered under it
        self._lock = threading.RLock()
        #: (statement text, its relations' names and schemas) -> the DuckDB relation of a
        #: query run before: run again, it reads its relations by name as the text does, without
        #: DuckDB's Python layer parsing and binding the text anew (~0.3 ms of a key lookup)
        self._statements: OrderedDict[tuple, Any] = OrderedDict()
        #: whether the statement running is cancelled (the runner's event)
        self.cancelled: Any = lambda: False
        #: the cursor while DuckDB executes a statement on it (what interrupt() stops)
        self._active: Any = None
        self._active_lock = threading.RLock()

    # -- the connection -------------------------------------------------------------------------
    def _connection(self):
        if self._cursor is None:
            self._cursor = (_sandbox() if self._sandboxed else _database()).cursor()
            if self._threads:
                self._cursor.execute(f"SET threads = {int(self._threads)}")
        return self._cursor

    def set_threads(self, threads: int | None) -> None:
        """DuckDB's worker threads (None: one per core)."""
        with self._lock:
            self._threads = threads
            if self._cursor is not None:
                self._cursor.execute("RESET threads" if not threads
                                     else f"SET threads = {int(threads)}")

    def set_option(self, statement: str) -> None:
        """Run ``SET name = value`` (or ``RESET name``) of one of DuckDB's own settings on this
        connection's DuckDB side (``error_on_division_by_zero``, which its errors advise)."""
        with self._lock:
            cursor = self._connection()
            self._guarded(lambda: cursor.execute(statement), None)

    def disable_external_access(self) -> None:
        """From now on run statements in a DuckDB database of this engine's own whose
        configuration refuses every file, network and extension access (DuckDB's
        ``enable_external_access = false``, which cannot be set back while it runs): a file read by name, ``read_csv``, ``glob``,
        ``COPY``, ``ATTACH``, ``INSTALL``. Relations registered from Arrow still work. The
        process's shared database cannot take it: the setting is global and cannot be undone."""
        with self._lock:
            if self._sandboxed:
                return
            self.close()
            self._sandboxed = True

    def interrupt(self) -> None:
        """Stop the running statement (safe from another thread). DuckDB forgets an interrupt
        that comes before its query starts executing (it clears the flag then), so one sent
        while a statement is between binding and execution was lost: the interrupt is sent
        again every few milliseconds until DuckDB gives the statement up."""
        with self._active_lock:
            active = self._active
        if active is None:
            return
        active[0].interrupt()
        # not a daemon: it ends with the statement (an exit meanwhile waits for it)
        threading.Thread(target=self._keep_interrupting, args=(active,),
                         name="graphdb-duckdb-interrupt").start()

    def _keep_interrupting(self, active) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with self._active_lock:
                if self._active is not active:  # that statement is over
                    return
                active[0].interrupt()
            time.sleep(0.005)

    def _executing(self, cursor, work):
        """``work()`` as the cursor's running statement: :meth:`interrupt` stops it, and a
        statement cancelled before it starts never starts."""
        active = (cursor, object())  # this execution (the cursor runs later ones too)
        with self._active_lock:
            self._active = active
        try:
            if self.cancelled():
                raise QueryCancelled("query cancelled")
            return work()
        finally:
            with self._active_lock:
                self._active = None

    def close(self) -> None:
        with self._lock:
            if self._cursor is not None:
                self._cursor.close()
            self._cursor, self._kept = None, {}
            self._statements.clear()

    # -- relations ------------------------------------------------------------------------------
    def forget(self, prefix: str, keep: str | None = None) -> None:
        """Unregister the kept relations whose names start with ``prefix`` (a dropped graph),
        but not those starting with ``keep`` (the version a write made current)."""
        with self._lock:
            for name in [n for n in self._kept if n.startswith(prefix)
                         and not (keep and n.startswith(keep))]:
                del self._kept[name]
                if self._cursor is not None:
                    self._cursor.unregister(name)
            self._statements.clear()

    def _register(self, inputs: dict[str, pa.Table], kept: dict[str, pa.Table]) -> list[str]:
        """Register a statement's relations; returns the names to drop after it."""
        cursor = self._connection()
        for name, table in kept.items():
            if self._kept.get(name) is not table:
                cursor.register(name, table)
                self._kept[name] = table
        for name, table in inputs.items():
            cursor.register(name, table)
        return list(inputs)

    def _release(self, names: list[str]) -> None:
        for name in names:
            self._cursor.unregister(name)

    # -- what the engine offers -------------------------------------------------------------
    def functions(self) -> list[tuple[str, str, str, str]]:
        """(name, kind, signatures, description) of every scalar, aggregate and window function
        a query can call (DuckDB's), one row per name: its distinct parameter lists, fewest
        first, joined by '; ' (DuckDB lists one overload per argument type, in an order that
        changes between its releases), and its description (or what kind of function it is,
        where DuckDB gives none)."""
        with self._lock:
            cursor = self._connection()
            rows = self._guarded(lambda: cursor.execute("""
                SELECT function_name, function_type, parameters, description
                FROM duckdb_functions()
                WHERE function_type IN ('scalar', 'aggregate', 'window', 'macro')
                ORDER BY function_name, function_type, function_oid""").fetchall(), None)
        found: dict[str, tuple[str, set, str | None]] = {}
        for name, kind, parameters, description in rows:
            if not name[:1].isalpha() or name.startswith("__"):
                continue
            first_kind, lists, text = found.setdefault(name, (kind, set(), description))
            lists.add(tuple(parameters or ()))
            if text is None and description:
                found[name] = (first_kind, lists, description)
        out = []
        for name, (kind, lists, description) in found.items():
            kind = "scalar" if kind == "macro" else kind
            signature = "; ".join(f"{name}({', '.join(p)})"
                                  for p in sorted(lists, key=lambda p: (len(p), p)))
            out.append((name, kind, signature, description or f"{kind} function (DuckDB)"))
        return out

    # -- statements -----------------------------------------------------------------------------
    def run(self, sql: str, inputs: dict[str, pa.Table], kept: dict[str, pa.Table] | None = None,
            shown: dict[str, str] | None = None, profile: bool = False
            ) -> tuple[pa.Table, list[dict] | None]:
        """The result of ``sql`` over ``inputs`` (registered for this statement only) and
        ``kept`` (registered until replaced); with ``profile``, also DuckDB's profile of it
        (the operator tree with each operator's rows and seconds)."""
        with self._lock:
            names = self._register(inputs, kept or {})
            cursor = self._cursor
            try:
                if profile:
                    cursor.execute("SET enable_profiling = 'no_output'")
                    cursor.execute("SET profiling_mode = 'standard'")
                table = self._executing(cursor, lambda: self._guarded(
                    lambda: _to_arrow(self._relation(cursor, sql, inputs, kept, profile)),
                    shown))
                tree = None
                if profile:
                    info = json.loads(cursor.get_profiling_information(format="json"))
                    tree = info.get("operator") or info.get("children") or []
                return table, tree
            finally:
                if profile:
                    cursor.execute("RESET enable_profiling")
                self._release(names)

    def _relation(self, cursor, sql: str, inputs: dict[str, pa.Table],
                  kept: dict[str, pa.Table] | None, profile: bool):
        """The DuckDB relation of ``sql``: the one kept from an earlier run of the same text over
        relations of the same names and schemas, or a new one (kept where it is a query that
        runs when read, not rows computed now)."""
        if profile:
            return cursor.sql(sql)
        key = (sql, tuple((n, t.schema) for n, t in inputs.items()),
               tuple((n, t.schema) for n, t in (kept or {}).items()))
        relation = self._statements.get(key)
        if relation is not None:
            self._statements.move_to_end(key)
            return relation
        relation = cursor.sql(sql)
        if relation is not None and relation.type == "QUERY_RELATION":
            self._statements[key] = relation
            while len(self._statements) > KEPT_STATEMENTS:
                self._statements.popitem(last=False)
        return relation

    def explain(self, sql: str, inputs: dict[str, pa.Table],
                kept: dict[str, pa.Table] | None = None,
                shown: dict[str, str] | None = None) -> list[dict]:
        """DuckDB's physical plan of ``sql`` (a list of operator trees, from
        ``EXPLAIN (FORMAT json)``), without running it."""
        with self._lock:
            names = self._register(inputs, kept or {})
            try:
                cursor = self._cursor
                rows = self._executing(cursor, lambda: self._guarded(
                    lambda: cursor.execute(f"EXPLAIN (FORMAT json) {sql}").fetchall(), shown))
            finally:
                self._release(names)
        text = rows[0][1] if rows else "[]"
        return json.loads(text)

    @staticmethod
    def _guarded(work, shown: dict[str, str] | None):
        """``work()``, with DuckDB's exceptions as the executor's."""
        import duckdb

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # DuckDB's notes on copies it makes
                return work()
        except duckdb.InterruptException:
            raise QueryCancelled("query cancelled") from None
        except duckdb.Error as exc:
            raise SQLError(_kind(exc), str(exc), shown) from None
