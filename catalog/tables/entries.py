"""Table entries: what is known about a stored table, persisted as sealed JSON in LMDB.

A table is stored as graphs are (:mod:`graphdb.catalog.entries`): a *base generation* (an Arrow
IPC file ``rows.arrow`` under ``graphs/<table id>/``, checksummed in the entry, memory-mapped
when read) plus *delta records* committed since (``deltas <table id>/<sequence>``: appended
rows, deleted row ids; :mod:`.log`). The entry names the generation, the columns and their
constraints, and the version (the number of delta records it covers)::

    tables   t/<name>      a table entry (this module)
             s/<schema>    a schema (CREATE SCHEMA), JSON {"created": ...}
             v/<name>      a view (CREATE VIEW), JSON {"sql": ..., "columns": [...]}

Names are stored as written and found case-insensitively (``Person`` and ``person`` are one
table, as in SQL); a table of a schema other than ``main`` is stored as ``schema.name``.

Read back, an entry is *parsed*, not trusted: its seal (a checksum over the canonical JSON of
every other field) is checked, then its fields; anything else is :class:`CorruptGraph` naming
the table.
"""

from __future__ import annotations

import base64
import functools
import math
import re
from dataclasses import MISSING, dataclass, field, fields, replace
from functools import cached_property

import pyarrow as pa

from graphdb.storage.env import valid_graph_id

from ..errors import CorruptGraph
from ..records import open_json, seal_json

__all__ = ["ROWID", "ROWS_FILE", "TableEntry", "ViewEntry", "schema_bytes", "split_name",
           "valid_table_name"]

#: The Arrow file of a base generation (absent while the base has no rows).
ROWS_FILE = "rows.arrow"
#: The column of a base file holding its rows' ids (where they are not 0, 1, 2, ...).
ROWID = "__graphdb_rowid"
_PART = r"[A-Za-z_][A-Za-z0-9_$]*"
_NAME = re.compile(rf"(?:{_PART}\.)?{_PART}")
MAX_NAME_LENGTH = 255
_MAX_COUNT = 1 << 48
#: The schema a table belongs to when its name has no qualifier.
MAIN = "main"


def valid_table_name(name: object) -> bool:
    """A table name: an identifier, optionally qualified by its schema (``s.t``)."""
    return isinstance(name, str) and len(name) <= MAX_NAME_LENGTH and \
        _NAME.fullmatch(name) is not None


def split_name(name: str) -> tuple[str, str]:
    """(schema, table) of a stored name; ``main`` when it has no qualifier."""
    schema, _, table = name.rpartition(".")
    return (schema or MAIN), table


def schema_bytes(schema: pa.Schema) -> str:
    """An Arrow schema as text for the entry (its IPC form, base64): every type exactly."""
    return base64.b64encode(schema.serialize().to_pybytes()).decode("ascii")


@functools.lru_cache(maxsize=256)
def _schema_of(text: str) -> pa.Schema:
    """The schema :func:`schema_bytes` wrote (read once per text: every write makes a new entry
    of the same schema)."""
    return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(text)))


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _MAX_COUNT


@dataclass(frozen=True)
class Column:
    """A column as declared: its name, its SQL type as the relational engine spells it, whether
    it may hold NULL, its default (SQL text, or None), and of an identity column
    (``GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY``, ``SERIAL``) ``(always, start,
    increment)``: an INSERT that leaves it out takes the table's next value of it."""

    name: str
    type: str
    nullable: bool = True
    default: str | None = None
    identity: tuple | None = None

    def __post_init__(self):
        if self.identity is not None:  # (stored as a JSON list)
            object.__setattr__(self, "identity", tuple(self.identity))

    def to_json(self) -> dict:
        data = {"name": self.name, "type": self.type, "nullable": self.nullable,
                "default": self.default}
        if self.identity is not None:
            data["identity"] = list(self.identity)
        return data


@dataclass(frozen=True)
class ForeignKey:
    """``FOREIGN KEY (columns) REFERENCES table (references)``."""

    columns: tuple[str, ...]
    table: str
    references: tuple[str, ...]

    def to_json(self) -> dict:
        return {"columns": list(self.columns), "table": self.table,
                "references": list(self.references)}


@dataclass(frozen=True)
class TableEntry:
    name: str
    table_id: str  # names the base generation's directory and its delta records
    arrow_schema: str  # schema_bytes() of the rows
    columns: tuple[Column, ...]
    created: float
    primary_key: tuple[str, ...] = ()
    unique: tuple[tuple[str, ...], ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()
    checks: tuple[str, ...] = ()  # CHECK constraints, SQL text over the columns
    base_rows: int = 0  # rows of the base file
    rows: int = 0  # live rows at this version
    version: int = 0  # delta records on top of the base
    delta: dict = field(default_factory=dict)  # appended, deleted, bytes; pending (uncommitted)
    files: dict = field(default_factory=dict)  # rows.arrow -> bytes, checksum, algorithm
    source: str = ""  # what made it: CREATE TABLE, CREATE TABLE AS, COPY, create_table()
    #: the row id of the generation's first appended row (-1: ``base_rows``). Row ids are the
    #: rows' identities for the table's life: a new base generation (compaction, ALTER) keeps
    #: them, in the base file's ROWID column, and appends after the old ones
    appended_from: int = -1
    #: the base file carries its rows' ids (else they are 0 .. base_rows - 1)
    base_rowids: bool = False
    #: an identity column's next value (column -> value; absent: its start), advanced by the
    #: INSERTs that take it, with the write's records in the same transaction
    identity_next: dict = field(default_factory=dict)

    # -- stored form ----------------------------------------------------------------------------
    def to_json(self) -> bytes:
        data = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "columns":
                value = [c.to_json() for c in value]
            elif f.name == "foreign_keys":
                value = [k.to_json() for k in value]
            elif f.name in ("primary_key", "checks"):
                value = list(value)
            elif f.name == "unique":
                value = [list(u) for u in value]
            elif f.name == "delta":
                value = {k: v for k, v in value.items() if k != "pending"}
            data[f.name] = value
        return seal_json(data)

    @classmethod
    def from_json(cls, raw: bytes, key: str | None = None) -> "TableEntry":
        """The entry stored as ``raw`` (under ``key``), validated; CorruptGraph if not."""
        what = f"the catalog entry of table '{key}'" if key else "a table's catalog entry"

        def bad(problem: str) -> CorruptGraph:
            return CorruptGraph(f"{what} {problem}", file="meta.lmdb/data.mdb")

        data = open_json(raw, bad)

        missing = [f for f, spec in cls.__dataclass_fields__.items() if f not in data
                   and spec.default is MISSING and spec.default_factory is MISSING]
        if missing:
            raise bad(f"lacks {', '.join(missing)}")
        try:
            values = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
            values["columns"] = tuple(Column(**c) for c in values["columns"])
            values["primary_key"] = tuple(values.get("primary_key", ()))
            values["unique"] = tuple(tuple(u) for u in values.get("unique", ()))
            values["checks"] = tuple(values.get("checks", ()))
            values["foreign_keys"] = tuple(
                ForeignKey(tuple(k["columns"]), k["table"], tuple(k["references"]))
                for k in values.get("foreign_keys", ()))
            entry = cls(**values)
        except (TypeError, KeyError, AttributeError):
            raise bad("has fields of the wrong shape") from None
        problem = entry.problem(key)
        if problem is not None:
            raise bad(problem)
        return entry

    def problem(self, key: str | None = None) -> str | None:
        """What is wrong with this entry's fields, or None."""
        if not valid_table_name(self.name):
            return f"has an invalid name {str(self.name)[:80]!r}"
        if key is not None and key != self.name:
            return f"names table {self.name!r} but is stored under {key[:80]!r}"
        if not valid_graph_id(self.table_id):
            return f"has table id {str(self.table_id)[:80]!r}, not a generated id"
        for name in ("base_rows", "rows", "version"):
            if not _count(getattr(self, name)):
                return f"field {name} is not a count"
        if not isinstance(self.created, (int, float)) or not math.isfinite(self.created):
            return "field created is not a time"
        try:
            schema = self.schema
        except Exception:
            return "has an unreadable column schema"
        if [c.name for c in self.columns] != schema.names:
            return "lists columns that are not those of its schema"
        names = {c.name for c in self.columns}
        for group in (self.primary_key, *self.unique):
            if not set(group) <= names:
                return "has a key over columns it does not have"
        if self.base_rows:
            record = self.files.get(ROWS_FILE)
            if not isinstance(record, dict) or not all(
                    _count(record.get(k)) for k in ("bytes", "checksum", "algorithm")):
                return f"has no readable record of {ROWS_FILE}"
        if not isinstance(self.delta, dict):
            return "field delta is not an object"
        if not isinstance(self.appended_from, int) or self.appended_from < -1 or \
                not isinstance(self.base_rowids, bool):
            return "fields appended_from/base_rowids have the wrong type"
        for column in self.columns:
            identity = column.identity
            if identity is not None and not (
                    len(identity) == 3 and isinstance(identity[0], bool)
                    and all(isinstance(v, int) and not isinstance(v, bool) for v in identity[1:])
                    and identity[2] != 0):
                return f"has a malformed identity of column {column.name}"
        if not isinstance(self.identity_next, dict) or not all(
                k in names and isinstance(v, int) and not isinstance(v, bool)
                for k, v in self.identity_next.items()):
            return "field identity_next is not an object of column values"
        return None

    # -- what it says ---------------------------------------------------------------------------
    @cached_property
    def schema(self) -> pa.Schema:
        """The Arrow schema of the rows."""
        return _schema_of(self.arrow_schema)

    @property
    def first_appended(self) -> int:
        """The row id of the generation's first appended row."""
        return self.base_rows if self.appended_from < 0 else self.appended_from

    @property
    def changed(self) -> bool:
        """Whether delta records sit on top of the base."""
        return self.version > 0

    @property
    def pending(self) -> str | None:
        """The token of an open transaction's uncommitted version (None when committed)."""
        return self.delta.get("pending")

    @property
    def key_columns(self) -> tuple[str, ...]:
        """The primary key (else the first UNIQUE set; () without any)."""
        return self.primary_key or (self.unique[0] if self.unique else ())

    def column(self, name: str) -> Column:
        """The column ``name`` (case-insensitive); KeyError when there is none."""
        for c in self.columns:
            if c.name == name:
                return c
        for c in self.columns:
            if c.name.lower() == name.lower():
                return c
        raise KeyError(name)

    def with_changes(self, **changes) -> "TableEntry":
        return replace(self, **changes)


@dataclass(frozen=True)
class ViewEntry:
    """A view: its name and the query that defines it (as written)."""

    name: str
    sql: str
    columns: tuple[str, ...] = ()  # names given in CREATE VIEW v (a, b) AS ...
    #: (name, SQL type) of its output columns when it was created (information_schema)
    output: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> bytes:
        return seal_json({"name": self.name, "sql": self.sql, "columns": list(self.columns),
                          "output": [list(o) for o in self.output]})

    @classmethod
    def from_json(cls, raw: bytes, key: str) -> "ViewEntry":
        data = open_json(raw, lambda problem: CorruptGraph(
            f"the catalog entry of view '{key}' {problem}", file="meta.lmdb/data.mdb"))
        try:
            return cls(str(data["name"]), str(data["sql"]), tuple(data.get("columns", ())),
                       tuple((str(n), str(t)) for n, t in data.get("output", ())))
        except (KeyError, TypeError):
            raise CorruptGraph(f"the catalog entry of view '{key}' has fields of the wrong "
                               "shape", file="meta.lmdb/data.mdb") from None
