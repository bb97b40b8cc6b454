"""PEP 249 type objects and constructors, and the SQL names of Arrow types.

A result's ``description`` gives each column's type as its SQL name (``BIGINT``, ``DOUBLE``,
``VARCHAR``, as DuckDB names them); the type objects compare equal to the names of their group,
so ``description[0][1] == graphdb.NUMBER`` works as PEP 249 asks.

Examples
--------
>>> import graphdb
>>> with graphdb.connect() as con:
...     code = con.execute("SELECT 1 AS one").description[0][1]
>>> code, code == graphdb.NUMBER, code == graphdb.STRING
('INTEGER', True, False)
"""

from __future__ import annotations

import datetime
import time

import pyarrow as pa

__all__ = ["STRING", "BINARY", "NUMBER", "DATETIME", "ROWID", "Date", "Time", "Timestamp",
           "DateFromTicks", "TimeFromTicks", "TimestampFromTicks", "Binary", "TypeCode",
           "DBAPITypeObject", "sql_type_name"]

_INTEGERS = {8: "TINYINT", 16: "SMALLINT", 32: "INTEGER", 64: "BIGINT"}


def sql_type_name(t: pa.DataType) -> str:
    """The SQL name of an Arrow type (DuckDB's spelling)."""
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if pa.types.is_integer(t):
        name = _INTEGERS[t.bit_width]
        return name if pa.types.is_signed_integer(t) else "U" + name
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return "FLOAT"
    if pa.types.is_float64(t):
        return "DOUBLE"
    if pa.types.is_decimal(t):
        return f"DECIMAL({t.precision},{t.scale})"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "VARCHAR"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "BLOB"
    if pa.types.is_date(t):
        return "DATE"
    if pa.types.is_time(t):
        return "TIME"
    if pa.types.is_timestamp(t):
        return "TIMESTAMP WITH TIME ZONE" if t.tz else "TIMESTAMP"
    if pa.types.is_duration(t) or pa.types.is_interval(t):
        return "INTERVAL"
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return sql_type_name(t.value_type) + "[]"
    if pa.types.is_struct(t):
        return "STRUCT(" + ", ".join(f"{f.name} {sql_type_name(f.type)}" for f in t) + ")"
    if pa.types.is_map(t):
        return f"MAP({sql_type_name(t.key_type)}, {sql_type_name(t.item_type)})"
    if pa.types.is_null(t):
        return "NULL"
    if pa.types.is_dictionary(t):
        return sql_type_name(t.value_type)
    return str(t).upper()


class TypeCode(str):
    """A column's type in ``description``: its SQL name (a ``str``), with the Arrow type it
    stands for as ``arrow_type``."""

    arrow_type: pa.DataType

    def __new__(cls, arrow_type: pa.DataType) -> "TypeCode":
        code = super().__new__(cls, sql_type_name(arrow_type))
        code.arrow_type = arrow_type
        return code


class DBAPITypeObject:
    """PEP 249 type object: equal to the type code of every column of its group."""

    def __init__(self, name: str, *type_names: str, prefixes: tuple[str, ...] = ()):
        self.name = name
        self.type_names = frozenset(type_names)
        self.prefixes = prefixes

    def __eq__(self, other) -> bool:
        if isinstance(other, DBAPITypeObject):
            return self is other
        text = str(other)
        return text in self.type_names or text.startswith(self.prefixes)

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"<DBAPITypeObject {self.name}>"


STRING = DBAPITypeObject("STRING", "VARCHAR")
BINARY = DBAPITypeObject("BINARY", "BLOB")
NUMBER = DBAPITypeObject("NUMBER", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT",
                         "USMALLINT", "UINTEGER", "UBIGINT", "FLOAT", "DOUBLE",
                         prefixes=("DECIMAL",))
DATETIME = DBAPITypeObject("DATETIME", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE",
                           "INTERVAL")
#: graphdb has no row ids: nothing compares equal to ROWID.
ROWID = DBAPITypeObject("ROWID")

Date = datetime.date
Time = datetime.time
Timestamp = datetime.datetime
Binary = bytes


def DateFromTicks(ticks: float) -> datetime.date:  # noqa: N802  (PEP 249 name)
    return Date(*time.localtime(ticks)[:3])


def TimeFromTicks(ticks: float) -> datetime.time:  # noqa: N802
    return Time(*time.localtime(ticks)[3:6])


def TimestampFromTicks(ticks: float) -> datetime.datetime:  # noqa: N802
    return Timestamp(*time.localtime(ticks)[:6])
